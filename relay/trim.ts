// What the relay keeps of each object: enough to route and to exit early, nothing else.
// Trimming at the door keeps the relay's memory small (10,000 pods) and envelopes short.
// List items and watch objects go through the same functions here, from raw JSON, so one
// object has one fingerprint however it arrived.
import { formatZodIssues } from '../functions/api/field-path.ts';
import { EJOB_ID_ENV } from '../functions/api/names.ts';
import { jobFinished, jobTtls } from '../functions/ejob/finished.ts';
import { Pod } from '../functions/api/pod.ts';
import { trimPodForSidecar } from '../functions/sidecar/predicate.ts';
import { STRATEGY_ANNOTATION } from '../functions/sidecar/strategy.ts';
import { trimPlainPod } from './pod-shape.ts';
import type { Decoded, Unreadable } from './reflector.ts';

/** A trimmed EphemeralJob: what the relay's filter and resync need. */
export interface JobView {
  namespace: string;
  name: string;
  uid?: string;
  /** Not part of the fingerprint when `generation` is known (see jobFingerprint). */
  resourceVersion?: string;
  /** metadata.generation: the API server bumps it on every spec change, never on a status write. */
  generation?: number;
  deletionTimestamp?: string;
  finalizers?: string[];
  selector?: unknown;
  finished: boolean;
  /** When a TTL makes the job due for deletion (ms since epoch), if one applies. */
  expiresAt?: number;
}

/**
 * A pod as the relay keeps and forwards it: the sidecar predicate's fields (marking env
 * vars, container states), plus labels and this job's ownership marks on ephemeral
 * containers and their states (the EphemeralJob router and the planner need those).
 */
export function trimPod(pod: Pod): Pod {
  const base = trimPodForSidecar(pod);
  const m = pod.metadata;
  const ephemeralContainers = (pod.spec.ephemeralContainers ?? []).map((c) => ({
    name: c.name,
    env: (c.env ?? []).filter((e) => e.name === EJOB_ID_ENV).map((e) => ({ name: e.name, value: e.value })),
  }));
  const ephemeralContainerStatuses = (pod.status?.ephemeralContainerStatuses ?? []).map((s) => ({
    name: s.name,
    state: s.state?.terminated ? { terminated: { exitCode: s.state.terminated.exitCode } } : s.state?.running ? { running: {} } : { waiting: { reason: s.state?.waiting?.reason } },
  }));
  return {
    ...base,
    metadata: { ...base.metadata, labels: m.labels, creationTimestamp: m.creationTimestamp, resourceVersion: m.resourceVersion },
    spec: { ...base.spec, nodeName: pod.spec.nodeName, ephemeralContainers },
    status: { ...base.status, ephemeralContainerStatuses },
  };
}

/**
 * The fields of a trimmed pod whose change matters (not the resourceVersion: it always
 * changes), as JSON text: the pod's snapshot as the relay sends it. The labels come first in
 * the metadata and the name right after them, so a change of the labels alone can be told
 * from the text (labelsChangedOnly) without parsing it or keeping anything more per pod.
 */
export function podFingerprint(trimmed: Pod): string {
  const m = trimmed.metadata;
  const metadata = { labels: m.labels, name: m.name, namespace: m.namespace, uid: m.uid, deletionTimestamp: m.deletionTimestamp, creationTimestamp: m.creationTimestamp, annotations: m.annotations };
  return JSON.stringify({ metadata, spec: trimmed.spec, status: trimmed.status });
}

const LABELS_AT = '{"metadata":{"labels":'.length;
const NO_LABELS_AT = '{"metadata":{'.length;

/**
 * A fingerprint cut in two: the labels' JSON ('' without labels) and the rest, from the
 * name on. Labels hold only strings, and JSON.stringify escapes every quote inside a string,
 * so the first `},"name":` after the labels' start is where they end.
 */
function splitLabels(fp: string): { labels: string; rest: string } {
  if (!fp.startsWith('{"metadata":{"labels":')) return { labels: '', rest: fp.slice(NO_LABELS_AT) };
  const end = fp.indexOf('},"name":', LABELS_AT) + 1;
  return { labels: fp.slice(LABELS_AT, end), rest: fp.slice(end + 1) };
}

/**
 * When two fingerprints of one pod differ in its labels and nothing else: the labels it had
 * before (undefined: none). Null when something else differs too, or nothing does.
 */
export function labelsChangedOnly(previous: string, current: string): { before: Record<string, string> | undefined } | null {
  const a = splitLabels(previous);
  const b = splitLabels(current);
  if (a.rest !== b.rest || a.labels === b.labels) return null;
  return { before: a.labels === '' ? undefined : (JSON.parse(a.labels) as Record<string, string>) };
}

/**
 * A raw pod (list item or watch object) → trimmed, keyed and fingerprinted; or why not.
 * A pod whose read fields plainly fit the schema is trimmed in one pass without zod
 * (pod-shape.ts; proven to give what decodePodWithZod gives); anything else goes through zod.
 */
export function decodePod(raw: unknown): Decoded<Pod> | Unreadable {
  const trimmed = trimPlainPod(raw);
  return trimmed ? decoded(trimmed) : validated(raw, pickPod(raw));
}

/** decodePod with zod for every pod: the plain path the shortcut is held to (tests). */
export function decodePodWithZod(raw: unknown): Decoded<Pod> | Unreadable {
  return validated(raw, pickPod(raw));
}

function validated(raw: unknown, picked: unknown): Decoded<Pod> | Unreadable {
  const parsed = Pod.safeParse(picked);
  if (!parsed.success) return { key: keyOf(raw), error: formatZodIssues(parsed.error.issues, '') };
  return decoded(trimPod(parsed.data));
}

function decoded(object: Pod): Decoded<Pod> {
  return { key: `${object.metadata.namespace ?? ''}/${object.metadata.name}`, fingerprint: podFingerprint(object), object };
}

/** A raw EphemeralJob → its view, keyed and fingerprinted (jobFingerprint). */
export function decodeJob(raw: unknown): Decoded<JobView> | Unreadable {
  const job = trimJob(raw as Record<string, unknown>);
  if (!job) return { key: keyOf(raw), error: 'EphemeralJob without metadata.name or metadata.namespace' };
  return { key: `${job.namespace}/${job.name}`, fingerprint: jobFingerprint(job), object: job };
}

/**
 * What can give a job's reconcile work (issue 10): its identity, a spec change (the
 * generation: Kubernetes bumps it for a custom resource with a status subresource on every
 * spec change, never on a status write), deletion and finalizers, the selector, the verdict
 * (finished) and the TTL expiry. Not the resourceVersion: the functions' own status writes
 * would come back as job events, 3 reads each, to learn nothing. A status someone else edits
 * is repaired by the periodic resync, which replays every unfinished job. Without a
 * generation (an API server that does not set one) every change counts, as before.
 */
export function jobFingerprint(job: JobView): string {
  if (job.generation === undefined) return JSON.stringify(job);
  const { resourceVersion: _rv, ...rest } = job;
  return JSON.stringify(rest);
}

/** A job's routing view; finished jobs ignore pod events. Null without a name or namespace. */
export function trimJob(raw: Record<string, unknown>): JobView | null {
  const meta = raw?.metadata as { name?: string; namespace?: string; uid?: string; resourceVersion?: string; generation?: unknown; deletionTimestamp?: unknown; creationTimestamp?: unknown; finalizers?: unknown } | undefined;
  if (typeof meta?.name !== 'string' || typeof meta.namespace !== 'string') return null;
  const spec = raw.spec as { selector?: unknown } | undefined;
  const status = raw.status as { phase?: string; completionTime?: unknown } | undefined;
  const finished = jobFinished(status) && meta.deletionTimestamp === undefined;
  const ttl = jobTtls(raw.spec);
  const expiresAt = expiry(finished ? status?.completionTime : undefined, ttl.finished, meta.creationTimestamp, ttl.created);
  const finalizers = Array.isArray(meta.finalizers) ? meta.finalizers.filter((f): f is string => typeof f === 'string') : [];
  return {
    namespace: meta.namespace,
    name: meta.name,
    uid: meta.uid,
    resourceVersion: meta.resourceVersion,
    ...(typeof meta.generation === 'number' ? { generation: meta.generation } : {}),
    ...(typeof meta.deletionTimestamp === 'string' ? { deletionTimestamp: meta.deletionTimestamp } : {}),
    ...(finalizers.length > 0 ? { finalizers } : {}),
    selector: spec?.selector,
    finished,
    ...(expiresAt !== undefined ? { expiresAt } : {}),
  };
}

/** The earlier of completion + ttlSecondsAfterFinished and creation + ttlSecondsAfterCreated. */
function expiry(completed: unknown, ttlFinished: unknown, created: unknown, ttlCreated: unknown): number | undefined {
  const at = (t: unknown, ttl: unknown): number => (typeof t === 'string' && typeof ttl === 'number' ? Date.parse(t) + ttl * 1000 : NaN);
  const times = [at(completed, ttlFinished), at(created, ttlCreated)].filter((n) => Number.isFinite(n));
  return times.length > 0 ? Math.min(...times) : undefined;
}

/**
 * Only the fields trimPod reads, copied from the raw pod before validation: validating a
 * whole pod (volumes, probes, resources…) costs more than everything else the relay does
 * per event. Anything odd is passed through unchanged, so validation still names it.
 */
export function pickPod(raw: unknown): unknown {
  if (!isObject(raw) || !isObject(raw.metadata) || !isObject(raw.spec)) return raw;
  const { metadata: m, spec: s } = raw;
  const status = raw.status;
  return {
    metadata: { name: m.name, namespace: m.namespace, uid: m.uid, labels: m.labels, creationTimestamp: m.creationTimestamp, resourceVersion: m.resourceVersion, deletionTimestamp: m.deletionTimestamp, annotations: pickStrategy(m.annotations) },
    spec: { nodeName: s.nodeName, restartPolicy: s.restartPolicy, containers: pickContainers(s.containers), initContainers: pickContainers(s.initContainers), ephemeralContainers: pickContainers(s.ephemeralContainers) },
    status: isObject(status) ? { phase: status.phase, conditions: pickConditions(status.conditions), containerStatuses: pickStatuses(status.containerStatuses), ephemeralContainerStatuses: pickStatuses(status.ephemeralContainerStatuses) } : status,
  };
}

/** The one annotation trimPod keeps (a map that is no map is passed on, for zod to name). */
function pickStrategy(annotations: unknown): unknown {
  if (!isObject(annotations)) return annotations;
  return Object.hasOwn(annotations, STRATEGY_ANNOTATION) ? { [STRATEGY_ANNOTATION]: annotations[STRATEGY_ANNOTATION] } : undefined;
}

function pickContainers(list: unknown): unknown {
  if (!Array.isArray(list)) return list;
  // restartPolicyRules: whether a main container's exit is final (sidecar/predicate.ts).
  return list.map((c: unknown) => (isObject(c) ? { name: c.name, env: c.env, restartPolicy: c.restartPolicy, restartPolicyRules: c.restartPolicyRules } : c));
}

/** The conditions' type and status: the predicate reads AllContainersRestarting (review71). */
function pickConditions(list: unknown): unknown {
  if (!Array.isArray(list)) return list;
  return list.map((c: unknown) => (isObject(c) ? { type: c.type, status: c.status } : c));
}

function pickStatuses(list: unknown): unknown {
  if (!Array.isArray(list)) return list;
  return list.map((c: unknown) => (isObject(c) ? { name: c.name, state: c.state } : c));
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function keyOf(raw: unknown): string {
  const m = isObject(raw) && isObject(raw.metadata) ? raw.metadata : {};
  return `${typeof m.namespace === 'string' ? m.namespace : '?'}/${typeof m.name === 'string' ? m.name : '?'}`;
}
