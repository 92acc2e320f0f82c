// What kube-apiserver refuses in an ephemeral container whatever the pod it goes into
// (ValidatePodEphemeralContainersUpdate → validateEphemeralContainers: validateContainerCommon
// and the field allow-list). One list for the embedded API server, which refuses the
// injection, and for the EphemeralJob planner, which then names the template's field (phase
// Error) instead of having every pod refuse it, claim window after claim window (review:
// the fake let such templates through, so nothing showed it).

/** One problem with a container, its field relative to the container (`env[0].name`). */
export interface ContainerProblem {
  field: string;
  kind: 'required' | 'invalid' | 'forbidden' | 'duplicate';
  value?: unknown;
  message?: string;
}

/**
 * The core/v1 Container fields an ephemeral container may not set (the ones outside
 * validateFieldAllowList's list). A key that is no Container field at all is dropped by the
 * API server when it decodes the request, as OpenKruise's controller drops it: no refusal.
 */
const NOT_ALLOWED = ['ports', 'resources', 'resizePolicy', 'restartPolicy', 'restartPolicyRules', 'lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'] as const;

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
 * since 1.32), volume mounts without a name or path, twice the same path, a subPath, user
 * and group ids out of range. Name, image and the two policies are checked by the callers
 * (the server defaults the policies first).
 */
export function ephemeralContainerProblems(c: Record<string, unknown>, as: 'template' | 'received' = 'template'): ContainerProblem[] {
  const out: ContainerProblem[] = [];
  // A template is judged as it will be sent (omitEmpty); what the API server receives, as it
  // is: an empty list there is set (review: the fake took `ports: []`).
  for (const k of NOT_ALLOWED) {
    if (isSet(k, c[k], as === 'template')) out.push({ field: k, kind: 'forbidden', message: 'cannot be set for an Ephemeral Container' });
  }
  items(c['env']).forEach((e, i) => {
    const name = e['name'];
    if (typeof name !== 'string' || name === '') out.push({ field: `env[${i}].name`, kind: 'required' });
    else if (!/^[\x20-\x3c\x3e-\x7e]+$/.test(name)) out.push({ field: `env[${i}].name`, kind: 'invalid', value: name, message: "a valid environment variable name must consist only of printable ASCII characters other than '='" });
    out.push(...valueFromProblems(e, `env[${i}]`));
  });
  items(c['envFrom']).forEach((e, i) => {
    const sources = ['configMapRef', 'secretRef'].filter((k) => e[k] !== undefined && e[k] !== null).length;
    if (sources === 0) out.push({ field: `envFrom[${i}]`, kind: 'invalid', value: '', message: 'must specify one of: `configMapRef` or `secretRef`' });
    if (sources > 1) out.push({ field: `envFrom[${i}]`, kind: 'invalid', value: '', message: 'may not have more than one field specified at a time' });
    for (const ref of ['configMapRef', 'secretRef']) {
      const r = e[ref];
      if (typeof r === 'object' && r !== null && (typeof (r as Record<string, unknown>)['name'] !== 'string' || (r as Record<string, unknown>)['name'] === '')) out.push({ field: `envFrom[${i}].${ref}.name`, kind: 'required' });
    }
  });
  items(c['volumeDevices']).forEach((d, i) => {
    if (typeof d['devicePath'] !== 'string' || d['devicePath'] === '') out.push({ field: `volumeDevices[${i}].devicePath`, kind: 'required' });
  });
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
  });
  const sc = c['securityContext'];
  if (typeof sc === 'object' && sc !== null) {
    for (const k of ['runAsUser', 'runAsGroup']) {
      const id = (sc as Record<string, unknown>)[k];
      if (typeof id === 'number' && (id < 0 || id > MAX_ID)) out.push({ field: `securityContext.${k}`, kind: 'invalid', value: id, message: `must be between 0 and ${MAX_ID}, inclusive` });
    }
  }
  return out;
}

/** validateEnvVarValueFrom: one source, and no `value` beside it. */
function valueFromProblems(e: Record<string, unknown>, at: string): ContainerProblem[] {
  const from = e['valueFrom'];
  if (typeof from !== 'object' || from === null) return [];
  const sources = ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef', 'fileKeyRef'].filter((k) => (from as Record<string, unknown>)[k] != null).length;
  const out: ContainerProblem[] = [];
  if (sources === 0) out.push({ field: `${at}.valueFrom`, kind: 'invalid', value: '', message: 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`' });
  if (sources > 1) out.push({ field: `${at}.valueFrom`, kind: 'invalid', value: '', message: 'may not have more than one field specified at a time' });
  if (sources > 0 && typeof e['value'] === 'string' && e['value'] !== '') out.push({ field: `${at}.valueFrom`, kind: 'invalid', value: '', message: 'may not be specified when `value` is not empty' });
  for (const ref of ['configMapKeyRef', 'secretKeyRef']) {
    const r = (from as Record<string, unknown>)[ref];
    if (typeof r === 'object' && r !== null && (typeof (r as Record<string, unknown>)['key'] !== 'string' || (r as Record<string, unknown>)['key'] === '')) out.push({ field: `${at}.valueFrom.${ref}.key`, kind: 'required' });
  }
  return out;
}

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
