// REST semantics of the fake API server, independent of HTTP: create, update (main resource
// and subresources), patch, delete with preconditions and finalizers, list with selectors.
// The HTTP layer and the simulated kubelet both go through here.
import { pruneForStorage } from './crd-prune.ts';
import { dns1123LabelProblems, dns1123SubdomainProblems } from '../api/name-formats.ts';
import type { Admit } from './admission.ts';
import { randomSuffix } from './names.ts';
import { jsonEqual } from '../api/json-equal.ts';
import { clone, jsonPatch, mergePatch, strategicMergePatch } from './patch.ts';
import { decodeMicroTimes } from './micro-time.ts';
import { metadataErrors } from './object-meta.ts';
import { isNamespace, NamespaceLifecycle } from './namespace-lifecycle.ts';
import { defaultPod, prepareEphemeralUpdate, validatePodCreate, validatePodStatusUpdate, validatePodUpdate } from './pod-rules.ts';
import { apiVersionOf, type ResourceDef } from './resources.ts';
import { matchFields, matchLabels, parseFieldSelector, parseLabelSelector } from './selectors.ts';
import {
  alreadyExists, ApiError, badRequest, conflict, expired, forbidden, invalid, invalidError, notFound, required, staleConflict,
  type FieldError, type StatusBody, type Subject,
} from './status.ts';
import { timestamp, type KubeObject, type ObjectStore } from './store.ts';

type Obj = Record<string, unknown>;
type Meta = KubeObject['metadata'];

/** Which part of an object a write addresses. */
export type Subresource = '' | 'status' | 'ephemeralcontainers';

/** The patch content types the server accepts. */
export const PATCH_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
} as const;

/** Query parameters of a LIST (and of a WATCH). */
export interface ListQuery {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
}

/** One object, or one of its subresources. */
export interface Target {
  def: ResourceDef;
  /** '' for cluster-scoped resources. */
  namespace: string;
  name: string;
  sub?: Subresource;
}

/** DeleteOptions, from the body or the query string. */
export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  gracePeriodSeconds?: number;
  propagationPolicy?: string;
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const subject = (def: ResourceDef, name: string): Subject => ({ resource: def.resource, group: def.group, name });
const hasStatus = (def: ResourceDef): boolean => def.subresources?.includes('status') ?? false;

/** Matches objects against a parsed label and field selector. */
export function selectorFor(def: ResourceDef, q: ListQuery): (o: KubeObject) => boolean {
  const labels = parseLabelSelector(q.labelSelector);
  const fields = parseFieldSelector(q.fieldSelector, ['metadata.name', 'metadata.namespace', ...(def.fieldLabels ?? [])]);
  return (o) => matchLabels(labels, o.metadata.labels as Record<string, string> | undefined) && matchFields(fields, o);
}

/** The REST layer over one store. */
export class Rest {
  readonly store: ObjectStore;
  private readonly clock: () => Date;
  private readonly admit: Admit | undefined;
  /** A namespace's deletion: Terminating on DELETE, and creates in it refused (namespace-lifecycle.ts). */
  private readonly namespaces: NamespaceLifecycle;
  /** The objects of paged LISTs, by snapshot key: later pages are read from the first page's snapshot. */
  private readonly snapshots = new Map<string, readonly KubeObject[]>();

  /** `admit` checks each create and update before it is stored (schema, validating webhook). */
  constructor(store: ObjectStore, clock: () => Date, admit?: Admit) {
    this.store = store;
    this.clock = clock;
    this.admit = admit;
    this.namespaces = new NamespaceLifecycle(store, clock);
  }

  get({ def, namespace, name }: Target): KubeObject {
    const obj = this.store.read(def, namespace, name);
    if (!obj) throw notFound(subject(def, name));
    return obj;
  }

  /**
   * A List object; `limit`/`continue` page through the objects in key order. Every page of a
   * paged LIST is read from one snapshot, the first page's, and carries its resourceVersion,
   * as etcd serves continue pages at the token's revision (review: pages read the current
   * state, so a relist in a test could see a pod twice deleted or its phase go backwards).
   */
  list(def: ResourceDef, namespace: string | undefined, q: ListQuery): Obj {
    const match = selectorFor(def, q);
    const token = q.continue ? decodeContinue(q.continue, this.store.oldestWatchable) : undefined;
    const rv = token?.rv !== undefined ? String(token.rv) : this.store.resourceVersion;
    const key = `${def.group}/${def.resource}|${namespace ?? ''}|${q.labelSelector ?? ''}|${q.fieldSelector ?? ''}|${rv}`;
    // The stored objects, not copies: the List is serialized at once and nothing here changes
    // them (a write replaces a stored object, so a snapshot keeps the versions it listed).
    const snapshot = token ? this.snapshots.get(key) : undefined;
    // A snapshot no longer kept is what etcd answers for a compacted revision: 410, list anew.
    if (token && !snapshot) throw expired('The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.');
    let items = snapshot ?? this.store.stored(def, namespace).filter(match);
    let cont: string | undefined;
    let remaining: number | undefined;
    if (token) items = items.filter((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}` > token.start);
    if (q.limit && q.limit > 0 && items.length > q.limit) {
      if (!token) this.keepSnapshot(key, items);
      remaining = items.length - q.limit;
      items = items.slice(0, q.limit);
      const last = items.at(-1)!;
      cont = Buffer.from(JSON.stringify({ rv: Number(rv), start: `${last.metadata.namespace ?? ''}/${last.metadata.name}` })).toString('base64url');
    }
    const head = { kind: `${def.kind}List`, apiVersion: apiVersionOf(def), metadata: { resourceVersion: rv, ...(cont ? { continue: cont, remainingItemCount: remaining } : {}) } };
    // Built-in kinds list items without kind/apiVersion; custom resources keep them. Those
    // copies are made only if a caller reads `items` (a table, an in-process caller): the
    // HTTP layer sends the cached bytes instead.
    const list: Obj = { ...head };
    let copies: readonly KubeObject[] | undefined;
    Object.defineProperty(list, 'items', { enumerable: true, configurable: true, get: () => (copies ??= def.custom ? items : items.map(withoutTypeMeta)) });
    listJson.set(list, () => joinList(JSON.stringify(head), items.map((o) => itemJson(o, def.custom === true))));
    return list;
  }

  /** Keeps a paged LIST's objects for its later pages (the 32 newest paged LISTs; an older one's continue is 410 Expired). */
  private keepSnapshot(key: string, items: readonly KubeObject[]): void {
    this.snapshots.set(key, items);
    for (const old of this.snapshots.keys()) {
      if (this.snapshots.size <= 32) break;
      this.snapshots.delete(old);
    }
  }

  create(def: ResourceDef, namespace: string, body: unknown): KubeObject {
    if (!isObj(body)) throw badRequest('the body of the request was not a JSON object');
    // Pruned as it is decoded, before admission sees it, as kube-apiserver's decoder does
    // (review: the schema and the webhook judged fields that would never be stored).
    const obj = pruneForStorage(def, clone(body) as KubeObject);
    decodeMicroTimes(def, obj);
    if (!isObj(obj.metadata)) obj.metadata = { name: '' };
    const meta = obj.metadata;
    this.checkKind(def, obj);
    if (def.namespaced) {
      if (meta.namespace && meta.namespace !== namespace) throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      meta.namespace = namespace;
    } else delete meta.namespace;
    // Admission (NamespaceLifecycle) comes before the registry's name rules and AlreadyExists.
    this.namespaces.admitCreate(def, namespace, typeof meta.name === 'string' && meta.name ? meta.name : typeof meta.generateName === 'string' ? meta.generateName : '');
    if (!meta.name && typeof meta.generateName === 'string' && meta.generateName) meta.name = this.generateName(def, namespace, meta.generateName);
    this.validateName(def, meta);
    const metaErrs = metadataErrors(meta);
    if (metaErrs.length) throw invalidError(def.kind, def.group, meta.name, metaErrs);
    if (this.store.read(def, namespace, meta.name)) throw alreadyExists(subject(def, meta.name));
    // etcd3 store.Create: a plain error, which the handler answers as 500 with no reason
    // (what `kubectl create -f` of an object saved with `-o yaml` meets).
    // ObjectResourceVersion parses it: "0", or what does not parse, is taken.
    if (/^\d+$/.test(String(meta.resourceVersion ?? '')) && Number(meta.resourceVersion) !== 0) throw new ApiError({ message: 'resourceVersion should not be set on objects to be created', reason: '', code: 500 });
    this.prepareCreate(def, obj);
    this.admit?.({ def, operation: 'CREATE', object: obj, sub: '' });
    return this.store.write(def, obj, 'ADDED');
  }

  /** PUT on the main resource or a subresource. */
  update(t: Target, body: unknown): KubeObject {
    const { def, namespace: ns, name, sub = '' } = t;
    if (!isObj(body)) throw badRequest('the body of the request was not a JSON object');
    const req = clone(body) as KubeObject;
    decodeMicroTimes(def, req);
    if (!isObj(req.metadata)) req.metadata = { name: '' };
    const meta = req.metadata;
    this.checkKind(def, req);
    if (meta.name && meta.name !== name) throw badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
    if (def.namespaced && meta.namespace && meta.namespace !== ns) throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    if (this.createsOnUpdate(t)) return this.createOnUpdate(t, req);
    const old = this.get(t);
    if (!meta.resourceVersion && (def.custom || def.conditionalUpdate)) {
      // registry Store.Update names the resource, not the kind, and renders the uint64 0 with %#v.
      throw invalidError(def.resource, def.group, name, [{ type: 'FieldValueInvalid', field: 'metadata.resourceVersion', message: 'Invalid value: 0x0: must be specified for an update' }]);
    }
    return this.commit(def, old, req, { sub, verb: 'update' });
  }

  /** True when a PUT here would create the object: it does not exist and its kind allows create on update (Leases). */
  createsOnUpdate({ def, namespace, name, sub = '' }: Target): boolean {
    return def.createOnUpdate === true && sub === '' && !this.store.exists(def, namespace, name);
  }

  /**
   * kube-apiserver's create-on-update (registry Store.Update): the object is created as given,
   * whatever resourceVersion it carries; a uid in it is a precondition, which an absent object
   * fails with 409 ("UID in object meta: " empty).
   */
  private createOnUpdate(t: Target, req: KubeObject): KubeObject {
    const uid = req.metadata.uid;
    if (uid) throw conflict(subject(t.def, t.name), `Precondition failed: UID in precondition: ${String(uid)}, UID in object meta: `);
    const { resourceVersion: _ignored, ...meta } = req.metadata;
    return this.create(t.def, t.namespace, { ...req, metadata: { ...meta, name: t.name } });
  }

  /** PATCH of the given content type, applied to the current object then committed as an update. */
  patch(t: Target, patch: { contentType: string; body: string }): KubeObject {
    const { def, name, sub = '' } = t;
    const type = patch.contentType.split(';')[0]!.trim().toLowerCase();
    const accepted = def.custom ? [PATCH_TYPES.json, PATCH_TYPES.merge] : [PATCH_TYPES.json, PATCH_TYPES.merge, PATCH_TYPES.strategic];
    if (!(accepted as string[]).includes(type)) {
      throw new ApiError({ message: `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`, reason: 'UnsupportedMediaType', code: 415 });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(patch.body);
    } catch (e) {
      throw badRequest(`error decoding patch: ${(e as Error).message}`);
    }
    const old = this.get(t);
    const applied = type === PATCH_TYPES.json ? jsonPatch(old, parsed) : type === PATCH_TYPES.merge ? mergePatch(old, parsed) : strategicMergePatch(old, parsed);
    if (!isObj(applied)) throw badRequest('the patch did not produce an object');
    const req = applied as KubeObject;
    decodeMicroTimes(def, req);
    if (!isObj(req.metadata)) req.metadata = { name };
    if (req.metadata.name !== name) throw badRequest(`the name of the object (${String(req.metadata.name)}) does not match the name on the URL (${name})`);
    return this.commit(def, old, req, { sub, verb: 'patch' });
  }

  /** DELETE: preconditions, then either a deletionTimestamp (finalizers pending) or removal. */
  delete(t: Target, options: DeleteOptions = {}): KubeObject | StatusBody {
    const { def, name } = t;
    if (isNamespace(def)) this.namespaces.admitDelete(name);
    const old = this.get(t);
    const pre = options.preconditions ?? {};
    // rest.BeforeDelete checks them first, naming the kind (GroupResource{Resource: gvk.Kind}).
    const byKind = { resource: def.kind, group: def.group, name };
    if (pre.uid && pre.uid !== old.metadata.uid) {
      throw conflict(byKind, `the UID in the precondition (${pre.uid}) does not match the UID in record (${String(old.metadata.uid)}). The object might have been deleted and then recreated`);
    }
    if (pre.resourceVersion && pre.resourceVersion !== old.metadata.resourceVersion) {
      throw conflict(byKind, `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${String(old.metadata.resourceVersion)}). The object might have been modified`);
    }
    if (isNamespace(def)) {
      const terminating = this.namespaces.markOrRemove(def, old);
      if (terminating) return terminating;
    }
    if (finalizersOf(old).length > 0) {
      if (old.metadata.deletionTimestamp) return old;
      // Store.Delete's markAsDeleting: a deletion held by finalizers is a new generation.
      if (Number(old.metadata.generation ?? 0) > 0) old.metadata.generation = Number(old.metadata.generation) + 1;
      old.metadata.deletionTimestamp = timestamp(this.clock());
      old.metadata.deletionGracePeriodSeconds = def.kind === 'Pod' && def.group === '' ? graceOf(old, options) : 0;
      return this.store.write(def, old, 'MODIFIED');
    }
    const gone = this.store.remove(def, old);
    this.collectGarbage();
    if (def.returnDeletedObject) return gone;
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name, group: def.group || undefined, kind: def.resource, uid: gone.metadata.uid }, code: 200 };
  }

  /** DELETE on a collection: deletes every matching object; answers with the list of them. */
  deleteCollection(def: ResourceDef, ns: string | undefined, q: ListQuery, options: DeleteOptions = {}): Obj {
    const match = selectorFor(def, q);
    const items = this.store.readAll(def, ns).filter(match).map((o) => this.delete({ def, namespace: o.metadata.namespace ?? '', name: o.metadata.name }, options));
    return { kind: `${def.kind}List`, apiVersion: apiVersionOf(def), metadata: { resourceVersion: this.store.resourceVersion }, items };
  }

  // ---- internals ----

  private checkKind(def: ResourceDef, obj: KubeObject): void {
    if (obj.kind !== undefined && obj.kind !== def.kind) throw badRequest(`the kind in the data (${String(obj.kind)}) does not match the expected kind (${def.kind})`);
    if (obj.apiVersion !== undefined && obj.apiVersion !== apiVersionOf(def)) {
      throw badRequest(`the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${apiVersionOf(def)})`);
    }
  }

  private generateName(def: ResourceDef, namespace: string, prefix: string): string {
    for (let i = 0; i < 8; i++) {
      const name = `${prefix}${randomSuffix(this.store.ids.random)}`;
      if (!this.store.read(def, namespace, name)) return name;
    }
    return `${prefix}${randomSuffix(this.store.ids.random)}`;
  }

  private validateName(def: ResourceDef, meta: Meta): void {
    const name = typeof meta.name === 'string' ? meta.name : '';
    if (!name) throw invalidError(def.kind, def.group, '', [required('metadata.name', 'name or generateName is required')]);
    // core/v1 Events have no name rule of their own (ValidateEventCreate stops at the legacy
    // rules for v1): only rest.ValidateCreate's path-segment check. events.k8s.io's are subdomains.
    const problems = def.resource === 'events' && def.group === '' ? pathSegmentProblems(name) : def.labelName ? dns1123LabelProblems(name) : dns1123SubdomainProblems(name);
    if (problems.length > 0) throw invalidError(def.kind, def.group, name, problems.map((p) => invalid('metadata.name', name, p)));
  }

  private prepareCreate(def: ResourceDef, obj: KubeObject): void {
    const meta = obj.metadata;
    meta.uid = this.store.ids.uid();
    meta.creationTimestamp = timestamp(this.clock());
    for (const k of ['resourceVersion', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink']) delete meta[k];
    if (def.generation) meta.generation = 1;
    else delete meta.generation;
    if (hasStatus(def)) delete obj.status;
    if (isPod(def)) {
      defaultPod(obj);
      const errs = validatePodCreate(obj);
      if (errs.length) throw invalidError(def.kind, def.group, meta.name, errs);
      obj.status = { phase: 'Pending', qosClass: qosClass(obj) };
    }
  }

  /**
   * Builds the object an update would store, validates it, and stores (or deletes) it. A uid
   * in a PUT's body is a precondition (409, registry Store.Update); a PATCH has none, so a
   * uid it sets that is not the object's fails validation as an immutable field (422, as
   * controllers that patch with the uid to mean "this very object" expect: the object was
   * deleted and created again under its name).
   */
  private commit(def: ResourceDef, old: KubeObject, req: KubeObject, { sub, verb }: { sub: Subresource; verb: 'update' | 'patch' }): KubeObject {
    const s = subject(def, old.metadata.name);
    const rv = req.metadata.resourceVersion;
    if (rv && rv !== old.metadata.resourceVersion) throw staleConflict(s);
    const uid = req.metadata.uid;
    const otherUid = uid !== undefined && uid !== '' && uid !== old.metadata.uid;
    if (otherUid && verb === 'update') throw conflict(s, `Precondition failed: UID in precondition: ${String(uid)}, UID in object meta: ${old.metadata.uid}`);
    // Pruned first, like kube-apiserver: an update that only adds unknown fields is a no-op.
    const next = pruneForStorage(def, this.nextObject(def, old, req, sub));
    const errs = [...(otherUid ? [invalid('metadata.uid', uid, 'field is immutable')] : []), ...this.updateErrors(def, old, next, sub)];
    if (errs.length) throw invalidError(def.kind, def.group, old.metadata.name, errs);
    if (def.generation && specChanged(old, next)) next.metadata.generation = Number(old.metadata.generation ?? 1) + 1;
    next.metadata.resourceVersion = old.metadata.resourceVersion;
    // An update that changes nothing is not written: no new resourceVersion, no event.
    if (jsonEqual(old, next)) return old;
    this.admit?.({ def, operation: 'UPDATE', object: next, oldObject: old, sub });
    if (next.metadata.deletionTimestamp && finalizersOf(next).length === 0) {
      // As the registry's Store.Update (errEmptiedFinalizers, then deleteWithoutFinalizers):
      // the update is not written; the stored object is deleted (its DELETED event carries
      // the finalizers it had), and the answer is the request's object at the version it
      // was read at (review74).
      this.store.remove(def, old);
      this.collectGarbage();
      return next;
    }
    return this.store.write(def, next, 'MODIFIED');
  }

  private nextObject(def: ResourceDef, old: KubeObject, req: KubeObject, sub: Subresource): KubeObject {
    if (sub === 'status' && isPod(def)) return podStatusNext(old, req);
    if (sub === 'status') {
      // Only status changes through a custom resource's /status (apiextensions'
      // status_strategy: ResetObjectMetaForStatus and the spec kept).
      const next = clone(old);
      if (req.status === undefined) delete next.status;
      else next.status = clone(req.status);
      return next;
    }
    if (sub === 'ephemeralcontainers') return prepareEphemeralUpdate(req, old).pod as KubeObject;
    const next = clone(req);
    next.apiVersion = old.apiVersion;
    next.kind = old.kind;
    keepMetadata(next, old, SERVER_SET_METADATA);
    if (hasStatus(def)) {
      if (old.status === undefined) delete next.status;
      else next.status = clone(old.status);
    }
    if (isPod(def)) defaultPod(next);
    return next;
  }

  private updateErrors(def: ResourceDef, old: KubeObject, next: KubeObject, sub: Subresource): FieldError[] {
    const errs: FieldError[] = metadataErrors(next.metadata);
    if (old.metadata.deletionTimestamp) {
      const added = finalizersOf(next).filter((f) => !finalizersOf(old).includes(f));
      if (added.length) errs.push(forbidden('metadata.finalizers', `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`));
    }
    if (!isPod(def)) return errs;
    if (sub === '') errs.push(...validatePodUpdate(next, old));
    if (sub === 'status') errs.push(...validatePodStatusUpdate(next, old));
    if (sub === 'ephemeralcontainers') errs.push(...prepareEphemeralUpdate(next, old).errs);
    return errs;
  }

  /**
   * Deletes dependents whose owners are all gone, as the garbage collector does with
   * background propagation (synchronously here). Only owners this server saw deleted count
   * as gone: an owner a seeded state simply does not hold (a pod's ReplicaSet left out of a
   * snapshot) is unknown, not absent, and Kubernetes deletes a dependent only after it has
   * verified that its owner is gone.
   */
  private collectGarbage(): void {
    for (const obj of this.store.list()) {
      const owners = (Array.isArray(obj.metadata.ownerReferences) ? (obj.metadata.ownerReferences as Obj[]) : []).map((o) => o.uid).filter((u) => typeof u === 'string');
      if (owners.length === 0 || obj.metadata.deletionTimestamp) continue;
      if (owners.some((uid) => this.store.hasUid(uid) || !this.store.wasRemoved(uid))) continue;
      const def = this.store.defFor(obj.apiVersion, obj.kind);
      this.delete({ def, namespace: obj.metadata.namespace ?? '', name: obj.metadata.name });
    }
  }
}

function isPod(def: ResourceDef): boolean {
  return def.group === '' && def.kind === 'Pod';
}

function finalizersOf(o: KubeObject): string[] {
  return Array.isArray(o.metadata.finalizers) ? (o.metadata.finalizers as string[]) : [];
}

function graceOf(pod: KubeObject, options: DeleteOptions): number {
  if (typeof options.gracePeriodSeconds === 'number') return options.gracePeriodSeconds;
  const spec = isObj(pod.spec) ? pod.spec : {};
  return typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : 30;
}

/** Anything outside metadata and status changed: what bumps metadata.generation. */
function specChanged(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject): Obj => {
    const { metadata: _m, status: _s, ...rest } = o;
    return rest;
  };
  return !jsonEqual(strip(a), strip(b));
}

function qosClass(pod: KubeObject): string {
  const spec = isObj(pod.spec) ? pod.spec : {};
  const containers = [spec.containers, spec.initContainers].flatMap((l) => (Array.isArray(l) ? (l as Obj[]) : []));
  const res = containers.map((c) => (isObj(c.resources) ? c.resources : {}));
  if (res.every((r) => !isObj(r.requests) && !isObj(r.limits))) return 'BestEffort';
  const guaranteed = res.every((r) => isObj(r.limits) && ['cpu', 'memory'].every((k) => (r.limits as Obj)[k] !== undefined)
    && (!isObj(r.requests) || ['cpu', 'memory'].every((k) => (r.requests as Obj)[k] === undefined || (r.requests as Obj)[k] === (r.limits as Obj)[k])));
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

function decodeContinue(token: string, oldest: number): { rv: number | undefined; start: string } {
  let parsed: { rv?: number; start?: string };
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { rv?: number; start?: string };
  } catch {
    throw badRequest('continue key is not valid: illegal base64 data');
  }
  if (typeof parsed.start !== 'string') throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  if (typeof parsed.rv === 'number' && parsed.rv < oldest) {
    throw expired('The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.');
  }
  return { rv: typeof parsed.rv === 'number' ? parsed.rv : undefined, start: parsed.start };
}

/**
 * A List's JSON, the same bytes as JSON.stringify(list) in UTF-8 (the HTTP layer sends it
 * when it has one: `serializedParts`). Its items come from a cache of each stored object's bytes:
 * a stored object is never changed (a write replaces it, store.ts), so they are computed
 * once, at the first LIST that returns it, and a LIST of 1,000 pods is a copy of 7.5 MB, not
 * a stringify and an encoding of it (~30 ms).
 */
const listJson = new WeakMap<object, () => Buffer[]>();

/** Each stored object's JSON as a List item (built-in kinds without kind/apiVersion). */
const itemBytes = new WeakMap<KubeObject, Buffer>();

function itemJson(o: KubeObject, custom: boolean): Buffer {
  let bytes = itemBytes.get(o);
  if (bytes === undefined) {
    bytes = Buffer.from(JSON.stringify(custom ? o : withoutTypeMeta(o)), 'utf8');
    itemBytes.set(o, bytes);
  }
  return bytes;
}

const COMMA = Buffer.from(',');

/** `{...head,"items":[item,item]}` in pieces, from the head's JSON and the items' bytes. */
function joinList(head: string, items: readonly Buffer[]): Buffer[] {
  const open = Buffer.from(`${head.slice(0, -1)},"items":[`, 'utf8');
  return [open, ...items.flatMap((b, i) => (i === 0 ? [b] : [COMMA, b])), Buffer.from(']}')];
}

function withoutTypeMeta({ kind: _k, apiVersion: _a, ...rest }: KubeObject): KubeObject {
  return rest as KubeObject;
}

/**
 * A body's JSON in UTF-8, in pieces written one after another: a List from list() by its
 * cached items (the socket gathers them, so the answer is never copied into one buffer),
 * anything else by JSON.stringify.
 */
export function serializedParts(body: unknown): Buffer[] {
  const fast = typeof body === 'object' && body !== null ? listJson.get(body) : undefined;
  return fast ? fast() : [Buffer.from(JSON.stringify(body), 'utf8')];
}

/** apimachinery path.IsValidPathSegmentName: what any object name must be to sit in a URL. */
function pathSegmentProblems(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  return ['/', '%'].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`);
}

/** Metadata an update never sets: the stored object's is kept (ObjectMeta's update rules). */
const SERVER_SET_METADATA = ['name', 'namespace', 'uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation'] as const;

/** `next` takes `old`'s value (or absence) of each of these metadata fields. */
function keepMetadata(next: KubeObject, old: KubeObject, keys: readonly string[]): void {
  for (const k of keys) {
    if (old.metadata[k] === undefined) delete next.metadata[k];
    else next.metadata[k] = clone(old.metadata[k]);
  }
}

/**
 * A pod written through pods/status, as podStatusStrategy.PrepareForUpdate makes it: the
 * spec, deletionTimestamp and ownerReferences are the stored ones (and a qosClass left
 * empty), everything else — labels, annotations and finalizers too — is the request's
 * (review74: the fake kept the stored metadata, as a custom resource's /status does, so a
 * status write that also set an annotation would have lost it here and kept it for real).
 */
function podStatusNext(old: KubeObject, req: KubeObject): KubeObject {
  const next = clone(req);
  next.apiVersion = old.apiVersion;
  next.kind = old.kind;
  next.spec = clone(old.spec);
  keepMetadata(next, old, [...SERVER_SET_METADATA, 'ownerReferences']);
  const qos = (old.status as { qosClass?: unknown } | undefined)?.qosClass;
  const status = next.status as { qosClass?: unknown } | undefined;
  if (qos !== undefined && status !== undefined && !status.qosClass) status.qosClass = qos;
  return next;
}
