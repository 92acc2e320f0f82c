import type { Kube } from '../../kube/kube.ts';

/**
 * A Kube that reads from the real cluster and records writes instead of sending them, for
 * `ephemera invoke --kubeconfig` without `--apply`. A write "succeeds" with its own body.
 */
export function dryRunKube(real: Kube): Kube {
  return {
    get: (ref) => real.get(ref),
    list: (apiVersion, kind, namespace, opts) => real.list(apiVersion, kind, namespace, opts),
    perform: async (action) => action.body ?? {},
    serverNow: () => real.serverNow(),
  };
}
