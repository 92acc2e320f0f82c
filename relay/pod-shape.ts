// A plain-JavaScript check that a picked pod (see pickPod in trim.ts) is one the Pod schema
// accepts, so the usual case skips zod: validating every watch event with zod cost a tenth
// of the relay's CPU, and its copy of each pod added to the garbage. Only a yes is trusted:
// anything this check does not recognise goes through zod, which then names the problem.
// test/relay/pod-shape.test.ts proves with fast-check that a yes here is a yes from zod and
// that both roads give the same trimmed pod and fingerprint.

type Obj = Record<string, unknown>;

/** A plain object; one with an own `__proto__` key is left to zod (its copy would differ). */
function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype && !Object.hasOwn(v, '__proto__');
}

const optString = (v: unknown): boolean => v === undefined || typeof v === 'string';

/** A string → string map (z.record). */
function isLabels(v: unknown): boolean {
  if (v === undefined) return true;
  if (!isObj(v)) return false;
  for (const k in v) if (typeof v[k] !== 'string') return false;
  return true;
}

function isMeta(m: unknown): boolean {
  return isObj(m) && typeof m.name === 'string' && m.name.length > 0 && optString(m.namespace) && optString(m.uid) && optString(m.resourceVersion) && optString(m.creationTimestamp) && optString(m.deletionTimestamp) && isLabels(m.labels);
}

function isEnv(list: unknown): boolean {
  if (list === undefined) return true;
  if (!Array.isArray(list)) return false;
  for (const e of list) if (!isObj(e) || typeof e.name !== 'string' || !optString(e.value)) return false;
  return true;
}

function isContainers(list: unknown, required: boolean): boolean {
  if (list === undefined) return !required;
  if (!Array.isArray(list)) return false;
  for (const c of list) if (!isObj(c) || typeof c.name !== 'string' || !optString(c.restartPolicy) || !isEnv(c.env)) return false;
  return true;
}

function isState(s: unknown): boolean {
  if (s === undefined) return true;
  if (!isObj(s)) return false;
  const { waiting: w, running: r, terminated: t } = s;
  if (w !== undefined && !(isObj(w) && optString(w.reason) && optString(w.message))) return false;
  if (r !== undefined && !(isObj(r) && optString(r.startedAt))) return false;
  if (t === undefined) return true;
  return isObj(t) && typeof t.exitCode === 'number' && Number.isFinite(t.exitCode) && optString(t.reason) && optString(t.message) && optString(t.startedAt) && optString(t.finishedAt);
}

function isStatuses(list: unknown): boolean {
  if (list === undefined) return true;
  if (!Array.isArray(list)) return false;
  for (const s of list) if (!isObj(s) || typeof s.name !== 'string' || !isState(s.state)) return false;
  return true;
}

function isStatus(s: unknown): boolean {
  if (s === undefined) return true;
  return isObj(s) && optString(s.phase) && isStatuses(s.containerStatuses) && isStatuses(s.ephemeralContainerStatuses);
}

/**
 * True when `picked` (pickPod's output: only the fields the relay reads) certainly passes
 * the Pod schema; false means "ask zod", not "invalid".
 */
export function plainPodShape(picked: unknown): boolean {
  if (!isObj(picked) || !isMeta(picked.metadata) || !isStatus(picked.status)) return false;
  const s = picked.spec;
  return isObj(s) && optString(s.nodeName) && optString(s.restartPolicy) && isContainers(s.containers, true) && isContainers(s.initContainers, false) && isContainers(s.ephemeralContainers, false);
}
