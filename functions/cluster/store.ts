// The object store behind the fake API server: every object of every served resource, one
// global resourceVersion counter, and a bounded history of watch events.
import { pruneForStorage } from './crd-prune.ts';
import { randomIds, type Ids } from './names.ts';
import { clone } from './patch.ts';
import { apiVersionOf, type ResourceDef, type ResourceRegistry } from './resources.ts';

/** A stored object: plain JSON with metadata. */
export type KubeObject = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: Record<string, unknown> & { name: string; namespace?: string; resourceVersion?: string; uid?: string };
};

/** Names one object; namespace is omitted or empty for cluster-scoped kinds. */
export interface ObjectKey {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}

/** One watch event as the store records it. */
export interface StoreEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  def: ResourceDef;
  object: KubeObject;
  /** The object before a MODIFIED event (watch selectors turn it into ADDED/DELETED). */
  prev?: KubeObject;
  rv: number;
}

type Listener = (e: StoreEvent) => void;

/** RFC 3339 with second precision, as metav1.Time serialises. */
export function timestamp(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const keyOf = (def: ResourceDef, namespace: string, name: string): string => `${def.group}/${def.resource}/${namespace}/${name}`;

/**
 * Direct access to every object (tests, `ephemera invoke`, the simulated kubelet). Writes made
 * here skip validation but still bump the resourceVersion and reach watchers.
 */
export class ObjectStore {
  private readonly objects = new Map<string, { def: ResourceDef; obj: KubeObject }>();
  private readonly history: StoreEvent[] = [];
  private readonly listeners = new Set<Listener>();
  /** uids of objects removed since the server started: owners the garbage collector saw go. */
  private readonly removedUids = new Set<string>();
  private rv = 1;
  private compactedAt = 0;
  private readonly registry: ResourceRegistry;
  private readonly historyLimit: number;
  private readonly clock: () => Date;
  /** Where uids and generated names come from (random, as a real server's, unless seeded). */
  readonly ids: Ids;

  constructor(registry: ResourceRegistry, options: { clock: () => Date; watchHistory: number; ids?: Ids }) {
    this.registry = registry;
    this.clock = options.clock;
    this.ids = options.ids ?? randomIds;
    this.historyLimit = options.watchHistory;
  }

  /** The current (latest) resourceVersion. */
  get resourceVersion(): string {
    return String(this.rv);
  }

  /** The oldest resourceVersion a watch may still start from. */
  get oldestWatchable(): number {
    return this.compactedAt;
  }

  /** Whether this server serves apiVersion + kind. */
  serves(apiVersion: string, kind: string): boolean {
    return this.registry.byKind(apiVersion, kind) !== undefined;
  }

  /** The resource that serves this apiVersion + kind; throws for kinds the server does not serve. */
  defFor(apiVersion: string, kind: string): ResourceDef {
    const def = this.registry.byKind(apiVersion, kind);
    if (!def) throw new Error(`the in-memory API server does not serve ${apiVersion} ${kind}; served: ${this.registry.defs.map((d) => `${apiVersionOf(d)}/${d.kind}`).join(', ')}`);
    return def;
  }

  /** A copy of one object, or undefined. */
  get(ref: ObjectKey): KubeObject | undefined {
    const def = this.defFor(ref.apiVersion, ref.kind);
    return this.read(def, def.namespaced ? ref.namespace ?? '' : '', ref.name);
  }

  /** Copies of the objects that match, sorted by namespace then name (etcd key order). */
  list(filter: { apiVersion?: string; kind?: string; namespace?: string } = {}): KubeObject[] {
    const out: KubeObject[] = [];
    for (const { def, obj } of this.objects.values()) {
      if (filter.apiVersion && apiVersionOf(def) !== filter.apiVersion) continue;
      if (filter.kind && def.kind !== filter.kind) continue;
      if (filter.namespace !== undefined && (obj.metadata.namespace ?? '') !== filter.namespace) continue;
      out.push(clone(obj));
    }
    return out.sort(byNamespaceName);
  }

  /** Every object, sorted by apiVersion, kind, namespace, name. */
  all(): KubeObject[] {
    return this.list().sort((a, b) => `${a.apiVersion}/${a.kind}`.localeCompare(`${b.apiVersion}/${b.kind}`) || byNamespaceName(a, b));
  }

  /**
   * Creates or replaces an object as given (no validation, no defaulting); fills in uid and
   * creationTimestamp when missing and assigns a new resourceVersion. Returns the stored copy.
   */
  put(input: unknown): KubeObject {
    const obj = clone(input) as KubeObject;
    if (!obj || typeof obj !== 'object' || typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') {
      throw new Error('store.put needs an object with apiVersion and kind');
    }
    const def = this.defFor(obj.apiVersion, obj.kind);
    const meta = (obj.metadata ??= { name: '' });
    if (!meta.name) throw new Error(`store.put: ${obj.kind} without metadata.name`);
    if (def.namespaced) meta.namespace = meta.namespace || 'default';
    else delete meta.namespace;
    meta.uid ??= this.ids.uid();
    meta.creationTimestamp ??= timestamp(this.clock());
    const exists = this.objects.has(keyOf(def, meta.namespace ?? '', meta.name));
    return this.write(def, obj, exists ? 'MODIFIED' : 'ADDED');
  }

  /** Removes an object at once (finalizers ignored); false when it did not exist. */
  delete(ref: ObjectKey): boolean {
    const def = this.defFor(ref.apiVersion, ref.kind);
    const cur = this.read(def, def.namespaced ? ref.namespace ?? '' : '', ref.name);
    if (!cur) return false;
    this.remove(def, cur);
    return true;
  }

  /** Forgets watch history: a watch from any older resourceVersion now gets 410 Gone. */
  compact(): void {
    this.history.length = 0;
    this.compactedAt = this.rv;
  }

  // ---- used by the REST layer ----

  /** A copy of an object by resource, namespace ('' when cluster-scoped) and name. */
  read(def: ResourceDef, namespace: string, name: string): KubeObject | undefined {
    const e = this.objects.get(keyOf(def, namespace, name));
    return e ? clone(e.obj) : undefined;
  }

  /** Is there an object by this resource, namespace ('' when cluster-scoped) and name? */
  exists(def: ResourceDef, namespace: string, name: string): boolean {
    return this.objects.has(keyOf(def, namespace, name));
  }

  /** Copies of a resource's objects in a namespace (or all namespaces), in key order. */
  readAll(def: ResourceDef, namespace: string | undefined): KubeObject[] {
    return this.stored(def, namespace).map((o) => clone(o));
  }

  /**
   * The stored objects themselves, in key order, for an answer serialized at once (a LIST):
   * copying every object first cost more than the rest of a large LIST. Callers must not
   * change them; every write replaces a stored object rather than changing it.
   */
  stored(def: ResourceDef, namespace: string | undefined): readonly KubeObject[] {
    const out: KubeObject[] = [];
    for (const e of this.objects.values()) {
      if (e.def !== def) continue;
      if (namespace !== undefined && (e.obj.metadata.namespace ?? '') !== namespace) continue;
      out.push(e.obj);
    }
    return out.sort(byNamespaceName);
  }

  /** Stores an object under a new resourceVersion and tells watchers. */
  write(def: ResourceDef, obj: KubeObject, type: 'ADDED' | 'MODIFIED'): KubeObject {
    const copy = clone(pruneForStorage(def, obj));
    copy.metadata.resourceVersion = String(++this.rv);
    const stored = inWireOrder(copy, apiVersionOf(def), def.kind);
    const key = keyOf(def, stored.metadata.namespace ?? '', stored.metadata.name);
    const prev = this.objects.get(key)?.obj;
    this.objects.set(key, { def, obj: stored });
    this.emit({ type, def, object: stored, rv: this.rv, ...(prev ? { prev } : {}) });
    return clone(stored);
  }

  /** Removes an object; the DELETED event carries its last state under a new resourceVersion. */
  remove(def: ResourceDef, obj: KubeObject): KubeObject {
    const gone = clone(obj);
    gone.metadata.resourceVersion = String(++this.rv);
    this.objects.delete(keyOf(def, gone.metadata.namespace ?? '', gone.metadata.name));
    if (gone.metadata.uid) this.removedUids.add(gone.metadata.uid);
    this.emit({ type: 'DELETED', def, object: gone, rv: this.rv });
    return clone(gone);
  }

  /** Is any stored object's uid this one? */
  hasUid(uid: string): boolean {
    for (const e of this.objects.values()) if (e.obj.metadata.uid === uid) return true;
    return false;
  }

  /** Was an object with this uid removed from this store (not merely never stored)? */
  wasRemoved(uid: string): boolean {
    return this.removedUids.has(uid);
  }

  /** Events after a resourceVersion, or null when history no longer reaches back that far. */
  since(rv: number): StoreEvent[] | null {
    if (rv < this.compactedAt) return null;
    return this.history.filter((e) => e.rv > rv);
  }

  /** Subscribes to every future event; returns the unsubscribe function. */
  subscribe(fn: Listener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private emit(e: StoreEvent): void {
    this.history.push(e);
    while (this.history.length > this.historyLimit) this.compactedAt = this.history.shift()!.rv;
    for (const fn of [...this.listeners]) fn(e);
  }
}

function byNamespaceName(a: KubeObject, b: KubeObject): number {
  return (a.metadata.namespace ?? '').localeCompare(b.metadata.namespace ?? '') || a.metadata.name.localeCompare(b.metadata.name);
}

/** ObjectMeta's fields in the order kube-apiserver writes them (the Go struct's), then any others. */
const META_ORDER = ['name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences', 'finalizers', 'managedFields'];

/**
 * The object with its keys in the order kube-apiserver serializes them: apiVersion, kind,
 * metadata (in ObjectMeta's order), then the rest as given. Clients may rely on it (the
 * functions' client reads an item's uid and resourceVersion from the keys that open its
 * metadata: functions/kube/list-reuse.ts). fromEntries, so a `__proto__` key stays data.
 */
function inWireOrder(obj: KubeObject, apiVersion: string, kind: string): KubeObject {
  const { apiVersion: _a, kind: _k, metadata, ...rest } = obj;
  const known = META_ORDER.filter((k) => Object.hasOwn(metadata, k)).map((k) => [k, (metadata as Record<string, unknown>)[k]]);
  const others = Object.entries(metadata).filter(([k]) => !META_ORDER.includes(k));
  return { apiVersion, kind, metadata: Object.fromEntries([...known, ...others]), ...rest } as KubeObject;
}
