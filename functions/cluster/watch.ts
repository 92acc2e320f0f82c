// WATCH over HTTP: newline-delimited JSON `{type, object}` events, starting from a
// resourceVersion (or with synthetic ADDED events for the current state), with selectors,
// bookmarks and timeoutSeconds, as the API server's watch cache serves them.
import type { ServerResponse } from 'node:http';
import type { ResourceDef } from './resources.ts';
import { apiVersionOf } from './resources.ts';
import { selectorFor, type ListQuery } from './rest.ts';
import { badRequest } from './status.ts';
import type { KubeObject, ObjectStore, StoreEvent } from './store.ts';

/** What a watch request asked for. */
export interface WatchRequest extends ListQuery {
  def: ResourceDef;
  /** undefined = all namespaces (or a cluster-scoped resource). */
  namespace: string | undefined;
  resourceVersion?: string;
  timeoutSeconds?: number;
  allowWatchBookmarks?: boolean;
}

/** An open watch stream the server can end cleanly or cut abruptly. */
export interface ActiveWatch {
  /** Ends the stream cleanly (the client sees a normal end of body). */
  end(): void;
  /** Destroys the connection (the client sees a reset or truncated body). */
  reset(): void;
}

type WatchEvent = { type: string; object: unknown };

/**
 * Serves one watch on `res`. `write` sends a chunk (counted by the request log).
 * Returns the handle, or null when the stream ended at once (410 on a compacted version).
 */
export function serveWatch(
  store: ObjectStore,
  req: WatchRequest,
  res: ServerResponse,
  io: { write: (chunk: string) => void; bookmarkIntervalMs: number; onClose: () => void; transform?: (object: unknown) => unknown },
): ActiveWatch | null {
  const match = selectorFor(req.def, req);
  const start = parseStart(req.resourceVersion);
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  res.flushHeaders();
  const send = (e: WatchEvent): void => io.write(`${JSON.stringify(e)}\n`);

  const backlog = start === null ? initialEvents(store, req, match) : store.since(start);
  if (backlog === null) {
    // The watch cache answers a too-old version with an ERROR event, then closes.
    const message = `too old resource version: ${start} (${store.oldestWatchable})`;
    send({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Expired', code: 410 } });
    res.end();
    io.onClose();
    return null;
  }
  const inScope = (e: StoreEvent): boolean =>
    e.def === req.def && (req.namespace === undefined || (e.object.metadata.namespace ?? '') === req.namespace);
  const deliver = (e: StoreEvent): void => {
    if (!inScope(e)) return;
    const out = translate(e, match);
    // A watch asked for as a Table (kubectl get -w) gets each object as a one-row Table.
    if (out) send(io.transform ? { type: out.type, object: io.transform(out.object) } : out);
  };
  for (const e of backlog) deliver(e as StoreEvent);
  const unsubscribe = store.subscribe(deliver);

  const bookmark = (): void => send({ type: 'BOOKMARK', object: { kind: req.def.kind, apiVersion: apiVersionOf(req.def), metadata: { resourceVersion: store.resourceVersion } } });
  const timers: NodeJS.Timeout[] = [];
  if (req.allowWatchBookmarks) timers.push(setInterval(bookmark, io.bookmarkIntervalMs));
  let closed = false;
  const cleanup = (): void => {
    if (closed) return;
    closed = true;
    unsubscribe();
    timers.forEach((t) => clearTimeout(t));
    io.onClose();
  };
  const end = (): void => {
    if (closed) return;
    cleanup();
    res.end();
  };
  if (req.timeoutSeconds && req.timeoutSeconds > 0) {
    timers.push(setTimeout(() => {
      // The server sends a last bookmark before a timed-out watch ends, so the client resumes exactly.
      if (req.allowWatchBookmarks) bookmark();
      end();
    }, req.timeoutSeconds * 1000));
  }
  res.on('close', cleanup);
  return { end, reset: () => { cleanup(); res.socket?.destroy(); } };
}

/** null = "start from the current state with synthetic ADDED events" (unset or "0"). */
function parseStart(rv: string | undefined): number | null {
  if (rv === undefined || rv === '' || rv === '0') return null;
  if (!/^\d+$/.test(rv)) throw badRequest(`resourceVersion: Invalid value: "${rv}": must be a non-negative integer`);
  return Number(rv);
}

function initialEvents(store: ObjectStore, req: WatchRequest, match: (o: KubeObject) => boolean): StoreEvent[] {
  const rv = Number(store.resourceVersion);
  return store.readAll(req.def, req.namespace).filter(match).map((object) => ({ type: 'ADDED', def: req.def, object, rv }));
}

/**
 * With a selector, an object moving into the selection is ADDED and one moving out is
 * DELETED (cacheWatcher.convertToWatchEvent).
 */
function translate(e: StoreEvent, match: (o: KubeObject) => boolean): WatchEvent | null {
  const now = match(e.object);
  if (e.type !== 'MODIFIED' || !e.prev) return now ? { type: e.type, object: e.object } : null;
  const before = match(e.prev);
  if (now && before) return { type: 'MODIFIED', object: e.object };
  if (now) return { type: 'ADDED', object: e.object };
  if (before) return { type: 'DELETED', object: e.object };
  return null;
}
