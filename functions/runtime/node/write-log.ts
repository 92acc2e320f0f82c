import type { Action } from '../../engine/plan.ts';
import type { Kube } from '../../kube/kube.ts';

/** The writes sent since the last `take`: those the API server took, and those it failed. */
export interface Writes {
  done: Action[];
  failed: { action: Action; error: unknown }[];
}

/**
 * A Kube that notes every write it passes on, for `ephemera invoke` to report what a key's
 * reconcile wrote beside its plan (the Warning Event of a refused write) and what was
 * refused, with the action itself (review: a refused injection and its Warning went unseen).
 */
export function writeLog(inner: Kube): { kube: Kube; take: () => Writes } {
  let writes: Writes = { done: [], failed: [] };
  const kube: Kube = {
    get: (ref) => inner.get(ref),
    list: (apiVersion, kind, namespace, opts) => inner.list(apiVersion, kind, namespace, opts),
    perform: async (action) => {
      try {
        const answer = await inner.perform(action);
        writes.done.push(action);
        return answer;
      } catch (error) {
        writes.failed.push({ action, error });
        throw error;
      }
    },
    serverNow: () => inner.serverNow(),
  };
  return {
    kube,
    take: () => {
      const taken = writes;
      writes = { done: [], failed: [] };
      return taken;
    },
  };
}
