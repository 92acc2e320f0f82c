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
 * Set, as validateFieldAllowList judges it: anything but Go's zero value after decoding. A
 * list or a pointer is set once present, even empty (`ports: []`, `lifecycle: {}`); the one
 * struct, `resources`, once one of its fields is.
 */
function isSet(field: string, v: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (field === 'resources') return typeof v !== 'object' || Object.values(v).some((x) => x !== undefined && x !== null);
  return true;
}

/** Go's strings.TrimSpace trims Unicode White_Space, which is not JS's \s (no U+FEFF, but U+0085). */
export function hasOuterSpace(s: string): boolean {
  return GO_SPACE.test(s.charAt(0)) || GO_SPACE.test(s.charAt(s.length - 1));
}

const GO_SPACE = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;

const MAX_ID = 2147483647;

/**
 * Problems kube-apiserver finds in an ephemeral container that no pod can cure: fields not
 * allowed, env names (printable ASCII but `=`: RelaxedEnvironmentVariableValidation, on
 * since 1.32), volume mounts without a name or path, twice the same path, a subPath, user
 * and group ids out of range. Name, image and the two policies are checked by the callers
 * (the server defaults the policies first).
 */
export function ephemeralContainerProblems(c: Record<string, unknown>): ContainerProblem[] {
  const out: ContainerProblem[] = [];
  for (const k of NOT_ALLOWED) {
    if (isSet(k, c[k])) out.push({ field: k, kind: 'forbidden', message: 'cannot be set for an Ephemeral Container' });
  }
  items(c['env']).forEach((e, i) => {
    const name = e['name'];
    if (typeof name !== 'string' || name === '') out.push({ field: `env[${i}].name`, kind: 'required' });
    else if (!/^[\x20-\x3c\x3e-\x7e]+$/.test(name)) out.push({ field: `env[${i}].name`, kind: 'invalid', value: name, message: "a valid environment variable name must consist only of printable ASCII characters other than '='" });
  });
  const paths = new Set<string>();
  items(c['volumeMounts']).forEach((m, i) => {
    if (typeof m['name'] !== 'string' || m['name'] === '') out.push({ field: `volumeMounts[${i}].name`, kind: 'required' });
    const path = m['mountPath'];
    if (typeof path !== 'string' || path === '') out.push({ field: `volumeMounts[${i}].mountPath`, kind: 'required' });
    else if (paths.has(path)) out.push({ field: `volumeMounts[${i}].mountPath`, kind: 'invalid', value: path, message: 'must be unique' });
    else paths.add(path);
    for (const k of ['subPath', 'subPathExpr']) if (typeof m[k] === 'string' && m[k] !== '') out.push({ field: `volumeMounts[${i}].${k}`, kind: 'forbidden', message: 'cannot be set for an Ephemeral Container' });
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

function items(v: unknown): Record<string, unknown>[] {
  return Array.isArray(v) ? v.filter((x): x is Record<string, unknown> => typeof x === 'object' && x !== null) : [];
}
