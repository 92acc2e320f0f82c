// The lean Kube: the ~10 endpoints the functions use, straight over node:http(s). It
// costs nothing in a bundle (client-node is ~1 MB minified: its serializer registers
// every model at import) and behaves as the client-node wrapper does (client.ts): same
// paths, content types, error classes and Date-header clock, proven by
// test/kube/contract.case.ts against both.
import type { Agent, IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Action, PatchType } from '../engine/plan.ts';
import { answerBytes, gunzipWhole } from './answer-bytes.ts';
import { withFreshCredentialOn401, type ClientCertificate, type KubeAuth } from './auth.ts';
import type { KubeEndpoint } from './endpoint.ts';
import { KubeError } from './errors.ts';
import type { ItemView, Kube, ListOptions, ObjectList } from './kube.ts';
import { itemBlocks, ListReuse } from './list-reuse.ts';
import { ListStream, type ListBody } from './list-stream.ts';
import { agentProxyEnv } from './proxy.ts';
import { ServerClock } from './server-clock.ts';
import { actionOperation, pathFor } from './resources.ts';
import { networkError, readNotFound, statusError } from './status-error.ts';

// getBuiltinModule, not `import`: an ES import of node:http builds its whole namespace,
// which loads Node's fetch stack (undici) through lazy exports — ~20 ms of every cold start.
const http = process.getBuiltinModule('node:http');
const https = process.getBuiltinModule('node:https');

/** Options of the lean Kube (the same as client.ts's). */
export interface HttpsKubeOptions {
  /** Per-request timeout, answer included; a timed-out call is a transient KubeError (default 10 s). */
  timeoutMs?: number;
  /** A bearer token per request (EKS IAM token, a secret's token); see credentials.ts. */
  auth?: KubeAuth;
  /** Ask for gzip (default: unless the endpoint says disableCompression). */
  compression?: boolean;
  /**
   * Where LIST items are kept between answers so that unchanged ones are not parsed again
   * (list-reuse.ts). Default: one of this client's own; the clients of one process share one
   * (runtime/deps.ts), so its memory budget holds for the process; null: none.
   */
  listReuse?: ListReuse | null;
  /**
   * Kept-alive connections idle longer than this are closed before the next request
   * (default 60 s, under kube-apiserver's 90 s idle timeout). A Lambda frozen between
   * invocations may not see the server close them, and every one would fail its next request.
   */
  idleMs?: number;
}

/** The Content-Type of each patch kind; a patch without one is a JSON patch, as in client-node. */
export const PATCH_CONTENT_TYPE: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
};

const METHOD = { create: 'POST', patch: 'PATCH', update: 'PUT', delete: 'DELETE' } as const;

interface Req {
  method: string;
  path: string;
  body?: unknown;
  contentType?: string;
  /**
   * When the answer must have come, on performance.now() (a write with PerformOptions.timeoutMs):
   * what is left then is the request's timeout, and is sent as `?timeout=` too.
   */
  answerBy?: number;
  /** A 2xx answer read as it arrives (a LIST through a view), not gathered whole. */
  reader?: () => BodyReader;
}

/** Takes an answer's bytes as they come (inflated), then says what they were. */
interface BodyReader {
  write(chunk: Buffer): void;
  end(): unknown;
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** What the request's reader made of a 2xx answer (its body is then empty). */
  read?: unknown;
  /** When its headers arrived (performance.now()): its Date is of then, not of when its body was read. */
  headersAt: number;
}

/**
 * The size of the blocks a streamed answer is handed on in (list-reuse.ts itemBlocks): an
 * item kept from an earlier answer is taken without a scan only within one block, so the
 * socket's reads (up to 64 KiB) are gathered into blocks of about this size, cut between two
 * items; a streamed LIST holds about one (review82 H2).
 */
const STREAM_BLOCK = 256 * 1024;

/** A Kube over node:http(s) for one endpoint; keeps its connections alive between calls. */
export function createHttpsKube(endpoint: KubeEndpoint, options: HttpsKubeOptions = {}): Kube {
  const send = sender(endpoint, { timeoutMs: options.timeoutMs ?? 10_000, gzip: options.compression ?? !endpoint.disableCompression, idleMs: options.idleMs ?? 60_000 });
  const clock = new ServerClock();
  const auth = options.auth;
  const reuse = options.listReuse === undefined ? new ListReuse() : (options.listReuse ?? undefined);

  /** `reads`: for a GET, the name of the object read (undefined for a LIST). */
  const once = async (req: Req, reads: { name?: string } | undefined, decode: (body: Buffer) => unknown = () => undefined): Promise<unknown> => {
    const authorization = auth ? await auth.header() : '';
    const headers: Record<string, string> = authorization ? { authorization } : {};
    const res = await send(req, headers, auth?.clientCertificate?.());
    // Of when the headers came: a LIST's body may take seconds more, and its Date taken as of
    // its end looked like the server's clock stepped back (review98 L1).
    const date = res.headers.date ? new Date(res.headers.date) : undefined;
    if (date) clock.seen(date, performance.now() - res.headersAt);
    if (res.status >= 200 && res.status < 300) {
      const v = res.read ?? decode(res.body) ?? parseBody(req, res, reads !== undefined);
      return reads === undefined ? v : anObject(req, v);
    }
    const err = statusError(res.status, res.body.toString('utf8'), headerValue(res.headers['retry-after']), new Error(`${req.method} ${req.path}: HTTP ${res.status}`));
    if (reads !== undefined && res.status === 404) return readNotFound(err, reads.name);
    throw err;
  };
  const call = (req: () => Req, reads?: { name?: string }, decode?: (body: Buffer) => unknown): Promise<unknown> => {
    // async so a refused request (resources.ts) is a rejection, not a throw.
    const run = async (): Promise<unknown> => once(req(), reads, decode);
    return auth ? withFreshCredentialOn401(auth, run) : run();
  };

  return {
    get: (ref) => call(() => ({ method: 'GET', path: pathFor('get', ref) }), { name: ref.name }),
    // Items not changed since an earlier LIST are not parsed again (list-reuse.ts); through a
    // view, the answer is read as it arrives and only what the view makes of each item is held.
    list: async <T>(apiVersion: string, kind: string, namespace: string | undefined, lo?: ListOptions & { view?: ItemView<T> }): Promise<ObjectList<T>> => {
      const path = listPath(apiVersion, kind, namespace, lo ?? {});
      const view = lo?.view;
      if (view) return viewedList(await call(() => ({ method: 'GET', path, reader: () => itemReader(view, reuse?.viewed(view, endpoint.server)) }), {}));
      return toList(await call(() => ({ method: 'GET', path }), {}, reuse && ((b) => reuse.decode(b, endpoint.server)))) as ObjectList<T>;
    },
    perform: (action, o) => {
      // Counted from here: a request sent again after a 401 gets only what is left.
      const answerBy = o?.timeoutMs === undefined ? undefined : performance.now() + o.timeoutMs;
      return call(() => actionRequest(action, answerBy));
    },
    serverNow: () => clock.now(),
  };
}

function listPath(apiVersion: string, kind: string, namespace: string | undefined, lo: ListOptions): string {
  const q = new URLSearchParams();
  if (lo.labelSelector) q.set('labelSelector', lo.labelSelector);
  if (lo.fieldSelector) q.set('fieldSelector', lo.fieldSelector);
  const query = q.size ? `?${q.toString()}` : '';
  return `${pathFor('list', { apiVersion, kind, namespace })}${query}`;
}

/** A LIST answer read item by item through `view`, skipping the items `reused` kept (list-reuse.ts viewed). */
function itemReader<T>(view: ItemView<T>, reused: { map: (raw: unknown, bytes: Buffer) => T; kept: (chunk: Buffer, at: number) => { value: T; end: number } | undefined } | undefined): BodyReader {
  const stream = new ListStream<T>(reused?.map ?? ((raw) => view.read(raw)), undefined, reused?.kept);
  return { write: (chunk) => stream.write(chunk), end: () => stream.end() };
}

/** What itemReader read, as toList gives a list read whole. */
function viewedList<T>(read: unknown): ObjectList<T> {
  const body = read as ListBody<T>;
  if (body.items === null) return { items: [], resourceVersion: body.resourceVersion || undefined };
  if (body.items === undefined) throw new KubeError({ status: 0, reason: 'NetworkError', message: 'the API server answered a LIST without items' });
  return { items: body.items, resourceVersion: body.resourceVersion || undefined };
}

function toList(body: unknown): ObjectList<unknown> {
  const list = (body ?? {}) as { items?: unknown; metadata?: { resourceVersion?: string } };
  // kube-apiserver always sends `"items": []`; a list without them is no answer (a proxy's
  // empty 200), never "nothing there" (review: a job was sealed Failed from one).
  // Go writes a nil slice as null: no items.
  if (list.items === null) return { items: [], resourceVersion: list.metadata?.resourceVersion };
  if (!Array.isArray(list.items)) throw new KubeError({ status: 0, reason: 'NetworkError', message: 'the API server answered a LIST without items' });
  return { items: list.items, resourceVersion: list.metadata?.resourceVersion };
}

/** A read's 2xx answer must be an object (a GET answered `null` is no answer, never "absent"). */
function anObject(req: Req, v: unknown): unknown {
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v;
  throw new KubeError({ status: 0, reason: 'NetworkError', message: `${req.method} ${req.path}: the API server answered with no object` });
}

function actionRequest(a: Action, answerBy: number | undefined): Req {
  const path = `${pathFor(actionOperation(a), a)}${a.strictFields ? '?fieldValidation=Strict' : ''}`;
  const method = METHOD[a.verb];
  const by = answerBy === undefined ? {} : { answerBy };
  if (a.body === undefined) return { method, path, ...by };
  const contentType = a.verb === 'patch' ? PATCH_CONTENT_TYPE[a.patchType ?? 'json'] : 'application/json';
  return { method, path, body: a.body, contentType, ...by };
}

/**
 * The request's path with kube-apiserver's `timeout` query parameter, in Go's duration syntax
 * (`3500ms`). Never 0 or less: the server reads those as "no timeout of the client's" and
 * takes its own (`--request-timeout`, 60 s by default; request_deadline.go).
 */
function withServerTimeout(path: string, ms: number): string {
  return `${path}${path.includes('?') ? '&' : '?'}timeout=${Math.max(1, Math.floor(ms))}ms`;
}

function parseBody(req: Req, res: Answer, read: boolean): unknown {
  // A write may answer with no body; a read that does is no answer at all.
  if (res.body.length === 0 && read) throw new KubeError({ status: 0, reason: 'NetworkError', message: `${req.method} ${req.path}: the API server answered ${res.status} with no body` });
  if (res.body.length === 0) return {};
  try {
    return JSON.parse(res.body.toString('utf8')) as unknown;
  } catch (err) {
    throw new KubeError({ status: 0, reason: 'NetworkError', message: `${req.method} ${req.path}: the API server answered ${res.status} with a body that is not JSON`, cause: err });
  }
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

type Send = (req: Req, headers: Record<string, string>, certificate?: ClientCertificate) => Promise<Answer>;

/** One HTTP exchange with the endpoint: TLS options once, a timeout per request, the whole answer read. */
function sender(endpoint: KubeEndpoint, { timeoutMs, gzip, idleMs }: { timeoutMs: number; gzip: boolean; idleMs: number }): Send {
  const base = new URL(endpoint.server);
  const prefix = base.pathname.replace(/\/+$/, '');
  const tls = base.protocol === 'https:';
  // The kubeconfig's proxy-url, else HTTPS_PROXY / NO_PROXY as client-go reads them (proxy.ts);
  // an empty proxyEnv goes direct even under NODE_USE_ENV_PROXY.
  const proxyEnv = agentProxyEnv(base, endpoint.proxyUrl);
  const tlsAgent = (cert: ClientCertificate | undefined): Agent => tracked(new https.Agent({
    keepAlive: true,
    proxyEnv,
    rejectUnauthorized: !endpoint.insecureSkipTlsVerify,
    ...(endpoint.ca ? { ca: endpoint.ca } : {}),
    ...(cert ? { cert: cert.cert, key: cert.key } : endpoint.cert ? { cert: endpoint.cert, ...(endpoint.key ? { key: endpoint.key } : {}) } : {}),
    ...(endpoint.tlsServerName ? { servername: endpoint.tlsServerName } : {}),
  }));
  const endpointAgent = tls ? tlsAgent(undefined) : tracked(new http.Agent({ keepAlive: true, proxyEnv }));
  // The agent of the credential's own certificate, made again when the certificate changes.
  let certified: { cert: ClientCertificate; agent: Agent } | undefined;
  const agentFor = (cert: ClientCertificate | undefined): Agent => {
    if (!cert || !tls) return endpointAgent;
    if (certified && String(certified.cert.cert) === String(cert.cert) && String(certified.cert.key) === String(cert.key)) return certified.agent;
    // Requests still on the old certificate's connections finish there; its idle ones go.
    if (certified) closeIdle(certified.agent);
    certified = { cert, agent: tlsAgent(cert) };
    return certified.agent;
  };
  const request = tls ? https.request : http.request;

  return async (req, extra, cert) => {
    const agent = agentFor(cert);
    closeIdle(agent, idleMs);
    // A write with a deadline (answerBy) gets what is left of it, at most the client's
    // timeout, as its timeout here and at the server (?timeout=), which then gives up with it.
    const left = req.answerBy === undefined ? timeoutMs : Math.min(timeoutMs, Math.floor(req.answerBy - performance.now()));
    if (left < 1) throw networkError(new Error(`${req.method} ${req.path}: no time left to send it within its deadline`));
    const limit = deadline(left);
    const signal = limit.signal;
    const sent = req.answerBy === undefined ? req : { ...req, path: withServerTimeout(req.path, left) };
    const payload = req.body === undefined ? undefined : JSON.stringify(req.body);
    // gzip, as client-go asks for it (unless the kubeconfig says disable-compression):
    // kube-apiserver compresses an answer of 128 KiB or more (APIResponseCompression, on by
    // default), which is what a LIST of a large job's pods is.
    const headers: Record<string, string> = { accept: 'application/json', ...(gzip ? { 'accept-encoding': 'gzip' } : {}), ...endpoint.headers, ...extra };
    if (payload !== undefined) Object.assign(headers, { 'content-type': req.contentType ?? 'application/json', 'content-length': String(Buffer.byteLength(payload)) });
    // A kept-alive connection the server has closed meanwhile (kube-apiserver, or a load
    // balancer, after its idle timeout) fails the next request sent on it with a reset
    // before any answer. The others kept beside it are most likely closed too (a thaw, a
    // restarted server): they are closed here, so the next request dials anew. Go's
    // transport sends an idempotent request again then, and so does this (Node's http
    // documents the same check): a GET, while it meets such connections; a write is left to
    // the engine, which knows whether it may have landed.
    try {
      for (let tries = 1; ; tries++) {
        try {
          return await exchange(sent, { headers, payload, signal, agent, spent: limit.spent });
        } catch (err) {
          if (!(err instanceof StaleSocket)) throw err;
          closeIdle(agent);
          if (req.method !== 'GET' || signal.aborted || tries >= 3) throw err;
        }
      }
    } catch (err) {
      const cause = err instanceof StaleSocket ? err.cause : err;
      if (signal.aborted) throw networkError(new Error(`${req.method} ${req.path}: no answer within ${left} ms`, { cause }));
      throw networkError(cause);
    } finally {
      limit.done();
    }
  };

  function exchange(req: Req, { headers, payload, signal, agent, spent }: { headers: Record<string, string>; payload: string | undefined; signal: AbortSignal; agent: Agent; spent: (ms: number) => void }): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      const r = request({ protocol: base.protocol, hostname: base.hostname.replace(/^\[|\]$/g, ''), port: base.port, path: `${prefix}${req.path}`, method: req.method, headers, agent, signal }, (res) => {
        const status = res.statusCode ?? 0;
        const headersAt = performance.now();
        if (req.reader && status >= 200 && status < 300) {
          readAsItArrives(res, req.reader(), spent).then((read) => resolve({ status, headers: res.headers, body: EMPTY, read, headersAt }), (err: unknown) => reject(notAList(req, status, err)));
          return;
        }
        // Read by hand: node:stream/consumers would load Node's fetch stack (undici) at import.
        const whole = answerBytes(headerValue(res.headers['content-length']));
        res.on('data', (c: Buffer) => whole.add(c));
        res.on('end', () => {
          try {
            const body = whole.done();
            // node:zlib is loaded on the first gzipped answer, not at import (cold starts).
            const gzipped = /^\s*gzip\s*$/i.test(headerValue(res.headers['content-encoding']) ?? '');
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: gzipped ? gunzipWhole(body) : body, headersAt });
          } catch (err) {
            reject(err as Error);
          }
        });
        res.on('error', reject);
      });
      r.on('error', (err: NodeJS.ErrnoException) => reject(r.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE') ? new StaleSocket(err) : err));
      r.end(payload);
    });
  }
}

const EMPTY = Buffer.alloc(0);

/**
 * A request's deadline, `ms` from now, pushed back by the time the client spends reading an
 * answer it reads as it arrives (`spent`): as for an answer gathered whole and parsed after
 * it came, only the server's and the network's time counts (review82 H2: the first LIST of a
 * large job's pods, each read through its view, on a Lambda's fraction of a CPU). Its timer
 * holds no process open; `done()` clears it.
 */
function deadline(ms: number): { signal: AbortSignal; spent(by: number): void; done(): void } {
  const controller = new AbortController();
  let due = performance.now() + ms;
  let timer: ReturnType<typeof setTimeout>;
  const check = (): void => {
    const left = due - performance.now();
    if (left > 0) timer = setTimeout(check, left).unref();
    else controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError'));
  };
  timer = setTimeout(check, ms).unref();
  return { signal: controller.signal, spent: (by) => void (due += by), done: () => clearTimeout(timer) };
}

/**
 * An answer handed to `reader` as it arrives, inflated as it comes when gzipped, in blocks of
 * STREAM_BLOCK: never gathered whole inflated (review82 H2). The socket is read at the
 * network's pace, so a gzipped answer's compressed bytes may wait whole for the inflate (about
 * a tenth of the answer): pausing it for a slow reader could let kube-apiserver's own request
 * timeout (60 s; a LIST sends no ?timeout=) cut the answer off (review89). What the reader made of it, or the first
 * error (of the socket, the inflate or the reader, which then stops the answer). The time
 * the reader takes goes to `spent` (the deadline does not count it).
 */
function readAsItArrives(res: IncomingMessage, reader: BodyReader, spent: (ms: number) => void): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let failed = false;
    const gzipped = /^\s*gzip\s*$/i.test(headerValue(res.headers['content-encoding']) ?? '');
    const gunzip = gzipped ? process.getBuiltinModule('node:zlib').createGunzip({ chunkSize: 64 * 1024 }) : undefined;
    const fail = (err: unknown): void => {
      if (failed) return;
      failed = true;
      gunzip?.destroy();
      res.destroy();
      reject(err as Error);
    };
    const blocks = itemBlocks(STREAM_BLOCK, (b) => reader.write(b));
    const timed = (f: () => void): void => {
      if (failed) return;
      const t = performance.now();
      try {
        f();
      } catch (err) {
        fail(err);
      } finally {
        spent(performance.now() - t);
      }
    };
    const take = (c: Buffer): void => timed(() => blocks.add(c));
    const finish = (): void => timed(() => {
      blocks.end();
      resolve(reader.end());
    });
    if (gunzip) {
      gunzip.on('data', take);
      gunzip.on('end', finish);
      gunzip.on('error', fail);
      res.on('data', (c: Buffer) => gunzip.write(c));
      res.on('end', () => gunzip.end());
    } else {
      res.on('data', take);
      res.on('end', finish);
    }
    res.on('error', fail);
  });
}

/** A streamed answer that could not be read: the same error as an answer read whole that is not JSON. */
function notAList(req: Req, status: number, err: unknown): unknown {
  if (!(err instanceof SyntaxError)) return err;
  return new KubeError({ status: 0, reason: 'NetworkError', message: `${req.method} ${req.path}: the API server answered ${status} with a body that is not JSON (${err.message})`, cause: err });
}

/**
 * When each kept-alive connection was last given back to its agent, in wall-clock time,
 * which goes on while a Lambda is frozen (timers do not, so the agent's own idle timeout
 * may not have run when the first request after a thaw takes a connection).
 */
const freedAt = new WeakMap<Socket, number>();

/** The agent, noting when each of its connections goes idle. */
function tracked(agent: Agent): Agent {
  agent.on('free', (socket: Socket) => freedAt.set(socket, Date.now()));
  return agent;
}

/** Closes the agent's kept-alive connections that no request is using (idle for longer than `olderThanMs`, if given). */
function closeIdle(agent: Agent, olderThanMs?: number): void {
  const now = Date.now();
  for (const sockets of Object.values(agent.freeSockets) as (Socket[] | undefined)[]) {
    for (const socket of sockets ?? []) if (olderThanMs === undefined || now - (freedAt.get(socket) ?? now) > olderThanMs) socket.destroy();
  }
}

/** A request failed on a reused connection the server had closed, before any answer. */
class StaleSocket extends Error {
  constructor(cause: Error) {
    super(`connection closed by the server before the request: ${cause.message}`, { cause });
  }
}
