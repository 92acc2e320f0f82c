// Server-side field validation (`?fieldValidation=Strict|Warn|Ignore`), which kubectl asks
// for on every create, apply and edit once /openapi/v3 says the server supports it: fields a
// custom resource's schema does not declare are refused (Strict) or reported in a Warning
// header (Warn). Without the parameter it is Warn, as kube-apiserver's handlers/rest.go
// fieldValidation() defaults it.
//
// Of the built-in kinds, only a Pod's `spec.ephemeralContainers` are judged (by the fields a
// 1.33 server decodes: api/container-fields.ts), the part ephemera writes from a user's
// template: under Strict an unknown field there refuses the write (a create or update 400,
// a merge or strategic merge patch 422, as handlers/patch.go answers), under Warn it is
// dropped with a Warning, under Ignore dropped. Other fields of a Pod, and JSON patches, are
// not judged.
import { unknownFields as unknownContainerFields } from '../api/container-fields.ts';
import { crdFor } from './crds.ts';
import type { ResourceDef } from './resources.ts';
import { unknownFields } from './schema-validate.ts';
import { badRequest, invalid, invalidError } from './status.ts';

const MERGE_TYPES = ['application/json', 'application/merge-patch+json', ''];

/** What a write's field validation leaves: Warning header values, and the body to go on with. */
export interface CheckedFields {
  warnings: string[];
  body: string;
}

/** Checks a write body; throws under Strict, returns Warning header values under Warn, and the body without what the decoder drops. */
export function checkFields(def: ResourceDef, request: { method: string; contentType: string; body: string; directive: string | undefined }): CheckedFields {
  const directive = request.directive || 'Warn';
  if (!['Strict', 'Warn', 'Ignore'].includes(directive)) throw badRequest(`fieldValidation: Unsupported value: "${directive}": supported values: "Ignore", "Strict", "Warn"`);
  if (def.group === '' && def.kind === 'Pod') return checkPodFields(request, directive);
  return { warnings: checkCustomFields(def, request, directive), body: request.body };
}

function checkCustomFields(def: ResourceDef, request: { method: string; contentType: string; body: string }, directive: string): string[] {
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

const STRATEGIC = 'application/strategic-merge-patch+json';

/** A Pod write's ephemeral containers judged by the fields the server decodes. */
function checkPodFields(request: { method: string; contentType: string; body: string }, directive: string): CheckedFields {
  const type = request.contentType.split(';')[0]!.trim().toLowerCase();
  const unchanged = { warnings: [], body: request.body };
  if (!['POST', 'PUT', 'PATCH'].includes(request.method) || (request.method === 'PATCH' && ![...MERGE_TYPES, STRATEGIC].includes(type))) return unchanged;
  if (!request.body.includes('"ephemeralContainers"')) return unchanged; // most Pod writes: status, labels
  let parsed: unknown;
  try {
    parsed = JSON.parse(request.body);
  } catch {
    return unchanged; // the REST layer answers malformed bodies
  }
  const spec = (parsed as { spec?: unknown } | null)?.spec;
  const containers = typeof spec === 'object' && spec !== null ? (spec as { ephemeralContainers?: unknown }).ephemeralContainers : undefined;
  if (!Array.isArray(containers)) return unchanged;
  const { unknown, known } = unknownContainerFields(containers, 'spec.ephemeralContainers');
  if (unknown.length === 0) return unchanged;
  const why = `strict decoding error: ${unknown.map((f) => `unknown field ${JSON.stringify(f)}`).join(', ')}`;
  if (directive === 'Strict') {
    if (request.method !== 'PATCH') throw badRequest(`Pod in version "v1" cannot be handled as a Pod: ${why}`);
    // handlers/patch.go: NewInvalid(GroupKind{}, "", patch: Invalid value: <the patch, as Go prints a map>).
    throw invalidError('', '', '', [invalid('patch', goValue(parsed), why)]);
  }
  const body = JSON.stringify({ ...(parsed as object), spec: { ...(spec as object), ephemeralContainers: known } });
  return { warnings: directive === 'Warn' ? unknown.map((f) => `299 - ${JSON.stringify(`unknown field ${JSON.stringify(f)}`)}`) : [], body };
}

/** A JSON value as Go's `%+v` prints it once decoded into maps: `map[a:1 b:[x y]]`, keys sorted. */
function goValue(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(goValue).join(' ')}]`;
  if (typeof v === 'object' && v !== null) return `map[${Object.keys(v).sort().map((k) => `${k}:${goValue((v as Record<string, unknown>)[k])}`).join(' ')}]`;
  return v === null ? '<nil>' : String(v);
}

/** A merge patch's nulls delete fields; they declare nothing. */
function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== null).map(([k, x]) => [k, withoutNulls(x)]));
}
