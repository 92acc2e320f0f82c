// Server-side field validation (`?fieldValidation=Strict|Warn|Ignore`), which kubectl asks
// for on every create, apply and edit once /openapi/v3 says the server supports it: fields a
// custom resource's schema does not declare are refused (Strict) or reported in a Warning
// header (Warn). Without the parameter it is Warn, as kube-apiserver's handlers/rest.go
// fieldValidation() defaults it.
import { crdFor } from './crds.ts';
import type { ResourceDef } from './resources.ts';
import { unknownFields } from './schema-validate.ts';
import { badRequest } from './status.ts';

const MERGE_TYPES = ['application/json', 'application/merge-patch+json', ''];

/** Checks a write body; throws 400 under Strict, returns Warning header values under Warn. */
export function checkFields(def: ResourceDef, request: { method: string; contentType: string; body: string; directive: string | undefined }): string[] {
  const directive = request.directive || 'Warn';
  if (!['Strict', 'Warn', 'Ignore'].includes(directive)) throw badRequest(`fieldValidation: Unsupported value: "${directive}": supported values: "Ignore", "Strict", "Warn"`);
  const schema = crdFor(def)?.schema;
  if (directive === 'Ignore' || !schema || !['POST', 'PUT', 'PATCH'].includes(request.method)) return [];
  if (request.method === 'PATCH' && !MERGE_TYPES.includes(request.contentType.split(';')[0]!.trim().toLowerCase())) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(request.body);
  } catch {
    return []; // the REST layer answers malformed bodies
  }
  const unknown = unknownFields(schema, withoutNulls(parsed)).map((f) => `unknown field ${JSON.stringify(f)}`);
  if (unknown.length === 0) return [];
  if (directive === 'Strict') {
    throw badRequest(`${def.kind} in version ${JSON.stringify(def.version)} cannot be handled as a ${def.kind}: strict decoding error: ${unknown.join(', ')}`);
  }
  return unknown.map((u) => `299 - ${JSON.stringify(u)}`);
}

/** A merge patch's nulls delete fields; they declare nothing. */
function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== null).map(([k, x]) => [k, withoutNulls(x)]));
}
