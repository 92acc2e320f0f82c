import { z } from 'zod';
import { Lease } from '../api/lease.ts';
import { rfc3339, toDate } from '../api/meta.ts';
import type { LockConfig } from '../engine/lock.ts';
import type { Action } from '../engine/plan.ts';

/**
 * The EphemeralJob's state between events, kept on the job's Lease (in the lock namespace)
 * because a Lease has no schema that could prune it, unlike the job's status under
 * OpenKruise's CRD. The Lease is written only with resourceVersion preconditions, and only
 * when a reconcile decides something: it claims pods for injection or seals the verdict.
 * See README.md.
 */
export const CLAIMS_ANNOTATION = 'ephemera.io/ejob-claims';

/** One pod claimed for injection; `at` is the API server's time of the claim write. */
const Claim = z.object({ pod: z.string().min(1), uid: z.string().optional(), at: z.string().min(1) });
export type Claim = z.infer<typeof Claim>;

/** The record as stored in the annotation (JSON). */
export const LeaseRecord = z.object({
  v: z.literal(1),
  /** The job's uid: a record for an earlier job of the same name is not this job's. */
  job: z.string(),
  /** How many distinct pods this job has ever claimed (the replicas bound). */
  total: z.number().int().nonnegative(),
  /** Claims whose injection is not yet seen on the pod. */
  claims: z.array(Claim),
  /** No new claims before this server time (set when an unreadable record was repaired). */
  holdUntil: z.string().optional(),
  /**
   * The job's verdict was decided: no claim after it. Written (fenced, like a claim) before
   * the verdict's status write, so a concurrent claim of a late pod and the verdict cannot
   * both succeed from different views of the pods.
   */
  finished: z.boolean().optional(),
});
export type LeaseRecord = z.infer<typeof LeaseRecord>;

/** Where the job's Lease lives and how long a claim holds. */
export type LeaseConfig = Pick<LockConfig, 'namespace' | 'holder' | 'leaseSeconds' | 'skewSeconds'> & { name: string };

/**
 * The Lease as the planner sees it. `unreadable` covers a Lease that exists but whose
 * annotation is missing, not ours, for another job, or does not parse: it may have held
 * claims we cannot read, so it is trusted to have none only once it is old enough.
 * `not-read`: the observation did not read the Lease, because the pods alone showed that
 * no plan of this job could claim, seal or repair anything (lease-needed.ts). It says
 * nothing about the Lease — never "absent" — and nothing may be decided from it.
 */
export type LeaseView = ReadLeaseView | { kind: 'not-read' };

/** A Lease that was read: the views a decision can be written from. */
export type ReadLeaseView =
  | { kind: 'absent' }
  | { kind: 'ours'; resourceVersion: string | undefined; record: LeaseRecord }
  | { kind: 'unreadable'; resourceVersion: string | undefined; why: string; renewedAt: Date | undefined; otherJob: boolean };

/** Read a Lease (or its absence) for the job with this uid. Never throws. */
export function readLeaseView(raw: unknown, jobUid: string): ReadLeaseView {
  if (raw === null || raw === undefined) return { kind: 'absent' };
  const lease = Lease.safeParse(raw);
  if (!lease.success) return { kind: 'unreadable', resourceVersion: undefined, why: 'not a Lease', renewedAt: undefined, otherJob: false };
  const rv = lease.data.metadata.resourceVersion;
  const renewedAt = toDate(lease.data.spec?.renewTime) ?? toDate(lease.data.spec?.acquireTime);
  const text = lease.data.metadata.annotations?.[CLAIMS_ANNOTATION];
  if (text === undefined) return { kind: 'unreadable', resourceVersion: rv, why: `no ${CLAIMS_ANNOTATION} annotation`, renewedAt, otherJob: false };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { kind: 'unreadable', resourceVersion: rv, why: `${CLAIMS_ANNOTATION} is not JSON`, renewedAt, otherJob: false };
  }
  const record = LeaseRecord.safeParse(json);
  if (!record.success || record.data.claims.some((c) => toDate(c.at) === undefined)) {
    return { kind: 'unreadable', resourceVersion: rv, why: `${CLAIMS_ANNOTATION} does not parse`, renewedAt, otherJob: false };
  }
  if (record.data.job !== jobUid) return { kind: 'unreadable', resourceVersion: rv, why: `record of another job (uid ${record.data.job})`, renewedAt, otherJob: true };
  return { kind: 'ours', resourceVersion: rv, record: record.data };
}

/**
 * The write that records a decision: create the Lease, or replace it at the resourceVersion
 * it was read at (a concurrent writer makes it fail with 409, and the engine re-plans).
 * holderIdentity and renewTime are there for `kubectl get lease`, and renewTime also tells
 * a later reader how old an unreadable record is.
 */
export function leaseWrite(at: { cfg: LeaseConfig; view: ReadLeaseView; serverNow: Date }, record: LeaseRecord, why: string): Action {
  const { cfg, view, serverNow } = at;
  const rv = view.kind === 'absent' ? undefined : view.resourceVersion;
  const body = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: cfg.name, namespace: cfg.namespace, annotations: { [CLAIMS_ANNOTATION]: JSON.stringify(record) }, ...(rv ? { resourceVersion: rv } : {}) },
    spec: { holderIdentity: cfg.holder, leaseDurationSeconds: cfg.leaseSeconds, renewTime: rfc3339(serverNow) },
  };
  const base = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: cfg.namespace, name: cfg.name, body, reason: why };
  return view.kind === 'absent' ? { ...base, verb: 'create', alreadyExists: 'replan' } : { ...base, verb: 'update' };
}
