import { objectKey, parseObjectKey, type Envelope } from '../api/envelope.ts';
import { EJOB, EphemeralJobObject, formatZodIssues, parseEjobSpec, type EphemeralJobSpec } from '../api/ephemeraljob.ts';
import { Pod } from '../api/pod.ts';
import { toDate } from '../api/meta.ts';
import { parsePod } from '../api/pod-shape.ts';
import { selectorMatches, selectorToQuery } from '../api/selector.ts';
import type { Controller, Route } from '../engine/controller.ts';
import { leaseName, type LockConfig } from '../engine/lock.ts';
import type { Plan } from '../engine/plan.ts';
import type { Kube, ObjectRef } from '../kube/kube.ts';
import { isKubeError, refusedForGood } from '../kube/errors.ts';
import { elapsedMs } from '../kube/elapsed.ts';
import { jobFinished } from './finished.ts';
import { LISTED_POD_VIEW } from './listed-pod.ts';
import { claimRetentionMs, listBeforeLeaseStands, standingLagMs } from './claims.ts';
import { leaseNeeded } from './lease-needed.ts';
import { leaseOwner, readLeaseView, RECORD_VERSION, type LeaseConfig } from './lease-record.ts';
import { ownedBy, podState } from './pod-state.ts';
import { DEFAULT_LEASE, mayTellFailures, plan, POD_FAILED_REASON, type EjobDeparted, type EjobObserved, type ObservedLease } from './planner.ts';

/** What observe found: the planner's input plus notes, and warnings on what it had to skip; or an unreadable job. */
export type EjobObservation =
  | ({ readable: true } & (EjobObserved | EjobDeparted) & { notes: string[]; warnings?: string[] })
  /** Not readable as an EphemeralJob at all (metadata): nothing can be written safely. */
  | { readable: false; notes: string[]; warnings: string[] };

/** The EphemeralJob controller: routing and observation around the pure planner. */
export const ejobController: Controller<EjobObservation> = {
  name: 'ejob',
  route,
  observe,
  plan(observed: EjobObservation, now: Date): Plan {
    if (!observed.readable) return { actions: [], notes: observed.notes, warnings: observed.warnings };
    const p = plan(observed, now);
    return { ...p, notes: [...observed.notes, ...(p.notes ?? [])], ...(observed.warnings?.length ? { warnings: observed.warnings } : {}) };
  },
};

/** "EphemeralJob/<ns>/<name>" */
export function jobKey(namespace: string, name: string): string {
  return objectKey(EJOB.kind, namespace, name);
}

/** The job's Lease name in the lock namespace (the same naming the lock always used). */
export function jobLeaseName(key: string): string {
  return leaseName('ejob', key);
}

/**
 * A job event goes to that job. A pod event goes to the unfinished jobs in its namespace
 * whose selector matches the pod, or whose uid one of its ephemeral containers carries.
 * A relay names those jobs on the envelope (`data.jobs`, from its watch cache): then routing
 * costs no request (issue 10: listing the namespace's jobs for every pod event was a third of
 * the reads). Without the stamp (an older relay, `ephemera invoke` of a raw watch event, a
 * relay that cannot list EphemeralJobs) the jobs are listed as before.
 *
 * A stale stamp is harmless, because every reconcile reads current state before it writes:
 * - a stamped job that has finished or gone since: its reconcile reads the job and stops
 *   there (a finished job ignores pod events; a deleted one is not found);
 * - a job the relay had not seen yet is missing: that job's own ADDED event follows, and its
 *   reconcile LISTs the pods it selects, this one included, as they are then;
 * - a label change that moves the pod to or from a job is itself a pod event, forwarded with
 *   a fresh stamp (the relay forwards every change of the set of jobs selecting a pod).
 * So a stale stamp costs at most one extra reconcile, or leaves the work to an event already
 * on its way; it never makes a job miss a pod.
 */
async function route(event: Envelope, kube: Kube): Promise<Route> {
  const { kind, namespace, name, jobs: stamped } = event.data;
  if (kind === 'EphemeralJob') return { keys: [jobKey(namespace, name)] };
  if (stamped !== undefined) {
    const keys = stamped.map((job) => jobKey(namespace, job));
    return keys.length > 0 ? { keys } : { keys, skipped: `the relay saw no unfinished EphemeralJob in ${namespace} that concerns pod ${name}` };
  }
  const listed = await kube.list(EJOB.apiVersion, EJOB.kind, namespace).catch((err: unknown) => {
    // No EphemeralJob CRD (the relay runs on for the SidecarTerminator): no job here.
    if (isKubeError(err, 'unserved')) return null;
    throw err;
  });
  if (listed === null) return { keys: [], skipped: "EphemeralJobs are not served in this cluster" };
  const jobs = listed.items;
  const pod = await podForRouting(event, kube);
  const keys: string[] = [];
  for (const raw of jobs) {
    const job = EphemeralJobObject.safeParse(raw);
    // A finished job ignores pod events, unless it is being deleted (finalizer).
    if (!job.success || (jobFinished(job.data.status) && job.data.metadata.deletionTimestamp === undefined)) continue;
    if (pod === null || concerns(job.data, pod)) keys.push(jobKey(namespace, job.data.metadata.name));
  }
  return keys.length > 0 ? { keys } : { keys, skipped: `no unfinished EphemeralJob in ${namespace} selects pod ${name}` };
}

/** The pod's labels and containers from the snapshot, else from the API; null if unknown. */
async function podForRouting(event: Envelope, kube: Kube): Promise<Pod | null> {
  const fromSnapshot = Pod.safeParse(event.data.snapshot);
  if (fromSnapshot.success) return fromSnapshot.data;
  const raw = await kube.get({ apiVersion: 'v1', kind: 'Pod', namespace: event.data.namespace, name: event.data.name });
  const parsed = Pod.safeParse(raw);
  return parsed.success ? parsed.data : null;
}

function concerns(job: EphemeralJobObject, pod: Pod): boolean {
  const uid = job.metadata.uid;
  if (uid && (pod.spec.ephemeralContainers ?? []).some((c) => ownedBy(c, uid))) return true;
  const spec = parseEjobSpec(job.spec);
  return spec.ok ? selectorMatches(spec.spec.selector, pod.metadata.labels) : true;
}

/**
 * Observe in two stages, for one planner. Stage 1: the job, then every pod its selector
 * matches (one LIST, filtered by the API server). If those pods prove that no plan can
 * claim, seal or repair anything (lease-needed.ts: enough pods hold a slot, and no verdict),
 * the Lease is not read: the planner gets the view `not-read`, from which it decides
 * nothing on the Lease. Otherwise stage 2: the Lease, and the pods again after it unless
 * the LIST of stage 1 may stand for them — taken at most skewSeconds (local elapsed time, kube/elapsed.ts)
 * before the Lease came back, the record has kept every claim for a retention, and the
 * LIST shows every pod the record claims (claims.ts listBeforeLeaseStands). Either way the
 * pods show every injection made under a claim the Lease no longer lists (README.md, step
 * 3). A finished or invalid job needs
 * neither; a job being deleted, or gone, needs its Lease and the job again (departed()).
 */
async function observe(key: string, kube: Kube, lock?: LockConfig): Promise<EjobObservation | null> {
  const ref = parseObjectKey(EJOB.kind, key);
  if (!ref) throw new Error(`not an EphemeralJob key: ${key}`);
  const jobRef = { apiVersion: EJOB.apiVersion, kind: EJOB.kind, ...ref };
  const raw = await kube.get(jobRef);
  const cfg = { ...DEFAULT_LEASE, ...(lock ?? {}), name: jobLeaseName(key), key };
  if (raw === null) return departed(kube, cfg, jobRef, null);
  const job = EphemeralJobObject.safeParse(raw);
  // The API server validates metadata, so this is a schema of ours out of step with it: skip, say why.
  if (!job.success) return unreadableJob(ref, job.error.issues);
  if (job.data.metadata.deletionTimestamp !== undefined) return departed(kube, cfg, jobRef, job.data);
  const spec = parseEjobSpec(job.data.spec);
  if (!spec.ok || jobFinished(job.data.status)) {
    // Its TTLs are judged by the earlier of the planner's clock and this (planner.ts).
    const serverNow = kube.serverNow();
    return { readable: true, job: job.data, pods: [], notes: [], ...(serverNow ? { serverNow } : {}) };
  }
  const podQuery = { labelSelector: selectorToQuery(spec.spec.selector) };
  const listedAt = { local: elapsedMs(), server: kube.serverNow()?.getTime() };
  const first = await listPods(kube, ref.namespace, podQuery);
  // The deadline is judged skewSeconds ahead of the server's time: a planner clock up to that
  // far ahead still finds no verdict the Lease would be needed for.
  const serverNow = kube.serverNow() ?? new Date();
  const need = leaseNeeded(job.data, spec.spec, first.pods, new Date(serverNow.getTime() + cfg.skewSeconds * 1000));
  if (!need.needed) return withTold(kube, spec.spec, { readable: true, job: job.data, pods: first.pods, lease: { view: { kind: 'not-read' }, serverNow, cfg }, notes: [...first.notes, `Lease not read: ${need.why}`], ...warned(first) });
  const rawLease = await kube.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: cfg.namespace, name: cfg.name });
  const lease = { view: readLeaseView(rawLease, job.data.metadata.uid ?? ''), serverNow: kube.serverNow() ?? new Date(), cfg };
  if (lease.view.kind === 'unreadable' && lease.view.later !== undefined) return laterRecord(ref, cfg, lease.view.later);
  // How long before the Lease came back the LIST was sent: by the local elapsed clock (kube/elapsed.ts), and
  // by the server's (a process stalled or a clock stepped shows there too).
  const lag = Math.max(elapsedMs() - listedAt.local, lease.serverNow.getTime() - (listedAt.server ?? Number.NEGATIVE_INFINITY));
  if (lag <= standingLagMs(lease.view, cfg) && listBeforeLeaseStands(lease.view, lease.serverNow, cfg, first.pods)) {
    return withTold(kube, spec.spec, { readable: true, job: job.data, pods: first.pods, lease, notes: [...first.notes, `Lease read: ${need.why}; the pods listed ${Math.round(lag)} ms before it stand (the record keeps every claim for its retention)`], ...warned(first) });
  }
  const second = await listPods(kube, ref.namespace, podQuery);
  const looked = await unlistedClaims(kube, ref.namespace, lease, second.pods);
  return withTold(kube, spec.spec, { readable: true, job: job.data, pods: second.pods, lease: looked, notes: [...second.notes, `Lease read: ${need.why}; pods listed again after it`], ...warned(second) });
}

/** At most this many unlisted claimed pods are looked up in one reconcile; the rest hold their slots. */
const MAX_UNLISTED_GETS = 20;

/**
 * The pods the record claims within their retention that the LIST after the Lease does not
 * show: a GET of each (usually none) tells a pod gone from one relabelled out of the selector,
 * whose injection may still land (claims.ts unlistedHolds). A GET that fails leaves the pod
 * unknown, and its claim holds its slot. (A LIST read before the Lease stands only when it
 * shows every claimed pod: listBeforeLeaseStands.)
 */
async function unlistedClaims(kube: Kube, namespace: string, lease: ObservedLease, pods: readonly Pod[]): Promise<ObservedLease> {
  if (lease.view.kind !== 'ours') return lease;
  const listed = new Set(pods.map((p) => p.metadata.name));
  const now = lease.serverNow.getTime();
  const names = [...new Set(lease.view.record.claims.filter((c) => !listed.has(c.pod) && (toDate(c.at)?.getTime() ?? 0) + claimRetentionMs(c, lease.cfg) > now).map((c) => c.pod))];
  if (names.length === 0) return lease;
  const unlisted = new Map<string, Pod | null>();
  await Promise.all(names.slice(0, MAX_UNLISTED_GETS).map(async (name) => {
    try {
      const raw = await kube.get({ apiVersion: 'v1', kind: 'Pod', namespace, name });
      const p = raw === null ? null : parsePod(raw);
      if (p === null || p.success) unlisted.set(name, p === null ? null : p.data);
    } catch {
      // unknown: its claim holds its slot
    }
  }));
  return { ...lease, unlisted };
}

/**
 * The observation, with the job's failure Warnings written so far (`told`: their names),
 * when the job may have a failure to tell — some pod shows a container of the job failed,
 * or its status counts failures (a pod the containers cannot go into, which shows nothing,
 * replaced by another: review) — and a plan could tell one (planner.ts mayTellFailures: a
 * failure counted anew, or a recent one): the planner tells each failure on the job once
 * (planner.ts failureEvents). One LIST of the job's Events by field selector, only then: a
 * job none of whose pods failed pays nothing, nor one whose failures are all told and old. A LIST refused for good (no right to list
 * Events: RBAC applied before `list` was granted) leaves `told` unknown, and the planner
 * tells as many failures as the status newly counts; after a transient error (429, 5xx, no
 * answer) too, but the plan that writes the verdict, after which no look tells anything,
 * takes none as told and tells every recent failure (each one already told is a 409, done),
 * rather than miss one the status no longer counts anew (review); planning never waits on
 * Events (review).
 */
async function withTold(kube: Kube, spec: EphemeralJobSpec, o: EjobObserved & { readable: true; notes: string[] }): Promise<EjobObservation> {
  const uid = o.job.metadata.uid;
  if (uid === undefined || ((o.job.status?.failed ?? 0) === 0 && !o.pods.some((p) => podState(p, uid) === 'failed'))) return o;
  if (!mayTellFailures(o.job, spec, o.pods, kube.serverNow() ?? new Date())) return o;
  try {
    const list = await kube.list('v1', 'Event', o.job.metadata.namespace ?? '', { fieldSelector: `involvedObject.uid=${uid},reason=${POD_FAILED_REASON}` });
    return { ...o, told: new Set(list.items.map(nameOf)) };
  } catch (err) {
    const refused = refusedForGood(err);
    // For now (429, 5xx, no answer): unknown (planner.ts EjobObserved.toldUnlisted). Thrown,
    // an outage of Events stopped every plan of a job with a recent failure (review); taken
    // as "none told" in every look, each re-sent up to 50 Warnings (review).
    if (refused === undefined) return { ...o, toldUnlisted: true, notes: [...o.notes, `the job's failure Warnings could not be listed for now (${(err as Error).message}): told as the status counts them, or all recent ones with a verdict`] };
    return { ...o, notes: [...o.notes, `the job's failure Warnings could not be listed (${refused.message}): failures told as the status counts them`] };
  }
}

/**
 * A job being deleted (`job`), or gone (null): what it may have left behind. Its Lease is
 * read, and if it holds a record, the job is read again *after* it: the planner deletes the
 * Lease only when that later read shows the record's job gone for good (lease-cleanup.ts),
 * so a job created again under the name, which may already have written its own record, is
 * never robbed of it (README.md, "When a job goes"). Null when there is nothing to do: the
 * job is gone and no record is left.
 */
async function departed(kube: Kube, cfg: LeaseConfig, jobRef: ObjectRef, job: EphemeralJobObject | null): Promise<EjobObservation | null> {
  const owner = leaseOwner(await kube.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: cfg.namespace, name: cfg.name }));
  if (owner === undefined) return job === null ? null : { readable: true, departed: true, job, notes: ['no Lease record to delete'] };
  const raw = await kube.get(jobRef);
  const after = raw === null ? null : EphemeralJobObject.safeParse(raw);
  if (after !== null && !after.success) return unreadableJob(jobRef, after.error.issues);
  return { readable: true, departed: true, job: after === null ? null : after.data, lease: { namespace: cfg.namespace, name: cfg.name, owner }, notes: [] };
}

/** A job whose Lease a newer ephemera wrote: nothing is decided for it, nor its Lease written (lease-record.ts laterRecordVersion). */
function laterRecord(ref: { namespace?: string; name: string }, cfg: LeaseConfig, v: number): EjobObservation {
  return { readable: false, notes: [], warnings: [`job ${ref.namespace ?? ''}/${ref.name} skipped: its Lease ${cfg.namespace}/${cfg.name} holds a claims record of version ${v}, written by a newer ephemera (this one reads ${RECORD_VERSION}); this instance claims nothing for the job and leaves its Lease alone (README.md, "Upgrading")`] };
}

function unreadableJob(ref: { namespace?: string; name: string }, issues: Parameters<typeof formatZodIssues>[0]): EjobObservation {
  return { readable: false, notes: [], warnings: [`job ${ref.namespace ?? ''}/${ref.name} skipped: unreadable (${formatZodIssues(issues, '')})`] };
}

/**
 * The pods a LIST returns, and a warning for each it could not read. Each pod is read through
 * LISTED_POD_VIEW as the answer arrives: checked against the schema whole (pods that plainly
 * fit it skip zod: pod-shape.ts), then trimmed to what the planner reads (listed-pod.ts), so a
 * reconcile never holds its job's pods whole (review82 H2); a LIST of a large job's pods is
 * read once or twice per reconcile.
 */
async function listPods(kube: Kube, namespace: string, query: { labelSelector: string }): Promise<{ pods: readonly Pod[]; notes: string[]; warnings?: string[] }> {
  const list = await kube.list('v1', 'Pod', namespace, { ...query, view: LISTED_POD_VIEW });
  const pods: Pod[] = [];
  const warnings: string[] = [];
  for (const item of list.items) {
    if ('pod' in item) pods.push(item.pod);
    else warnings.push(item.unreadable);
  }
  // Frozen: the planner keeps what it sorts out of a list that cannot change (targets.ts).
  return { pods: Object.freeze(pods), notes: [], ...(warnings.length > 0 ? { warnings } : {}) };
}

const warned = (listed: { warnings?: string[] }): { warnings?: string[] } => (listed.warnings ? { warnings: listed.warnings } : {});

function nameOf(item: unknown): string {
  const m = (item as { metadata?: { name?: unknown } } | null)?.metadata;
  return typeof m?.name === 'string' ? m.name : '?';
}
