// The Kube over @kubernetes/client-node's typed APIs, as functions/kube/client.ts was until
// the lean node:https client replaced it: kept as the reference the contract suite
// (contract.case.ts) proves the lean client equal to. Not used by any deployable.
import {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  type ConfigurationOptions,
  type KubeConfig,
  type ObservableMiddleware,
} from '@kubernetes/client-node';
// The observable stub's `of`/`from` are not re-exported at the root; middleware must return them.
import { from, of } from '@kubernetes/client-node/dist/gen/rxjsStub.js';
import type { Action, PatchType } from '../../functions/engine/plan.ts';
import { withFreshCredentialOn401, type KubeAuth } from '../../functions/kube/auth.ts';
import { KubeError } from '../../functions/kube/errors.ts';
import { throughView, type Kube, type ListOptions, type ObjectList, type ObjectRef } from '../../functions/kube/kube.ts';
import { networkError, readNotFound, statusError } from '../../functions/kube/status-error.ts';
import { ServerClock } from '../../functions/kube/server-clock.ts';

const PATCH_CONTENT_TYPE: Record<PatchType, string> = {
  merge: PatchStrategy.MergePatch,
  strategic: PatchStrategy.StrategicMergePatch,
  json: PatchStrategy.JsonPatch,
};

/** Options for the client-node backed Kube. */
export interface KubeClientOptions {
  /** Per-request timeout; a timed-out call is a transient KubeError (default 10 s). */
  timeoutMs?: number;
  /** A bearer token per request (EKS IAM token, a secret's token); see credentials.ts. */
  auth?: KubeAuth;
}

/** Where a request's Authorization header comes from (shared with the lean client: auth.ts). */
export type { KubeAuth } from '../../functions/kube/auth.ts';

type Api = { core: CoreV1Api; coord: CoordinationV1Api; custom: CustomObjectsApi };
/** `answerBy`: when a write's answer must have come (performance.now()), from PerformOptions.timeoutMs. */
type Call = { patchType?: PatchType; answerBy?: number };
type Opts = ConfigurationOptions;

/**
 * A Kube over @kubernetes/client-node's typed APIs. It records the API server's Date
 * header so leases can be judged by the server's clock instead of ours.
 */
export function createClientNodeKube(kc: KubeConfig, options: KubeClientOptions = {}): Kube {
  const api: Api = {
    core: kc.makeApiClient(CoreV1Api),
    coord: kc.makeApiClient(CoordinationV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
  };
  const timeoutMs = options.timeoutMs ?? 10_000;
  const clock = new ServerClock();

  const auth = options.auth;
  const opts = (call: Call = {}): Opts => ({
    middleware: [
      middleware(call, timeoutMs, (d) => clock.seen(d)),
      ...(auth ? [authMiddleware(auth)] : []),
    ],
    middlewareMergeStrategy: 'append',
  });
  const call = <T>(fn: () => Promise<T>, reads?: { name?: string }): Promise<T> => (auth ? withFreshCredentialOn401(auth, () => guard(fn, reads)) : guard(fn, reads));

  return {
    get: (ref) => call(() => getObject(api, ref, opts()), { name: ref.name }),
    list: async (apiVersion, kind, namespace, lo) => {
      const l = await call(() => listObjects(api, { apiVersion, kind, namespace }, lo ?? {}, opts()), {});
      return { ...l, items: throughView(l.items, lo?.view) };
    },
    perform: (action, po) => {
      const answerBy = po?.timeoutMs === undefined ? undefined : performance.now() + po.timeoutMs;
      return call(() => performAction(api, action, opts({ patchType: action.patchType, ...(answerBy !== undefined ? { answerBy } : {}) })));
    },
    serverNow: () => clock.now(),
  };
}

function middleware(call: Call, timeoutMs: number, onDate: (d: Date) => void): ObservableMiddleware {
  return {
    pre: (req) => {
      // As the lean client: what is left of the write's deadline, sent as ?timeout= too.
      const left = call.answerBy === undefined ? timeoutMs : Math.min(timeoutMs, Math.floor(call.answerBy - performance.now()));
      req.setSignal(AbortSignal.timeout(Math.max(1, left)));
      if (call.answerBy !== undefined) req.setQueryParam('timeout', `${Math.max(1, left)}ms`);
      if (call.patchType && req.getHttpMethod() === 'PATCH') {
        req.setHeaderParam('Content-Type', PATCH_CONTENT_TYPE[call.patchType]);
      }
      return of(req);
    },
    post: (res) => {
      const date = res.headers['date'];
      if (date) {
        const d = new Date(date);
        if (!Number.isNaN(d.getTime())) onDate(d);
      }
      return of(res);
    },
  };
}

function authMiddleware(auth: KubeAuth): ObservableMiddleware {
  return {
    pre: (req) => from(auth.header().then((h) => {
      req.setHeaderParam('Authorization', h);
      return req;
    })),
    post: (res) => of(res),
  };
}

/** Run a call; translate client-node and network failures into classified KubeErrors. */
async function guard<T>(fn: () => Promise<T>, reads?: { name?: string }): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const ke = toKubeError(err);
    if (reads !== undefined && ke.status === 404) return readNotFound(ke, reads.name) as T;
    throw ke;
  }
}

/** Normalise anything a client-node call can throw. */
export function toKubeError(err: unknown): KubeError {
  if (err instanceof ApiException) return statusError(err.code, err.body, err.headers?.['retry-after'], err);
  // Network errors, resets, timeouts (AbortError/TimeoutError): status 0 = transient.
  return networkError(err);
}

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.indexOf('/');
  return i < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

/** Plural resource names for the custom kinds we touch. */
const CUSTOM_PLURALS: Record<string, string> = {
  EphemeralJob: 'ephemeraljobs',
  ContainerRecreateRequest: 'containerrecreaterequests',
};

function custom(ref: { apiVersion: string; kind: string }): { group: string; version: string; plural: string } {
  const plural = CUSTOM_PLURALS[ref.kind];
  if (!plural) throw new KubeError({ status: 400, reason: 'Unsupported', message: `unsupported kind ${ref.apiVersion} ${ref.kind}` });
  return { ...splitApiVersion(ref.apiVersion), plural };
}

function ns(ref: { namespace?: string | undefined }): string {
  if (!ref.namespace) throw new KubeError({ status: 400, reason: 'BadRequest', message: 'namespace required' });
  return ref.namespace;
}

async function getObject(api: Api, ref: ObjectRef, o: Opts): Promise<unknown> {
  const { name } = ref;
  switch (ref.kind) {
    case 'Pod': return api.core.readNamespacedPod({ name, namespace: ns(ref) }, o);
    case 'Node': return api.core.readNode({ name }, o);
    case 'Lease': return api.coord.readNamespacedLease({ name, namespace: ns(ref) }, o);
    case 'Event': return api.core.readNamespacedEvent({ name, namespace: ns(ref) }, o);
    default: return api.custom.getNamespacedCustomObject({ ...custom(ref), namespace: ns(ref), name }, o);
  }
}

async function listObjects(api: Api, ref: { apiVersion: string; kind: string; namespace: string | undefined }, lo: ListOptions, o: Opts): Promise<ObjectList<unknown>> {
  const q = { labelSelector: lo.labelSelector, fieldSelector: lo.fieldSelector };
  let list: { items?: unknown[]; metadata?: { resourceVersion?: string } };
  switch (ref.kind) {
    case 'Pod':
      list = ref.namespace ? await api.core.listNamespacedPod({ namespace: ref.namespace, ...q }, o) : await api.core.listPodForAllNamespaces(q, o);
      break;
    case 'Node': list = await api.core.listNode(q, o); break;
    case 'Event': list = await api.core.listNamespacedEvent({ namespace: ref.namespace ?? '', ...q }, o); break;
    default: {
      const c = custom(ref);
      list = (ref.namespace
        ? await api.custom.listNamespacedCustomObject({ ...c, namespace: ref.namespace, ...q }, o)
        : await api.custom.listClusterCustomObject({ ...c, ...q }, o)) as typeof list;
    }
  }
  return { items: list.items ?? [], resourceVersion: list.metadata?.resourceVersion };
}

/* eslint-disable @typescript-eslint/no-explicit-any -- typed APIs want their model types; bodies come from planners as plain JSON */
async function performAction(api: Api, a: Action, o: Opts): Promise<unknown> {
  const namespace = a.namespace;
  const name = a.name;
  const body = a.body as any;
  const key = `${a.kind}:${a.verb}:${a.subresource ?? ''}`;
  switch (key) {
    case 'Pod:patch:': return api.core.patchNamespacedPod({ name, namespace, body }, o);
    case 'Pod:patch:status': return api.core.patchNamespacedPodStatus({ name, namespace, body }, o);
    case 'Pod:patch:ephemeralcontainers': return api.core.patchNamespacedPodEphemeralcontainers({ name, namespace, body }, o);
    case 'Pod:update:ephemeralcontainers': return api.core.replaceNamespacedPodEphemeralcontainers({ name, namespace, body }, o);
    case 'Pod:delete:': return api.core.deleteNamespacedPod({ name, namespace, body }, o);
    case 'Event:create:': return api.core.createNamespacedEvent({ namespace, body }, o);
    case 'Event:patch:': return api.core.patchNamespacedEvent({ name, namespace, body }, o);
    case 'Lease:create:': return api.coord.createNamespacedLease({ namespace, body }, o);
    case 'Lease:update:': return api.coord.replaceNamespacedLease({ name, namespace, body }, o);
    case 'Lease:delete:': return api.coord.deleteNamespacedLease({ name, namespace, body }, o);
  }
  const c = custom(a);
  switch (`${a.verb}:${a.subresource ?? ''}`) {
    case 'create:': return api.custom.createNamespacedCustomObject({ ...c, namespace, body }, o);
    case 'patch:': return api.custom.patchNamespacedCustomObject({ ...c, namespace, name, body }, o);
    case 'patch:status': return api.custom.patchNamespacedCustomObjectStatus({ ...c, namespace, name, body }, o);
    case 'update:': return api.custom.replaceNamespacedCustomObject({ ...c, namespace, name, body }, o);
    case 'update:status': return api.custom.replaceNamespacedCustomObjectStatus({ ...c, namespace, name, body }, o);
    case 'delete:': return api.custom.deleteNamespacedCustomObject({ ...c, namespace, name, body }, o);
  }
  throw new KubeError({ status: 400, reason: 'Unsupported', message: `unsupported action ${key}` });
}
