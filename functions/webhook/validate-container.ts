// One entry of spec.template.ephemeralContainers: the rules of OpenKruise's webhook and
// the EphemeralJob proposal, plus what the API server's `pods/ephemeralcontainers`
// subresource would refuse anyway (better to fail at `kubectl apply` than at injection).
import { duplicate, eachItem, forbidden, invalid, notSupported, required, requiredString, tooLong } from './field-errors.ts';
import type { FieldError, FieldPath } from './field-errors.ts';
import { isObject, own } from './json.ts';
import { ephemeralContainerProblems, fieldSegments, hasOuterSpace, NOT_ALLOWED, type ContainerProblem } from '../api/container-rules.ts';
import { dns1123LabelProblems, envVarNameProblems } from '../api/name-formats.ts';

export const IMAGE_PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'] as const;
export const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'] as const;

/** Names seen so far in the template, to report duplicates. */
export type SeenNames = Set<string>;

/** Errors in one template container at `path` (…ephemeralContainers[i]). */
export function validateContainer(c: unknown, path: FieldPath, seen: SeenNames): FieldError[] {
  if (!isObject(c)) return [invalid(path, c, 'must be an object')];
  return [
    ...validateName(own(c, 'name'), [...path, 'name'], seen),
    ...validateImage(own(c, 'image'), [...path, 'image']),
    ...validateChoice(own(c, 'imagePullPolicy'), [...path, 'imagePullPolicy'], IMAGE_PULL_POLICIES),
    ...validateChoice(own(c, 'terminationMessagePolicy'), [...path, 'terminationMessagePolicy'], TERMINATION_MESSAGE_POLICIES),
    ...validateTarget(own(c, 'targetContainerName'), [...path, 'targetContainerName']),
    ...validateStringList(own(c, 'command'), [...path, 'command']),
    ...validateStringList(own(c, 'args'), [...path, 'args']),
    ...eachItem(own(c, 'volumeMounts'), [...path, 'volumeMounts'], validateVolumeMount),
    ...eachItem(own(c, 'env'), [...path, 'env'], validateEnvVar),
    ...envFromPrefixes(own(c, 'envFrom'), [...path, 'envFrom']),
    ...apiServerRules(c, path),
  ];
}

/**
 * What kube-apiserver refuses in every pod beyond the checks above, from the rules the
 * planner and the embedded API server share (functions/api/container-rules.ts): so a
 * template the planner would put in phase Error is refused at `kubectl apply` (review).
 * The fields an ephemeral container may not set come from there too, one list judged one
 * way (as OpenKruise sends the template: `resources: {limits: {}}` is not sent).
 */
function apiServerRules(c: Record<string, unknown>, path: FieldPath): FieldError[] {
  const shared = (p: ContainerProblem): boolean => (p.decode === true ? !OWN_TYPE_CHECKS.test(p.field) : !OWN_RULES.test(p.field) && (SHARED_RULES.test(p.field) || NOT_ALLOWED_FIELDS.has(p.field) || (p.kind === 'invalid' && /^volumeMounts\[\d+\]\.(?:mountPath|name)$/.test(p.field))));
  return ephemeralContainerProblems(c, 'template').filter(shared).map((p) => {
    const at = [...path, ...fieldSegments(p.field)];
    if (p.kind === 'required') return required(at, p.message);
    if (p.kind === 'forbidden') return forbidden(at, p.message ?? '');
    if (p.kind === 'notSupported') return notSupported(at, p.value, p.supported ?? []);
    if (p.kind === 'tooLong') return tooLong(at, p.message ?? '');
    return invalid(at, p.value, p.message ?? '');
  });
}

/**
 * The shared rules this webhook does not already check in its own words: env sources (their
 * downward-API fieldRefs and the ConfigMap and Secret names and keys included), envFrom,
 * devices (names, paths, `..`, overlap with the mounts), mount propagation and
 * recursiveReadOnly (kube-apiserver names no mount index for it), the security context (ids,
 * procMount, profiles, windowsOptions); and a mount's name or path that a device has too.
 */
const SHARED_RULES = /^(env\[\d+\]\.valueFrom|envFrom|volumeDevices|volumeMounts\[\d+\]\.mountPropagation|volumeMounts\.recursiveReadOnly|securityContext)/;

const NOT_ALLOWED_FIELDS: ReadonlySet<string> = new Set(NOT_ALLOWED);

/** Shared rules this webhook judges its own way: an envFrom prefix as an env name (validateEnvFromPrefix). */
const OWN_RULES = /^envFrom\[\d+\]\.prefix$/;

/** Fields whose JSON type this webhook checks in its own words above; every other field's type comes from the shared rules. */
const OWN_TYPE_CHECKS = /^(?:(?:name|image|targetContainerName|imagePullPolicy|terminationMessagePolicy)|(?:command|args|env|volumeMounts)(?:\[\d+\])?|env\[\d+\]\.(?:name|value)|volumeMounts\[\d+\]\.(?:name|mountPath))$/;

function validateName(name: unknown, path: FieldPath, seen: SeenNames): FieldError[] {
  const errors = requiredString(name, path, dns1123LabelProblems);
  if (errors.length > 0 || typeof name !== 'string') return errors;
  if (seen.has(name)) return [duplicate(path, name)];
  seen.add(name);
  return [];
}

/**
 * Whitespace as Go's strings.TrimSpace sees it (hasOuterSpace, the planner's and the API
 * server's test), not JavaScript's trim(): U+0085 is space, U+FEFF is not (review).
 */
function validateImage(image: unknown, path: FieldPath): FieldError[] {
  if (image === undefined || image === '') return [required(path)];
  if (typeof image !== 'string') return [invalid(path, image, 'must be a string')];
  if (!hasOuterSpace(image)) return [];
  // Only space: nothing to trim down to, so unset rather than padded.
  if ([...image].every(hasOuterSpace)) return [required(path)];
  return [invalid(path, image, 'must not have leading or trailing whitespace')];
}

function validateChoice(value: unknown, path: FieldPath, supported: readonly string[]): FieldError[] {
  if (value === undefined || value === '') return [required(path)];
  return typeof value === 'string' && supported.includes(value) ? [] : [notSupported(path, value, supported)];
}

function validateTarget(target: unknown, path: FieldPath): FieldError[] {
  // The proposal requires a target: the container whose process namespace is shared.
  if (target === undefined || target === '') return [required(path, 'the container of the target pods to attach to')];
  return requiredString(target, path, dns1123LabelProblems);
}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  return isObject(value) && Object.keys(value).length === 0;
}

function validateStringList(list: unknown, path: FieldPath): FieldError[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) return [invalid(path, list, 'must be a list of strings')];
  return list.flatMap((v, i) => (typeof v === 'string' ? [] : [invalid([...path, i], v, 'must be a string')]));
}

function validateVolumeMount(m: unknown, path: FieldPath): FieldError[] {
  if (!isObject(m)) return [invalid(path, m, 'must be an object')];
  const errors: FieldError[] = [];
  for (const key of ['name', 'mountPath'] as const) errors.push(...requiredString(own(m, key), [...path, key]));
  for (const key of ['subPath', 'subPathExpr'] as const) {
    if (!isEmpty(own(m, key))) errors.push(forbidden([...path, key], 'cannot be set for an Ephemeral Container'));
  }
  return errors;
}

function validateEnvVar(e: unknown, path: FieldPath): FieldError[] {
  if (!isObject(e)) return [invalid(path, e, 'must be an object')];
  const errors = requiredString(own(e, 'name'), [...path, 'name'], envVarNameProblems);
  const value = own(e, 'value');
  if (value !== undefined && typeof value !== 'string') errors.push(invalid([...path, 'value'], value, 'must be a string'));
  return errors;
}

/**
 * ValidateEnvFrom: a prefix is judged as an env name is, by the rule before 1.32
 * (IsEnvVarName, not the relaxed one the planner takes): on 1.25–1.31 kube-apiserver refuses
 * `1A` in every pod (review91 F1). The list's and the prefix's types come from the shared rules.
 */
function envFromPrefixes(list: unknown, path: FieldPath): FieldError[] {
  if (!Array.isArray(list)) return [];
  return list.flatMap((e, i) => {
    const prefix = own(e, 'prefix');
    if (typeof prefix !== 'string' || prefix === '') return [];
    return envVarNameProblems(prefix).map((message) => invalid([...path, i, 'prefix'], prefix, message));
  });
}
