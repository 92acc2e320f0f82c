// Whether this instance's clock agrees with the API server's (review95 F2).

/** How often, at most, one process repeats its warning about a clock that is off. */
export const CLOCK_WARN_EVERY_MS = 10 * 60_000;

/**
 * Compares the planner's clock (the host's: a node's in cluster, Lambda's) with the API
 * server's as its answers' Date headers tell (Kube.serverNow), at no extra request. The
 * planners take the later of the two for deadlines and the earlier for TTLs, but a host clock
 * further off than `skewSeconds` still ends a job's deadline early or late by the difference,
 * and nothing else says so. One per process (or per cluster served): it warns at most once
 * every CLOCK_WARN_EVERY_MS of its monotonic clock, not on every reconcile.
 */
export class ClockWatch {
  private warnedAt = Number.NEGATIVE_INFINITY;
  private readonly monotonic: () => number;

  constructor(monotonic: () => number = () => performance.now()) {
    this.monotonic = monotonic;
  }

  /** The warning to log now, if the clocks are more than `skewSeconds` apart and none was given lately. */
  check(planner: Date, server: Date | undefined, skewSeconds: number): string | undefined {
    if (server === undefined) return undefined;
    const offMs = planner.getTime() - server.getTime();
    if (Math.abs(offMs) <= skewSeconds * 1000) return undefined;
    const at = this.monotonic();
    if (at - this.warnedAt < CLOCK_WARN_EVERY_MS) return undefined;
    this.warnedAt = at;
    const by = `${Math.round(Math.abs(offMs) / 1000)} s ${offMs > 0 ? 'ahead of' : 'behind'}`;
    return `this host's clock (${planner.toISOString()}) is ${by} the API server's (${server.toISOString()}, from its Date header), more than EPHEMERA_LEASE_SKEW_SECONDS (${skewSeconds}): an EphemeralJob's deadline is judged by the later of the two clocks, so a clock ahead fails running jobs early; fix this host's time sync (NTP)`;
  }
}
