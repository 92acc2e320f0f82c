import type { Envelope } from '../api/envelope.ts';
import { EJOB, EphemeralJobObject, parseEjobSpec } from '../api/ephemeraljob.ts';
import { Pod } from '../api/pod.ts';
import { selectorMatches, selectorToQuery } from '../api/selector.ts';
import type { Controller, Route } from '../engine/controller.ts';
import type { Plan } from '../engine/plan.ts';
import type { Kube } from '../kube/kube.ts';
import { ownedBy } from './pod-state.ts';
import { plan, type EjobObserved } from './planner.ts';

/** Observed state plus what observation had to skip (logged with the plan). */
export interface EjobObservation extends EjobObserved {
  notes: string[];
}

const KEY_PREFIX = `${EJOB.kind}/`;

/** The EphemeralJob controller: routing and observation around the pure planner. */
export const ejobController: Controller<EjobObservation> = {
  name: 'ejob',
  route,
  observe,
  plan(observed: EjobObservation, now: Date): Plan {
    const p = plan(observed, now);
    return { ...p, notes: [...observed.notes, ...(p.notes ?? [])] };
  },
};

/** "EphemeralJob/<ns>/<name>" */
export function jobKey(namespace: string, name: string): string {
  return `${KEY_PREFIX}${namespace}/${name}`;
}

function parseKey(key: string): { namespace: string; name: string } | null {
  if (!key.startsWith(KEY_PREFIX)) return null;
  const [namespace, name, ...rest] = key.slice(KEY_PREFIX.length).split('/');
  return namespace && name && rest.length === 0 ? { namespace, name } : null;
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
    if (!job.success || isFinished(job.data)) continue;
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

function isFinished(job: EphemeralJobObject): boolean {
  const phase = job.status?.phase;
  return (phase === 'Succeeded' || phase === 'Failed') && job.status?.completionTime !== undefined && job.metadata.deletionTimestamp === undefined;
}

/** Read the job and the pods its selector matches (one GET, one LIST filtered by the API server). */
async function observe(key: string, kube: Kube): Promise<EjobObservation | null> {
  const ref = parseKey(key);
  if (!ref) throw new Error(`not an EphemeralJob key: ${key}`);
  const raw = await kube.get({ apiVersion: EJOB.apiVersion, kind: EJOB.kind, ...ref });
  if (raw === null) return null;
  const job = EphemeralJobObject.safeParse(raw);
  if (!job.success) return { job: brokenJob(raw, ref), pods: [], notes: [`job metadata unreadable: ${job.error.message}`] };
  const spec = parseEjobSpec(job.data.spec);
  if (!spec.ok || isFinished(job.data) || job.data.metadata.deletionTimestamp !== undefined) return { job: job.data, pods: [], notes: [] };
  const list = await kube.list('v1', 'Pod', ref.namespace, { labelSelector: selectorToQuery(spec.spec.selector) });
  const pods: Pod[] = [];
  const notes: string[] = [];
  for (const item of list.items) {
    const p = Pod.safeParse(item);
    if (p.success) pods.push(p.data);
    else notes.push(`pod ${nameOf(item)} skipped: unreadable (${p.error.issues.map((i) => i.path.join('.')).join(', ')})`);
  }
  return { job: job.data, pods, notes };
}

function nameOf(item: unknown): string {
  const m = (item as { metadata?: { name?: unknown } } | null)?.metadata;
  return typeof m?.name === 'string' ? m.name : '?';
}

/** A job whose metadata does not parse cannot be planned; present it as an invalid spec. */
function brokenJob(raw: unknown, ref: { namespace: string; name: string }): EphemeralJobObject {
  const meta = (raw as { metadata?: Record<string, unknown> }).metadata ?? {};
  return { metadata: { ...meta, name: ref.name, namespace: ref.namespace }, spec: undefined } as EphemeralJobObject;
}
