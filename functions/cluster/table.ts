// Server-side printing: the meta.k8s.io Table kubectl asks for with
// `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`. Built-in kinds use their printer
// columns (printers.ts), custom resources their CRD's additionalPrinterColumns; a watch
// sends each event's object as a one-row Table, which is what `kubectl get -w` prints.
import { crdFor, type PrinterColumn } from './crds.ts';
import { humanAge } from './human-duration.ts';
import { builtinPrinter, DEFAULT_PRINTER, NAME_COLUMN, type ColumnDefinition, type Printer } from './printers.ts';
import type { ResourceDef } from './resources.ts';
import { badRequest } from './status.ts';

type Obj = Record<string, unknown>;

/** The Table version the Accept header asks for ('v1' or 'v1beta1'), or undefined for plain JSON. */
export function tableVersion(accept: string | undefined): string | undefined {
  for (const part of (accept ?? '').split(',')) {
    const [type, ...params] = part.split(';').map((s) => s.trim());
    if (type !== 'application/json') continue;
    const p = Object.fromEntries(params.map((kv) => kv.split('=').map((s) => s.trim()) as [string, string]));
    if (p.as === 'Table' && p.g === 'meta.k8s.io' && (p.v === 'v1' || p.v === 'v1beta1')) return p.v;
    if (p.as === undefined) return undefined;
  }
  return undefined;
}

/** How rows carry their object (`?includeObject=`): None, Metadata (default) or Object. */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** Read `includeObject` from the query; anything else is a 400, as the API server answers. */
export function includeObject(query: Record<string, string>): IncludeObject {
  const v = query.includeObject ?? 'Metadata';
  if (v === 'None' || v === 'Metadata' || v === 'Object') return v;
  throw badRequest(`includeObject: Unsupported value: "${v}": supported values: "Metadata", "None", "Object"`);
}

/** Options of one conversion. */
export interface TableOptions {
  version: string;
  include: IncludeObject;
  now: Date;
}

/** A GET's object or a LIST as a Table (list metadata kept for paging). */
export function toTable(def: ResourceDef, body: unknown, opts: TableOptions): Obj {
  const printer = printerFor(def);
  const b = body as Obj;
  const isList = Array.isArray(b.items);
  const items = (isList ? (b.items as Obj[]) : [b]).map((i) => ({ ...i, apiVersion: i.apiVersion ?? apiVersion(def), kind: i.kind ?? def.kind }));
  const listMeta = isList ? (b.metadata as Obj) : { resourceVersion: (b.metadata as Obj | undefined)?.resourceVersion };
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${opts.version}`,
    metadata: listMeta ?? {},
    columnDefinitions: printer.columns,
    rows: items.map((obj) => row(printer, obj, opts)),
  };
}

function row(printer: Printer, obj: Obj, opts: TableOptions): Obj {
  const out: Obj = { cells: printer.cells(obj, opts.now) };
  if (opts.include === 'Object') out.object = obj;
  if (opts.include === 'Metadata') out.object = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
  return out;
}

function apiVersion(def: ResourceDef): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}

/** The printer for a resource: its CRD's columns, a built-in's, or Name and Age. */
export function printerFor(def: ResourceDef): Printer {
  const crd = crdFor(def);
  if (crd) return crd.columns.length > 0 ? crdPrinter(crd.columns) : DEFAULT_PRINTER;
  return builtinPrinter(def.group, def.kind) ?? DEFAULT_PRINTER;
}

/** additionalPrinterColumns: Name first, then each column's JSONPath; dates as ages. */
function crdPrinter(columns: PrinterColumn[]): Printer {
  const defs: ColumnDefinition[] = columns.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description ?? '', priority: c.priority ?? 0 }));
  return {
    columns: [NAME_COLUMN, ...defs],
    cells: (obj, now) => [(obj.metadata as Obj).name, ...columns.map((c) => cell(c, obj, now))],
  };
}

function cell(c: PrinterColumn, obj: Obj, now: Date): unknown {
  const value = jsonPath(obj, c.jsonPath);
  if (c.type === 'date') return value === undefined ? '<unknown>' : humanAge(value, now);
  if (value === undefined || value === null) return null;
  if (c.type === 'string' && typeof value === 'object') return JSON.stringify(value);
  return value;
}

/** The simple JSONPaths printer columns use: `.status.phase`, `.metadata.labels.a\.b/c`. */
export function jsonPath(obj: unknown, path: string): unknown {
  const segments = path.replace(/^\{?\.?/, '').replace(/\}$/, '').split(/(?<!\\)\./).map((s) => s.replace(/\\\./g, '.')).filter(Boolean);
  let cur: unknown = obj;
  for (const s of segments) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Obj)[s];
  }
  return cur;
}
