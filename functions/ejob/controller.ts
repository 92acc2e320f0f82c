import { objectKey, parseObjectKey, type Envelope } from '../api/envelope.ts';
import { EJOB, EphemeralJobObject, formatZodIssues, parseEjobSpec, type EphemeralJobSpec } from '../api/ephemeraljob.ts';
import { Pod } from '../api/pod.ts';
import { jobFinished } from './finished.ts';
import { selectorMatches, selectorToQuery } from '../api/selector.ts';
import type { Controller, Route } from '../engine/controller.ts';
import type { Plan } from '../engine/plan.ts';
import type { Kube } from '../kube/kube.ts';
import { planJobEvent, planPodEvent, slotsAfter, type PodEventObserved } from './incremental.ts';
import { readLedger, type Ledger } from './ledger.ts';
import { ownedBy } from './pod-state.ts';
import { plan, type EjobObserved } from './planner.ts';

/**
 * Observed state plus what observation had to skip (logged with the plan). 'full' read
 * every pod the selector matches; 'pod' read the job, the event's pod and the queue heads.
 */
export type EjobObservation =
  | ({ mode: 'full' } & EjobObserved & { notes: string[] })
  | ({ mode: 'pod' } & PodEventObserved & { notes: string[] })
  | { mode: 'job'; job: EphemeralJobObject; spec: EphemeralJobSpec; ledger: Ledger; notes: string[] }
  /** Not readable as an EphemeralJob at all (metadata): nothing can be written safely. */
  | { mode: 'unreadable'; notes: string[] };

/** Queued pods read beyond the free slots, in case some turn out gone. */
const CANDIDATE_SLACK = 2;

/** The EphemeralJob controller: routing and observation around the pure planner. */
export const ejobController: Controller<EjobObservation> = {
  name: 'ejob',
  route,
  observe,
  // Pod events and job updates (often our own status write) mostly change nothing; a
  // deleted job is usually gone already. Creations and resyncs read everything under the Lease.
  cheapFirst: (e) => e.data.kind === 'Pod' || e.data.event === 'MODIFIED' || e.data.event === 'DELETED',
  plan(observed: EjobObservation, now: Date): Plan {
    if (observed.mode === 'unreadable') return { actions: [], notes: observed.notes };
    const p = observed.mode === 'pod' ? planPodEvent(observed, now) : observed.mode === 'job' ? planJobEvent(observed, now) : plan(observed, now);
    return { ...p, notes: [...observed.notes, ...(p.notes ?? [])] };
  },
};

/** "EphemeralJob/<ns>/<name>" */
export function jobKey(namespace: string, name: string): string {
  return objectKey(EJOB.kind, namespace, name);
}

/**
 * A job event goes to that job. A pod event goes to the unfinished jobs in its namespace
 * whose selector matches the pod, or whose uid one of its ephemeral containers carries.
 */
async function route(event: Envelope, kube: Kube): Promise<Route> {
  const { kind, namespace, name } = event.data;
  if (kind === 'EphemeralJob') return { keys: [jobKey(namespace, name)] };
  const jobs = (await kube.list(EJOB.apiVersion, EJOB.kind, namespace)).items;
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
 * Read the job, then either (pod event, ledger present) the event's pod and the queued
 * pods it may inject into — a cost independent of how many pods the job has — or every
 * pod its selector matches (one LIST, filtered by the API server).
 */
async function observe(key: string, kube: Kube, trigger?: Envelope): Promise<EjobObservation | null> {
  const ref = parseObjectKey(EJOB.kind, key);
  if (!ref) throw new Error(`not an EphemeralJob key: ${key}`);
  const raw = await kube.get({ apiVersion: EJOB.apiVersion, kind: EJOB.kind, ...ref });
  if (raw === null) return null;
  const job = EphemeralJobObject.safeParse(raw);
  // The API server validates metadata, so this is a schema of ours out of step with it: skip, say why.
  if (!job.success) return { mode: 'unreadable', notes: [`skipped: job ${ref.namespace}/${ref.name} unreadable (${formatZodIssues(job.error.issues, '')})`] };
  const spec = parseEjobSpec(job.data.spec);
  if (!spec.ok || jobFinished(job.data.status) || job.data.metadata.deletionTimestamp !== undefined) return { mode: 'full', job: job.data, pods: [], notes: [] };
  if (trigger?.data.kind === 'Pod') {
    const partial = await observePodEvent(kube, { job: job.data, spec: spec.spec }, trigger);
    if (partial) return partial;
  }
  const ledger = readLedger(job.data.status);
  if (trigger?.data.kind === 'EphemeralJob' && trigger.data.event === 'MODIFIED' && ledger) {
    return { mode: 'job', job: job.data, spec: spec.spec, ledger, notes: [] };
  }
  const list = await kube.list('v1', 'Pod', ref.namespace, { labelSelector: selectorToQuery(spec.spec.selector) });
  const pods: Pod[] = [];
  const notes: string[] = [];
  for (const item of list.items) {
    const p = Pod.safeParse(item);
    if (p.success) pods.push(p.data);
    else notes.push(`pod ${nameOf(item)} skipped: unreadable (${formatZodIssues(p.error.issues, '')})`);
  }
  return { mode: 'full', job: job.data, pods, notes };
}

async function observePodEvent(kube: Kube, j: { job: EphemeralJobObject; spec: EphemeralJobSpec }, trigger: Envelope): Promise<EjobObservation | null> {
  const { job, spec } = j;
  const ledger = readLedger(job.status);
  if (!ledger || ledger.generation !== (job.metadata.generation ?? 0)) return null;
  const namespace = job.metadata.namespace ?? trigger.data.namespace;
  const rawPod = await kube.get({ apiVersion: 'v1', kind: 'Pod', namespace, name: trigger.data.name });
  const parsed = rawPod === null ? null : Pod.safeParse(rawPod);
  if (parsed && !parsed.success) return null; // unreadable pod: let the full path skip it with a reason
  const pod = parsed ? parsed.data : null;
  const want = Math.min(ledger.queue.length, slotsAfter(spec, ledger, pod, job.metadata.uid ?? '') + (pod ? CANDIDATE_SLACK : 0));
  const candidates: PodEventObserved['candidates'] = [];
  for (const name of ledger.queue.slice(0, want)) {
    const c = await kube.get({ apiVersion: 'v1', kind: 'Pod', namespace, name });
    const p = c === null ? null : Pod.safeParse(c);
    candidates.push({ name, pod: p?.success ? p.data : null });
  }
  return { mode: 'pod', job, spec, ledger, pod, candidates, notes: [] };
}

function nameOf(item: unknown): string {
  const m = (item as { metadata?: { name?: unknown } } | null)?.metadata;
  return typeof m?.name === 'string' ? m.name : '?';
}

