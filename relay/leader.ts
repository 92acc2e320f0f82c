// Leader election for relay replicas over a coordination.k8s.io Lease, using the same
// lock code as the functions (server-clock expiry, resourceVersion-fenced writes). Only
// the leader forwards; the others keep watching so they can take over with a warm cache.
// Like client-go's leaderelection, a failed renewal is retried until the lease could
// really have been lost (renewDeadline), so one slow API answer does not demote the leader.
import type { LockConfig } from '../functions/engine/lock.ts';
import { acquire, leaseName, LeaseSightings, type HeldLock } from '../functions/engine/lock.ts';
import type { Logger } from '../functions/engine/logger.ts';
import type { Kube } from '../functions/kube/kube.ts';

export interface Elector {
  isLeader(): boolean;
  /** How long this replica may still lead without another renewal (0 when it does not lead). */
  leadsForMs(): number;
  /** No more rounds; the Lease, if held, stays ours until it runs out or stop() releases it. */
  stopRenewing(): void;
  stop(): Promise<void>;
  /** While the rounds fail with an error (not: the Lease is another's): since how long, and the last error. */
  failing(): { forMs: number; error: string } | undefined;
}

/** What the election tells its owner: every gain or loss, and every round that failed with an error. */
export interface ElectionEvents {
  change(leader: boolean): void;
  failed?(err: Error): void;
}

/**
 * A follower's one line on whom it follows, said once per holder: a relay that started while
 * another led stayed silent (review75: a recorder beside production with election forced on
 * wrote nothing, and its log said only "relay running"). `led`: said again after leading.
 */
function followLog(lock: LockConfig, logger: Logger): { seen: (holder: string) => void; led: () => void } {
  let following: string | undefined;
  return {
    seen: (holder) => {
      if (holder === following) return;
      following = holder;
      logger.info({ holder: lock.holder, leaderIs: holder }, `following: ${holder} holds the leader Lease ${lock.namespace}/${leaseName('relay', 'leader')}; this replica forwards nothing until it takes it`);
    },
    led: () => void (following = undefined),
  };
}

/**
 * Try to lead every leaseSeconds/3. A renewal that fails with an error is retried every
 * second; the leader steps down only when no renewal succeeded for leaseSeconds (another
 * replica can take over only after leaseSeconds + skew by the server's clock), or at once
 * when another holder has the Lease. `onChange` fires on every gain or loss.
 */
export function startElection(kube: Kube, lock: LockConfig, logger: Logger, on: ElectionEvents): Elector {
  const leaseMs = lock.leaseSeconds * 1000;
  const periodMs = Math.max(1000, leaseMs / 3);
  const retryMs = Math.min(1000, periodMs);
  let held: HeldLock | undefined;
  let leader = false;
  /** No more rounds (stopRenewing or stop); the Lease, if held, stays ours until stop(). */
  let stopped = false;
  /** The round in flight: stop() waits for it, so it releases the Lease's newest version. */
  let inFlight: Promise<void> | undefined;
  let next: NodeJS.Timeout | undefined;
  let expiry: NodeJS.Timeout | undefined;
  /** When the current holding runs out (performance.now() time), 0 when none. */
  let holdsUntil = 0;
  /** Since when (performance.now()) the rounds have failed with an error, and the last one. */
  let failure: { since: number; error: string } | undefined;
  const follow = followLog(lock, logger);
  // The versions of the Lease seen, and since when: a holder's renewTime ahead of the server's
  // clock does not keep this replica from taking over a dead holder's Lease (review95 F5).
  const sightings = new LeaseSightings();
  const set = (v: boolean, why: string): void => {
    if (v) follow.led();
    if (v === leader) return;
    leader = v;
    logger.info({ holder: lock.holder, leader: v, why }, v ? 'became leader' : 'lost leadership');
    on.change(v);
  };
  /**
   * The deadline runs from when the last successful renewal was begun, not answered: the
   * renewTime it wrote is the server's time of its GET, which came after that, so another
   * replica, which may take over at renewTime + lease + skew, cannot start before this one
   * stops, however long the write took (review: measured from the answer, a renewal that
   * took 5 s let two relays forward at once). That time comes from a Date header, whole
   * seconds rounded down, so up to a second is taken off when the skew does not cover it.
   * A hanging request cannot keep us leading. False: too little of it is left to lead.
   */
  const renewed = (begunAt: number): boolean => {
    clearTimeout(expiry);
    const left = leaseMs - Math.max(0, 1000 - lock.skewSeconds * 1000) - (performance.now() - begunAt);
    holdsUntil = performance.now() + Math.max(0, left);
    expiry = setTimeout(() => set(false, `no renewal for ${lock.leaseSeconds}s`), Math.max(0, left));
    expiry.unref();
    return left >= retryMs;
  };
  const round = async (): Promise<void> => {
    const begunAt = performance.now();
    let wait = periodMs;
    try {
      const got = await acquire(kube, lock, { controller: 'relay', key: 'leader', sightings });
      failure = undefined;
      held = 'held' in got ? got.held : undefined;
      // A renewal that took most of the lease leaves leadership as it was: the next round,
      // a retry's wait away, decides (review: taking the lead for a moment ran a replay).
      if (held) {
        // Stopping: a round in flight still records what it took, but takes no lead (review).
        if (!renewed(begunAt)) wait = retryMs;
        else if (!stopped) set(true, 'acquired the lease');
      } else {
        clearTimeout(expiry);
        holdsUntil = 0;
        const holder = 'holder' in got ? got.holder : 'another replica';
        set(false, `held by ${holder}`);
        follow.seen(holder);
      }
    } catch (err) {
      failure = { since: failure?.since ?? begunAt, error: (err as Error).message };
      on.failed?.(err as Error);
      logger.warn({ err: (err as Error).message, leader }, leader ? 'lease renewal failed; retrying before the lease runs out' : 'leader election round failed');
      wait = leader ? retryMs : periodMs;
    }
    if (stopped) return;
    // A steady cadence from each round's start, as client-go's: a period after a slow round
    // ended, renewals drifted apart by the round's length and the lease ran out between them
    // (review: with every write taking 40% of the lease, leadership flapped every 2 s).
    next = setTimeout(() => void start(), Math.max(0, begunAt + wait - performance.now()));
    next.unref();
  };
  const start = (): void => {
    inFlight = round().finally(() => (inFlight = undefined));
  };
  start();
  return {
    isLeader: () => leader,
    failing: () => (failure === undefined ? undefined : { forMs: performance.now() - failure.since, error: failure.error }),
    leadsForMs: () => (leader ? Math.max(0, holdsUntil - performance.now()) : 0),
    stopRenewing() {
      // A round in flight still records what it took (review: releasing it then left the
      // relay leading, and flushing, without a Lease).
      stopped = true;
      clearTimeout(next);
    },
    async stop() {
      stopped = true;
      clearTimeout(next);
      await inFlight;
      clearTimeout(expiry);
      if (held) await held.release().catch(() => undefined);
      set(false, 'stopping');
    },
  };
}
