// The plain-JavaScript road for the usual pod: check the fields the relay reads and build
// the trimmed pod (trim.ts's trimPod) in one pass, straight from the raw watch object.
// Validating every watch event with zod cost a tenth of the relay's CPU; picking the read
// fields into a copy, checking the copy, then trimming it in two steps allocated ~7.6 KB per
// event, more than JSON.parse of the whole pod, and that garbage was a good part of the
// relay's GC time (issue 11). Only a yes is trusted: anything this road does not recognise
// (a wrong type, an own `__proto__` key) goes through zod, which then names the problem.
// test/relay/pod-shape.test.ts proves with fast-check that both roads give the same key,
// error, trimmed pod and fingerprint, and that every pod zod accepts takes this road.
import { EJOB_ID_ENV } from '../functions/api/names.ts';
import type { ContainerState, Pod } from '../functions/api/pod.ts';
import { ALL_CONTAINERS_RESTARTING, MARK_ENVS, strategyAnnotation } from '../functions/sidecar/predicate.ts';
import { STRATEGY_ANNOTATION } from '../functions/sidecar/strategy.ts';

type Obj = Record<string, unknown>;
type Env = { name: string; value: string | undefined }[];

/** A plain object; one with an own `__proto__` key is left to zod (its copy would differ). */
function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype && !Object.hasOwn(v, '__proto__');
}

const optString = (v: unknown): v is string | undefined => v === undefined || typeof v === 'string';

/** A string → string map (z.record). */
function isLabels(v: unknown): v is Record<string, string> | undefined {
  if (v === undefined) return true;
  if (!isObj(v)) return false;
  for (const k in v) if (typeof v[k] !== 'string') return false;
  return true;
}

function isMeta(m: unknown): m is Obj {
  return isObj(m) && typeof m.name === 'string' && m.name.length > 0 && optString(m.namespace) && optString(m.uid) && optString(m.resourceVersion) && optString(m.creationTimestamp) && optString(m.deletionTimestamp) && isLabels(m.labels) && plainStrategy(m.annotations);
}

/** The annotations as far as the trim reads them: a map whose strategy annotation, if any, is a string. */
function plainStrategy(a: unknown): boolean {
  return a === undefined || (isObj(a) && (!Object.hasOwn(a, STRATEGY_ANNOTATION) || typeof a[STRATEGY_ANNOTATION] === 'string'));
}

function isEnv(list: unknown): boolean {
  if (list === undefined) return true;
  if (!Array.isArray(list)) return false;
  for (const e of list as unknown[]) if (!isObj(e) || typeof e.name !== 'string' || !optString(e.value)) return false;
  return true;
}

/** The entries of an env list whose name `keep` accepts, as {name, value}; undefined when the list is not plainly valid. */
function keptEnv(list: unknown, keep: (name: string) => boolean): Env | undefined {
  const out: Env = [];
  if (list === undefined) return out;
  if (!Array.isArray(list)) return undefined;
  for (const e of list as unknown[]) {
    if (!isObj(e) || typeof e.name !== 'string' || !optString(e.value)) return undefined;
    if (keep(e.name)) out.push({ name: e.name, value: e.value });
  }
  return out;
}

const isMark = (name: string): boolean => MARK_ENVS.has(name);
const isJobId = (name: string): boolean => name === EJOB_ID_ENV;

/**
 * Regular or ephemeral containers as {name, env: the kept entries} and, for regular ones
 * (`restart`), their own restartPolicy and restartPolicyRules, as trimPodForSidecar keeps
 * them; undefined when not plainly valid.
 */
function containers(list: unknown, keep: (name: string) => boolean, restart = false): { name: string; env: Env }[] | undefined {
  if (!Array.isArray(list)) return undefined;
  const out: { name: string; env: Env }[] = [];
  for (const c of list as unknown[]) {
    if (!isObj(c) || typeof c.name !== 'string' || !optString(c.restartPolicy)) return undefined;
    const env = keptEnv(c.env, keep);
    if (env === undefined) return undefined;
    out.push(restart ? { name: c.name, env, ...(c.restartPolicy ? { restartPolicy: c.restartPolicy } : {}), ...(c.restartPolicyRules !== undefined ? { restartPolicyRules: c.restartPolicyRules } : {}) } : { name: c.name, env });
  }
  return out;
}

/** Init containers: only native sidecars (restartPolicy Always) are kept, as trimPodForSidecar does. */
function nativeSidecars(list: unknown): { name: string; restartPolicy: string }[] | undefined {
  if (list === undefined) return [];
  if (!Array.isArray(list)) return undefined;
  const out: { name: string; restartPolicy: string }[] = [];
  for (const c of list as unknown[]) {
    if (!isObj(c) || typeof c.name !== 'string' || !optString(c.restartPolicy) || !isEnv(c.env)) return undefined;
    if (c.restartPolicy === 'Always') out.push({ name: c.name, restartPolicy: c.restartPolicy });
  }
  return out;
}

/** A container state that plainly fits the schema, or false. */
function plainState(s: unknown): Obj | undefined | false {
  if (s === undefined) return undefined;
  if (!isObj(s)) return false;
  const { waiting: w, running: r, terminated: t } = s;
  if (w !== undefined && !(isObj(w) && optString(w.reason) && optString(w.message))) return false;
  if (r !== undefined && !(isObj(r) && optString(r.startedAt))) return false;
  if (t !== undefined && !(isObj(t) && typeof t.exitCode === 'number' && Number.isFinite(t.exitCode) && optString(t.reason) && optString(t.message) && optString(t.startedAt) && optString(t.finishedAt))) return false;
  return s;
}

/** A regular container's state as the sidecar predicate keeps it (which state, and the exit code). */
function sidecarState(s: Obj | undefined): ContainerState | undefined {
  if (s === undefined) return undefined;
  if (s.terminated) return { terminated: { exitCode: (s.terminated as { exitCode: number }).exitCode } };
  if (s.running) return { running: {} };
  return s.waiting ? { waiting: {} } : {};
}

/** An injected container's state as the router and planner read it (the waiting reason too). */
function ephemeralState(s: Obj | undefined): ContainerState {
  if (s?.terminated) return { terminated: { exitCode: (s.terminated as { exitCode: number }).exitCode } };
  if (s?.running) return { running: {} };
  return { waiting: { reason: (s?.waiting as { reason?: string } | undefined)?.reason } };
}

/** Container statuses as {name, state: trimmed}; undefined when not plainly valid. */
function statuses<S>(list: unknown, trim: (s: Obj | undefined) => S): { name: string; state: S }[] | undefined {
  const out: { name: string; state: S }[] = [];
  if (list === undefined) return out;
  if (!Array.isArray(list)) return undefined;
  for (const x of list as unknown[]) {
    if (!isObj(x) || typeof x.name !== 'string') return undefined;
    const state = plainState(x.state);
    if (state === false) return undefined;
    out.push({ name: x.name, state: trim(state) });
  }
  return out;
}

/**
 * The conditions as trimPodForSidecar keeps them: only AllContainersRestarting (review71);
 * undefined when any one is not plainly {type, status} strings, as the schema wants them all.
 */
function restartingConditions(list: unknown): { type: string; status: string }[] | undefined {
  const out: { type: string; status: string }[] = [];
  if (list === undefined) return out;
  if (!Array.isArray(list)) return undefined;
  for (const c of list as unknown[]) {
    if (!isObj(c) || typeof c.type !== 'string' || typeof c.status !== 'string') return undefined;
    if (c.type === ALL_CONTAINERS_RESTARTING) out.push({ type: c.type, status: c.status });
  }
  return out;
}

/**
 * trimPod(pod) for a raw pod whose read fields plainly fit the Pod schema, built without
 * the intermediate copies; undefined means "ask zod", not "invalid".
 */
export function trimPlainPod(raw: unknown): Pod | undefined {
  if (!isObj(raw) || !isMeta(raw.metadata) || !isObj(raw.spec)) return undefined;
  const { metadata: m, spec: s } = raw;
  const st = raw.status;
  if (!(st === undefined || (isObj(st) && optString(st.phase))) || !optString(s.nodeName) || !optString(s.restartPolicy)) return undefined;
  const regular = containers(s.containers, isMark, true);
  const init = nativeSidecars(s.initContainers);
  const ephemeral = s.ephemeralContainers === undefined ? [] : containers(s.ephemeralContainers, isJobId);
  const status = plainStatus(st as Obj | undefined);
  if (!regular || !init || !ephemeral || !status) return undefined;
  return {
    metadata: { name: m.name as string, namespace: m.namespace as string | undefined, uid: m.uid as string | undefined, deletionTimestamp: m.deletionTimestamp as string | undefined, annotations: strategyAnnotation(m.annotations as Record<string, string> | undefined), labels: m.labels as Record<string, string> | undefined, creationTimestamp: m.creationTimestamp as string | undefined, resourceVersion: m.resourceVersion as string | undefined },
    spec: { restartPolicy: s.restartPolicy, containers: regular, initContainers: init, nodeName: s.nodeName, ephemeralContainers: ephemeral },
    status,
  };
}

/** The status as trimPod keeps it (keys in its order: the fingerprint is its JSON); undefined when not plainly valid. */
function plainStatus(st: Obj | undefined): Pod['status'] | undefined {
  const regularStatuses = statuses(st?.containerStatuses, sidecarState);
  const ephemeralStatuses = statuses(st?.ephemeralContainerStatuses, ephemeralState);
  const conditions = restartingConditions(st?.conditions);
  if (!regularStatuses || !ephemeralStatuses || !conditions) return undefined;
  return { phase: st?.phase as string | undefined, containerStatuses: regularStatuses, ...(conditions.length > 0 ? { conditions } : {}), ephemeralContainerStatuses: ephemeralStatuses };
}
