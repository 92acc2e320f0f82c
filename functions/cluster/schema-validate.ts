// Structural-schema validation of custom resources, as the API server applies a CRD's
// openAPIV3Schema on create and update: types, required fields, bounds, lengths, item
// counts, enums and patterns, each error worded like kube-openapi's
// (`spec.parallelism: Invalid value: 50: spec.parallelism in body should be less than or
// equal to 10`). Updates ratchet (CRDValidationRatcheting, on by default since 1.30): a
// part of the object that did not change is not judged again, so an object stored before a
// rule existed can still have its finalizers written, and its status as on 1.33 and later
// (kube-apiserver 1.30–1.32 do not ratchet a /status write: there a stored status that
// breaks the schema has every status write refused until it is fixed).
import { jsonEqual } from '../api/json-equal.ts';
import type { Schema } from './crds.ts';
import { invalid, notSupported, required, type FieldError } from './status.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Marks "no old value": a create, or a field the old object did not have. */
const NONE = Symbol('none');
type Old = unknown;

/** Every schema violation of `value`; with `old`, only where the value changed. */
export function validateSchema(schema: Schema, value: unknown, old: Old = NONE): FieldError[] {
  const errs: FieldError[] = [];
  walk(schema, value, { old, path: '' }, errs);
  return errs;
}

/** Where the walk is: the old value at this point (or NONE) and the field path. */
interface At {
  old: Old;
  path: string;
}

function walk(schema: Schema, value: unknown, { old, path }: At, errs: FieldError[]): void {
  if (old !== NONE && jsonEqual(old, value)) return;
  if (path === 'metadata') return; // ObjectMeta has its own rules, checked elsewhere.
  if (!typeOk(schema, value)) {
    errs.push(invalid(path, typeName(value), `${path} in body must be of type ${schema.type}: ${JSON.stringify(typeName(value))}`));
    return;
  }
  errs.push(...scalarErrors(schema, value, path));
  if (isObj(value)) walkObject(schema, value, { old: isObj(old) ? old : NONE, path }, errs);
  if (Array.isArray(value) && schema.items) {
    const oldItems = Array.isArray(old) ? old : [];
    value.forEach((item, i) => walk(schema.items as Schema, item, { old: i < oldItems.length ? oldItems[i] : NONE, path: `${path}[${i}]` }, errs));
  }
}

function walkObject(schema: Schema, value: Obj, { old, path }: At, errs: FieldError[]): void {
  for (const name of schema.required ?? []) {
    if (value[name] === undefined) errs.push(required(join(path, name)));
  }
  for (const [name, child] of Object.entries(value)) {
    const sub = schema.properties?.[name] ?? (isObj(schema.additionalProperties) ? (schema.additionalProperties as Schema) : undefined);
    if (!sub) continue;
    walk(sub, child, { old: isObj(old) && name in old ? old[name] : NONE, path: join(path, name) }, errs);
  }
}

const join = (path: string, name: string): string => (path ? `${path}.${name}` : name);

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeOk(schema: Schema, v: unknown): boolean {
  if (schema['x-kubernetes-int-or-string'] === true) return typeof v === 'string' || Number.isInteger(v);
  if (v === null) return schema.nullable === true || schema.type === undefined;
  switch (schema.type) {
    case undefined: return true;
    case 'object': return isObj(v);
    case 'array': return Array.isArray(v);
    case 'string': return typeof v === 'string';
    case 'boolean': return typeof v === 'boolean';
    case 'integer': return Number.isInteger(v);
    case 'number': return typeof v === 'number';
    default: return true;
  }
}

function scalarErrors(schema: Schema, v: unknown, path: string): FieldError[] {
  const out: FieldError[] = [];
  const num = (k: string): number | undefined => (typeof schema[k] === 'number' ? (schema[k] as number) : undefined);
  const at = `${path} in body`;
  if (typeof v === 'number') {
    const [min, max] = [num('minimum'), num('maximum')];
    if (min !== undefined && v < min) out.push(invalid(path, v, `${at} should be greater than or equal to ${min}`));
    if (max !== undefined && v > max) out.push(invalid(path, v, `${at} should be less than or equal to ${max}`));
  }
  if (typeof v === 'string') {
    const [min, max] = [num('minLength'), num('maxLength')];
    if (min !== undefined && [...v].length < min) out.push(invalid(path, v, `${at} should be at least ${min} chars long`));
    if (max !== undefined && [...v].length > max) out.push(invalid(path, v, `${at} may not be longer than ${max}`));
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(v)) out.push(invalid(path, v, `${at} should match '${schema.pattern}'`));
  }
  if (Array.isArray(v)) {
    const [min, max] = [num('minItems'), num('maxItems')];
    if (min !== undefined && v.length < min) out.push(invalid(path, v.length, `${at} should have at least ${min} items`));
    if (max !== undefined && v.length > max) out.push(invalid(path, v.length, `${at} should have at most ${max} items`));
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => jsonEqual(e, v))) out.push(notSupported(path, v, schema.enum.map(String)));
  return out;
}

/**
 * Fields the schema does not declare (and no `x-kubernetes-preserve-unknown-fields` keeps),
 * as `spec.foo`: what `fieldValidation=Strict` refuses and `Warn` warns about.
 */
export function unknownFields(schema: Schema, value: unknown, path = ''): string[] {
  if (path === 'metadata' || schema['x-kubernetes-preserve-unknown-fields'] === true && !schema.properties) return [];
  if (Array.isArray(value) && schema.items) return value.flatMap((item, i) => unknownFields(schema.items as Schema, item, `${path}[${i}]`));
  if (!isObj(value)) return [];
  const out: string[] = [];
  for (const [name, child] of Object.entries(value)) {
    const sub = schema.properties?.[name] ?? (isObj(schema.additionalProperties) ? (schema.additionalProperties as Schema) : undefined);
    if (sub) out.push(...unknownFields(sub, child, join(path, name)));
    else if (schema.additionalProperties !== true && schema['x-kubernetes-preserve-unknown-fields'] !== true) out.push(join(path, name));
  }
  return out;
}
