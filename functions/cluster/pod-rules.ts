// Pod defaulting and validation, after k8s.io/kubernetes pkg/apis/core/v1/defaults.go,
// pkg/apis/core/validation/validation.go and pkg/registry/core/pod/strategy.go — only the
// rules a controller that injects ephemeral containers or swaps images can run into.
import { ephemeralContainerProblems, hasOuterSpace, podBoundProblems, type ContainerProblem, type PodBounds } from '../api/container-rules.ts';
import { dns1123LabelProblems } from '../api/name-formats.ts';
import { jsonEqual } from '../api/json-equal.ts';
import { clone } from './patch.ts';
import { duplicate, fieldNotFound, forbidden, invalid, notSupported, required, tooLong, type FieldError } from './status.ts';

type Obj = Record<string, unknown>;
type Container = Obj & { name?: string; image?: string };

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);
const specOf = (pod: Obj): Obj => (isObj(pod.spec) ? pod.spec : {});

/** The tag an image reference carries ('latest' when it has neither tag nor digest). */
function imageTag(image: string): string {
  const [ref, digest] = image.split('@');
  const slash = (ref ?? '').lastIndexOf('/');
  const colon = (ref ?? '').lastIndexOf(':');
  if (colon > slash) return (ref ?? '').slice(colon + 1);
  return digest ? '' : 'latest';
}

/** SetDefaults_Container: pull policy from the tag, termination message path and policy; env fieldRefs' apiVersion. */
export function defaultContainer(c: Obj): void {
  // An image that does not parse (e.g. missing) has no tag, so it defaults to IfNotPresent.
  if (!c.imagePullPolicy) c.imagePullPolicy = typeof c.image === 'string' && c.image.trim() && imageTag(c.image) === 'latest' ? 'Always' : 'IfNotPresent';
  // Go's defaulting sees "" and null as unset alike.
  if (!c.terminationMessagePath) c.terminationMessagePath = '/dev/termination-log';
  if (!c.terminationMessagePolicy) c.terminationMessagePolicy = 'File';
  for (const p of arr(c.ports)) p.protocol ??= 'TCP';
  // SetDefaults_ObjectFieldSelector: a downward-API fieldRef without apiVersion reads pod v1.
  for (const e of arr(c.env)) {
    const ref = isObj(e.valueFrom) ? e.valueFrom.fieldRef : undefined;
    if (isObj(ref) && !ref.apiVersion) ref.apiVersion = 'v1';
  }
}

/** SetDefaults_PodSpec plus the container defaults, in place. */
export function defaultPod(pod: Obj): void {
  const spec = specOf(pod);
  pod.spec = spec;
  spec.restartPolicy ??= 'Always';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.securityContext ??= {};
  spec.enableServiceLinks ??= true;
  for (const list of ['containers', 'initContainers', 'ephemeralContainers']) arr(spec[list]).forEach(defaultContainer);
}

function validateContainerCommon(c: Container, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!c.name) errs.push(required(`${path}.name`));
  else for (const m of dns1123LabelProblems(String(c.name))) errs.push(invalid(`${path}.name`, c.name, m));
  if (!c.image) errs.push(required(`${path}.image`));
  else if (hasOuterSpace(String(c.image))) errs.push(invalid(`${path}.image`, c.image, 'must not have leading or trailing whitespace'));
  const tmp = c.terminationMessagePolicy;
  if (tmp !== 'File' && tmp !== 'FallbackToLogsOnError') errs.push(tmp ? notSupported(`${path}.terminationMessagePolicy`, tmp, ['File', 'FallbackToLogsOnError']) : required(`${path}.terminationMessagePolicy`));
  const ipp = c.imagePullPolicy;
  if (ipp !== 'Always' && ipp !== 'IfNotPresent' && ipp !== 'Never') errs.push(ipp ? notSupported(`${path}.imagePullPolicy`, ipp, ['Always', 'IfNotPresent', 'Never']) : required(`${path}.imagePullPolicy`));
  return errs;
}

/** Pod create: containers present and valid, names unique, no ephemeral containers yet. */
export function validatePodCreate(pod: Obj): FieldError[] {
  const spec = specOf(pod);
  const errs: FieldError[] = [];
  const containers = arr(spec.containers);
  if (containers.length === 0) errs.push(required('spec.containers'));
  const seen = new Set<string>();
  for (const [list, items] of [['containers', containers], ['initContainers', arr(spec.initContainers)]] as const) {
    items.forEach((c, i) => {
      errs.push(...validateContainerCommon(c, `spec.${list}[${i}]`));
      if (typeof c.name === 'string' && seen.has(c.name)) errs.push(duplicate(`spec.${list}[${i}].name`, c.name));
      if (typeof c.name === 'string') seen.add(c.name);
    });
  }
  const rp = spec.restartPolicy;
  if (rp !== 'Always' && rp !== 'OnFailure' && rp !== 'Never') errs.push(notSupported('spec.restartPolicy', rp, ['Always', 'OnFailure', 'Never']));
  if (arr(spec.ephemeralContainers).length > 0) errs.push(forbidden('spec.ephemeralContainers', 'cannot be set on create'));
  return errs;
}

/** The pod spec fields a user update may change, as ValidatePodUpdate lists them. */
const UPDATABLE = [
  '`spec.containers[*].image`',
  '`spec.initContainers[*].image`',
  '`spec.activeDeadlineSeconds`',
  '`spec.tolerations` (only additions to existing tolerations)',
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
];

function containerUpdateErrors(next: Obj[], old: Obj[], path: string): { errs: FieldError[]; stop: boolean } {
  if (next.length !== old.length) return { errs: [forbidden(path, 'pod updates may not add or remove containers')], stop: true };
  const errs: FieldError[] = [];
  next.forEach((c, i) => {
    if (!c.image) errs.push(required(`${path}[${i}].image`));
    else if (hasOuterSpace(String(c.image))) errs.push(invalid(`${path}[${i}].image`, c.image, 'must not have leading or trailing whitespace'));
  });
  return { errs, stop: false };
}

function deadlineErrors(next: unknown, old: unknown): FieldError[] {
  const path = 'spec.activeDeadlineSeconds';
  if (typeof next === 'number') {
    if (next < 0 || next > 2147483647) return [invalid(path, next, 'must be between 0 and 2147483647, inclusive')];
    if (typeof old === 'number' && old < next) return [invalid(path, next, 'must be less than or equal to previous value')];
    return [];
  }
  return typeof old === 'number' ? [invalid(path, next ?? null, 'must not update from a positive integer to nil value')] : [];
}

function tolerationErrors(next: Obj[], old: Obj[]): FieldError[] {
  const errs: FieldError[] = [];
  for (const o of old) {
    // tolerationSeconds may change; everything else of an existing toleration must stay.
    const kept = next.some((n) => jsonEqual({ ...o, tolerationSeconds: undefined }, { ...n, tolerationSeconds: undefined }));
    if (!kept) errs.push(forbidden('spec.tolerations', 'existing toleration can not be modified except its tolerationSeconds'));
  }
  return errs;
}

function changedKeys(a: Obj, b: Obj): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => !jsonEqual(a[k], b[k])).map((k) => `spec.${k}`);
}

/**
 * ValidatePodUpdate: on the main resource only container images, activeDeadlineSeconds,
 * added tolerations and (from negative to 1) terminationGracePeriodSeconds may change.
 */
export function validatePodUpdate(next: Obj, old: Obj): FieldError[] {
  const ns = specOf(next);
  const os = specOf(old);
  const errs: FieldError[] = [];
  for (const list of ['containers', 'initContainers']) {
    const r = containerUpdateErrors(arr(ns[list]), arr(os[list]), `spec.${list}`);
    errs.push(...r.errs);
    if (r.stop) return errs;
  }
  errs.push(...deadlineErrors(ns.activeDeadlineSeconds, os.activeDeadlineSeconds));
  errs.push(...tolerationErrors(arr(ns.tolerations), arr(os.tolerations)));
  const munged: Obj = clone(ns);
  munged.containers = arr(ns.containers).map((c, i) => ({ ...c, image: arr(os.containers)[i]?.image }));
  if (Array.isArray(ns.initContainers) || Array.isArray(os.initContainers)) {
    munged.initContainers = arr(ns.initContainers).map((c, i) => ({ ...c, image: arr(os.initContainers)[i]?.image }));
  }
  munged.activeDeadlineSeconds = os.activeDeadlineSeconds;
  munged.tolerations = os.tolerations;
  munged.schedulingGates = os.schedulingGates;
  const oldGrace = os.terminationGracePeriodSeconds;
  if (typeof oldGrace === 'number' && oldGrace < 0 && munged.terminationGracePeriodSeconds === 1) munged.terminationGracePeriodSeconds = oldGrace;
  const diff = changedKeys(os, munged);
  if (diff.length > 0) {
    errs.push(forbidden('spec', `pod updates may not change fields other than ${UPDATABLE.join(',')}\nchanged: ${diff.join(', ')}`));
  }
  return errs;
}

/** What ephemeralErrors reads of the pod, and keeps of it: the pod's own errors, each once as kube-apiserver gives them. */
interface EphemeralContext {
  other: Set<string>;
  all: Set<string>;
  pod: PodBounds;
  podErrors: Map<string, FieldError>;
}

function ephemeralErrors(ec: Container, i: number, names: EphemeralContext): FieldError[] {
  const path = `spec.ephemeralContainers[${i}]`;
  const errs = validateContainerCommon(ec, path);
  const name = typeof ec.name === 'string' ? ec.name : '';
  if (names.all.has(name)) errs.push(duplicate(`${path}.name`, name));
  else names.all.add(name);
  const target = ec.targetContainerName;
  if (typeof target === 'string' && target !== '' && !names.other.has(target)) errs.push(fieldNotFound(`${path}.targetContainerName`, target));
  // What this pod refuses (shared with the planner's unfitReason): a mount or device naming
  // none of its volumes, a device on a volume that is no PVC or ephemeral one, procMount
  // Unmasked while the pod keeps host users, the spec.os rules, HostProcess. A rule of the
  // whole pod (validateWindowsHostProcessPod's `spec`, `spec.hostNetwork`) is said once.
  for (const p of podBoundProblems(ec, names.pod)) {
    if (p.podField === undefined) errs.push(fieldError(`${path}.${p.field}`, p));
    else {
      const e = fieldError(p.podField === '' ? 'spec' : `spec.${p.podField}`, p);
      names.podErrors.set(`${e.field}\n${e.message}`, e);
    }
  }
  // What no pod can cure: the allow-list, env names, mount paths, ids (shared with the planner).
  for (const p of ephemeralContainerProblems(ec, 'received')) errs.push(fieldError(`${path}.${p.field}`, p));
  return errs;
}

function fieldError(field: string, p: ContainerProblem): FieldError {
  switch (p.kind) {
    case 'required': return required(field, p.message);
    case 'forbidden': return forbidden(field, p.message ?? '');
    case 'duplicate': return duplicate(field, p.value);
    case 'invalid': return invalid(field, p.value, p.message ?? '');
    case 'notSupported': return notSupported(field, p.value, [...(p.supported ?? [])]);
    case 'tooLong': return tooLong(field, p.message ?? '');
    case 'notFound': return fieldNotFound(field, p.value);
  }
}

/**
 * The pods/ephemeralcontainers update: everything but spec.ephemeralContainers is taken from
 * the stored pod (dropNonEphemeralContainerUpdates), the new list is defaulted, then
 * validated as ValidatePodEphemeralContainersUpdate does. Returns the pod to store.
 */
export function prepareEphemeralUpdate(requested: Obj, old: Obj): { pod: Obj; errs: FieldError[] } {
  const pod: Obj = clone(old);
  // ValidatePodEphemeralContainersUpdate: a static pod's mirror takes none (kubernetes#113935).
  const annotations = (old.metadata as Obj | undefined)?.annotations as Obj | undefined;
  if (annotations && Object.hasOwn(annotations, MIRROR_POD_ANNOTATION)) return { pod, errs: [forbidden('', 'static pods do not support ephemeral containers')] };
  const spec = specOf(pod);
  const list = arr(specOf(requested).ephemeralContainers).map((c) => clone(c));
  list.forEach(defaultContainer);
  if (list.length > 0) spec.ephemeralContainers = list;
  else delete spec.ephemeralContainers;
  pod.spec = spec;
  const other = new Set([...arr(spec.containers), ...arr(spec.initContainers)].map((c) => String(c.name)));
  const names: EphemeralContext = { other, all: new Set(other), pod: podBounds(spec, arr(specOf(old).ephemeralContainers)), podErrors: new Map() };
  const errs = list.flatMap((ec, i) => ephemeralErrors(ec, i, names));
  errs.push(...names.podErrors.values());
  const byName = new Map(list.map((c) => [String(c.name), c]));
  for (const stored of arr(specOf(old).ephemeralContainers)) {
    // Seeded pods may predate defaulting; compare with what the server would have stored.
    const o = clone(stored);
    defaultContainer(o);
    const n = byName.get(String(o.name));
    if (!n) errs.push(forbidden('spec.ephemeralContainers', `existing ephemeral containers ${JSON.stringify(o.name)} may not be removed\n`));
    else if (!jsonEqual(o, n)) errs.push(forbidden('spec.ephemeralContainers', `existing ephemeral containers ${JSON.stringify(o.name)} may not be changed\n`));
  }
  return { pod, errs };
}

/**
 * What the pod's ephemeral containers are judged against (podBoundProblems): the stored pod,
 * with the ephemeral containers it held before this update. Each container is judged as added
 * to the pod as it was, which for a pod that passed kube-apiserver's rules gives the errors
 * validating the whole updated pod gives (the stored containers are HostProcess ones or not
 * alike).
 */
function podBounds(spec: Obj, storedEphemeral: Obj[]): PodBounds {
  return {
    hostUsers: spec.hostUsers,
    volumes: arr(spec.volumes).map((v) => ({ ...v, name: String(v.name) })),
    os: spec.os,
    hostNetwork: spec.hostNetwork,
    securityContext: spec.securityContext,
    containers: arr(spec.containers),
    initContainers: arr(spec.initContainers),
    ephemeralContainers: storedEphemeral,
  };
}

/** The annotation the kubelet sets on the API server's mirror of a static pod. */
const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

function transitionErrors(next: Obj[], old: Obj[], path: string, may: { restartPolicy: unknown; restartable?: Set<unknown> }): FieldError[] {
  const { restartPolicy, restartable = new Set<unknown>() } = may;
  if (restartPolicy === 'Always') return [];
  const errs: FieldError[] = [];
  old.forEach((o, i) => {
    if (restartable.has(o.name)) return;
    const term = isObj(o.state) && isObj(o.state.terminated) ? o.state.terminated : undefined;
    if (!term) return;
    if (term.exitCode !== 0 && restartPolicy === 'OnFailure') return;
    const n = next.find((x) => x.name === o.name);
    if (n && !(isObj(n.state) && isObj(n.state.terminated))) errs.push(forbidden(`${path}[${i}].state`, 'may not be transitioned to non-terminated state'));
  });
  return errs;
}

/**
 * ValidatePodStatusUpdate's container state rule: a terminated container that may not restart
 * (restartPolicy Never, OnFailure with exit 0; ephemeral containers always) stays terminated.
 */
export function validatePodStatusUpdate(next: Obj, old: Obj): FieldError[] {
  const ns = isObj(next.status) ? next.status : {};
  const os = isObj(old.status) ? old.status : {};
  const rp = specOf(old).restartPolicy;
  // Native sidecars (init containers with restartPolicy Always) may always restart.
  const sidecars = new Set(arr(specOf(old).initContainers).filter((c) => c.restartPolicy === 'Always').map((c) => c.name));
  return [
    ...transitionErrors(arr(ns.containerStatuses), arr(os.containerStatuses), 'status.containerStatuses', { restartPolicy: rp }),
    ...transitionErrors(arr(ns.initContainerStatuses), arr(os.initContainerStatuses), 'status.initContainerStatuses', { restartPolicy: rp, restartable: sidecars }),
    ...transitionErrors(arr(ns.ephemeralContainerStatuses), arr(os.ephemeralContainerStatuses), 'status.ephemeralContainerStatuses', { restartPolicy: 'Never' }),
  ];
}
