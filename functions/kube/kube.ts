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

/**
 * What a LIST keeps of each item: `read` makes it from the item as JSON.parse gives it, and
 * must be pure (an item kept from an earlier answer is not read again: list-reuse.ts keeps
 * what `read` made of it, under the view's `name`, which no other view may share). A LIST
 * through a view holds only what `read` returns, never the whole answer (review82 H2: an
 * EphemeralJob's reconcile held all its pods whole while it planned).
 */
export interface ItemView<T> {
  readonly name: string;
  read(raw: unknown): T;
}

/** Items read whole, through the view if there is one (a Kube that does not read as the answer arrives: tests, client-node). */
export function throughView<T>(items: readonly unknown[], view: ItemView<T> | undefined): T[] {
  return view ? items.map((x) => view.read(x)) : (items as T[]);
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
   * The objects a LIST returns; with `opts.view`, what the view made of each (read item by
   * item as the answer arrives, in the lean client). Items may be shared with earlier and
   * later answers of the same client, frozen (list-reuse.ts: an item whose uid and
   * resourceVersion did not change is not parsed again): copy one before changing it.
   */
  list<T = unknown>(apiVersion: string, kind: string, namespace: string | undefined, opts?: ListOptions & { view?: ItemView<T> }): Promise<ObjectList<T>>;
  /** Performs one planned write; throws KubeError on failure. Returns the API's answer. */
  perform(action: Action, options?: PerformOptions): Promise<unknown>;
  /**
   * The API server's clock as last seen in a response's Date header, advanced by local
   * elapsed time since; it goes back only when the server's clock stepped back by more than a
   * Date header's second (server-clock.ts; undefined before the first response). Leases are
   * judged by it.
   */
  serverNow(): Date | undefined;
}
