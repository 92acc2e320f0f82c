// Kubernetes-style field errors (k8s.io/apimachinery/pkg/util/validation/field), so a
// denial reads exactly like one from the API server:
// `spec.template.ephemeralContainers[0].image: Required value`.
import { fieldPath } from '../api/field-path.ts';

/** The error types the validator uses, with apimachinery's cause names and display strings. */
export const FIELD_ERROR_TYPES = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueTooLong: 'Too long',
} as const;
export type FieldErrorType = keyof typeof FIELD_ERROR_TYPES;

/** A path as segments: object keys and array indexes (`['spec', 'template', 0]`). */
export type FieldPath = readonly (string | number)[];

/** One field error: where, what kind, the offending value (if shown) and why. */
export interface FieldError {
  type: FieldErrorType;
  path: FieldPath;
  value?: unknown;
  detail?: string;
}

/** `spec.template.ephemeralContainers[0].image`; the empty path renders as `<root>`. */
export function renderPath(path: FieldPath): string {
  return fieldPath('', path);
}

/** A missing or empty value that must be set. */
export function required(path: FieldPath, detail?: string): FieldError {
  return detail === undefined ? { type: 'FieldValueRequired', path } : { type: 'FieldValueRequired', path, detail };
}

/** A value that is present but wrong. */
export function invalid(path: FieldPath, value: unknown, detail: string): FieldError {
  return { type: 'FieldValueInvalid', path, value, detail };
}

/** A value outside a closed set; the detail lists the supported values like apimachinery does. */
export function notSupported(path: FieldPath, value: unknown, supported: readonly string[]): FieldError {
  return {
    type: 'FieldValueNotSupported',
    path,
    value,
    detail: `supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`,
  };
}

/** A field that may not be set (or changed) here. */
export function forbidden(path: FieldPath, detail: string): FieldError {
  return { type: 'FieldValueForbidden', path, detail };
}

/** A value longer than allowed; apimachinery does not show it. */
export function tooLong(path: FieldPath, detail: string): FieldError {
  return { type: 'FieldValueTooLong', path, detail };
}

/** A value that repeats one that must be unique. */
export function duplicate(path: FieldPath, value: unknown): FieldError {
  return { type: 'FieldValueDuplicate', path, value };
}

/** A required string: Required when unset or empty, Invalid when not a string, then its format problems. */
export function requiredString(value: unknown, path: FieldPath, problems: (s: string) => string[] = () => []): FieldError[] {
  if (value === undefined || value === '') return [required(path)];
  if (typeof value !== 'string') return [invalid(path, value, 'must be a string')];
  return problems(value).map((p) => invalid(path, value, p));
}

/** An optional list whose entries are each checked at their index. */
export function eachItem(list: unknown, path: FieldPath, check: (item: unknown, path: FieldPath) => FieldError[]): FieldError[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) return [invalid(path, list, 'must be a list')];
  return list.flatMap((item, i) => check(item, [...path, i]));
}

const MAX_SHOWN_VALUE = 128;

/**
 * A value as apimachinery prints it (strings quoted, numbers bare), but only primitives:
 * objects are summarised, so a deeply nested or huge value can neither blow the stack
 * (JSON.stringify recurses) nor flood the message.
 */
export function showValue(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[array of ${value.length}]`;
  if (typeof value === 'object') return '{object}';
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > MAX_SHOWN_VALUE ? `${text.slice(0, MAX_SHOWN_VALUE)}…` : text;
}

/** The error's body without its path, as apimachinery's ErrorBody(). */
export function errorBody(e: FieldError): string {
  const kind = FIELD_ERROR_TYPES[e.type];
  // apimachinery prints no value for Required, Forbidden and TooLong.
  let s = e.type === 'FieldValueRequired' || e.type === 'FieldValueForbidden' || e.type === 'FieldValueTooLong' ? kind : `${kind}: ${showValue(e.value)}`;
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

/** `path: body`, as apimachinery's Error(). */
export function formatFieldError(e: FieldError): string {
  return `${renderPath(e.path)}: ${errorBody(e)}`;
}

/** One line for all errors, as apimachinery's aggregate: bare for one, `[a, b]` for many. */
export function formatFieldErrors(errors: readonly FieldError[]): string {
  const parts = errors.map(formatFieldError);
  return parts.length === 1 ? (parts[0] as string) : `[${parts.join(', ')}]`;
}
