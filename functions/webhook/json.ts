// Helpers for reading untrusted JSON safely: own properties only (a key like `constructor`
// must not reach Object.prototype), and no recursion deep enough to overflow the stack.
import type { FieldPath } from './field-errors.ts';

export type JsonObject = Record<string, unknown>;

/** A plain JSON object (not null, not an array). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An own property, or undefined; JSON null counts as unset, as Go's decoder treats it. */
export function own(obj: unknown, key: string | number): unknown {
  if (typeof key === 'number') return Array.isArray(obj) ? (obj[key] ?? undefined) : undefined;
  if (!isObject(obj) || !Object.hasOwn(obj, key)) return undefined;
  return obj[key] ?? undefined;
}

/** The value at a path, or undefined when any step is missing. */
export function valueAt(root: unknown, path: FieldPath): unknown {
  let cur = root;
  for (const p of path) {
    cur = own(cur, p);
    if (cur === undefined) return undefined;
  }
  return cur;
}

/**
 * Structural equality of two JSON values, treating a null or absent property alike.
 * Iterative (explicit stack) so an adversarially deep object cannot overflow the stack.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  const stack: [unknown, unknown][] = [[a, b]];
  while (stack.length > 0) {
    const [x, y] = stack.pop() as [unknown, unknown];
    if (x === y || ((x ?? null) === null && (y ?? null) === null)) continue;
    if (Array.isArray(x) && Array.isArray(y)) {
      if (x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) stack.push([x[i], y[i]]);
    } else if (isObject(x) && isObject(y)) {
      for (const k of unionKeys(x, y)) stack.push([own(x, k), own(y, k)]);
    } else {
      return false;
    }
  }
  return true;
}

/** Own keys of both objects, each once, in first-seen order. */
export function unionKeys(a: unknown, b: unknown): string[] {
  const keys = new Set<string>(isObject(a) ? Object.keys(a) : []);
  if (isObject(b)) for (const k of Object.keys(b)) keys.add(k);
  return [...keys];
}
