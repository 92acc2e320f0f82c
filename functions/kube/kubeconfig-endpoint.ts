// A client-node KubeConfig (the CLI's --kubeconfig / --in-cluster, the relay) as what the
// lean Kube needs. client-node still does the loading, so every kubeconfig kubectl accepts
// works, exec plugins and auth providers included; only KubeConfig's methods are used, so
// importing this module costs no bundle bytes.
import { readFileSync } from 'node:fs';
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeAuth } from './auth.ts';
import type { KubeEndpoint } from './endpoint.ts';
import type { KubeConnection } from './kubeconfig-file.ts';

/** The current context's endpoint (TLS material read once) and its per-request credentials. */
export function kubeConfigConnection(kc: KubeConfig): KubeConnection {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const user = kc.getCurrentUser();
  const material = (file: string | undefined, data: string | undefined): Buffer | undefined => (file ? readFileSync(file) : data ? Buffer.from(data, 'base64') : undefined);
  const endpoint: KubeEndpoint = { server: cluster.server };
  const ca = material(cluster.caFile, cluster.caData);
  const cert = material(user?.certFile, user?.certData);
  const key = material(user?.keyFile, user?.keyData);
  if (ca) endpoint.ca = ca;
  if (cert) endpoint.cert = cert;
  if (key) endpoint.key = key;
  if (cluster.skipTLSVerify) endpoint.insecureSkipTlsVerify = true;
  if (cluster.tlsServerName) endpoint.tlsServerName = cluster.tlsServerName;
  // client-node's Cluster has no disable-compression (its file loader drops the field); a
  // cluster given in code may carry it (the embedded cluster's does).
  if ((cluster as { disableCompression?: unknown }).disableCompression === true) endpoint.disableCompression = true;
  if (user?.impersonateUser) endpoint.headers = { 'Impersonate-User': user.impersonateUser };
  const authenticates = !!(user && (user.token || user.exec || user.authProvider || user.username));
  return authenticates ? { endpoint, auth: kubeConfigAuth(kc) } : { endpoint };
}

/** The Authorization header client-node would send: token, token file, exec plugin, auth provider or basic auth. */
function kubeConfigAuth(kc: KubeConfig): KubeAuth {
  return {
    header: async () => {
      const opts: { headers: Record<string, string>; auth?: string } = { headers: {} };
      await kc.applyToHTTPSOptions(opts);
      if (opts.headers.Authorization) return opts.headers.Authorization;
      return opts.auth ? `Basic ${Buffer.from(opts.auth).toString('base64')}` : '';
    },
    // client-node's authenticators refresh expiring tokens themselves.
    invalidate: () => {},
  };
}
