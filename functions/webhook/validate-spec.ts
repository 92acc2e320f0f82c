// spec of an EphemeralJob: counts, deadlines, TTLs, selector and template.
import { MAX_PARALLELISM } from '../api/names.ts';
import { invalid, required } from './field-errors.ts';
import type { FieldError, FieldPath } from './field-errors.ts';
import { isObject, own } from './json.ts';
import { validateContainer } from './validate-container.ts';
import { validateSelector } from './validate-selector.ts';

const INT32_MAX = 2147483647;

/** Integer spec fields and their bounds (int32 in OpenKruise's Go types unless noted). */
const INTEGER_FIELDS: readonly { field: string; min: number; max: number }[] = [
  { field: 'parallelism', min: 0, max: MAX_PARALLELISM },
  { field: 'replicas', min: 0, max: INT32_MAX },
  // int64 in Go; JSON numbers beyond 2^53 are not exact, so stop there.
  { field: 'activeDeadlineSeconds', min: 1, max: Number.MAX_SAFE_INTEGER },
  { field: 'ttlSecondsAfterFinished', min: 0, max: INT32_MAX },
  { field: 'ttlSecondsAfterCreated', min: 0, max: INT32_MAX },
];

/** Errors in an object's spec (the whole object is passed; errors are rooted at `spec`). */
export function validateSpec(object: unknown): FieldError[] {
  const path = ['spec'];
  const spec = own(object, 'spec');
  if (spec === undefined) return [required(path)];
  if (!isObject(spec)) return [invalid(path, spec, 'must be an object')];
  const errors = validateSelector(own(spec, 'selector'), [...path, 'selector']);
  for (const f of INTEGER_FIELDS) errors.push(...validateInteger(own(spec, f.field), [...path, f.field], f.min, f.max));
  const paused = own(spec, 'paused');
  if (paused !== undefined && typeof paused !== 'boolean') errors.push(invalid([...path, 'paused'], paused, 'must be a boolean'));
  // Not push(...): a template's errors are as many as its env entries, past what a spread may pass (review79).
  return errors.concat(validateTemplate(own(spec, 'template'), [...path, 'template']));
}

function validateInteger(value: unknown, path: FieldPath, min: number, max: number): FieldError[] {
  if (value === undefined) return [];
  if (typeof value !== 'number' || !Number.isInteger(value)) return [invalid(path, value, 'must be an integer')];
  if (value < min) {
    return [invalid(path, value, min === 1 ? 'must be greater than 0' : `must be greater than or equal to ${min}`)];
  }
  if (value > max) return [invalid(path, value, `must be less than or equal to ${max}`)];
  return [];
}

function validateTemplate(template: unknown, path: FieldPath): FieldError[] {
  if (template === undefined) return [required(path)];
  if (!isObject(template)) return [invalid(path, template, 'must be an object')];
  const containersPath = [...path, 'ephemeralContainers'];
  const containers = own(template, 'ephemeralContainers');
  if (containers === undefined || (Array.isArray(containers) && containers.length === 0)) {
    return [required(containersPath, 'at least one ephemeral container is required')];
  }
  if (!Array.isArray(containers)) return [invalid(containersPath, containers, 'must be a list')];
  const seen = new Set<string>();
  return containers.flatMap((c, i) => validateContainer(c, [...containersPath, i], seen));
}
