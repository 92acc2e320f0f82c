import * as z from 'zod';
import { Lease } from '../api/lease.ts';
import { microTime, ObjectMeta, toDate } from '../api/meta.ts';
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

/** The version of the record this code writes and reads (LeaseRecord.v; laterRecordVersion). */
export const RECORD_VERSION = 1;

/**
 * On every claims Lease: the label a sweep selects them by, and the job's key
 * ("EphemeralJob/<ns>/<name>"; the Lease's name is hashed, so the job cannot be read from
 * it). The relay lists the labelled Leases and sends the key of each whose job it does not
 * know, so a job deleted while no relay watched still has its Lease deleted (README.md,
 * "When a job goes").
 */
export const LEASE_LABEL = 'ephemera.io/ejob-lease';
export const KEY_ANNOTATION = 'ephemera.io/ejob-key';

/**
 * One pod claimed for injection; `at` is the API server's time of the claim write.
 * `renewed`: the claim was made again, with a new `at`, after its injection did not show
 * (claims.ts renewAfterMs); a claim is renewed once. `w`: its claimer's window in seconds
 * (EPHEMERA_LEASE_SECONDS + EPHEMERA_LEASE_SKEW_SECONDS), after which no injection under it
 * can land: a reader keeps the claim for the longer of that and its own window (claims.ts
 * claimRetentionMs), so instances with different settings at once (a rollout that changes
 * them) never drop a claim another may still inject under (review70). Added within version 1:
 * a claim without it (an older writer) is judged by the reader's window, as before.
 */
const Claim = z.object({ pod: z.string().min(1), uid: z.string().optional(), at: z.string().min(1), renewed: z.literal(true).optional(), w: z.number().positive().optional() });
export type Claim = z.infer<typeof Claim>;

/** A pod passed over (LeaseRecord.passed), by uid (~80 bytes); `at`: when the claim on it ended its retention. */
const Passed = z.object({ uid: z.string().min(1), at: z.string().min(1) });
export type Passed = z.infer<typeof Passed>;

/** The record as stored in the annotation (JSON). */
export const LeaseRecord = z.object({
  v: z.literal(RECORD_VERSION),
  /** The job's uid: a record for an earlier job of the same name is not this job's. */
  job: z.string(),
  /** How many distinct pods this job has ever claimed (the replicas bound). */
  total: z.number().int().nonnegative(),
  /** Claims made within their retention (claims.ts retentionMs), injected or not. */
  claims: z.array(Claim),
  /**
   * Since when (server time) every write of this record has kept each claim for its whole
   * retention (but a claim whose pod can never take the containers: claims.ts neverTakes). Set by the first write that keeps claims that way (the epoch when the Lease
   * was absent), carried by every later one; a write by an older instance, which released a
   * claim as soon as its pod showed the job's containers, drops it. A LIST read before the
   * Lease stands for the pods only a retention after it (claims.ts listBeforeLeaseStands).
   */
  keptSince: z.string().optional(),
  /**
   * The smallest skewSeconds of the writers since `keptSince` (set with it, lowered by each
   * write): each keeps a claim `skewSeconds` past its window by its own setting, so a LIST
   * read before the Lease stands only if it lagged the Lease by no more than this (claims.ts
   * standingLagMs; review76: a reader with a larger skew than a writer trusted a LIST the
   * writer's drops had outrun, and a job ran one pod more than its parallelism). Absent
   * (older writers): the reader's own skew, as before. Added within version 1.
   */
  s: z.number().positive().optional(),
  /**
   * Pods passed over: a claim on each ended its retention with no injection showing (its
   * claimer stopped, or the API server refused the injection — a pod grown too large to take
   * one more container, a policy refusing that pod). Claims go first to the pods never passed
   * over, then to these, the longest passed first, so one pod that refuses every injection
   * does not take the job's slots for good (review62 F5: nothing else was injected at
   * parallelism 1). Kept while the pod is a pending target, at most MAX_RECORD_PASSED (a pod
   * without a uid is not passed over). Added
   * within version 1: an older instance drops it on rewrite, which loses only that order.
   */
  passed: z.array(Passed).optional(),
  /** No new claims before this server time (set when an unreadable record was repaired). */
  holdUntil: z.string().optional(),
  /**
   * The job's verdict was decided: no claim after it. Written (fenced, like a claim) before
   * the verdict's status write, so a concurrent claim of a late pod and the verdict cannot
   * both succeed from different views of the pods.
   */
  finished: z.boolean().optional(),
  /**
   * The verdict sealed with `finished` (written with the seal since 2026-11-27; a record
   * sealed before has none): what the job's status says once it has finished, should its
   * status write be lost and the pods that decided it be gone or ended before the next plan
   * (planner.ts, README step 7).
   */
  verdict: z.object({
    phase: z.enum(['Succeeded', 'Failed']),
    match: z.number().int().nonnegative(),
    succeeded: z.number().int().nonnegative(),
    failed: z.number().int().nonnegative(),
    /** Pods still running or waiting when it was decided (a deadline verdict is sealed while pods run). */
    running: z.number().int().nonnegative().optional(),
    waiting: z.number().int().nonnegative().optional(),
    /** Why a Failed verdict failed, when not for failed pods. */
    failedBy: z.enum(['deadline', 'gone']).optional(),
    /** What its JobFailed message says of pods the containers could not go into (planner.ts unfitNote). */
    unfit: z.string().max(1024).optional(),
  }).optional(),
});
export type LeaseRecord = z.infer<typeof LeaseRecord>;
export type Verdict = NonNullable<LeaseRecord['verdict']>;

/** Where the job's Lease lives and how long a claim holds; `key`: the job's key, written on the Lease. */
export type LeaseConfig = Pick<LockConfig, 'namespace' | 'holder' | 'leaseSeconds' | 'skewSeconds'> & { name: string; key: string };

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
  | { kind: 'ours'; resourceVersion: string | undefined; uid?: string; record: LeaseRecord }
  | { kind: 'unreadable'; resourceVersion: string | undefined; uid?: string; why: string; renewedAt: Date | undefined; otherJob: boolean; later?: number };

/** A Lease as read, before it is judged for a job: its identity and its record, or why it has none. */
type ParsedLease =
  | { lease: false }
  | { lease: true; resourceVersion: string | undefined; uid: string | undefined; renewedAt: Date | undefined; record: LeaseRecord | undefined; why: string; later?: number };

function parseLease(raw: unknown): ParsedLease {
  const lease = Lease.safeParse(raw);
  if (!lease.success) return { lease: false };
  const { resourceVersion, uid } = lease.data.metadata;
  const at = { resourceVersion, uid, renewedAt: toDate(lease.data.spec?.renewTime) ?? toDate(lease.data.spec?.acquireTime) };
  const text = lease.data.metadata.annotations?.[CLAIMS_ANNOTATION];
  if (text === undefined) return { lease: true, ...at, record: undefined, why: `no ${CLAIMS_ANNOTATION} annotation` };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { lease: true, ...at, record: undefined, why: `${CLAIMS_ANNOTATION} is not JSON` };
  }
  const record = LeaseRecord.safeParse(json);
  if (!record.success || [...record.data.claims, ...(record.data.passed ?? [])].some((c) => toDate(c.at) === undefined) || (record.data.keptSince !== undefined && toDate(record.data.keptSince) === undefined)) {
    const later = laterVersion(json);
    if (later !== undefined) return { lease: true, ...at, record: undefined, why: `${CLAIMS_ANNOTATION} does not parse (version ${later}, a later one's)`, later };
    return { lease: true, ...at, record: undefined, why: `${CLAIMS_ANNOTATION} does not parse` };
  }
  return { lease: true, ...at, record: record.data, why: '' };
}

const Versioned = z.looseObject({ v: z.number().int() });

/**
 * The version of the claims record a Lease holds when it is later than this code's
 * (RECORD_VERSION), else undefined. The rule that keeps a mixed fleet safe (README.md,
 * "Upgrading"): a field an older version may drop on rewrite is added within a version; any
 * other change takes a new `v`, and a version that reads a later one decides nothing for the
 * job and never writes its Lease (read as unreadable, it would be held, then rebuilt without
 * what the newer version recorded). Never throws.
 */
export function laterRecordVersion(raw: unknown): number | undefined {
  const p = raw === null || raw === undefined ? undefined : parseLease(raw);
  return p?.lease ? p.later : undefined;
}

/** The record's `v` when it is a later version's (laterRecordVersion). */
function laterVersion(json: unknown): number | undefined {
  const v = Versioned.safeParse(json);
  return v.success && v.data.v > RECORD_VERSION ? v.data.v : undefined;
}

/** Read a Lease (or its absence) for the job with this uid. Never throws. */
export function readLeaseView(raw: unknown, jobUid: string): ReadLeaseView {
  if (raw === null || raw === undefined) return { kind: 'absent' };
  const p = parseLease(raw);
  // Its resourceVersion and uid are still what a write that repairs it is fenced by, so claim
  // writes stay totally ordered (without a resourceVersion kube-apiserver refuses a Lease
  // update with 422: the Lease strategy allows no unconditional update).
  if (!p.lease) return { kind: 'unreadable', ...looseIdentity(raw), why: 'not a Lease', renewedAt: undefined, otherJob: false };
  const id = { resourceVersion: p.resourceVersion, ...(p.uid ? { uid: p.uid } : {}) };
  // A later version's record: the observation stops here (controller.ts), never planned as unreadable.
  if (!p.record) return { kind: 'unreadable', ...id, why: p.why, renewedAt: p.renewedAt, otherJob: false, ...(p.later !== undefined ? { later: p.later } : {}) };
  if (p.record.job !== jobUid) return { kind: 'unreadable', ...id, why: `record of another job (uid ${p.record.job})`, renewedAt: p.renewedAt, otherJob: true };
  return { kind: 'ours', ...id, record: p.record };
}

/** Just the identity of an object's metadata (ObjectMeta's fields), whatever else it holds. */
const Identity = z.looseObject({ metadata: ObjectMeta.pick({ resourceVersion: true, uid: true }) });

/** metadata.resourceVersion and uid of an object that is not a valid Lease, if they read. */
function looseIdentity(raw: unknown): { resourceVersion: string | undefined; uid?: string } {
  const id = Identity.safeParse(raw);
  const meta = id.success ? id.data.metadata : {};
  return { resourceVersion: meta.resourceVersion || undefined, ...(meta.uid ? { uid: meta.uid } : {}) };
}

/** Which job a Lease's record is for, and the Lease's resourceVersion and uid: what a deletion is fenced by. */
export interface LeaseOwner {
  /** The uid of the job the record is for. */
  job: string;
  resourceVersion: string;
  uid: string | undefined;
}

/**
 * The job a Lease's record belongs to, or undefined when the Lease is absent or holds no
 * record that parses (then it may not be ours at all, and is left alone). Never throws.
 */
export function leaseOwner(raw: unknown): LeaseOwner | undefined {
  if (raw === null || raw === undefined) return undefined;
  const p = parseLease(raw);
  if (!p.lease || !p.record || !p.resourceVersion) return undefined;
  return { job: p.record.job, resourceVersion: p.resourceVersion, uid: p.uid };
}

/**
 * The write that records a decision: create the Lease, or replace it at the resourceVersion
 * it was read at (a concurrent writer makes it fail with 409, and the engine re-plans).
 * holderIdentity and renewTime are there for `kubectl get lease`, and renewTime also tells
 * a later reader how old an unreadable record is. The label and the key annotation name the
 * job for the relay's sweep; they change none of the preconditions.
 */
export function leaseWrite(at: { cfg: LeaseConfig; view: ReadLeaseView; serverNow: Date }, record: LeaseRecord, why: string): Action {
  const { cfg, view, serverNow } = at;
  const rv = view.kind === 'absent' ? undefined : view.resourceVersion;
  // The uid pins the update to the Lease that was read: a Lease may be created by a PUT
  // (kube-apiserver's lease strategy allows create on update), so without it an update of a
  // Lease deleted meanwhile would silently create it again; with it, that is a 409 too.
  const uid = view.kind === 'absent' ? undefined : view.uid;
  const body = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: cfg.name, namespace: cfg.namespace, labels: { [LEASE_LABEL]: 'true' }, annotations: { [CLAIMS_ANNOTATION]: JSON.stringify(record), [KEY_ANNOTATION]: cfg.key }, ...(rv ? { resourceVersion: rv } : {}), ...(uid ? { uid } : {}) },
    spec: { holderIdentity: cfg.holder, leaseDurationSeconds: cfg.leaseSeconds, renewTime: microTime(serverNow) },
  };
  const base = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: cfg.namespace, name: cfg.name, body, reason: why };
  return view.kind === 'absent' ? { ...base, verb: 'create', alreadyExists: 'replan' } : { ...base, verb: 'update' };
}
