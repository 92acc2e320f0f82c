// What kube-apiserver refuses in an ephemeral container whatever the pod it goes into
// (ValidatePodEphemeralContainersUpdate → validateEphemeralContainers: validateContainerCommon
// and the field allow-list). One list for the embedded API server, which refuses the
// injection, and for the EphemeralJob planner, which then names the template's field (phase
// Error) instead of having every pod refuse it, claim window after claim window (review:
// the fake let such templates through, so nothing showed it).
import { containerTypeProblems } from './container-types.ts';
import { dns1123SubdomainProblems, labelKeyProblems } from './name-formats.ts';
import { quantityNanos, unitQuantityForm } from './quantity.ts';

/** One problem with a container, its field relative to the container (`env[0].name`). */
export interface ContainerProblem {
  field: string;
  kind: 'required' | 'invalid' | 'forbidden' | 'duplicate' | 'notSupported' | 'tooLong' | 'notFound';
  value?: unknown;
  /** The detail after the kind (a Required or TooLong one included), as kube-apiserver words it. */
  message?: string;
  /** notSupported: the values kube-apiserver lists, in its order. */
  supported?: readonly string[];
  /** A JSON type Go cannot decode (container-types.ts), found before any rule. */
  decode?: boolean;
  /**
   * The pod's own field kube-apiserver names instead of the container's, under `spec`
   * (`hostNetwork`, or '' for `spec` itself): a rule of the whole pod the container breaks
   * (podBoundProblems' HostProcess rules). `field` still names the container's field at fault.
   */
  podField?: string;
}

/**
 * The core/v1 Container fields an ephemeral container may not set (the ones outside
 * validateFieldAllowList's list). A key that is no Container field at all is refused by the
 * API server, since injections ask for fieldValidation=Strict (OpenKruise's controller drops
 * it: container-fields.ts).
 * The webhook refuses these by this list too (review: its own list lacked restartPolicyRules).
 */
export const NOT_ALLOWED = ['ports', 'resources', 'resizePolicy', 'restartPolicy', 'restartPolicyRules', 'lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'] as const;

/**
 * Set, as validateFieldAllowList judges what is sent: anything but Go's zero value. The
 * container is sent as `omitEmpty` leaves it, as OpenKruise's typed client sends it (Go's
 * `omitempty` drops empty lists and maps), so `ports: []` is unset; a pointer is set once
 * present, even empty (`lifecycle: {}`); `resources` once one of its fields holds something.
 */
function isSet(field: string, v: unknown, sent: boolean): boolean {
  if (v === undefined || v === null || (sent && isEmptyList(v))) return false;
  if (field === 'resources') return typeof v !== 'object' || Object.values(v).some((x) => x !== undefined && x !== null && !(sent && (isEmptyList(x) || isEmptyMap(x))));
  return true;
}

const isEmptyList = (v: unknown): boolean => Array.isArray(v) && v.length === 0;
const isEmptyMap = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;

/**
 * The container as it is sent: without the empty lists Go's `omitempty` would not send,
 * nor the empty maps of `resources` (OpenKruise marshals a typed v1.Pod), so a template
 * OpenKruise injects is injected alike.
 */
export function omitEmpty<T extends Record<string, unknown>>(c: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(c)) {
    if (isEmptyList(v)) continue;
    if (k === 'resources' && typeof v === 'object' && v !== null && !Array.isArray(v)) {
      const kept = Object.fromEntries(Object.entries(v).filter(([, x]) => !isEmptyList(x) && !isEmptyMap(x)));
      if (Object.keys(kept).length > 0) out[k] = kept;
      continue;
    }
    out[k] = v;
  }
  return out as T;
}

/** Go's strings.TrimSpace trims Unicode White_Space, which is not JS's \s (no U+FEFF, but U+0085). */
export function hasOuterSpace(s: string): boolean {
  return GO_SPACE.test(s.charAt(0)) || GO_SPACE.test(s.charAt(s.length - 1));
}

const GO_SPACE = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;

const MAX_ID = 2147483647;

/** A problem's field as path segments (`env[0].name` → `['env', 0, 'name']`), for callers that build paths. */
export function fieldSegments(field: string): (string | number)[] {
  return field.split(/[.[\]]/).filter(Boolean).map((x) => (/^\d+$/.test(x) ? Number(x) : x));
}

/**
 * Problems kube-apiserver finds in an ephemeral container that no pod can cure: fields not
 * allowed, env names (printable ASCII but `=`: RelaxedEnvironmentVariableValidation, on
 * since 1.32), env sources (downward-API fieldRef and resourceFieldRef included, the names
 * and keys of ConfigMaps and Secrets), volume mounts without a name or path, twice the same
 * path, a subPath, recursiveReadOnly, user and group ids out of range, procMount, seccomp and
 * AppArmor profiles; first, every field whose JSON type Go would not decode. Name, image and
 * the two policies are checked by the callers (the server defaults the policies first).
 */
export function ephemeralContainerProblems(c: Record<string, unknown>, as: 'template' | 'received' = 'template'): ContainerProblem[] {
  const out: ContainerProblem[] = containerTypeProblems(c);
  // A template is judged as it will be sent (omitEmpty); what the API server receives, as it
  // is: an empty list there is set (review: the fake took `ports: []`).
  for (const k of NOT_ALLOWED) {
    if (isSet(k, c[k], as === 'template')) out.push({ field: k, kind: 'forbidden', message: 'cannot be set for an Ephemeral Container' });
  }
  items(c['env']).forEach((e, i) => {
    const name = e['name'];
    if (typeof name !== 'string' || name === '') out.push({ field: `env[${i}].name`, kind: 'required' });
    else if (!/^[\x20-\x3c\x3e-\x7e]+$/.test(name)) out.push({ field: `env[${i}].name`, kind: 'invalid', value: name, message: "a valid environment variable name must consist only of printable ASCII characters other than '='" });
    out.push(...valueFromProblems(e, `env[${i}]`, as));
  });
  items(c['envFrom']).forEach((e, i) => {
    const prefix = e['prefix'];
    if (typeof prefix === 'string' && prefix !== '' && !/^[\x20-\x3c\x3e-\x7e]+$/.test(prefix)) out.push({ field: `envFrom[${i}].prefix`, kind: 'invalid', value: prefix, message: "a valid environment variable name must consist only of printable ASCII characters other than '='" });
    const sources = ['configMapRef', 'secretRef'].filter((k) => e[k] !== undefined && e[k] !== null).length;
    // validateEnvFrom names the list, not the item, for these two.
    if (sources === 0) out.push({ field: 'envFrom', kind: 'invalid', value: '', message: 'must specify one of: `configMapRef` or `secretRef`' });
    if (sources > 1) out.push({ field: 'envFrom', kind: 'invalid', value: '', message: 'may not have more than one field specified at a time' });
    for (const ref of ['configMapRef', 'secretRef']) {
      const r = e[ref];
      if (typeof r === 'object' && r !== null) out.push(...envSourceNameProblems((r as Record<string, unknown>)['name'], `envFrom[${i}].${ref}.name`));
    }
  });
  out.push(...deviceProblems(items(c['volumeDevices']), items(c['volumeMounts'])));
  out.push(...securityProblems(c['securityContext']));
  const paths = new Set<string>();
  items(c['volumeMounts']).forEach((m, i) => {
    if (typeof m['name'] !== 'string' || m['name'] === '') out.push({ field: `volumeMounts[${i}].name`, kind: 'required' });
    const path = m['mountPath'];
    if (typeof path !== 'string' || path === '') out.push({ field: `volumeMounts[${i}].mountPath`, kind: 'required' });
    else if (paths.has(path)) out.push({ field: `volumeMounts[${i}].mountPath`, kind: 'invalid', value: path, message: 'must be unique' });
    else paths.add(path);
    for (const k of ['subPath', 'subPathExpr']) if (typeof m[k] === 'string' && m[k] !== '') out.push({ field: `volumeMounts[${i}].${k}`, kind: 'forbidden', message: 'cannot be set for an Ephemeral Container' });
    const propagation = m['mountPropagation'];
    if (propagation !== undefined && propagation !== null && !['None', 'HostToContainer', 'Bidirectional'].includes(propagation as string)) out.push({ field: `volumeMounts[${i}].mountPropagation`, kind: 'invalid', value: propagation, message: 'supported values: "Bidirectional", "HostToContainer", "None"' });
    if (propagation === 'Bidirectional' && !privileged(c)) out.push({ field: `volumeMounts[${i}].mountPropagation`, kind: 'forbidden', message: 'Bidirectional mount propagation is available only to privileged containers' });
    out.push(...recursiveReadOnlyProblems(m));
  });
  const sc = c['securityContext'];
  if (typeof sc === 'object' && sc !== null) {
    for (const k of ['runAsUser', 'runAsGroup']) {
      const id = (sc as Record<string, unknown>)[k];
      if (typeof id === 'number' && (id < 0 || id > MAX_ID)) out.push({ field: `securityContext.${k}`, kind: 'invalid', value: id, message: `must be between 0 and ${MAX_ID}, inclusive` });
    }
    out.push(...procMountProblems((sc as Record<string, unknown>)['procMount']));
    out.push(...seccompProblems((sc as Record<string, unknown>)['seccompProfile']), ...appArmorProblems((sc as Record<string, unknown>)['appArmorProfile']));
    out.push(...windowsOptionsProblems((sc as Record<string, unknown>)['windowsOptions']));
  }
  return out;
}

/**
 * ValidateVolumeDevices and the device half of ValidateVolumeMounts (validation.go), less
 * the pod's volumes (podBoundProblems): each device named, once; its path set, once, without a
 * `..` element; neither its name nor its path also a volumeMount's, nor a mount's name or path
 * a device's. As Go keeps them: name → path maps where the last entry of a name wins, and an
 * empty path counted as seen (a second one is "must be unique" too).
 */
function deviceProblems(devices: readonly Record<string, unknown>[], mounts: readonly Record<string, unknown>[]): ContainerProblem[] {
  const mountPaths = new Map(mounts.map((m) => [text(m['name']), text(m['mountPath'])]));
  const devicePaths = new Map(devices.map((d) => [text(d['name']), text(d['devicePath'])]));
  const out: ContainerProblem[] = [];
  mounts.forEach((m, i) => {
    const name = text(m['name']);
    const path = text(m['mountPath']);
    if (devicePaths.has(name)) out.push({ field: `volumeMounts[${i}].name`, kind: 'invalid', value: name, message: 'must not already exist in volumeDevices' });
    if ([...devicePaths.values()].includes(path)) out.push({ field: `volumeMounts[${i}].mountPath`, kind: 'invalid', value: path, message: 'must not already exist as a path in volumeDevices' });
  });
  const names = new Set<string>();
  const paths = new Set<string>();
  devices.forEach((d, i) => {
    const name = text(d['name']);
    const path = text(d['devicePath']);
    const at = `volumeDevices[${i}]`;
    if (name === '') out.push({ field: `${at}.name`, kind: 'required' });
    if (names.has(name)) out.push({ field: `${at}.name`, kind: 'invalid', value: name, message: 'must be unique' });
    if (path === '') out.push({ field: `${at}.devicePath`, kind: 'required' });
    if (paths.has(path)) out.push({ field: `${at}.devicePath`, kind: 'invalid', value: path, message: 'must be unique' });
    // validatePathNoBacksteps: a `..` element, after filepath.ToSlash (a no-op on Linux).
    if (path !== '' && path.split('/').includes('..')) out.push({ field: `${at}.devicePath`, kind: 'invalid', value: path, message: "can not contain backsteps ('..')" });
    else paths.add(path);
    if (mountPaths.has(name)) out.push({ field: `${at}.name`, kind: 'invalid', value: name, message: 'must not already exist in volumeMounts' });
    if ([...mountPaths.values()].includes(path)) out.push({ field: `${at}.devicePath`, kind: 'invalid', value: path, message: 'must not already exist as a path in volumeMounts' });
    if (name !== '') names.add(name);
  });
  return out;
}

/** What of a pod an ephemeral container's fit depends on, beside its containers' names: kept in the EphemeralJob's trimmed pods (listed-pod.ts). */
export interface PodBounds {
  /** spec.hostUsers: unset or true, the pod keeps the host's user namespace. */
  readonly hostUsers?: unknown;
  /** spec.volumes: a name, and whether the source is a PVC or an ephemeral volume (set, not null). */
  readonly volumes?: readonly { readonly name: string; readonly persistentVolumeClaim?: unknown; readonly ephemeral?: unknown }[];
  /** spec.os: its name, `linux` or `windows`, if set. */
  readonly os?: unknown;
  /** spec.hostNetwork: only kube-apiserver's wording reads it (a HostProcess pod has it true). */
  readonly hostNetwork?: unknown;
  /** spec.securityContext: its windowsOptions.hostProcess. */
  readonly securityContext?: unknown;
  /** The pod's containers of each kind: their securityContext.windowsOptions.hostProcess. */
  readonly containers?: readonly unknown[];
  readonly initContainers?: readonly unknown[];
  readonly ephemeralContainers?: readonly unknown[];
}

/**
 * What kube-apiserver refuses in an ephemeral container only in some pods, by parts of the pod
 * that never change (ValidatePodEphemeralContainersUpdate validates the whole pod with the
 * container in it: ValidatePodSpec, validation.go):
 * - a volumeMount or volumeDevice naming no volume of the pod (ValidateVolumeMounts,
 *   ValidateVolumeDevices: NotFound, an empty name too), a device on a volume that is neither a
 *   PersistentVolumeClaim nor an ephemeral volume (isMatchedDevice);
 * - procMount Unmasked in a pod that keeps the host's user namespace (ValidateSecurityContext
 *   with hostUsers = spec.hostUsers unset or true);
 * - by spec.os, only when it is set: windowsOptions in a linux pod (validateLinux), the
 *   linux-only security fields in a windows pod (validateWindows);
 * - HostProcess (validateWindowsHostProcessPod, whatever spec.os): a container that is a
 *   HostProcess one (its own windowsOptions.hostProcess, else the pod's) in a pod whose
 *   containers are not, or the converse; a hostProcess that differs from the pod's.
 * One list for the planner, which fails such a pod at once (pod-state.ts unfitReason), and the
 * embedded API server, which refuses the injection (cluster/pod-rules.ts).
 * The Unmasked rule is kube-apiserver's from 1.33 (ProcMountType on by default); before, with
 * the gate off, it writes Default instead (dropDisabledProcMountField) and injects.
 * Not mirrored: what kube-apiserver's --allow-privileged=false refuses (privileged, HostProcess
 * containers: "disallowed by cluster policy"), a flag no client can see.
 */
export function podBoundProblems(c: Record<string, unknown>, pod: PodBounds): ContainerProblem[] {
  const volumes = pod.volumes ?? [];
  const out: ContainerProblem[] = [];
  items(c['volumeMounts']).forEach((m, i) => {
    const name = text(m['name']);
    if (!volumes.some((v) => v.name === name)) out.push({ field: `volumeMounts[${i}].name`, kind: 'notFound', value: name });
  });
  items(c['volumeDevices']).forEach((d, i) => {
    const name = text(d['name']);
    const volume = volumes.find((v) => v.name === name);
    if (volume === undefined) out.push({ field: `volumeDevices[${i}].name`, kind: 'notFound', value: name });
    else if (volume.persistentVolumeClaim == null && volume.ephemeral == null) out.push({ field: `volumeDevices[${i}].name`, kind: 'invalid', value: name, message: 'can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode' });
  });
  const sc = c['securityContext'];
  if (isObject(sc) && sc['procMount'] === 'Unmasked' && pod.hostUsers !== false) out.push({ field: 'securityContext.procMount', kind: 'invalid', value: 'Unmasked', message: '`hostUsers` must be false to use `Unmasked`' });
  out.push(...hostProcessProblems(sc, pod), ...osProblems(sc, pod.os));
  return out;
}

/** The security fields validateWindows forbids in a windows pod's containers, in its order. */
const LINUX_ONLY = ['appArmorProfile', 'seLinuxOptions', 'seccompProfile', 'capabilities', 'readOnlyRootFilesystem', 'privileged', 'allowPrivilegeEscalation', 'procMount', 'runAsUser', 'runAsGroup'] as const;

/**
 * validateLinux and validateWindows, which ValidatePodSpec applies only when spec.os is set
 * (and valid): a linux pod's containers may not set windowsOptions, a windows pod's may not set
 * the linux-only fields. Set as Go sees a pointer: present and not null (`privileged: false`
 * and `capabilities: {}` are set). A pod without spec.os takes either.
 */
function osProblems(sc: unknown, os: unknown): ContainerProblem[] {
  const name = isObject(os) ? os['name'] : undefined;
  if (!isObject(sc)) return [];
  if (name === 'linux') return sc['windowsOptions'] == null ? [] : [{ field: 'securityContext.windowsOptions', kind: 'forbidden', message: 'windows options cannot be set for a linux pod' }];
  if (name !== 'windows') return [];
  return LINUX_ONLY.filter((k) => sc[k] != null).map((k) => ({ field: `securityContext.${k}`, kind: 'forbidden', message: 'cannot be set for a windows pod' }));
}

const HOST_PROCESS = 'securityContext.windowsOptions.hostProcess';

/** A securityContext's windowsOptions.hostProcess, when it is a boolean (Go's *bool: null is unset). */
function hostProcessOf(sc: unknown): boolean | undefined {
  const w = isObject(sc) ? sc['windowsOptions'] : undefined;
  const hp = isObject(w) ? w['hostProcess'] : undefined;
  return typeof hp === 'boolean' ? hp : undefined;
}

/** Whether a container is a HostProcess one, as validateWindowsHostProcessPod counts it: its own value, else the pod's. */
const runsAsHostProcess = (own: boolean | undefined, pod: boolean | undefined): boolean => own ?? (pod === true);

/** Whether the container would run as a HostProcess container in this pod (its windowsOptions.hostProcess, else the pod's). */
export function isHostProcessContainer(c: Record<string, unknown>, pod: PodBounds): boolean {
  return runsAsHostProcess(hostProcessOf(c['securityContext']), hostProcessOf(pod.securityContext));
}

/**
 * validateWindowsHostProcessPod (ValidatePodSpec, whatever spec.os), for one container added to
 * a pod that passed it: a hostProcess that differs from the pod's (at the container's field);
 * a HostProcess container in a pod whose containers are not, or the converse ("all containers
 * must be", at `spec`), and for a HostProcess container, hostNetwork (at `spec.hostNetwork`).
 * Whether the pod is a HostProcess pod is told by any of its containers (init and ephemeral
 * ones too: VisitContainersWithPath), since it passed: all of them are, or none.
 */
function hostProcessProblems(sc: unknown, pod: PodBounds): ContainerProblem[] {
  const podValue = hostProcessOf(pod.securityContext);
  const own = hostProcessOf(sc);
  const out: ContainerProblem[] = [];
  if (podValue !== undefined && own !== undefined && own !== podValue) out.push({ field: HOST_PROCESS, kind: 'invalid', value: own, message: `pod hostProcess value must be identical if both are specified, was ${String(podValue)}` });
  const isHostProcess = runsAsHostProcess(own, podValue);
  const hostProcessIn = (list: readonly unknown[] | undefined): boolean => list?.some((x) => runsAsHostProcess(hostProcessOf(isObject(x) ? x['securityContext'] : undefined), podValue)) === true;
  const podIsHostProcess = hostProcessIn(pod.initContainers) || hostProcessIn(pod.containers) || hostProcessIn(pod.ephemeralContainers);
  if (isHostProcess === podIsHostProcess) return out;
  out.push({ field: HOST_PROCESS, podField: '', kind: 'invalid', value: '', message: 'If pod contains any hostProcess containers then all containers must be HostProcess containers' });
  if (isHostProcess && pod.hostNetwork !== true) out.push({ field: HOST_PROCESS, podField: 'hostNetwork', kind: 'invalid', value: false, message: 'hostNetwork must be true if pod contains any hostProcess containers' });
  return out;
}

/** validateEnvVarValueFrom: one source, and no `value` beside it; the downward-API sources' own rules. */
function valueFromProblems(e: Record<string, unknown>, at: string, as: 'template' | 'received'): ContainerProblem[] {
  const from = e['valueFrom'];
  if (typeof from !== 'object' || from === null) return [];
  const sources = ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef', 'fileKeyRef'].filter((k) => (from as Record<string, unknown>)[k] != null).length;
  const out: ContainerProblem[] = [];
  if (sources === 0) out.push({ field: `${at}.valueFrom`, kind: 'invalid', value: '', message: 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`' });
  if (sources > 1) out.push({ field: `${at}.valueFrom`, kind: 'invalid', value: '', message: 'may not have more than one field specified at a time' });
  if (sources > 0 && typeof e['value'] === 'string' && e['value'] !== '') out.push({ field: `${at}.valueFrom`, kind: 'invalid', value: '', message: 'may not be specified when `value` is not empty' });
  for (const ref of ['configMapKeyRef', 'secretKeyRef']) {
    const r = (from as Record<string, unknown>)[ref];
    if (typeof r === 'object' && r !== null) out.push(...keySelectorProblems(r as Record<string, unknown>, `${at}.valueFrom.${ref}`));
  }
  const { fieldRef, resourceFieldRef } = from as Record<string, unknown>;
  if (isObject(fieldRef)) out.push(...fieldRefProblems(fieldRef, `${at}.valueFrom.fieldRef`, as));
  if (isObject(resourceFieldRef)) out.push(...resourceFieldRefProblems(resourceFieldRef, `${at}.valueFrom.resourceFieldRef`));
  return out;
}

/**
 * validateConfigMapKeySelector and validateSecretKeySelector: the name through
 * ValidateSecretName(name, false), whatever it is, so an empty one is Invalid (not Required,
 * and not let through); then the key, Required or each of IsConfigMapKey's problems.
 */
function keySelectorProblems(r: Record<string, unknown>, at: string): ContainerProblem[] {
  const name = text(r['name']);
  const out = dns1123SubdomainProblems(name).map((message): ContainerProblem => ({ field: `${at}.name`, kind: 'invalid', value: name, message }));
  const key = r['key'];
  if (typeof key !== 'string' || key === '') out.push({ field: `${at}.key`, kind: 'required' });
  else for (const message of configMapKeyProblems(key)) out.push({ field: `${at}.key`, kind: 'invalid', value: key, message });
  return out;
}

/**
 * validateConfigMapEnvSource and validateSecretEnvSource: a name, Required when empty, then
 * ValidateConfigMapName / ValidateSecretName with prefix true: judged as a generateName, its
 * trailing dash masked first.
 */
function envSourceNameProblems(name: unknown, field: string): ContainerProblem[] {
  if (typeof name !== 'string' || name === '') return [{ field, kind: 'required' }];
  return dns1123SubdomainProblems(maskTrailingDash(name)).map((message) => ({ field, kind: 'invalid', value: name, message }));
}

/**
 * apimachinery's maskTrailingDash, byte for byte: `name[:len(name)-2] + "a"` drops the dash
 * and the byte before it (half a non-ASCII character: no valid name then). A lone `-` makes
 * Go panic, a failed request too; here it is judged as it is.
 */
function maskTrailingDash(name: string): string {
  if (!name.endsWith('-') || name.length < 2) return name;
  const bytes = new TextEncoder().encode(name);
  return `${new TextDecoder().decode(bytes.subarray(0, bytes.length - 2))}a`;
}

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const MAX_CONFIG_KEY_BYTES = 253;

/** validation.IsConfigMapKey: at most 253 bytes (Go's len) of `[-._a-zA-Z0-9]`, and not `.`, `..` or `..`-prefixed (hasChDirPrefix). */
function configMapKeyProblems(key: string): string[] {
  const out: string[] = [];
  if (new TextEncoder().encode(key).length > MAX_CONFIG_KEY_BYTES) out.push(`must be no more than ${MAX_CONFIG_KEY_BYTES} characters`);
  if (!CONFIG_KEY.test(key)) out.push("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')");
  if (key === '.') out.push("must not be '.'");
  else if (key === '..') out.push("must not be '..'");
  else if (key.startsWith('..')) out.push("must not start with '..'");
  return out;
}

/** What an env var may read of its pod (validEnvDownwardAPIFieldPathExpressions), as sets.List sorts it. */
const ENV_FIELD_PATHS = ['metadata.name', 'metadata.namespace', 'metadata.uid', 'spec.nodeName', 'spec.serviceAccountName', 'status.hostIP', 'status.hostIPs', 'status.podIP', 'status.podIPs'] as const;

/** The labels ConvertDownwardAPIFieldLabel converts at all (volumes may read more than env). */
const POD_FIELD_LABELS: ReadonlySet<string> = new Set([...ENV_FIELD_PATHS, 'metadata.annotations', 'metadata.labels', 'spec.restartPolicy', 'spec.schedulerName', 'status.phase']);

/**
 * validateObjectFieldSelector with the env's paths. An unset apiVersion is not a problem in a
 * template: the API server sets it to "v1" as it decodes the injection
 * (SetDefaults_ObjectFieldSelector), before it validates; what the embedded API server
 * received it has defaulted the same way (defaultContainer), so Required is Go's own check.
 */
function fieldRefProblems(ref: Record<string, unknown>, at: string, as: 'template' | 'received'): ContainerProblem[] {
  const apiVersion = text(ref['apiVersion']) || (as === 'template' ? 'v1' : '');
  if (apiVersion === '') return [{ field: `${at}.apiVersion`, kind: 'required' }];
  const fieldPath = text(ref['fieldPath']);
  if (fieldPath === '') return [{ field: `${at}.fieldPath`, kind: 'required' }];
  const label = convertFieldLabel(apiVersion, fieldPath);
  if ('error' in label) return [{ field: `${at}.fieldPath`, kind: 'invalid', value: fieldPath, message: `error converting fieldPath: ${label.error}` }];
  const sub = splitSubscript(label.path);
  if (sub) {
    // The key of a label or annotation, at the fieldRef itself (ValidateQualifiedName(…, fldPath)).
    const key = sub.path === 'metadata.annotations' ? sub.key.toLowerCase() : sub.key;
    return labelKeyProblems(key).map((message) => ({ field: at, kind: 'invalid', value: key, message }));
  }
  // Bare metadata.labels and metadata.annotations convert, but an env var may not read them.
  if (!(ENV_FIELD_PATHS as readonly string[]).includes(label.path)) return [{ field: `${at}.fieldPath`, kind: 'notSupported', value: label.path, supported: ENV_FIELD_PATHS }];
  return [];
}

/** podshelper.ConvertDownwardAPIFieldLabel: only pod v1, subscripts only on labels and annotations, `spec.host` the old spec.nodeName. */
function convertFieldLabel(version: string, label: string): { path: string } | { error: string } {
  if (version !== 'v1') return { error: `unsupported pod version: ${version}` };
  const sub = splitSubscript(label);
  if (sub) return sub.path === 'metadata.annotations' || sub.path === 'metadata.labels' ? { path: label } : { error: `field label does not support subscript: ${label}` };
  if (label === 'spec.host') return { path: 'spec.nodeName' };
  return POD_FIELD_LABELS.has(label) ? { path: label } : { error: `field label not supported: ${label}` };
}

/** fieldpath.SplitMaybeSubscriptedPath: `metadata.labels['app']` → metadata.labels and app. */
function splitSubscript(fieldPath: string): { path: string; key: string } | undefined {
  if (!fieldPath.endsWith("']")) return undefined;
  const s = fieldPath.slice(0, -2);
  const at = s.indexOf("['");
  return at > 0 ? { path: s.slice(0, at), key: s.slice(at + 2) } : undefined;
}

/** validContainerResourceFieldPathExpressions, as sets.List sorts it; hugepages go by prefix. */
const CONTAINER_RESOURCES = ['limits.cpu', 'limits.ephemeral-storage', 'limits.memory', 'requests.cpu', 'requests.ephemeral-storage', 'requests.memory'] as const;

/**
 * validateContainerResourceFieldSelector for env (volume false): a resource, one of the
 * container's. Only a volume's selector must name its container (containerName is not
 * checked for env). Then validateContainerResourceDivisor, whatever the resource.
 */
function resourceFieldRefProblems(ref: Record<string, unknown>, at: string): ContainerProblem[] {
  const resource = text(ref['resource']);
  const out: ContainerProblem[] = [];
  if (resource === '') out.push({ field: `${at}.resource`, kind: 'required' });
  else if (!(CONTAINER_RESOURCES as readonly string[]).includes(resource) && !isHugePages(resource)) out.push({ field: `${at}.resource`, kind: 'notSupported', value: resource, supported: CONTAINER_RESOURCES });
  out.push(...divisorProblems(resource, ref['divisor'], at));
  return out;
}

const isHugePages = (resource: string): boolean => resource.startsWith('requests.hugepages-') || resource.startsWith('limits.hugepages-');

const CPU_DIVISORS: ReadonlySet<string> = new Set(['1m', '1']);
const BYTE_DIVISORS: ReadonlySet<string> = new Set(['1', '1k', '1M', '1G', '1T', '1P', '1E', '1Ki', '1Mi', '1Gi', '1Ti', '1Pi', '1Ei']);
const BYTE_DIVISORS_TEXT = '1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei';

/**
 * validateContainerResourceDivisor (validation.go): a divisor other than zero, by its
 * canonical form (Quantity.String(): "1000m" is "1", "1024Ki" is "1Mi", "1e3" is "1e3"), must
 * be 1m or 1 for cpu, 1 or a power of 1000 or 1024 up to E for memory, ephemeral storage and
 * hugepages. Go shows the resource as the value. Not a quantity at all: a decode error already.
 */
function divisorProblems(resource: string, divisor: unknown, at: string): ContainerProblem[] {
  if (divisor === undefined || divisor === null) return [];
  const form = unitQuantityForm(divisor);
  if (form === '0' || (form === undefined && quantityNanos(divisor) === undefined)) return [];
  const field = `${at}.divisor`;
  const bytes = (what: string): ContainerProblem[] => (form !== undefined && BYTE_DIVISORS.has(form) ? [] : [{ field, kind: 'invalid', value: resource, message: `only divisor's values ${BYTE_DIVISORS_TEXT} are supported with the ${what} resource` }]);
  switch (resource) {
    case 'limits.cpu':
    case 'requests.cpu':
      return form !== undefined && CPU_DIVISORS.has(form) ? [] : [{ field, kind: 'invalid', value: resource, message: "only divisor's values 1m and 1 are supported with the cpu resource" }];
    case 'limits.memory':
    case 'requests.memory':
      return bytes('memory');
    case 'limits.ephemeral-storage':
    case 'requests.ephemeral-storage':
      return bytes('local ephemeral storage');
    default:
      return isHugePages(resource) ? bytes('hugepages') : [];
  }
}

/**
 * validateMountRecursiveReadOnly. ValidateVolumeMounts hands it the list's path, not the
 * mount's (fldPath.Child("recursiveReadOnly")), so kube-apiserver names no index.
 */
function recursiveReadOnlyProblems(m: Record<string, unknown>): ContainerProblem[] {
  const rro = m['recursiveReadOnly'];
  const field = 'volumeMounts.recursiveReadOnly';
  if (rro === undefined || rro === null || rro === 'Disabled') return [];
  if (rro !== 'Enabled' && rro !== 'IfPossible') return [{ field, kind: 'notSupported', value: rro, supported: ['Disabled', 'Enabled', 'IfPossible'] }];
  const out: ContainerProblem[] = [];
  if (m['readOnly'] !== true) out.push({ field, kind: 'forbidden', message: 'may only be specified when readOnly is true' });
  const propagation = m['mountPropagation'];
  if (propagation !== undefined && propagation !== null && propagation !== 'None') out.push({ field, kind: 'forbidden', message: 'may only be specified when mountPropagation is None or not specified' });
  return out;
}

/** ValidateProcMountType's list, in its order. */
const PROC_MOUNT_TYPES = ['Default', 'Unmasked'] as const;

/**
 * ValidateProcMountType (ValidateSecurityContext): Default or Unmasked; "" is set (a pointer).
 * On 1.32 with ProcMountType off (its default until 1.33) the API server rewrites any value
 * to Default instead (dropDisabledProcMountField); from 1.33 it refuses it. Unmasked with a
 * pod that keeps host users is the pod's problem, not the template's (podBoundProblems).
 */
function procMountProblems(procMount: unknown): ContainerProblem[] {
  if (procMount === undefined || procMount === null || (PROC_MOUNT_TYPES as readonly unknown[]).includes(procMount)) return [];
  return [{ field: 'securityContext.procMount', kind: 'notSupported', value: procMount, supported: PROC_MOUNT_TYPES }];
}

/** The profile types of seccomp and AppArmor alike, in the order Go lists them. */
const PROFILE_TYPES = ['Localhost', 'RuntimeDefault', 'Unconfined'] as const;

/** validateSeccompProfileField (ValidateSecurityContext): a type, and a localhost profile for Localhost only. */
function seccompProblems(sp: unknown): ContainerProblem[] {
  if (!isObject(sp)) return [];
  const at = 'securityContext.seccompProfile';
  const type = sp['type'];
  const out: ContainerProblem[] = [];
  if (type === undefined || type === null || type === '') out.push({ field: `${at}.type`, kind: 'required', message: 'type is required when seccompProfile is set' });
  else if (!(PROFILE_TYPES as readonly unknown[]).includes(type)) out.push({ field: `${at}.type`, kind: 'notSupported', value: type, supported: PROFILE_TYPES });
  const profile = sp['localhostProfile'];
  const hasProfile = profile !== undefined && profile !== null;
  if (type === 'Localhost' && !hasProfile) out.push({ field: `${at}.localhostProfile`, kind: 'required', message: 'must be set when seccomp type is Localhost' });
  else if (type === 'Localhost') out.push(...localDescendingPathProblems(String(profile), `${at}.localhostProfile`));
  // Go shows the whole profile here (a struct, printed with a pointer's address): the profile as sent.
  else if (hasProfile) out.push({ field: `${at}.localhostProfile`, kind: 'invalid', value: sp, message: 'can only be set when seccomp type is Localhost' });
  return out;
}

/** validateLocalDescendingPath: relative (Go's path.IsAbs), and no `..` element. */
function localDescendingPathProblems(p: string, field: string): ContainerProblem[] {
  const out: ContainerProblem[] = [];
  if (p.startsWith('/')) out.push({ field, kind: 'invalid', value: p, message: 'must be a relative path' });
  if (p.split('/').includes('..')) out.push({ field, kind: 'invalid', value: p, message: "must not contain '..'" });
  return out;
}

/** ValidateAppArmorProfileField (ValidateSecurityContext): as seccomp's, and a localhost profile neither padded nor over PATH_MAX - 1 bytes. */
function appArmorProblems(p: unknown): ContainerProblem[] {
  if (!isObject(p)) return [];
  const at = 'securityContext.appArmorProfile';
  const profile = p['localhostProfile'];
  const hasProfile = profile !== undefined && profile !== null;
  switch (p['type']) {
    case 'Localhost':
      return hasProfile ? localhostAppArmorProblems(String(profile), `${at}.localhostProfile`) : [{ field: `${at}.localhostProfile`, kind: 'required', message: 'must be set when AppArmor type is Localhost' }];
    case 'RuntimeDefault':
    case 'Unconfined':
      return hasProfile ? [{ field: `${at}.localhostProfile`, kind: 'invalid', value: profile, message: 'can only be set when AppArmor type is Localhost' }] : [];
    case undefined:
    case null:
    case '':
      return [{ field: `${at}.type`, kind: 'required', message: 'type is required when appArmorProfile is set' }];
    default:
      return [{ field: `${at}.type`, kind: 'notSupported', value: p['type'], supported: PROFILE_TYPES }];
  }
}

const MAX_APPARMOR_PROFILE_BYTES = 4095;

function localhostAppArmorProblems(profile: string, field: string): ContainerProblem[] {
  const out: ContainerProblem[] = [];
  if (hasOuterSpace(profile)) out.push({ field, kind: 'invalid', value: profile, message: 'must not be padded with whitespace' });
  else if (profile === '') out.push({ field, kind: 'required', message: 'must be set when AppArmor type is Localhost' });
  // Go's len: UTF-8 bytes.
  if (new TextEncoder().encode(profile).length > MAX_APPARMOR_PROFILE_BYTES) out.push({ field, kind: 'tooLong', message: `may not be more than ${MAX_APPARMOR_PROFILE_BYTES} bytes` });
  return out;
}

const MAX_GMSA_SPEC_BYTES = 64 * 1024;
const MAX_DOMAIN_BYTES = 256;
const MAX_USER_BYTES = 104;
/** Go's [[:cntrl:]]: ASCII control characters. */
// eslint-disable-next-line no-control-regex -- matching them is the point
const CONTROL = /[\x00-\x1f\x7f]/;
/** validNetBiosRegex and the DNS subdomain form of validWindowsUserDomainDNSRegex (Go matches runes, hence `u`). */
const NETBIOS_DOMAIN = /^[^\\/:*?"<>|.][^\\/:*?"<>|]{0,14}$/u;
const DNS_DOMAIN = /^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;
const bytesOf = (s: string): number => new TextEncoder().encode(s).length;

/**
 * validateWindowsSecurityContextOptions (ValidateSecurityContext, validation.go): a GMSA
 * credential spec name that is a DNS-1123 subdomain, a credential spec neither empty nor over
 * 64 KiB, and a runAsUserName `[DOMAIN\]USER` by Windows' naming rules. Every pod alike (a
 * pod whose spec.os is linux refuses windowsOptions at all, and hostProcess must match the
 * pod's: those are the pod's, podBoundProblems).
 */
function windowsOptionsProblems(w: unknown): ContainerProblem[] {
  if (!isObject(w)) return [];
  const at = 'securityContext.windowsOptions';
  const out: ContainerProblem[] = [];
  const specName = w['gmsaCredentialSpecName'];
  if (typeof specName === 'string') for (const message of dns1123SubdomainProblems(specName)) out.push({ field: `${at}.gmsaCredentialSpecName`, kind: 'invalid', value: specName, message });
  const spec = w['gmsaCredentialSpec'];
  if (spec === '') out.push({ field: `${at}.gmsaCredentialSpec`, kind: 'invalid', value: spec, message: 'gmsaCredentialSpec cannot be an empty string' });
  else if (typeof spec === 'string' && bytesOf(spec) > MAX_GMSA_SPEC_BYTES) out.push({ field: `${at}.gmsaCredentialSpec`, kind: 'invalid', value: spec, message: 'gmsaCredentialSpec size must be under 64 KiB' });
  const user = w['runAsUserName'];
  if (typeof user === 'string') for (const message of runAsUserNameProblems(user)) out.push({ field: `${at}.runAsUserName`, kind: 'invalid', value: user, message });
  return out;
}

function runAsUserNameProblems(name: string): string[] {
  if (name === '') return ['runAsUserName cannot be an empty string'];
  if (CONTROL.test(name)) return ['runAsUserName cannot contain control characters'];
  const parts = name.split('\\');
  if (parts.length > 2) return ['runAsUserName cannot contain more than one backslash'];
  const [domain, user] = parts.length === 1 ? ['', parts[0] ?? ''] : [parts[0] ?? '', parts[1] ?? ''];
  const out: string[] = [];
  if (bytesOf(domain) >= MAX_DOMAIN_BYTES) out.push(`runAsUserName's Domain length must be under ${MAX_DOMAIN_BYTES} characters`);
  if (parts.length === 2 && !NETBIOS_DOMAIN.test(domain) && !DNS_DOMAIN.test(domain)) out.push("runAsUserName's Domain doesn't match the NetBios nor the DNS format");
  if (user === '') out.push("runAsUserName's User cannot be empty");
  else if (bytesOf(user) > MAX_USER_BYTES) out.push(`runAsUserName's User length must not be longer than ${MAX_USER_BYTES} characters`);
  if (/^[. ]+$/.test(user)) out.push("runAsUserName's User cannot contain only periods or spaces");
  if (/["/\\:;|=,+*?<>@[\]]/.test(user)) out.push('runAsUserName\'s User cannot contain the following characters: "/\\:;|=,+*?<>@[]');
  return out;
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function privileged(c: Record<string, unknown>): boolean {
  const sc = c['securityContext'];
  return typeof sc === 'object' && sc !== null && (sc as Record<string, unknown>)['privileged'] === true;
}

/** AllowPrivilegeEscalation false contradicts privileged, and adding CAP_SYS_ADMIN (ValidateSecurityContext). */
function securityProblems(sc: unknown): ContainerProblem[] {
  if (typeof sc !== 'object' || sc === null) return [];
  const s = sc as Record<string, unknown>;
  if (s['allowPrivilegeEscalation'] !== false) return [];
  const out: ContainerProblem[] = [];
  if (s['privileged'] === true) out.push({ field: 'securityContext', kind: 'invalid', value: '', message: 'cannot set `allowPrivilegeEscalation` to false and `privileged` to true' });
  const add = (s['capabilities'] as { add?: unknown } | undefined)?.add;
  if (Array.isArray(add) && add.includes('CAP_SYS_ADMIN')) out.push({ field: 'securityContext', kind: 'invalid', value: '', message: 'cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN' });
  return out;
}

function items(v: unknown): Record<string, unknown>[] {
  return Array.isArray(v) ? v.filter((x): x is Record<string, unknown> => typeof x === 'object' && x !== null) : [];
}
