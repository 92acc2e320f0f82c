// The Kube for a loaded client-node KubeConfig (the CLI, the relay, the test worlds):
// client-node reads the kubeconfig — exec plugins, auth providers, token files — and the
// lean node:https client (https-kube.ts) talks to the API server, so every runtime uses
// the one Kube the Lambda uses. Only KubeConfig's methods are called: no bundle cost.
import type { KubeConfig } from '@kubernetes/client-node';
import { createHttpsKube, type HttpsKubeOptions } from './https-kube.ts';
import type { Kube } from './kube.ts';
import { kubeConfigConnection } from './kubeconfig-endpoint.ts';

/** Where a request's Authorization header comes from (auth.ts). */
export type { KubeAuth } from './auth.ts';

/** Options of createKube: per-request timeout, and a KubeAuth that replaces the kubeconfig's credentials. */
export type KubeClientOptions = HttpsKubeOptions;

/**
 * The Kube for the KubeConfig's current context. It records the API server's Date header
 * so leases can be judged by the server's clock instead of ours.
 */
export function createKube(kc: KubeConfig, options: KubeClientOptions = {}): Kube {
  const { endpoint, auth } = kubeConfigConnection(kc);
  const chosen = options.auth ?? auth;
  return createHttpsKube(endpoint, { ...options, ...(chosen ? { auth: chosen } : {}) });
}
