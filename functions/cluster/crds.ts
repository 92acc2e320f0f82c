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
let cache: CrdVersion[] | undefined;

/** Every served version of every CRD in infra/crds (empty when the folder is absent). */
export function crdVersions(): CrdVersion[] {
  cache ??= loadAll();
  return cache;
}

/** The CRD version that defines this resource, if any. */
export function crdFor(def: ResourceDef): CrdVersion | undefined {
  if (!def.custom) return undefined;
  return crdVersions().find((c) => c.group === def.group && c.version === def.version && c.plural === def.resource);
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

function loadAll(): CrdVersion[] {
  const out: CrdVersion[] = [];
  for (const doc of installedCrds() as CrdDoc[]) {
    if (!doc.spec) continue;
    const { group, names } = doc.spec;
    for (const v of doc.spec.versions.filter((x) => x.served !== false)) {
      out.push({ group, version: v.name, kind: names.kind, plural: names.plural, columns: v.additionalPrinterColumns ?? [], schema: v.schema?.openAPIV3Schema });
    }
  }
  return out;
}
