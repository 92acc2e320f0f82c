import { readFile, stat } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import * as z from 'zod';
import { Envelope, WatchEvent } from '../../api/envelope.ts';
import { formatZodIssues } from '../../api/field-path.ts';

/** Any Kubernetes object, as far as loading state goes. */
export const KubeObject = z.looseObject({
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  metadata: z.looseObject({ name: z.string().min(1), namespace: z.string().optional() }),
});
export type KubeObject = z.infer<typeof KubeObject>;

/** Bad input file: the message says which file, which document and which field. */
export class InputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InputError';
  }
}

/**
 * Objects from a state file: JSON or YAML, a `kind: List` (or any `*List`), an array of
 * objects, `ephemera invoke --output json`'s document (its `objects`: one run's result is
 * the next one's state), or several YAML documents. Empty documents are ignored. YAML merge keys (`<<: *anchor`) are
 * honoured, as kubectl's YAML reader does. Two objects of one name are refused, as
 * `kubectl create` of them would answer AlreadyExists the second time.
 */
export async function loadState(path: string): Promise<KubeObject[]> {
  const text = await readText(path);
  // YAML 1.2 has no merge keys; without the option, `<<` is an ordinary key and what it merges is lost.
  const docs = parseAllDocuments(text, { merge: true });
  const out: KubeObject[] = [];
  const seen = new Map<string, string>();
  for (const [i, doc] of docs.entries()) {
    if (doc.errors.length > 0) throw new InputError(`${path}: document ${i + 1}: ${doc.errors[0]?.message}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    for (const [j, item] of expandList(value).entries()) {
      const where = `document ${i + 1}${isList(value) || Array.isArray(value) || isInvokeOutput(value) ? ` item ${j}` : ''}`;
      const r = KubeObject.safeParse(item);
      if (!r.success) throw new InputError(`${path}: ${where}: ${formatZodIssues(r.error.issues, '')}`);
      const first = seen.get(identity(r.data));
      if (first !== undefined) throw new InputError(`${path}: ${first} and ${where} are both ${describeObject(r.data)}; an object appears once (kubectl create would answer AlreadyExists): remove or rename one`);
      seen.set(identity(r.data), where);
      out.push(r.data);
    }
  }
  return out;
}

/** What names an object to the API server: group, kind, namespace (absent: default, as kubectl and the in-memory server take it) and name. */
function identity(o: KubeObject): string {
  const group = o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : '';
  return JSON.stringify([group, o.kind, o.metadata.namespace || 'default', o.metadata.name]);
}

function describeObject(o: KubeObject): string {
  return `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name} (${o.apiVersion})`;
}

function isList(v: unknown): v is { items: unknown[] } {
  return typeof v === 'object' && v !== null && Array.isArray((v as { items?: unknown }).items) && String((v as { kind?: unknown }).kind ?? '').endsWith('List');
}

/** `ephemera invoke --output json`'s document: its `objects` are the cluster after the run, the state of the next one. */
function isInvokeOutput(v: unknown): v is { objects: unknown[] } {
  return typeof v === 'object' && v !== null && Array.isArray((v as { objects?: unknown }).objects) && Array.isArray((v as { actions?: unknown }).actions);
}

/** A document's objects: a `kind: List`'s items, a plain array's elements, an invoke document's objects, or the document itself. */
function expandList(v: unknown): unknown[] {
  if (isList(v)) return v.items;
  if (Array.isArray(v)) return v;
  return isInvokeOutput(v) ? v.objects : [v];
}

/** One event from a recording: a raw watch event or a relay envelope, and where it was read (file, event number). */
export type InputEvent = ({ watch: WatchEvent } | { envelope: Envelope }) & { where?: string };

/** Events read from a file, and notes on what was skipped in it. */
export interface LoadedEvents {
  events: InputEvent[];
  notes: string[];
}

/**
 * Events from a file: one JSON document (a watch event `{type, object}` or an envelope),
 * or JSON lines of them (what the relay's record sink writes, or `kubectl get --raw
 * '…?watch=1'`, BOOKMARK and ERROR events included). Blank lines are skipped, and so is a
 * last line cut off mid-write (see jsonLines), with a note. Envelopes of more than one
 * cluster are refused (oneCluster).
 */
export async function loadEvents(path: string): Promise<LoadedEvents> {
  const raw = await readText(path);
  const text = raw.trim();
  // An empty (or not yet flushed) recording looked exactly like "nothing to do" (review77 L4).
  if (text === '') return { events: [], notes: [`${path}: no events in it: nothing was replayed`] };
  const single = tryJson(text);
  const { docs, notes } = single.ok ? { docs: [single.value], notes: [] } : jsonLines(path, raw.startsWith('\uFEFF') ? raw.slice(1) : raw);
  const events = docs.map((doc, i) => toInputEvent(doc, `${path}${docs.length > 1 ? `: event ${i + 1}` : ''}`));
  oneCluster(path, events);
  return { events, notes };
}

/**
 * The documents of JSON lines. A line that is not JSON is an error naming it, but for the
 * last one when the file does not end with a newline and lines before it were read: that is
 * a recording whose writer was killed in the middle of an append (SIGKILL, OOM, a node lost),
 * and refusing the whole file for it hid everything before (review75 M1). It is skipped with
 * a note naming it.
 */
function jsonLines(path: string, text: string): { docs: unknown[]; notes: string[] } {
  const lines = text.split('\n').map((line, i) => ({ line, i })).filter((l) => l.line.trim() !== '');
  const unterminated = !/\n\s*$/.test(text);
  const docs: unknown[] = [];
  const notes: string[] = [];
  for (const [k, { line, i }] of lines.entries()) {
    const r = tryJson(line);
    if (r.ok) {
      docs.push(r.value);
      continue;
    }
    if (k === lines.length - 1 && unterminated && docs.length > 0) {
      notes.push(`${path}: line ${i + 1}: skipped: not JSON (${r.error}) and not ended by a newline, so cut off mid-write (a relay stopped while appending); the ${docs.length} line${docs.length === 1 ? '' : 's'} before it are replayed`);
      continue;
    }
    // kubectl get -w -o json prints each event over many lines (review77 L4).
    const hint = i === 0 && line.trim() === '{' ? `: events go one per line, as kubectl get --raw '…?watch=1' prints them (or pipe pretty JSON through jq -c .)` : '';
    throw new InputError(`${path}: line ${i + 1}: not JSON (${r.error})${hint}`);
  }
  return { docs, notes };
}

/**
 * Refuse envelopes of several clusters (`cluster`, EPHEMERA_RELAY_CLUSTER): invoke replays
 * them against one state, one in-memory cluster, or with --kubeconfig one live cluster, so
 * they were merged without a word, and with --apply one cluster's events were applied to
 * another (review75 M4).
 */
function oneCluster(path: string, events: InputEvent[]): void {
  const counts = new Map<string, number>();
  // An envelope naming no cluster (a relay without EPHEMERA_RELAY_CLUSTER) is one cluster
  // more beside one that names one (review76: they were merged without a word).
  const UNNAMED = '(no cluster named)';
  for (const ev of events) {
    if (!('envelope' in ev)) continue;
    const cluster = ev.envelope.cluster ?? UNNAMED;
    counts.set(cluster, (counts.get(cluster) ?? 0) + 1);
  }
  if (counts.size <= 1) return;
  const first = [...counts.keys()].find((c) => c !== UNNAMED) ?? '';
  const file = /^[\w./-]+$/.test(path) ? path : `'${path.replaceAll("'", "'\\''")}'`;
  throw new InputError(`${path}: events of ${counts.size} clusters (${[...counts].map(([c, n]) => `${c}: ${n} event${n === 1 ? '' : 's'}`).join(', ')}); invoke replays one cluster at a time, against the state of that cluster: split the recording by its "cluster" field, e.g. jq -c 'select(.cluster == "${first}")' ${file} > ${first}.jsonl`);
}

function toInputEvent(doc: unknown, where: string): InputEvent {
  const env = Envelope.safeParse(doc);
  if (env.success) return { envelope: env.data, where };
  // A document with an envelope's fields is judged as one: the watch event's issues
  // ("type", "object") would hide what is wrong with it (review: data.name "Bad_Name").
  if (looksLikeEnvelope(doc)) throw new InputError(`${where}: an event envelope that fails its schema: ${formatZodIssues(env.error.issues, '')}`);
  const watch = WatchEvent.safeParse(doc);
  if (watch.success) return { watch: watch.data, where };
  throw new InputError(`${where}: neither a watch event {type, object} nor an event envelope: ${formatZodIssues(watch.error.issues, '')}`);
}

function looksLikeEnvelope(doc: unknown): boolean {
  return typeof doc === 'object' && doc !== null && ('specversion' in doc || 'data' in doc);
}

function tryJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

/**
 * The most a file may hold: it is read whole, and a JavaScript string holds at most ~512 MiB
 * (past it the read failed with "Invalid string length", review75 L3). A recording that
 * large is hundreds of thousands of events; one replays a part of it.
 */
const MAX_INPUT_BYTES = 500 * 1024 * 1024;

async function readText(path: string): Promise<string> {
  try {
    const { size } = await stat(path);
    if (size > MAX_INPUT_BYTES) {
      throw new InputError(`${path} is ${Math.round(size / 1024 / 1024)} MiB, more than the ${MAX_INPUT_BYTES / 1024 / 1024} MiB a file may be (it is read whole): replay a part of it, e.g. one hour: jq -c 'select(.time >= "2026-01-01T10:00:00Z" and .time < "2026-01-01T11:00:00Z")' ${path} > part.jsonl`);
    }
    return await readFile(path, 'utf8');
  } catch (err) {
    if (err instanceof InputError) throw err;
    throw new InputError(`cannot read ${path}: ${(err as Error).message}`);
  }
}
