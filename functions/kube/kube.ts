import type { Action } from '../engine/plan.ts';

/** Names one object. namespace is omitted for cluster-scoped kinds (Node). */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
}

/** How one write is sent. */
export interface PerformOptions {
  /**
   * Answered within this many ms, or abandoned. The API server is told so with `?timeout=`:
   * that deadline bounds its queueing and its handling, and past it the server answers 504 and
   * starts no storage write for the request. The client gives up at the same moment. The
   * client's own timeout still applies when it is shorter, to both.
   */
  timeoutMs?: number;
}

export interface ObjectList<T> {
  items: T[];
  resourceVersion?: string;
}

/**
 * The functions' whole view of the API server. The real one wraps @kubernetes/client-node
 * (kube/client.ts); handlers receive it as a dependency and never build their own.
 * Objects come back as plain JSON-shaped values (parse them with the api/ schemas).
 */
export interface Kube {
  /** The object, or null when it does not exist (404). */
  get(ref: ObjectRef): Promise<unknown>;
  /**
   * The objects a LIST returns. Items may be shared with earlier and later answers of the
   * same client, frozen (list-reuse.ts: an item whose uid and resourceVersion did not change
   * is not parsed again): copy one before changing it.
   */
  list(apiVersion: string, kind: string, namespace: string | undefined, opts?: ListOptions): Promise<ObjectList<unknown>>;
  /** Performs one planned write; throws KubeError on failure. Returns the API's answer. */
  perform(action: Action, options?: PerformOptions): Promise<unknown>;
  /**
   * The API server's clock as last seen in a response's Date header, advanced by local
   * elapsed time since; what it tells never goes back (server-clock.ts;
   * undefined before the first response). Leases are judged by it.
   */
  serverNow(): Date | undefined;
}
