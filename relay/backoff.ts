/**
 * Exponential backoff for the relay's endless loops (list/watch restarts, sink outages):
 * they keep state between tries and never give up, so a per-operation retry helper such as
 * p-retry does not fit.
 */
export function backoffMs(failures: number, minMs: number, maxMs: number): number {
  return Math.min(maxMs, minMs * 2 ** Math.min(Math.max(failures, 0), 20));
}

/**
 * The same, with "full jitter" in its upper half (a wait in [b/2, b]): replicas that lost the
 * API server together do not come back in lockstep. `random` is injectable for tests.
 */
export function jitteredBackoffMs(failures: number, minMs: number, maxMs: number, random: () => number = Math.random): number {
  const b = backoffMs(failures, minMs, maxMs);
  return Math.round(b / 2 + (b / 2) * random());
}
