// A plain-JavaScript check that a raw pod (a LIST item, JSON-parsed) plainly fits the Pod
// schema, so the usual pod skips zod: a reconcile of a 1,000-pod job LISTs all of them, once
// or twice, and parsing each with zod (which also copies each one) was a large part of the
// client's cost. Only a yes is trusted: a pod this check does not recognise goes through
// zod, which then names the field that is wrong. test/api/pod-shape.test.ts proves with
// fast-check that a yes here is a yes from zod with an identical (deep-equal) pod, and that
// the planner decides the same from either. The relay does the same for its picked pods
// (relay/pod-shape.ts); this one checks every field the Pod schema declares.
import { isDeepFrozen } from './frozen.ts';
import { Pod } from './pod.ts';

type Obj = Record<string, unknown>;

/**
 * A plain object. One with an own `__proto__` key is left to zod: zod's copy of it would
 * differ (the key becomes a prototype assignment), and the shortcut returns the object as is.
 */
function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype && !Object.hasOwn(v, '__proto__');
}

const optString = (v: unknown): boolean => v === undefined || typeof v === 'string';
const optBool = (v: unknown): boolean => v === undefined || typeof v === 'boolean';
const isNumber = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);
const optNumber = (v: unknown): boolean => v === undefined || isNumber(v);

/** An array whose every item passes `item` (optional when `required` is false). */
function isList(v: unknown, item: (x: unknown) => boolean, required = false): boolean {
  if (v === undefined) return !required;
  if (!Array.isArray(v)) return false;
  for (const x of v) if (!item(x)) return false;
  return true;
}

/** A string → string map (z.record). */
function isStringMap(v: unknown): boolean {
  if (v === undefined) return true;
  if (!isObj(v)) return false;
  for (const k in v) if (typeof v[k] !== 'string') return false;
  return true;
}

const isOwnerRef = (r: unknown): boolean => isObj(r) && typeof r.apiVersion === 'string' && typeof r.kind === 'string' && typeof r.name === 'string' && typeof r.uid === 'string' && optBool(r.controller) && optBool(r.blockOwnerDeletion);

/** ObjectMeta (meta.ts); dates only as strings (zod also takes Date objects, which JSON never gives). */
function isMeta(m: unknown): boolean {
  return isObj(m) && typeof m.name === 'string' && m.name.length > 0 && optString(m.namespace) && optString(m.uid) && optString(m.resourceVersion) && optNumber(m.generation)
    && optString(m.creationTimestamp) && optString(m.deletionTimestamp) && isStringMap(m.labels) && isStringMap(m.annotations)
    && isList(m.finalizers, (f) => typeof f === 'string') && isList(m.ownerReferences, isOwnerRef);
}

const isEnvVar = (e: unknown): boolean => isObj(e) && typeof e.name === 'string' && optString(e.value);
const isVolume = (v: unknown): boolean => isObj(v) && typeof v.name === 'string';
const isContainer = (c: unknown): boolean => isObj(c) && typeof c.name === 'string' && optString(c.image) && isList(c.env, isEnvVar) && optString(c.restartPolicy) && optString(c.targetContainerName);

function isState(s: unknown): boolean {
  if (s === undefined) return true;
  if (!isObj(s)) return false;
  const { waiting: w, running: r, terminated: t } = s;
  if (w !== undefined && !(isObj(w) && optString(w.reason) && optString(w.message))) return false;
  if (r !== undefined && !(isObj(r) && optString(r.startedAt))) return false;
  return t === undefined || (isObj(t) && isNumber(t.exitCode) && optString(t.reason) && optString(t.message) && optString(t.startedAt) && optString(t.finishedAt));
}

const isContainerStatus = (s: unknown): boolean => isObj(s) && typeof s.name === 'string' && isState(s.state) && isState(s.lastState) && optNumber(s.restartCount) && optString(s.image) && optBool(s.ready);
const isCondition = (c: unknown): boolean => isObj(c) && typeof c.type === 'string' && typeof c.status === 'string';

function isSpec(s: unknown): boolean {
  return isObj(s) && optString(s.nodeName) && optString(s.restartPolicy) && optBool(s.shareProcessNamespace) && optBool(s.hostPID) && optBool(s.hostUsers)
    && isList(s.containers, isContainer, true) && isList(s.initContainers, isContainer) && isList(s.ephemeralContainers, isContainer)
    && isList(s.volumes, isVolume);
}

function isStatus(s: unknown): boolean {
  if (s === undefined) return true;
  return isObj(s) && optString(s.phase) && optString(s.reason) && isList(s.conditions, isCondition)
    && isList(s.containerStatuses, isContainerStatus) && isList(s.initContainerStatuses, isContainerStatus) && isList(s.ephemeralContainerStatuses, isContainerStatus);
}

/**
 * True when `raw` certainly passes the Pod schema and zod's result would equal it (deep
 * equal): every declared field has its declared type, every object on the way is plain.
 * False means "ask zod", not "invalid".
 */
export function plainPod(raw: unknown): raw is Pod {
  return isObj(raw) && optString(raw.apiVersion) && optString(raw.kind) && isMeta(raw.metadata) && isSpec(raw.spec) && isStatus(raw.status);
}

/** The result of Pod.safeParse. */
export type PodParse = ReturnType<typeof Pod.safeParse>;

/**
 * Pod.safeParse, but a pod that plainly fits (plainPod) is taken as it is, without zod's copy.
 * The same result either way (test/api/pod-shape.test.ts); errors always come from zod.
 */
export function parsePod(raw: unknown): PodParse {
  const kept = isDeepFrozen(raw);
  if (!(kept && plainKept.has(raw)) && !plainPod(raw)) return Pod.safeParse(raw);
  if (kept) plainKept.add(raw);
  return { success: true, data: raw } as PodParse;
}

/**
 * Pods found plain among values that can never change (LIST items the client keeps between
 * answers, api/frozen.ts): a warm reconcile of a 1,000-pod job checked every pod again on
 * every event (~3.5 ms).
 */
const plainKept = new WeakSet<object>();
