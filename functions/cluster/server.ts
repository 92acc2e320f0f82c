// The fake Kubernetes API server over real HTTP: routing, bodies, the Date header, faults,
// the request log and watch streams around the REST layer.
import { isCrd, withCrdSchemas } from './crd-prune.ts';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { KubeConfig, type Cluster } from '@kubernetes/client-node';
import { admit } from './admission.ts';
import { installedCrds } from './crds.ts';
import { discovery, VERSION_INFO } from './discovery.ts';
import type { Ids } from './names.ts';
import { checkFields } from './field-validation.ts';
import { openApiDocument } from './openapi.ts';
import { Faults, type FaultSpec, type FaultTarget } from './faults.ts';
import { WriteHistory } from './history.ts';
import { defaultPod } from './pod-rules.ts';
import { RequestLog, type RequestRecord } from './request-log.ts';
import { BUILTIN_RESOURCES, ResourceRegistry, splitApiPath, type ResourceDef } from './resources.ts';
import { Rest, serializedParts, type DeleteOptions, type ListQuery, type Subresource } from './rest.ts';
import { DEADLINE_EXCEEDED_BODY, requestDeadlineMs } from './request-deadline.ts';
import { ApiError, badRequest, reasonForCode, statusError } from './status.ts';
import { ObjectStore } from './store.ts';
import { Rbac, requestAttributes, type Authorization } from './rbac.ts';
import { serveWatch } from './watch.ts';
import { includeObject, tableVersion, toTable } from './table.ts';

/** Options of startApiServer. */
export interface ApiServerOptions {
  /** TCP port (default 0: any free port). */
  port?: number;
  /** Interface to listen on (default 127.0.0.1). */
  host?: string;
  /** Objects to start with (a `kind: List` is flattened); pods get the API server's defaults. */
  objects?: unknown[];
  /** The server clock: timestamps and the Date header (default: real time). */
  clock?: () => Date;
  /**
   * Called for each of `objects` of a kind the server does not serve, which is then left out
   * (`ephemera invoke --state` of `kubectl get all`); without it such an object is an error.
   */
  onUnserved?: (object: { apiVersion: string; kind: string }) => void;
  /** Where uids and generated names come from (default random, as a real server's; `seededIds` repeats them). */
  ids?: Ids;
  /** Watch events kept for resuming watches; older versions get 410 Gone (default 10000). */
  watchHistory?: number;
  /** How often a watch that allows bookmarks gets one (default 10 s). */
  bookmarkIntervalMs?: number;
  /** Resources to serve besides the built-in ones. */
  resources?: ResourceDef[];
  /**
   * Check writes as a real cluster with ephemera installed would: CRD schema validation
   * and the validating webhook (admission.ts). Off by default so tests can write partial
   * objects; the `npm start` demo turns it on.
   */
  admission?: boolean;
  /**
   * CustomResourceDefinitions whose structural schemas prune the custom resources they
   * describe, as kube-apiserver always does (CRD objects in `objects` count too, and take
   * the place of these for their kind). Default: ephemera's own, from infra/crds, as a
   * cluster with ephemera installed has them; `[]` for none.
   */
  crds?: unknown[];
  /**
   * Authenticate by bearer token and authorize by RBAC, as kube-apiserver does (rbac.ts):
   * a token not in `users` is a 401, a request no bound rule allows a 403. Off by default
   * (every request is allowed); tests of the shipped manifests turn it on with their RBAC.
   */
  authorization?: Authorization;
}

/** A running fake API server. */
export interface ApiServer {
  /** `http://host:port`. */
  readonly url: string;
  /** Direct object access (no validation, still versioned and watched). */
  readonly store: ObjectStore;
  /** The REST layer, for in-process writes with full API semantics (the simulated kubelet). */
  readonly rest: Rest;
  readonly resources: ResourceRegistry;
  /** Every request answered: method, path, query, status, bytes. */
  readonly requests: RequestLog;
  /** Failure injection and watch-stream control. */
  readonly faults: Faults;
  /** Every stored write with its cause, and every refused write. */
  readonly history: WriteHistory;
  /** The server clock. */
  now(): Date;
  /** A client-node KubeConfig for this server, ready for makeApiClient; a token names the client (and authenticates it, with `authorization`). */
  kubeConfig(options?: { token?: string }): KubeConfig;
  /** The same as a kubeconfig file (for kubectl or KUBECONFIG); a token names the client in `requests` and `history`. */
  kubeconfigYaml(options?: { token?: string }): string;
  /** Drops watch history: watches from any older resourceVersion get 410 Gone. */
  compact(): void;
  /** Ends watches, drops connections, stops listening. */
  close(): Promise<void>;
}

interface Ctx {
  registry: ResourceRegistry;
  store: ObjectStore;
  rest: Rest;
  faults: Faults;
  requests: RequestLog;
  history: WriteHistory;
  clock: () => Date;
  bookmarkIntervalMs: number;
  address: string;
  rbac: Rbac | undefined;
}

/** Starts the fake API server; resolves once it listens. */
export async function startApiServer(opts: ApiServerOptions = {}): Promise<ApiServer> {
  const clock = opts.clock ?? ((): Date => new Date());
  const seeded = (opts.objects ?? []).filter(isCrd);
  const crds = [...seeded, ...(opts.crds ?? installedCrds())];
  const registry = new ResourceRegistry(withCrdSchemas([...BUILTIN_RESOURCES, ...(opts.resources ?? [])], crds));
  const store = new ObjectStore(registry, { clock, watchHistory: opts.watchHistory ?? 10_000, ...(opts.ids ? { ids: opts.ids } : {}) });
  seed(store, (opts.objects ?? []).filter((o) => !isCrd(o)), opts.onUnserved);
  const ctx: Ctx = {
    registry, store, rest: new Rest(store, clock, opts.admission ? admit : undefined), faults: new Faults(), requests: new RequestLog(), history: new WriteHistory(store, clock), clock,
    bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 10_000, address: '', rbac: opts.authorization ? new Rbac(opts.authorization) : undefined,
  };
  const server = createServer((req, res) => {
    handle(ctx, req, res).catch((err: unknown) => sendError(ctx, res, err, undefined));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const url = `http://${host}:${addr.port}`;
  ctx.address = `${host}:${addr.port}`;
  return {
    url, store, rest: ctx.rest, resources: registry, requests: ctx.requests, faults: ctx.faults, history: ctx.history,
    now: clock,
    kubeConfig: (o) => kubeConfigFor(url, o?.token),
    kubeconfigYaml: (o) => kubeconfigYaml(url, o?.token),
    compact: () => store.compact(),
    close: () => closeServer(server, ctx.faults),
  };
}

function seed(store: ObjectStore, objects: unknown[], onUnserved: ApiServerOptions['onUnserved']): void {
  const flat = objects.flatMap((o) => (isList(o) ? o.items : [o]));
  for (const o of flat) {
    const obj = structuredClone(o) as Record<string, unknown>;
    if (onUnserved && typeof obj?.apiVersion === 'string' && typeof obj.kind === 'string' && !store.serves(obj.apiVersion, obj.kind)) {
      onUnserved({ apiVersion: obj.apiVersion, kind: obj.kind });
      continue;
    }
    if (obj && obj.apiVersion === 'v1' && obj.kind === 'Pod') defaultPod(obj);
    const def = typeof obj?.apiVersion === 'string' && typeof obj.kind === 'string' ? store.defFor(obj.apiVersion, obj.kind) : undefined;
    // A stored object of a kind that keeps a generation has one from its first write.
    if (def?.generation && obj.metadata && typeof obj.metadata === 'object') (obj.metadata as Record<string, unknown>).generation ??= 1;
    store.put(obj);
  }
}

function isList(o: unknown): o is { items: unknown[] } {
  return typeof o === 'object' && o !== null && typeof (o as { kind?: unknown }).kind === 'string'
    && (o as { kind: string }).kind.endsWith('List') && Array.isArray((o as { items?: unknown }).items);
}

async function closeServer(server: Server, faults: Faults): Promise<void> {
  faults.closeWatches();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
}

const CLUSTER = 'ephemera-fake';

function kubeConfigFor(url: string, token?: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    // In-process: gzip would cost both ends CPU and save no network (kubeconfig's disable-compression).
    clusters: [{ name: CLUSTER, server: url, skipTLSVerify: true, disableCompression: true } as Cluster],
    users: [token ? { name: CLUSTER, token } : { name: CLUSTER }],
    contexts: [{ name: CLUSTER, cluster: CLUSTER, user: CLUSTER, namespace: 'default' }],
    currentContext: CLUSTER,
  });
  return kc;
}

function kubeconfigYaml(url: string, token?: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${CLUSTER}`,
    '  cluster:',
    `    server: ${url}`,
    '    insecure-skip-tls-verify: true',
    'users:',
    `- name: ${CLUSTER}`,
    token ? `  user: { token: ${JSON.stringify(token)} }` : '  user: {}',
    'contexts:',
    `- name: ${CLUSTER}`,
    '  context:',
    `    cluster: ${CLUSTER}`,
    `    user: ${CLUSTER}`,
    '    namespace: default',
    `current-context: ${CLUSTER}`,
    '',
  ].join('\n');
}

// ---- request handling ----

interface Route {
  def: ResourceDef;
  /** undefined: no namespace in the path (cluster-scoped, or across all namespaces). */
  namespace: string | undefined;
  name?: string;
  sub: string;
}

function parseRoute(registry: ResourceRegistry, path: string): Route | undefined {
  const split = splitApiPath(path);
  if (!split) return undefined;
  const { group, version, tail } = split;
  if (tail[0] === 'namespaces' && tail.length >= 3) {
    const def = registry.byPath(group, version, tail[2]!);
    if (def?.namespaced && tail.length <= 5) return { def, namespace: tail[1], name: tail[3], sub: tail[4] ?? '' };
  }
  const def = registry.byPath(group, version, tail[0] ?? '');
  if (!def || tail.length > 3) return undefined;
  if (def.namespaced && tail.length > 1) return undefined;
  return { def, namespace: undefined, name: tail[1], sub: tail[2] ?? '' };
}

function verbOf(method: string, route: Route | undefined, watch: boolean): string {
  const named = route?.name !== undefined;
  switch (method) {
    case 'GET': return named ? 'get' : watch ? 'watch' : 'list';
    case 'POST': return 'create';
    case 'PUT': return 'update';
    case 'PATCH': return 'patch';
    case 'DELETE': return named ? 'delete' : 'deletecollection';
    default: return method.toLowerCase();
  }
}

/** Authentication, then authorization, before anything is served (or found missing); a refusal is marked `denied` in the request log. */
function authorize(rbac: Rbac, r: { req: IncomingMessage; record: RequestRecord; query: Record<string, string>; path: string; creates: boolean }): void {
  try {
    const user = rbac.authenticate(r.req.headers.authorization);
    const attributes = requestAttributes(r.record.method, r.path, r.query);
    if (attributes) rbac.check(user, attributes);
    else rbac.checkPath(user, r.path);
    // A PUT that creates (a Lease) needs `create` too, as kube-apiserver's update handler asks.
    if (attributes && r.creates) rbac.check(user, { ...attributes, verb: 'create' });
  } catch (err) {
    r.record.denied = true;
    throw err;
  }
}

/** A PUT to a name that does not exist, of a resource whose PUT creates it (Leases). */
function putCreates(ctx: Ctx, method: string, route: Route | undefined): boolean {
  if (method !== 'PUT' || !route?.def.createOnUpdate || route.name === undefined || route.sub !== '') return false;
  return !ctx.store.read(route.def, route.namespace ?? '', route.name);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function handle(ctx: Ctx, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://fake');
  const query = Object.fromEntries(url.searchParams);
  const method = (req.method ?? 'GET').toUpperCase();
  const watch = query.watch === 'true' || query.watch === '1';
  const route = parseRoute(ctx.registry, url.pathname);
  const body = await readBody(req);
  const actor = actorOf(req);
  const record = ctx.requests.add({
    method, path: url.pathname, query, status: 0, bytes: 0, requestBytes: Buffer.byteLength(body), watch, verb: verbOf(method, route, watch), actor,
  });
  let deadlineMs: number | undefined;
  try {
    deadlineMs = requestDeadlineMs(url.searchParams.get('timeout'), watch);
  } catch (err) {
    return sendError(ctx, res, err, record);
  }
  const failing = await failingFault(ctx, { method, path: url.pathname, watch, actor }, deadlineMs);
  res.setHeader('Date', ctx.clock().toUTCString());
  if (failing === PAST_DEADLINE) return send(res, record, 504, DEADLINE_EXCEEDED_BODY);
  if (/\bgzip\b/i.test(req.headers['accept-encoding'] ?? '')) acceptsGzip.add(res);
  if (failing && !failing.after) return injectFault(ctx, res, record, failing);
  try {
    const doc = method === 'GET' ? staticDocument(ctx, url.pathname) : undefined;
    if (ctx.rbac) authorize(ctx.rbac, { req, record, query, path: url.pathname, creates: putCreates(ctx, method, route) });
    if (doc !== undefined) return send(res, record, 200, doc);
    if (!route) throw statusError(404, 'the server could not find the requested resource', 'NotFound');
    serveResource(ctx, { req, res, record, route, query, body, watch, failing });
  } catch (err) {
    sendError(ctx, res, err, record);
    if (method !== 'GET' && record.status >= 400) ctx.history.reject({ verb: record.verb, path: url.pathname, status: record.status, actor, message: err instanceof ApiError ? [err.status.message, err.detail].filter(Boolean).join(': ') : String((err as Error)?.message ?? err) });
  }
}

interface ResourceRequest {
  req: IncomingMessage;
  res: ServerResponse;
  record: RequestRecord;
  route: NonNullable<ReturnType<typeof parseRoute>>;
  query: Record<string, string>;
  body: string;
  watch: boolean;
  failing: FaultSpec | undefined;
}

/** A request for a resource: a watch, or a read or write (as a table when kubectl asks for one). */
function serveResource(ctx: Ctx, r: ResourceRequest): void {
  const { req, res, record, route, query } = r;
  const method = record.method;
  const contentType = req.headers['content-type'] ?? '';
  const table = method === 'GET' && route.sub === '' ? tableVersion(req.headers.accept) : undefined;
  const include = table ? includeObject(query) : 'None';
  const asTable = table ? (o: unknown): unknown => toTable(route.def, o, { version: table, include, now: ctx.clock() }) : undefined;
  if (r.watch && method === 'GET' && route.name === undefined) return startWatch(ctx, { res, record, asTable }, route, query);
  if (method !== 'GET') refuseUnsupported({ contentType, query });
  const { warnings, body } = checkFields(route.def, { method, contentType, body: r.body, directive: query.fieldValidation });
  if (warnings.length > 0) res.setHeader('Warning', warnings);
  const cause = { verb: record.verb, subresource: route.sub, actor: record.actor ?? '' };
  const [status, out] = ctx.history.during(cause, () => dispatch(ctx, method, route, { query, body, contentType }));
  // A fault "after" the write: it took effect, but the client never hears so.
  if (r.failing) return injectFault(ctx, res, record, r.failing);
  send(res, record, status, asTable ? asTable(out) : out);
}

/** A request a fault held past the deadline it asked for (`?timeout=`): answered 504, not carried out. */
const PAST_DEADLINE = Symbol('past its deadline');

/**
 * The fault this request draws, after holding it for the fault's delay; only faults that fail
 * it are returned. A request with a deadline (`deadlineMs` after it came) still held at it is
 * PAST_DEADLINE, at once, as kube-apiserver answers it then; so is one released after the
 * deadline by the server's clock (a world that moves the clock moves the deadline with it).
 */
async function failingFault(ctx: Ctx, target: FaultTarget, deadlineMs: number | undefined): Promise<FaultSpec | typeof PAST_DEADLINE | undefined> {
  const came = ctx.clock().getTime();
  const fault = ctx.faults.take(target);
  if (fault?.delayMs || fault?.hold) {
    const held = (async () => {
      if (fault.delayMs) await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
      if (fault.hold) await fault.hold.catch(() => undefined);
    })();
    if (deadlineMs === undefined) await held;
    else if (!(await releasedWithin(held, deadlineMs)) || ctx.clock().getTime() - came >= deadlineMs) {
      ctx.faults.count('held past its ?timeout=: 504, not carried out');
      return PAST_DEADLINE;
    }
  }
  return fault && (fault.reset || fault.status !== undefined) ? fault : undefined;
}

/** Whether `held` settles within `ms` (real time). */
async function releasedWithin(held: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  try {
    return await Promise.race([held.then(() => true), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** Who sent a request: its bearer token (a kubeconfig user's token names the client), else its User-Agent. */
function actorOf(req: IncomingMessage): string {
  const auth = req.headers.authorization ?? '';
  if (auth.startsWith('Bearer ')) return auth.slice('Bearer '.length);
  return req.headers['user-agent'] ?? '';
}

function staticDocument(ctx: Ctx, path: string): unknown {
  if (path === '/version' || path === '/version/') return VERSION_INFO;
  if (['/healthz', '/readyz', '/livez'].includes(path)) return 'ok';
  if (path.startsWith('/openapi/')) return openApiDocument(ctx.registry, path);
  return discovery(ctx.registry, path, ctx.address);
}

interface Input {
  query: Record<string, string>;
  body: string;
  contentType: string;
}

/**
 * Writes this cluster cannot carry out as asked are refused, never done another way (review):
 * a dry run (`kubectl diff`, `--dry-run=server`: the query's dryRun, or DeleteOptions.dryRun)
 * was carried out for real, and a protobuf body (kubectl sends one for built-in kinds, e.g.
 * `kubectl create namespace`) was read as JSON and answered with its bytes in the error.
 */
function refuseUnsupported(w: { contentType: string; query: Record<string, string> }): void {
  if (w.contentType.includes('protobuf')) {
    throw statusError(415, `the body of the request was in an unknown format - accepted media types include: application/json, application/merge-patch+json, application/strategic-merge-patch+json, application/json-patch+json (the embedded cluster reads no protobuf; kubectl apply -f sends JSON)`, 'UnsupportedMediaType');
  }
  if (w.query.dryRun !== undefined) throw dryRunRefused();
}

/** A DELETE's options may ask for a dry run too (deleteOptions). */
const dryRunRefused = (): ApiError => badRequest('dryRun is not supported by the embedded cluster, and nothing was written: use --dry-run=client, or apply for real');

function parseJson(body: string): unknown {
  if (!body.trim()) throw badRequest('the request body is empty');
  try {
    return JSON.parse(body);
  } catch (e) {
    throw badRequest(`the object provided is unrecognized: ${(e as Error).message}`);
  }
}

function listQuery(q: Record<string, string>): ListQuery {
  const limit = q.limit ? Number(q.limit) : undefined;
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) throw badRequest(`limit: Invalid value: ${q.limit}`);
  return { labelSelector: q.labelSelector, fieldSelector: q.fieldSelector, limit, continue: q.continue };
}

/** DeleteOptions from the body, or from the query when the body is empty (handlers/delete.go reads one or the other). */
function deleteOptions(input: Input): DeleteOptions {
  if (input.body.trim()) {
    const fromBody = parseJson(input.body) as DeleteOptions & { dryRun?: unknown };
    if (Array.isArray(fromBody.dryRun) && fromBody.dryRun.length > 0) throw dryRunRefused();
    return fromBody;
  }
  const grace = input.query.gracePeriodSeconds;
  return {
    ...(grace !== undefined ? { gracePeriodSeconds: Number(grace) } : {}),
    ...(input.query.propagationPolicy ? { propagationPolicy: input.query.propagationPolicy } : {}),
  };
}

function checkSub(route: Route): Subresource {
  const sub = route.sub;
  if (sub === '' || route.def.subresources?.includes(sub)) return sub as Subresource;
  throw statusError(404, 'the server could not find the requested resource', 'NotFound');
}

function dispatch(ctx: Ctx, method: string, route: Route, input: Input): [number, unknown] {
  const { def, name } = route;
  const sub = checkSub(route);
  const ns = def.namespaced ? route.namespace : '';
  if (name === undefined) {
    if (sub !== '') throw statusError(404, 'the server could not find the requested resource', 'NotFound');
    if (method === 'GET') return [200, ctx.rest.list(def, route.namespace, listQuery(input.query))];
    if (method === 'POST' && ns !== undefined) return [201, ctx.rest.create(def, ns, parseJson(input.body))];
    if (method === 'DELETE') return [200, ctx.rest.deleteCollection(def, route.namespace, listQuery(input.query), deleteOptions(input))];
    throw statusError(405, `the server does not allow this method on the requested resource`, 'MethodNotAllowed');
  }
  if (ns === undefined) throw statusError(404, 'the server could not find the requested resource', 'NotFound');
  const t = { def, namespace: ns, name, sub };
  switch (method) {
    case 'GET': return [200, ctx.rest.get(t)];
    case 'PUT': {
      const body = parseJson(input.body);
      return [ctx.rest.createsOnUpdate(t) ? 201 : 200, ctx.rest.update(t, body)];
    }
    case 'PATCH': return [200, ctx.rest.patch(t, { contentType: input.contentType, body: input.body })];
    case 'DELETE':
      if (sub !== '') break;
      return [200, ctx.rest.delete(t, deleteOptions(input))];
  }
  throw statusError(405, `the server does not allow this method on the requested resource`, 'MethodNotAllowed');
}

function startWatch(ctx: Ctx, out: { res: ServerResponse; record: RequestRecord; asTable: ((o: unknown) => unknown) | undefined }, route: Route, q: Record<string, string>): void {
  const { res, record, asTable } = out;
  if (route.sub !== '') throw statusError(404, 'the server could not find the requested resource', 'NotFound');
  const timeout = q.timeoutSeconds ? Number(q.timeoutSeconds) : undefined;
  record.status = 200;
  let untrack = (): void => {};
  const handle = serveWatch(ctx.store, {
    def: route.def, namespace: route.namespace, ...listQuery(q),
    resourceVersion: q.resourceVersion, timeoutSeconds: timeout, allowWatchBookmarks: q.allowWatchBookmarks === 'true' || q.allowWatchBookmarks === '1',
  }, res, {
    write: (chunk) => {
      record.bytes += Buffer.byteLength(chunk);
      res.write(chunk);
    },
    bookmarkIntervalMs: ctx.bookmarkIntervalMs,
    onClose: () => untrack(),
    ...(asTable ? { transform: asTable } : {}),
  });
  if (handle) untrack = ctx.faults.track(handle);
}

/** Responses whose request asked for gzip (Accept-Encoding). */
const acceptsGzip = new WeakSet<ServerResponse>();

/** kube-apiserver's threshold (defaultGzipThresholdBytes): smaller answers go as they are. */
export const GZIP_THRESHOLD_BYTES = 128 * 1024;

/**
 * One whole answer. As kube-apiserver with APIResponseCompression (on by default): a body of
 * 128 KiB or more is gzipped (level 1) when the request accepts gzip (watch streams never are). The
 * request log counts the bytes sent: what a client pays on the wire.
 */
function send(res: ServerResponse, record: RequestRecord | undefined, status: number, body: unknown): void {
  const headers: Record<string, string> = body instanceof ApiError ? { ...body.headers } : {};
  if (body instanceof ApiError) body = body.status;
  let parts = typeof body === 'string' ? [Buffer.from(body, 'utf8')] : serializedParts(body);
  let length = parts.reduce((n, b) => n + b.length, 0);
  if (length >= GZIP_THRESHOLD_BYTES && acceptsGzip.has(res)) {
    parts = [gzipSync(Buffer.concat(parts, length), { level: 1 })]; // kube-apiserver's defaultGzipContentEncodingLevel
    length = parts[0]!.length;
    Object.assign(headers, { 'Content-Encoding': 'gzip', Vary: 'Accept-Encoding' });
  }
  if (record) {
    record.status = status;
    record.bytes = length;
  }
  res.writeHead(status, { 'Content-Type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json', 'Content-Length': String(length), ...headers });
  res.cork();
  for (const b of parts) res.write(b);
  res.end();
}

function sendError(ctx: Ctx, res: ServerResponse, err: unknown, record: RequestRecord | undefined): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const api = err instanceof ApiError ? err : statusError(500, `Internal error occurred: ${(err as Error)?.message ?? String(err)}`);
  if (!res.hasHeader('Date')) res.setHeader('Date', ctx.clock().toUTCString());
  send(res, record, api.code, api);
}

function injectFault(ctx: Ctx, res: ServerResponse, record: RequestRecord, fault: FaultSpec): void {
  if (fault.reset || fault.status === undefined) {
    record.status = 0;
    res.socket?.destroy();
    return;
  }
  const retry = fault.retryAfterSeconds;
  const err = new ApiError({
    message: fault.message ?? `injected fault: ${reasonForCode(fault.status)}`,
    reason: fault.reason ?? reasonForCode(fault.status),
    code: fault.status,
    ...(retry !== undefined || fault.name !== undefined ? { details: { ...(retry !== undefined ? { retryAfterSeconds: retry } : {}), ...(fault.name !== undefined ? { name: fault.name } : {}) } } : {}),
  }, retry !== undefined ? { 'Retry-After': String(retry) } : {});
  sendError(ctx, res, err, record);
}
