// Update rules: an EphemeralJob's work is fixed at creation; only how fast, how many, whether
// paused and when it is cleaned up may change (DESIGN; OpenKruise's webhook checks no update
// rule at all: README, "Next to OpenKruise"). Each changed spec field is reported at its own
// path, with the deepest changes named in the detail. The selector and the template are
// compared as a typed Go client reads them (api/go-json.ts): kruise-api's clients, and
// kruise-manager's own finalizer Update, write them back re-encoded (`resources: {}` added,
// `stdin: false` and `env: []` dropped), and a raw comparison denied every such no-op
// update — pausing or scaling a job through them, or `kubectl replace` of its manifest over
// a job OpenKruise had stored (review72). Only a change Go sees is denied, and a key of the
// template that is no field added or changed (review73: the API server refuses it in every
// injection).
import { goCanonical, goExtras } from '../api/go-json.ts';
import { SPEC_FIELD_TYPES } from '../api/go-types.ts';
import { forbidden, renderPath } from './field-errors.ts';
import type { FieldError, FieldPath } from './field-errors.ts';
import { isObject, jsonEqual, own, unionKeys } from './json.ts';

/** The spec fields an UPDATE may change. */
export const MUTABLE_SPEC_FIELDS = ['parallelism', 'replicas', 'paused', 'ttlSecondsAfterFinished', 'ttlSecondsAfterCreated'] as const;

const MUTABLE = new Set<string>(MUTABLE_SPEC_FIELDS);
const DETAIL = 'field is immutable; only spec.parallelism, spec.replicas, spec.paused and the two TTL fields may change';
const MAX_NAMED_CHANGES = 3;
const MAX_DIFF_DEPTH = 16;

/** Forbidden errors for every spec field other than the mutable ones that differs. */
export function validateImmutable(oldObject: unknown, newObject: unknown): FieldError[] {
  const oldSpec = own(oldObject, 'spec');
  const newSpec = own(newObject, 'spec');
  if (!isObject(oldSpec) || !isObject(newSpec)) {
    return jsonEqual(oldSpec, newSpec) ? [] : [forbidden(['spec'], DETAIL)];
  }
  const errors: FieldError[] = [];
  for (const key of unionKeys(oldSpec, newSpec)) {
    if (MUTABLE.has(key)) continue;
    // The same JSON is the same Go value with the same stray keys: most updates (pausing,
    // scaling) change no other field, and the Go forms cost ~3× a whole validation.
    if (jsonEqual(own(oldSpec, key), own(newSpec, key))) continue;
    const [a, b] = [goSpecField(oldSpec, key), goSpecField(newSpec, key)];
    if (!jsonEqual(a, b)) errors.push(forbidden(['spec', key], withChanges(a, b, ['spec', key])));
    else {
      const added = extrasAdded(own(oldSpec, key), own(newSpec, key), key);
      if (added.length > 0) errors.push(forbidden(['spec', key], `${DETAIL} (changed: ${added.slice(0, MAX_NAMED_CHANGES).map((p) => renderPath(['spec', key, ...p])).join(', ')}${added.length > MAX_NAMED_CHANGES ? ` and ${added.length - MAX_NAMED_CHANGES} more` : ''}: no field of the Kubernetes type, which the API server refuses in every injection)`));
    }
  }
  return errors;
}

/**
 * Keys the new value holds beyond its Go type's fields (api/go-json.ts goExtras) that the old
 * one does not hold with the same value. A typed client drops such keys, so one dropped is a
 * no-op; one added or changed is kept by the CRD and the planner and sent in every injection,
 * which the API server refuses (strict field validation): the job would stall — the Go
 * comparison alone admitted `imagePulPolicy: Always` added to a running job (review73).
 */
function extrasAdded(oldValue: unknown, newValue: unknown, key: string): (string | number)[][] {
  // Only the template is sent to the API server; a selector's stray key changes nothing.
  const type = key === 'template' ? SPEC_FIELD_TYPES[key] : undefined;
  if (type === undefined) return [];
  const before = new Map(goExtras(oldValue, type).map((x) => [JSON.stringify(x.path), x.value]));
  return goExtras(newValue, type).filter((x) => {
    const at = JSON.stringify(x.path);
    return !before.has(at) || !jsonEqual(before.get(at), x.value);
  }).map((x) => [...x.path]);
}

/**
 * A spec field as the update rules compare it: the selector and the template in their Go
 * canonical form (api/go-json.ts); any other field as sent (null is unset: every other
 * spec field is a pointer in kruise-api, or no field of it at all).
 */
export function goSpecField(spec: unknown, key: string): unknown {
  const value = own(spec, key);
  const type = Object.hasOwn(SPEC_FIELD_TYPES, key) ? SPEC_FIELD_TYPES[key] : undefined;
  return type === undefined ? value : goCanonical(value, type);
}

function withChanges(a: unknown, b: unknown, path: FieldPath): string {
  const changes = changedPaths(a, b, path);
  const named = changes.slice(0, MAX_NAMED_CHANGES).map(renderPath);
  // Only worth saying when it adds something beyond the error's own path.
  if (named.length === 0 || (named.length === 1 && named[0] === renderPath(path))) return DETAIL;
  const more = changes.length > MAX_NAMED_CHANGES ? ` and ${changes.length - MAX_NAMED_CHANGES} more` : '';
  return `${DETAIL} (changed: ${named.join(', ')}${more})`;
}

/** The deepest paths where two values differ, in document order (depth-bounded: untrusted input). */
function changedPaths(a: unknown, b: unknown, path: FieldPath): FieldPath[] {
  const out: FieldPath[] = [];
  const stack: { a: unknown; b: unknown; path: FieldPath }[] = [{ a, b, path }];
  while (stack.length > 0) {
    const cur = stack.pop() as { a: unknown; b: unknown; path: FieldPath };
    if (jsonEqual(cur.a, cur.b)) continue;
    const children = childPairs(cur.a, cur.b);
    if (children === undefined || cur.path.length - path.length >= MAX_DIFF_DEPTH) out.push(cur.path);
    else for (const [k, x, y] of children.reverse()) stack.push({ a: x, b: y, path: [...cur.path, k] });
  }
  return out;
}

/** Pairs to compare one level down, or undefined when the two values differ in shape. */
function childPairs(a: unknown, b: unknown): [string | number, unknown, unknown][] | undefined {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length ? a.map((x, i) => [i, x, b[i]]) : undefined;
  if (isObject(a) && isObject(b)) return unionKeys(a, b).map((k) => [k, own(a, k), own(b, k)]);
  return undefined;
}
