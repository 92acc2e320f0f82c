// /openapi/v3 (and /openapi/v2): what kubectl reads before `apply` or `create`. kubectl
// validates on the server when a group-version's PATCH operations declare the
// `fieldValidation` query parameter (QueryParamVerifierV3); it then sends
// `fieldValidation=Strict` and needs no client-side schema, so that parameter is what makes
// `kubectl apply` work without --validate=false. Custom resources carry their CRD schema;
// built-in kinds an open object schema (the embedded cluster has no Go types to describe).
// PATCH operations list no request body on purpose: kubectl then builds strategic merge
// patches from its own compiled-in types instead of from these thin schemas.
import { createHash } from 'node:crypto';
import { crdFor, type Schema } from './crds.ts';
import type { ResourceDef, ResourceRegistry } from './resources.ts';

type Obj = Record<string, unknown>;

const gvPath = (def: ResourceDef): string => (def.group ? `apis/${def.group}/${def.version}` : `api/${def.version}`);
const gvk = (def: ResourceDef): Obj => ({ group: def.group, version: def.version, kind: def.kind });
const schemaName = (def: ResourceDef): string => `${def.group ? def.group.split('.').reverse().join('.') : 'io.k8s.api.core'}.${def.version}.${def.kind}`;

/** The document for an /openapi path, or undefined when the path is not one. */
export function openApiDocument(registry: ResourceRegistry, path: string): unknown {
  const trimmed = path.replace(/\/+$/, '');
  if (trimmed === '/openapi/v2') return swagger(registry);
  if (trimmed === '/openapi/v3') return discoveryV3(registry);
  if (!trimmed.startsWith('/openapi/v3/')) return undefined;
  const gv = trimmed.slice('/openapi/v3/'.length);
  const defs = registry.defs.filter((d) => gvPath(d) === gv);
  return defs.length > 0 ? groupVersionV3(defs) : undefined;
}

/** `{paths: {"apis/g/v": {serverRelativeURL}}}`: where each group-version's document lives. */
function discoveryV3(registry: ResourceRegistry): Obj {
  const paths: Obj = {};
  for (const gv of new Set(registry.defs.map(gvPath))) {
    const doc = groupVersionV3(registry.defs.filter((d) => gvPath(d) === gv));
    const hash = createHash('sha512').update(JSON.stringify(doc)).digest('hex').slice(0, 64).toUpperCase();
    paths[gv] = { serverRelativeURL: `/openapi/v3/${gv}?hash=${hash}` };
  }
  return { paths };
}

function groupVersionV3(defs: ResourceDef[]): Obj {
  const paths: Obj = {};
  const schemas: Obj = {};
  for (const def of defs) {
    Object.assign(paths, resourcePaths(def));
    schemas[schemaName(def)] = { ...schemaOf(def), 'x-kubernetes-group-version-kind': [gvk(def)] };
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.33.0' }, paths, components: { schemas } };
}

function schemaOf(def: ResourceDef): Schema {
  return crdFor(def)?.schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
}

const queryParam = (name: string): Obj => ({ name, in: 'query', description: name, schema: { type: 'string', uniqueItems: true } });
const ok = (def: ResourceDef): Obj => ({ 200: { description: 'OK', content: { 'application/json': { schema: { $ref: `#/components/schemas/${schemaName(def)}` } } } } });

function resourcePaths(def: ResourceDef): Obj {
  const base = `/${gvPath(def)}${def.namespaced ? '/namespaces/{namespace}' : ''}/${def.resource}`;
  const op = (action: string, extra: Obj = {}): Obj => ({
    operationId: `${action}${def.kind}`, responses: ok(def), 'x-kubernetes-action': action, 'x-kubernetes-group-version-kind': gvk(def), ...extra,
  });
  const writeParams = { parameters: ['dryRun', 'fieldManager', 'fieldValidation'].map(queryParam) };
  const out: Obj = {
    [base]: { get: op('list'), post: op('post', writeParams) },
    [`${base}/{name}`]: { get: op('get'), put: op('put', writeParams), patch: op('patch', { parameters: ['dryRun', 'fieldManager', 'fieldValidation', 'force'].map(queryParam) }), delete: op('delete') },
  };
  for (const sub of def.subresources ?? []) out[`${base}/{name}/${sub}`] = { get: op('get'), put: op('put', writeParams), patch: op('patch', writeParams) };
  return out;
}

/** Swagger 2.0 with one definition per kind, for tools that read /openapi/v2 as JSON. */
function swagger(registry: ResourceRegistry): Obj {
  const definitions: Obj = {};
  for (const def of registry.defs) definitions[schemaName(def)] = { ...schemaOf(def), 'x-kubernetes-group-version-kind': [gvk(def)] };
  return { swagger: '2.0', info: { title: 'Kubernetes', version: 'v1.33.0' }, paths: {}, definitions };
}
