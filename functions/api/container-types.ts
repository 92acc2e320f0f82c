// The JSON types of a core/v1 EphemeralContainer's fields, as kube-apiserver decodes them
// into Go before any rule runs: `tty: "true"`, `runAsUser: "1000"` or `command: [sleep, 30]`
// in a template is refused (a strategic merge patch to `pods/ephemeralcontainers` that does
// not convert is a 422) in every pod it is injected into. OpenKruise's CRD keeps the
// template schemaless and ephemera's preserves unknown fields, so nothing before the
// injection refused them (review: such a job claimed and was refused pod after pod). Null is
// Go's zero value, so every field may be null; a key that is no field is refused, since
// injections ask for fieldValidation=Strict (container-fields.ts walks this shape for it). The fields an ephemeral container may not set at all
// (container-rules.ts NOT_ALLOWED) are refused there whatever their type.
// zod/mini: the webhook's Worker shares these rules and must not carry classic zod (~90 KiB).
import * as z from 'zod/mini';
import type { ContainerProblem } from './container-rules.ts';

/**
 * resource.ParseQuantity's grammar: a signed decimal, then a binary (Ki…Ei) or decimal
 * (n, u, m, k, M, G, T, P, E) suffix or an exponent; a JSON number is one too.
 */
export const QUANTITY = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?\d+)?$/;

/** The schema, built on first use rather than at import (the Lambda's import is on every cold start; a template is checked only when a job is planned). */
let built: z.ZodMiniType | undefined;

/** The typed shape of an EphemeralContainer (Kubernetes 1.33), the allowed fields. */
export function ephemeralContainerTypes(): z.ZodMiniType {
  built ??= buildTypes();
  return built;
}

function buildTypes(): z.ZodMiniType {
  const str = z.nullish(z.string());
  const bool = z.nullish(z.boolean());
  // Go's int64 (ids): a whole number.
  const int64 = z.nullish(z.int());
  const strings = z.nullish(z.array(z.string()));
  const obj = <T extends z.core.$ZodLooseShape>(shape: T) => z.nullish(z.looseObject(shape));
  const list = <T extends z.core.$ZodLooseShape>(shape: T) => z.nullish(z.array(z.looseObject(shape)));
  const quantity = z.nullish(z.union([z.string().check(z.regex(QUANTITY)), z.number()]));
  const keyRef = obj({ name: str, key: str, optional: bool });
  const profile = obj({ type: str, localhostProfile: str });
  return z.looseObject({
    name: str,
    image: str,
    command: strings,
    args: strings,
    workingDir: str,
    envFrom: list({ prefix: str, configMapRef: obj({ name: str, optional: bool }), secretRef: obj({ name: str, optional: bool }) }),
    env: list({
      name: str,
      value: str,
      valueFrom: obj({
        fieldRef: obj({ apiVersion: str, fieldPath: str }),
        resourceFieldRef: obj({ containerName: str, resource: str, divisor: quantity }),
        configMapKeyRef: keyRef,
        secretKeyRef: keyRef,
      }),
    }),
    volumeMounts: list({ name: str, readOnly: bool, recursiveReadOnly: str, mountPath: str, subPath: str, mountPropagation: str, subPathExpr: str }),
    volumeDevices: list({ name: str, devicePath: str }),
    terminationMessagePath: str,
    terminationMessagePolicy: str,
    imagePullPolicy: str,
    securityContext: obj({
      capabilities: obj({ add: strings, drop: strings }),
      privileged: bool,
      seLinuxOptions: obj({ user: str, role: str, type: str, level: str }),
      windowsOptions: obj({ gmsaCredentialSpecName: str, gmsaCredentialSpec: str, runAsUserName: str, hostProcess: bool }),
      runAsUser: int64,
      runAsGroup: int64,
      runAsNonRoot: bool,
      readOnlyRootFilesystem: bool,
      allowPrivilegeEscalation: bool,
      procMount: str,
      seccompProfile: profile,
      appArmorProfile: profile,
    }),
    stdin: bool,
    stdinOnce: bool,
    tty: bool,
    targetContainerName: str,
  });
}

const EXPECTED: Record<string, string> = {
  string: 'must be a string',
  boolean: 'must be a boolean (true or false)',
  int: 'must be a whole number',
  number: 'must be a whole number', // the only numbers here are int64 ids (a divisor is worded apart)
  array: 'must be a list',
  object: 'must be an object',
};

/** Fields whose JSON type Go could not decode, relative to the container (`securityContext.runAsUser`). */
export function containerTypeProblems(c: Record<string, unknown>): ContainerProblem[] {
  const r = ephemeralContainerTypes().safeParse(c);
  if (r.success) return [];
  return r.error.issues.map((i) => {
    const field = i.path.map((s, n) => (typeof s === 'number' ? `[${s}]` : n === 0 ? String(s) : `.${String(s)}`)).join('');
    const value = i.path.reduce<unknown>((o, k) => (o !== null && typeof o === 'object' ? (o as Record<PropertyKey, unknown>)[k] : undefined), c);
    const expected = i.code === 'invalid_type' ? EXPECTED[i.expected] : undefined;
    const message = expected ?? (field.endsWith('.divisor') ? 'must be a quantity (e.g. 1, 500m, 1Mi)' : i.message);
    return { field, kind: 'invalid', value, message, decode: true } satisfies ContainerProblem;
  });
}
