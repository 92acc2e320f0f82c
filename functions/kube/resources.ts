// The kinds the functions touch and what they may do with each: the one table the lean
// client builds its URLs from. It allows exactly what the client-node wrapper
// (client.ts) supports, so both refuse the same requests.
import type { Action } from '../engine/plan.ts';
import { KubeError } from './errors.ts';

/** An operation: `get`, `list`, or an action's `verb:subresource` (`patch:status`, `delete:`). */
export type Operation = string;

interface Resource {
  /** Fixed group/version for built-in kinds; custom kinds take the caller's apiVersion. */
  apiVersion?: string;
  plural: string;
  namespaced: boolean;
  ops: readonly Operation[];
}

const CUSTOM_OPS = ['get', 'list', 'create:', 'patch:', 'patch:status', 'update:', 'update:status', 'delete:'] as const;

/** Kind → resource. Built-in kinds ignore the apiVersion they are given, as the typed client-node APIs do. */
export const RESOURCES: Readonly<Record<string, Resource>> = {
  Pod: { apiVersion: 'v1', plural: 'pods', namespaced: true, ops: ['get', 'list', 'patch:', 'patch:status', 'patch:ephemeralcontainers', 'update:ephemeralcontainers', 'delete:'] },
  Node: { apiVersion: 'v1', plural: 'nodes', namespaced: false, ops: ['get', 'list'] },
  Event: { apiVersion: 'v1', plural: 'events', namespaced: true, ops: ['get', 'list', 'create:', 'patch:'] },
  Lease: { apiVersion: 'coordination.k8s.io/v1', plural: 'leases', namespaced: true, ops: ['get', 'create:', 'update:', 'delete:'] },
  EphemeralJob: { plural: 'ephemeraljobs', namespaced: true, ops: CUSTOM_OPS },
  ContainerRecreateRequest: { plural: 'containerrecreaterequests', namespaced: true, ops: CUSTOM_OPS },
};

/** What one request addresses. `name` is absent for create and list; `namespace` absent lists across namespaces. */
export interface Target {
  apiVersion: string;
  kind: string;
  namespace?: string | undefined;
  name?: string;
  subresource?: string | undefined;
}

/** The operation key of a planned action. */
export function actionOperation(a: Action): Operation {
  return `${a.verb}:${a.subresource ?? ''}`;
}

/**
 * The URL path for `op` on `t`, or a 400 KubeError naming what is unsupported
 * (the same reasons and messages as client.ts).
 */
export function pathFor(op: Operation, t: Target): string {
  const r = RESOURCES[t.kind];
  if (!r || !r.ops.includes(op)) {
    // Built-in kinds name the kind (client.ts falls through to its custom-object path), custom ones the action.
    const what = !r || r.apiVersion ? `kind ${t.apiVersion} ${t.kind}` : `action ${t.kind}:${op}`;
    throw new KubeError({ status: 400, reason: 'Unsupported', message: `unsupported ${what}` });
  }
  const apiVersion = r.apiVersion ?? t.apiVersion;
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  let ns = '';
  if (r.namespaced && (op !== 'list' || t.namespace)) {
    if (!t.namespace) throw new KubeError({ status: 400, reason: 'BadRequest', message: 'namespace required' });
    ns = `/namespaces/${encodeURIComponent(t.namespace)}`;
  }
  const name = t.name !== undefined && !op.startsWith('create') && op !== 'list' ? `/${encodeURIComponent(t.name)}` : '';
  const sub = t.subresource ? `/${t.subresource}` : '';
  return `${base}${ns}/${r.plural}${name}${sub}`;
}
