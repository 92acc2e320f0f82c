// Leader election for relay replicas over a coordination.k8s.io Lease, using the same
// lock code as the functions (server-clock expiry, resourceVersion-fenced writes). Only
// the leader forwards; the others keep watching so they can take over with a warm cache.
import type { LockConfig } from '../functions/engine/lock.ts';
import { acquire, type HeldLock } from '../functions/engine/lock.ts';
import type { Logger } from '../functions/engine/logger.ts';
import type { Kube } from '../functions/kube/kube.ts';

export interface Elector {
  isLeader(): boolean;
  stop(): Promise<void>;
}

/** Try to lead every leaseSeconds/3; `onChange` fires on every gain or loss. */
export function startElection(kube: Kube, lock: LockConfig, logger: Logger, onChange: (leader: boolean) => void): Elector {
  let held: HeldLock | undefined;
  let leader = false;
  let stopped = false;
  const set = (v: boolean): void => {
    if (v === leader) return;
    leader = v;
    logger.info({ holder: lock.holder, leader: v }, v ? 'became leader' : 'lost leadership');
    onChange(v);
  };
  const round = async (): Promise<void> => {
    try {
      const got = await acquire(kube, lock, 'relay', 'leader');
      held = 'held' in got ? got.held : undefined;
      set(held !== undefined);
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'leader election round failed');
      set(false);
    }
  };
  const timer = setInterval(() => void (stopped ? undefined : round()), Math.max(1000, (lock.leaseSeconds * 1000) / 3));
  timer.unref();
  void round();
  return {
    isLeader: () => leader,
    async stop() {
      stopped = true;
      clearInterval(timer);
      if (held) await held.release().catch(() => undefined);
      set(false);
    },
  };
}
