// Leader election for relay replicas over a coordination.k8s.io Lease, using the same
// lock code as the functions (server-clock expiry, resourceVersion-fenced writes). Only
// the leader forwards; the others keep watching so they can take over with a warm cache.
// Like client-go's leaderelection, a failed renewal is retried until the lease could
// really have been lost (renewDeadline), so one slow API answer does not demote the leader.
import type { LockConfig } from '../functions/engine/lock.ts';
import { acquire, type HeldLock } from '../functions/engine/lock.ts';
import type { Logger } from '../functions/engine/logger.ts';
import type { Kube } from '../functions/kube/kube.ts';

export interface Elector {
  isLeader(): boolean;
  stop(): Promise<void>;
}

/**
 * Try to lead every leaseSeconds/3. A renewal that fails with an error is retried every
 * second; the leader steps down only when no renewal succeeded for leaseSeconds (another
 * replica can take over only after leaseSeconds + skew by the server's clock), or at once
 * when another holder has the Lease. `onChange` fires on every gain or loss.
 */
export function startElection(kube: Kube, lock: LockConfig, logger: Logger, onChange: (leader: boolean) => void): Elector {
  const leaseMs = lock.leaseSeconds * 1000;
  const periodMs = Math.max(1000, leaseMs / 3);
  const retryMs = Math.min(1000, periodMs);
  let held: HeldLock | undefined;
  let leader = false;
  let stopped = false;
  let next: NodeJS.Timeout | undefined;
  let expiry: NodeJS.Timeout | undefined;
  const set = (v: boolean, why: string): void => {
    if (v === leader) return;
    leader = v;
    logger.info({ holder: lock.holder, leader: v, why }, v ? 'became leader' : 'lost leadership');
    onChange(v);
  };
  /**
   * The deadline runs from when the last successful renewal was begun, not answered: the
   * renewTime it wrote is the server's time of its GET, which came after that, so another
   * replica, which may take over at renewTime + lease + skew, cannot start before this one
   * stops, however long the write took (review: measured from the answer, a renewal that
   * took 5 s let two relays forward at once). A hanging request cannot keep us leading.
   */
  const renewed = (begunAt: number): void => {
    clearTimeout(expiry);
    const left = Math.max(0, leaseMs - (performance.now() - begunAt));
    expiry = setTimeout(() => set(false, `no renewal for ${lock.leaseSeconds}s`), left);
    expiry.unref();
  };
  const round = async (): Promise<void> => {
    let wait = periodMs;
    try {
      const begunAt = performance.now();
      const got = await acquire(kube, lock, 'relay', 'leader');
      held = 'held' in got ? got.held : undefined;
      if (held) renewed(begunAt);
      else clearTimeout(expiry);
      set(held !== undefined, held ? 'acquired the lease' : `held by ${'holder' in got ? got.holder : 'another replica'}`);
    } catch (err) {
      logger.warn({ err: (err as Error).message, leader }, leader ? 'lease renewal failed; retrying before the lease runs out' : 'leader election round failed');
      wait = leader ? retryMs : periodMs;
    }
    if (stopped) return;
    next = setTimeout(() => void round(), wait);
    next.unref();
  };
  void round();
  return {
    isLeader: () => leader,
    async stop() {
      stopped = true;
      clearTimeout(next);
      clearTimeout(expiry);
      if (held) await held.release().catch(() => undefined);
      set(false, 'stopping');
    },
  };
}
