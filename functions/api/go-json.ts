// What a typed Go client sees of a JSON value: the same data decoded into a Go type, as
// equality.Semantic compares it. kruise-api, controller-runtime and kruise-manager itself
// (its finalizer Update) read an EphemeralJob into Go structs and write it back re-encoded:
// `resources: {}` appears (a struct is never omitted), `false`, `""`, `0` and empty lists
// and maps go (omitempty), an absent divisor becomes "0", "1000m" becomes "1", and unknown
// keys are dropped. None of that changes what the job does (review72), so comparing raw
// JSON denied every typed no-op update of a job. goCanonical maps a value to one canonical
// form per Go value, so two JSON values have equal canonical forms iff Go decodes them to
// semantically equal structs:
// - null or absent is Go's zero value; a pointer's zero (nil) is not the zero it points to:
//   `runAsNonRoot: false` is not `runAsNonRoot` unset (it overrides the pod's true), nor
//   `selector: {}` (every pod) a selector unset (no pod);
// - a field of a value type (string, bool, int, quantity, list, map, struct) holding its
//   zero value is the field absent, whether or not its tag says omitempty (decoding either
//   gives the same struct; omitempty only decides what Go writes back);
// - a nil list or map equals an empty one (equality.Semantic);
// - keys that are no field are dropped (Kubernetes' decoder is case-sensitive: `Image` is
//   no field), but list elements and map entries are kept even when zero;
// - a quantity is its value (quantity.ts); an IntOrString keeps its kind (80 is not "80");
// - a value of a JSON type Go cannot decode into the field (`tty: "true"`) is kept as it is
//   (Go would refuse the whole object, so no typed client sends it): of another JavaScript
//   type than any canonical value of that field, it never equals one.
// Pure and bounded: it recurses along the type only (a few levels), never into a value it
// keeps as it is. Dependency-free, for the webhook's Worker bundle.
import { quantityNanos } from './quantity.ts';

/** A Go type as encoding/json sees it. */
export type GoType =
  | { readonly kind: 'string' | 'bool' | 'int' | 'quantity' | 'intOrString' }
  | { readonly kind: 'pointer'; readonly to: GoType }
  | { readonly kind: 'slice' | 'map'; readonly of: GoType }
  | { readonly kind: 'struct'; readonly fields: Readonly<Record<string, GoField>> };

/** A struct field: its type, and whether its JSON tag says omitempty (what Go writes back). */
export interface GoField {
  readonly type: GoType;
  readonly omitempty: boolean;
}

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The canonical form of `value` read as Go type `t` (undefined: a nil pointer). */
export function goCanonical(value: unknown, t: GoType): unknown {
  if (value === null || value === undefined) return t.kind === 'pointer' ? undefined : goZero(t);
  switch (t.kind) {
    case 'pointer': return goCanonical(value, t.to);
    case 'quantity': return quantityNanos(value) ?? value;
    case 'slice': return Array.isArray(value) ? value.map((v: unknown) => goCanonical(v, t.of)) : value;
    case 'map': return isPlain(value) ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, goCanonical(v, t.of)])) : value;
    case 'struct': return isPlain(value) ? structOf(value, t.fields) : value;
    // A scalar of the right JSON type is its own canonical form (1 and 1.0 are one number).
    default: return value;
  }
}

/** Known fields only, each left out when it holds its type's zero value. fromEntries: a `__proto__` key stays data. */
function structOf(value: Plain, fields: Readonly<Record<string, GoField>>): Plain {
  const out: [string, unknown][] = [];
  for (const key of Object.keys(value)) {
    const field = Object.hasOwn(fields, key) ? fields[key] : undefined;
    if (field === undefined) continue;
    const c = goCanonical(value[key], field.type);
    if (!isGoZero(c, field.type)) out.push([key, c]);
  }
  return Object.fromEntries(out);
}

/** A key a value holds that is no field of its Go type: where (keys and list indices from the value's root), and its value as sent. */
export interface GoExtra {
  readonly path: readonly (string | number)[];
  readonly value: unknown;
}

/**
 * The keys `value` holds, at any depth along `t`, that are no field of the Go type: what a
 * typed client drops, but the CRD (and ephemera's planner) keep, and the API server then
 * refuses in every injection (strict field validation). The canonical form leaves them out,
 * so the update rule asks of them apart (webhook/immutability.ts: one may be dropped, not
 * added or changed; review73). Bounded as goCanonical is.
 */
export function goExtras(value: unknown, t: GoType, path: readonly (string | number)[] = []): GoExtra[] {
  switch (t.kind) {
    case 'pointer': return goExtras(value, t.to, path);
    case 'slice': return Array.isArray(value) ? value.flatMap((v: unknown, i) => goExtras(v, t.of, [...path, i])) : [];
    case 'map': return isPlain(value) ? Object.entries(value).flatMap(([k, v]) => goExtras(v, t.of, [...path, k])) : [];
    case 'struct':
      if (!isPlain(value)) return [];
      return Object.keys(value).flatMap((key) => {
        const f = Object.hasOwn(t.fields, key) ? t.fields[key] : undefined;
        if (f !== undefined) return goExtras(value[key], f.type, [...path, key]);
        return value[key] === undefined ? [] : [{ path: [...path, key], value: value[key] }];
      });
    default: return [];
  }
}

/** The canonical form of Go's zero value of `t` (undefined: a nil pointer). */
export function goZero(t: GoType): unknown {
  switch (t.kind) {
    case 'string': return '';
    case 'bool': return false;
    case 'int':
    case 'intOrString': return 0;
    case 'quantity': return 0n;
    case 'slice': return [];
    case 'map':
    case 'struct': return {};
    case 'pointer': return undefined;
  }
}

/** Is this canonical form Go's zero value of `t`? */
export function isGoZero(c: unknown, t: GoType): boolean {
  switch (t.kind) {
    case 'slice': return Array.isArray(c) && c.length === 0;
    case 'map':
    case 'struct': return isPlain(c) && Object.keys(c).length === 0;
    default: return c === goZero(t);
  }
}

// Building blocks for the type tables (go-types.ts).
export const goString: GoType = { kind: 'string' };
export const goBool: GoType = { kind: 'bool' };
export const goInt: GoType = { kind: 'int' };
export const goQuantity: GoType = { kind: 'quantity' };
export const goIntOrString: GoType = { kind: 'intOrString' };
export const goPointer = (to: GoType): GoType => ({ kind: 'pointer', to });
export const goSlice = (of: GoType): GoType => ({ kind: 'slice', of });
export const goMap = (of: GoType): GoType => ({ kind: 'map', of });
export const goStruct = (fields: Record<string, GoField>): GoType => ({ kind: 'struct', fields });
/** A field tagged `json:"x"`. */
export const field = (type: GoType): GoField => ({ type, omitempty: false });
/** A field tagged `json:"x,omitempty"`. */
export const omitempty = (type: GoType): GoField => ({ type, omitempty: true });
