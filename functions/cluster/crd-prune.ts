// Pruning of custom resources by their CRD's structural schema, as kube-apiserver does
// (https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#field-pruning):
// a field the schema does not specify is dropped before the object is stored, so it is
// never returned, unless `x-kubernetes-preserve-unknown-fields: true` keeps what is under
// it. apiVersion, kind and metadata at the root (and in x-kubernetes-embedded-resource
// objects) are never pruned here. This is pruning only; validating values against the
// schema is a separate concern.
import type { ResourceDef } from './resources.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The parts of an OpenAPI v3 schema pruning looks at. */
interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  nullable?: boolean;
  default?: unknown;
}

const ALWAYS_KEPT = ['apiVersion', 'kind', 'metadata'];

/** A copy of `value` with every field the schema does not specify removed. */
export function pruneBySchema(value: unknown, schema: unknown): unknown {
  return prune(value, isObj(schema) ? (schema as Schema) : {}, true);
}

function prune(value: unknown, schema: Schema, root: boolean): unknown {
  if (Array.isArray(value)) return schema.items ? value.map((v) => prune(v, schema.items ?? {}, false)) : value;
  if (!isObj(value)) return value;
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  const keepMeta = root || schema['x-kubernetes-embedded-resource'] === true;
  const out: Obj = {};
  for (const [k, v] of Object.entries(value)) {
    const prop = schema.properties?.[k];
    // metadata is ObjectMeta whatever the schema says (`metadata: {type: object}` is typical).
    if (keepMeta && ALWAYS_KEPT.includes(k)) out[k] = v;
    else if (prop) keep(out, k, v, prop);
    else if (isObj(schema.additionalProperties)) keep(out, k, v, schema.additionalProperties);
    else if (schema.additionalProperties === true || preserve) out[k] = v;
  }
  return out;
}

/**
 * A specified field, pruned below; a null where its schema is neither nullable nor
 * defaulted is dropped, as kube-apiserver's PruneNonNullableNullsWithoutDefaults drops it
 * (a YAML `paused:` with no value is no field at all, not a null validation refuses).
 */
function keep(out: Obj, k: string, v: unknown, schema: Schema): void {
  if (v === null && schema.nullable !== true && schema.default === undefined) return;
  out[k] = prune(v, schema, false);
}

/** The openAPIV3Schema and printer columns a CRD object gives one version, or undefined. */
export function crdVersionParts(crd: unknown, version: string): { schema: unknown; columns: unknown[] } | undefined {
  const versions = (crd as { spec?: { versions?: unknown } } | null)?.spec?.versions;
  if (!Array.isArray(versions)) return undefined;
  const v = versions.find((x: unknown) => isObj(x) && x.name === version) as { schema?: { openAPIV3Schema?: unknown }; additionalPrinterColumns?: unknown } | undefined;
  if (v?.schema?.openAPIV3Schema === undefined) return undefined;
  return { schema: v.schema.openAPIV3Schema, columns: Array.isArray(v.additionalPrinterColumns) ? v.additionalPrinterColumns : [] };
}

/** True for a CustomResourceDefinition object. */
export function isCrd(o: unknown): boolean {
  return isObj(o) && o.kind === 'CustomResourceDefinition' && typeof o.apiVersion === 'string' && o.apiVersion.startsWith('apiextensions.k8s.io/');
}

/**
 * Served resources with the schemas of the given CRDs attached (matched by group and kind);
 * a CRD for a resource not served is ignored.
 */
export function withCrdSchemas(defs: readonly ResourceDef[], crds: readonly unknown[]): ResourceDef[] {
  return defs.map((d) => {
    const crd = crds.find((c) => {
      const spec = (c as { spec?: { group?: unknown; names?: { kind?: unknown } } }).spec;
      return spec?.group === d.group && spec.names?.kind === d.kind;
    });
    const parts = crd === undefined ? undefined : crdVersionParts(crd, d.version);
    return parts === undefined ? d : { ...d, ...parts };
  });
}

/** The object as the API server would store it: pruned when its resource has a schema. */
export function pruneForStorage<T>(def: ResourceDef, obj: T): T {
  return def.schema === undefined ? obj : (pruneBySchema(obj, def.schema) as T);
}
