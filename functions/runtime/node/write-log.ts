import type { Action } from '../../engine/plan.ts';
import type { Kube } from '../../kube/kube.ts';

/**
 * A Kube that notes every write the API server took, for `ephemera invoke` to report what a
 * key's reconcile wrote beside its plan (the Warning Event of a refused write) and what a
 * reconcile that failed half-way had written before it (review: both went unseen).
 */
export function writeLog(inner: Kube): { kube: Kube; take: () => Action[] } {
  let done: Action[] = [];
  const kube: Kube = {
    get: (ref) => inner.get(ref),
    list: (apiVersion, kind, namespace, opts) => inner.list(apiVersion, kind, namespace, opts),
    perform: async (action, options) => {
      const answer = await inner.perform(action, options);
      done.push(action);
      return answer;
    },
    serverNow: () => inner.serverNow(),
  };
  return {
    kube,
    take: () => {
      const taken = done;
      done = [];
      return taken;
    },
  };
}
