// When a job is being deleted or is gone, its Lease (in the lock namespace, where no owner
// reference can reach) is deleted by the reconciler. Not blindly: a job created again under
// the same name shares the Lease's name and may already keep its own claims there. See
// README.md, "When a job goes". Pure.
import type { EphemeralJobObject } from '../api/ephemeraljob.ts';
import type { Action } from '../engine/plan.ts';
import type { LeaseOwner } from './lease-record.ts';

/** A job's Lease holding a record: where it is, whose record it is, and the version read. */
export interface LeftLease {
  namespace: string;
  name: string;
  owner: LeaseOwner;
}

/**
 * True when the record's job can never need it again, judged from a read of the job made
 * *after* the Lease was read: no job of that name, a job being deleted (it claims nothing
 * more), or a job with another uid. Names are unique and uids are never reused, so a record
 * whose job was not the live holder of the name at that read belongs to a job gone for good.
 * A record of the live job (same uid, not deleting) is kept.
 */
export function orphaned(owner: LeaseOwner, jobAfter: EphemeralJobObject | null): boolean {
  if (jobAfter === null) return true;
  // Records are written with `uid ?? ''` (planner.ts), so compare the same way.
  return jobAfter.metadata.deletionTimestamp !== undefined || (jobAfter.metadata.uid ?? '') !== owner.job;
}

/**
 * Delete the Lease only as it was read: preconditions on its resourceVersion (and uid), so a
 * write made since — a job of the same name claiming over the old record — turns this into
 * a 409, and the engine observes again. A 404 (already gone) counts as done (apply.ts).
 */
export function leaseDeletion(left: LeftLease, why: string): Action {
  const { resourceVersion, uid } = left.owner;
  return {
    verb: 'delete',
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    namespace: left.namespace,
    name: left.name,
    body: { preconditions: { resourceVersion, ...(uid ? { uid } : {}) } },
    reason: `delete the job's Lease: ${why}`,
  };
}
