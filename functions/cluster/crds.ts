// The CustomResourceDefinitions the embedded cluster serves, read from infra/crds/ (the same
// files a real cluster installs), so printer columns, the OpenAPI document and schema
// validation come from one source. Read lazily: bundles that never serve a table or validate
// (the relay image) never touch the files.
import { readdirSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { ResourceDef } from './resources.ts';

/** A JSON schema node of a structural CRD schema (openAPIV3Schema). */
export type Schema = Record<string, unknown> & {
  type?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  required?: string[];
};

/** One additionalPrinterColumns entry. */
export interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  description?: string;
  format?: string;
  priority?: number;
}

/** What the cluster uses of one served CRD version. */
export interface CrdVersion {
  group: string;
  version: string;
  kind: string;
  plural: string;
  columns: PrinterColumn[];
  schema: Schema | undefined;
}

const CRD_DIR = new URL('../../infra/crds/', import.meta.url);
/**
 * The installed CRD version that defines this resource, if any: the one whose schema the
 * server attached to it (server.ts withCrdSchemas) — OpenKruise's when a test seeds it, none
 * with `crds: []` — so validation, strict field checks, OpenAPI and tables follow the same
 * CRD as pruning, as in kube-apiserver (review: they always used infra/crds).
 */
export function crdFor(def: ResourceDef): CrdVersion | undefined {
  if (!def.custom || def.schema === undefined) return undefined;
  return { group: def.group, version: def.version, kind: def.kind, plural: def.resource, columns: (def.columns ?? []) as PrinterColumn[], schema: def.schema as Schema };
}

type CrdDoc = {
  kind?: string;
  spec?: {
    group: string;
    names: { kind: string; plural: string };
    versions: { name: string; served?: boolean; additionalPrinterColumns?: PrinterColumn[]; schema?: { openAPIV3Schema?: Schema } }[];
  };
};

let docs: CrdDoc[] | undefined;

/** The CustomResourceDefinition documents in infra/crds, as a cluster with ephemera installed has them. */
export function installedCrds(): readonly unknown[] {
  docs ??= readDocs();
  return docs;
}

function readDocs(): CrdDoc[] {
  let files: string[];
  try {
    files = readdirSync(CRD_DIR).filter((f) => f.endsWith('.yaml'));
  } catch {
    return [];
  }
  return files.map((f) => parse(readFileSync(new URL(f, CRD_DIR), 'utf8')) as CrdDoc).filter((d) => d?.kind === 'CustomResourceDefinition' && d.spec !== undefined);
}
