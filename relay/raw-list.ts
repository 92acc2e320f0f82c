// LIST and WATCH as raw JSON over node:http(s), with the KubeConfig's own authentication,
// TLS and proxy agent (client-node's `applyToHTTPSOptions`). Why not client-node's calls:
// - its typed lists re-serialise objects (dates as `…00.000Z`, no `kind`), so a listed
//   object's fingerprint would differ from the same object on the watch and every first
//   change after a list would be forwarded for nothing;
// - its Watch goes through undici's fetch and web streams: ~12 MiB more resident memory
//   (undici's WebAssembly HTTP parser) and more CPU per event than node:http and JSON.parse
//   per line, in a process whose budget is 150 MiB for 10,000 pods.
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { forgetExecCredential } from '../functions/kube/kubeconfig-endpoint.ts';
import { MAX_RETRY_AFTER_SECONDS, retryAfterSeconds } from '../functions/kube/status-error.ts';
import { ListStream, type ListBody } from '../functions/kube/list-stream.ts';

/** One page of a LIST: its items (raw, or as listRaw's `map` made them), the snapshot's resourceVersion and the continue token. */
export interface ListPage<T = unknown> {
  items: T[];
  resourceVersion: string;
  continue?: string | undefined;
}

/** A LIST or WATCH answered with an error status (the loop tells 410 from the rest). */
export class ListError extends Error {
  readonly statusCode: number;
  /** How long the server asked to wait (its Retry-After), if it did. */
  readonly retryAfterMs: number | undefined;
  constructor(statusCode: number, message: string, options?: ErrorOptions & { retryAfterMs?: number | undefined }) {
    super(message, options);
    this.name = 'ListError';
    this.statusCode = statusCode;
    this.retryAfterMs = options?.retryAfterMs;
  }
}

/** The longest wait a Retry-After is taken for (a proxy's day-long one must not stop the relay). */
export const MAX_RETRY_AFTER_MS = MAX_RETRY_AFTER_SECONDS * 1000;

/** A Retry-After of whole seconds (status-error.ts), in ms; undefined if none. */
export function retryAfterMs(seconds: unknown): number | undefined {
  const s = retryAfterSeconds(seconds);
  return s === undefined ? undefined : s * 1000;
}

const retryAfterOf = (res: IncomingMessage): { retryAfterMs: number | undefined } => ({ retryAfterMs: retryAfterMs(res.headers['retry-after']) });

/** A refused credential: an exec plugin's cached one is asked for anew next time, as client-go does after a 401. */
function refusedCredential(kc: KubeConfig, status: number | undefined): void {
  if (status === 401) forgetExecCredential(kc);
}

/** How a watch stream ended: null = the server closed it cleanly (or it was idle too long). */
/** `idle`: ended by us after `idleMs` without a byte (err is null then). */
export type WatchDone = (err: Error | null, idle?: boolean) => void;

/** A running watch request. */
export interface WatchHandle {
  abort(): void;
}

/** GET `path` with `query`; resolves with the response once its headers arrived. */
async function get(kc: KubeConfig, path: string, query: Record<string, string | undefined>, limits: { timeoutMs: number; idle?: { fired: boolean }; signal?: AbortSignal | undefined }): Promise<IncomingMessage> {
  const { timeoutMs, idle = { fired: false }, signal } = limits;
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('no current cluster in the kubeconfig');
  const url = new URL(server + path);
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') url.searchParams.set(k, v);
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  // A token file read as it is keeps its newline, which no header may carry (client-go trims it).
  const headers = opts.headers as Record<string, unknown> | undefined;
  opts.headers = { ...headers, ...(typeof headers?.Authorization === 'string' ? { Authorization: headers.Authorization.trim() } : {}), accept: 'application/json' } as https.RequestOptions['headers'];
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request(url, { ...opts, method: 'GET', ...(signal ? { signal } : {}) }, resolve);
    // Idle timeout: no byte for this long (a list being answered, a watch between events).
    req.setTimeout(timeoutMs, () => {
      idle.fired = true;
      req.destroy(Object.assign(new Error(`no answer from ${url.host} for ${timeoutMs} ms`), { name: 'TimeoutError' }));
    });
    req.on('error', reject);
    req.end();
  });
}

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
    res.on('close', () => (res.complete ? undefined : reject(new Error('the answer was cut off'))));
  });
}

/** The LIST answer read as it arrives (list-stream.ts): each item through `map` as soon as it is whole. */
function readList<T>(res: IncomingMessage, map: (raw: unknown) => T): Promise<ListBody<T>> {
  return new Promise((resolve, reject) => {
    const list = new ListStream(map);
    let settled = false;
    const settle = (err: Error | null, body?: ListBody<T>): void => {
      if (settled) return;
      settled = true;
      if (err) {
        // Nothing more is read of an answer already refused.
        res.destroy();
        reject(err);
      } else resolve(body!);
    };
    res.on('data', (c: Buffer) => {
      try {
        list.write(c);
      } catch (err) {
        settle(err as Error);
      }
    });
    res.on('end', () => {
      try {
        settle(null, list.end());
      } catch (err) {
        settle(err as Error);
      }
    });
    res.on('error', (err) => settle(err));
    res.on('close', () => (res.complete ? undefined : settle(new Error('the answer was cut off'))));
  });
}

/**
 * GET a collection page (`limit`/`continue`, optionally a `labelSelector`); throws ListError,
 * a SyntaxError for an answer that is not a JSON list, or the transport's error. Each item is
 * handed to `map` as soon as it has arrived, before the next is read: what `map` returns is
 * all that is kept of it, and nothing when that is undefined (review82 H1: a page of large
 * objects parsed whole took the relay past its memory limit). An error status's body is small
 * and read whole.
 */
export async function listRaw<T = unknown>(kc: KubeConfig, path: string, query: { limit: number; continue?: string | undefined; labelSelector?: string | undefined; timeoutMs: number; signal?: AbortSignal | undefined; map?: (raw: unknown) => T }): Promise<ListPage<T>> {
  const res = await get(kc, path, { limit: String(query.limit), continue: query.continue, labelSelector: query.labelSelector }, { timeoutMs: query.timeoutMs, signal: query.signal });
  refusedCredential(kc, res.statusCode);
  if (res.statusCode !== 200) throw new ListError(res.statusCode ?? 0, `LIST ${path}: HTTP ${res.statusCode}: ${statusMessage(await readBody(res))}`, retryAfterOf(res));
  const body = await readList(res, query.map ?? ((raw) => raw as T));
  if (!body.items) throw new ListError(500, `LIST ${path}: the answer has no items array`);
  return { items: body.items, resourceVersion: body.resourceVersion, continue: body.continue };
}

/**
 * A watch line that is not JSON, or has no type, ends the watch: the event it carried cannot
 * be skipped, since the next event's resourceVersion would resume past it and the object's
 * change would be lost for good. client-go's StreamWatcher ends the stream on a decode error
 * too, and its reflector lists again (review: a truncated line lost a pod's Succeeded).
 */
export class UnreadableWatchLine extends Error {}

/**
 * WATCH `path` from `query.resourceVersion`: `onEvent(type, object)` per line, then `done`
 * exactly once (null: closed cleanly or idle for `idleMs`; else the error, a ListError for an
 * HTTP error status, an UnreadableWatchLine after `onLineError` for a line that cannot be read).
 */
export function watchRaw(kc: KubeConfig, path: string, query: Record<string, string>, handlers: { onEvent(type: string, obj: unknown): void; onLineError(err: string): void; done: WatchDone; idleMs: number }): WatchHandle {
  let res: IncomingMessage | undefined;
  let finished = false;
  // A watch quiet for idleMs is ended by us, not broken: it resumes like a clean close.
  const idle = { fired: false };
  const finish = (err: Error | null): void => {
    if (finished) return;
    finished = true;
    res?.destroy();
    handlers.done(idle.fired ? null : err, idle.fired);
  };
  get(kc, path, { ...query, watch: 'true' }, { timeoutMs: handlers.idleMs, idle }).then(async (r) => {
    res = r;
    if (finished) return void r.destroy();
    refusedCredential(kc, r.statusCode);
    if (r.statusCode !== 200) return finish(new ListError(r.statusCode ?? 0, `WATCH ${path}: HTTP ${r.statusCode}: ${statusMessage(await readBody(r).catch(() => ''))}`, retryAfterOf(r)));
    stream(r, handlers, finish);
  }, (err: unknown) => finish(err as Error));
  return { abort: () => finish(null) };
}

/**
 * The longest watch line read (one event: kube-apiserver takes objects of at most 3 MiB, and
 * encodes them in a little more); a longer one ends the watch as unreadable, and the list
 * that follows tells what it carried.
 */
export const MAX_WATCH_LINE_BYTES = 16 * 1024 * 1024;

/**
 * Split the body into lines and parse each: one JSON watch event per line. Lines are cut
 * from the bytes (a newline byte never occurs inside a UTF-8 sequence) and each is decoded
 * once, straight from the chunk: no running string to append to and slice again. The part
 * of a line still to come is kept as its chunks, and only a new chunk is searched for the
 * newline: a large object in many small chunks costs its length, not its length squared
 * (review: 8 MiB in 1 KiB chunks took 31 s of CPU).
 */
function stream(res: IncomingMessage, h: { onEvent(type: string, obj: unknown): void; onLineError(err: string): void }, finish: WatchDone): void {
  const pending: Buffer[] = [];
  let pendingBytes = 0;
  let broken = false;
  const fail = (error: string): void => {
    // Nothing after it is applied: the watch ends here, before any later resourceVersion.
    broken = true;
    h.onLineError(error);
    finish(new UnreadableWatchLine(error));
  };
  res.on('data', (chunk: Buffer) => {
    if (broken) return;
    let start = 0;
    let nl = chunk.indexOf(10);
    while (nl >= 0) {
      const text = pending.length === 0 ? chunk.toString('utf8', start, nl) : Buffer.concat([...pending, chunk.subarray(start, nl)]).toString('utf8');
      pending.length = 0;
      pendingBytes = 0;
      const error = line(text, h);
      if (error !== undefined) return fail(error);
      start = nl + 1;
      nl = chunk.indexOf(10, start);
    }
    if (start >= chunk.length) return;
    // Copied: a view would pin the whole chunk until the line is complete.
    pending.push(Buffer.from(chunk.subarray(start)));
    pendingBytes += chunk.length - start;
    if (pendingBytes > MAX_WATCH_LINE_BYTES) fail(`a watch line longer than ${MAX_WATCH_LINE_BYTES} bytes`);
  });
  res.on('end', () => finish(null));
  res.on('error', (err) => finish(err));
  res.on('close', () => finish(res.complete ? null : new Error('the watch stream was cut off')));
}

/** One line's event handed on; what is wrong with it when it cannot be read. */
function line(text: string, h: { onEvent(type: string, obj: unknown): void }): string | undefined {
  if (text.trim() === '') return undefined;
  let ev: { type?: unknown; object?: unknown };
  try {
    ev = JSON.parse(text) as { type?: unknown; object?: unknown };
  } catch (err) {
    return `a watch line is not JSON: ${(err as Error).message}`;
  }
  if (typeof ev.type !== 'string') return 'a watch line without a type';
  h.onEvent(ev.type, ev.object);
  return undefined;
}

function statusMessage(text: string): string {
  try {
    return (JSON.parse(text) as { message?: string }).message ?? text.slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
}
