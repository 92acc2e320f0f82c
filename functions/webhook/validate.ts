// The pure validator: (object, oldObject, operation) → field errors. No I/O, no clock and
// no Kubernetes client, so it runs unchanged on Node, Workers and Lambda.
import type { FieldError } from './field-errors.ts';
import type { FieldPath } from './field-errors.ts';
import { jsonEqual, own, valueAt } from './json.ts';
import { goSpecField, validateImmutable } from './immutability.ts';
import { validateSpec } from './validate-spec.ts';

/** Admission operations; anything else (DELETE, CONNECT, future ones) is not validated. */
export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT' | (string & {});

/**
 * Every field error of an EphemeralJob for this operation. On UPDATE, spec fields other
 * than the mutable ones are Forbidden to change, and errors in values that did not change
 * are dropped ("ratcheting", as Kubernetes does for CRDs since 1.30): a job created before
 * the webhook was installed can still be paused, scaled, or have its finalizer removed.
 * "Did not change" is judged as the update rules judge it, in Go's terms for the selector
 * and the template (immutability.ts): a typed client's `imagePullPolicy: ""` dropped is no
 * change to hold against it (review72).
 */
export function validateEphemeralJob(object: unknown, oldObject: unknown, operation: Operation): FieldError[] {
  if (operation === 'CREATE') return validateSpec(object);
  if (operation !== 'UPDATE') return [];
  const changed = validateSpec(object).filter((e) => !jsonEqual(asCompared(object, e.path), asCompared(oldObject, e.path)));
  return [...validateImmutable(oldObject, object), ...changed];
}

/** The value at an error's path as the update rules compare it (goSpecField under spec). */
function asCompared(object: unknown, path: FieldPath): unknown {
  const [root, key, ...rest] = path;
  if (root !== 'spec' || typeof key !== 'string') return valueAt(object, path);
  return valueAt(goSpecField(own(object, 'spec'), key), rest);
}
