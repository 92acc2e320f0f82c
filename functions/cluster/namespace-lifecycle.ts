// A namespace's deletion, as far as the fake models it: the namespace registry's DELETE
// (pkg/registry/core/namespace/storage) and the NamespaceLifecycle admission plugin
// (k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle). The namespace controller,
// which deletes a Terminating namespace's contents and then the namespace, is not modelled:
// a test plays it (deletes the contents, then the Namespace again).
import { ApiError, conflict, notFound, type Subject } from './status.ts';
import { timestamp, type KubeObject, type ObjectStore } from './store.ts';
import type { ResourceDef } from './resources.ts';

/** core/v1 NamespaceTerminatingCause: the StatusCause type (serialised as `reason`) of a create refused in a Terminating namespace. */
export const NAMESPACE_TERMINATING_CAUSE = 'NamespaceTerminating';

/** NamespaceLifecycle's immortal namespaces: their DELETE is refused. */
const IMMORTAL = new Set(['default', 'kube-system', 'kube-public']);

const namespaces = (name: string): Subject => ({ resource: 'namespaces', group: '', name });

/** apierrors.NewForbidden: `<resource> "<name>" is forbidden: <why>`, details naming the object. */
function forbidden(s: Subject, why: string): ApiError {
  const qualified = s.group ? `${s.resource}.${s.group}` : s.resource;
  return new ApiError({ message: `${qualified} "${s.name}" is forbidden: ${why}`, reason: 'Forbidden', details: { name: s.name, group: s.group || undefined, kind: s.resource }, code: 403 });
}

export function isNamespace(def: ResourceDef): boolean {
  return def.group === '' && def.kind === 'Namespace';
}

/** NamespaceLifecycle and the namespace registry's DELETE over one store. */
export class NamespaceLifecycle {
  private readonly store: ObjectStore;
  private readonly clock: () => Date;
  /**
   * Namespaces removed from this store (by a DELETE, or a test through the store) and not
   * stored again. Only these are known to be missing: the fake keeps no namespace existence
   * check otherwise, so that a world need not seed a Namespace for every namespace it uses.
   */
  private readonly gone = new Set<string>();

  constructor(store: ObjectStore, clock: () => Date) {
    this.store = store;
    this.clock = clock;
    store.subscribe((e) => {
      if (!isNamespace(e.def)) return;
      if (e.type === 'DELETED') this.gone.add(e.object.metadata.name);
      else this.gone.delete(e.object.metadata.name);
    });
  }

  /**
   * NamespaceLifecycle's Admit for a CREATE (a POST, or a PUT that creates) of `name`
   * (its generateName when it has none) in `namespace`: 404 for a namespace deleted here,
   * the namespace's own NotFound; 403 with the NamespaceTerminating cause for one being
   * deleted (status.phase Terminating). Run before the registry's validation, as admission is.
   */
  admitCreate(def: ResourceDef, namespace: string, name: string): void {
    if (!def.namespaced || isNamespace(def)) return;
    if (this.gone.has(namespace)) throw notFound(namespaces(namespace));
    const ns = this.store.read(this.store.defFor('v1', 'Namespace'), '', namespace);
    if ((ns?.status as { phase?: unknown } | undefined)?.phase !== 'Terminating') return;
    const err = forbidden({ resource: def.resource, group: def.group, name: name || 'Unknown' }, `unable to create new content in namespace ${namespace} because it is being terminated`);
    err.status.details = { ...err.status.details, causes: [{ reason: NAMESPACE_TERMINATING_CAUSE, message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' }] };
    throw err;
  }

  /** NamespaceLifecycle's Admit for a DELETE of a Namespace: the immortal ones are refused. */
  admitDelete(name: string): void {
    if (IMMORTAL.has(name)) throw forbidden(namespaces(name), 'this namespace may not be deleted');
  }

  /**
   * The namespace registry's Delete, past its preconditions: the first DELETE marks the
   * namespace Terminating (deletionTimestamp, status.phase) and answers it; a later one is
   * 409 while spec.finalizers holds anything (the namespace controller empties it), and
   * otherwise the namespace is removed (`undefined`: the caller deletes it as any object).
   */
  markOrRemove(def: ResourceDef, old: KubeObject): KubeObject | undefined {
    if (!old.metadata.deletionTimestamp) {
      const next = { ...old, metadata: { ...old.metadata, deletionTimestamp: timestamp(this.clock()) }, status: { ...(old.status as object | undefined), phase: 'Terminating' } };
      return this.store.write(def, next, 'MODIFIED');
    }
    const finalizers = (old.spec as { finalizers?: unknown } | undefined)?.finalizers;
    if (Array.isArray(finalizers) && finalizers.length > 0) {
      throw conflict(namespaces(old.metadata.name), 'The system is ensuring all content is removed from this namespace.  Upon completion, this namespace will automatically be purged by the system.');
    }
    return undefined;
  }
}
