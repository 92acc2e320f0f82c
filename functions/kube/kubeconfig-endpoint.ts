// A client-node KubeConfig (the CLI's --kubeconfig / --in-cluster, the relay) as what the
// lean Kube needs. client-node still does the loading, so every kubeconfig kubectl accepts
// works, exec plugins and auth providers included; only KubeConfig's methods are used, so
// importing this module costs no bundle bytes.
import { readFileSync } from 'node:fs';
import type { KubeConfig } from '@kubernetes/client-node';
import type { ClientCertificate, KubeAuth } from './auth.ts';
import { refuseInsecureWithCa, type KubeEndpoint } from './endpoint.ts';
import type { KubeConnection } from './kubeconfig-file.ts';
import { proxyFor } from './proxy.ts';

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
  refuseInsecureWithCa({ insecure: !!endpoint.insecureSkipTlsVerify, ca: !!endpoint.ca }, `kubeconfig cluster "${cluster.name}"`);
  if (cluster.tlsServerName) endpoint.tlsServerName = cluster.tlsServerName;
  if (cluster.proxyUrl) endpoint.proxyUrl = cluster.proxyUrl;
  // client-node's Cluster has no disable-compression (its file loader drops the field); a
  // cluster given in code may carry it (the embedded cluster's does).
  if ((cluster as { disableCompression?: unknown }).disableCompression === true) endpoint.disableCompression = true;
  if (user?.impersonateUser) endpoint.headers = { 'Impersonate-User': user.impersonateUser };
  const authenticates = !!(user && (user.token || user.exec || user.authProvider || user.username));
  return authenticates ? { endpoint, auth: kubeConfigAuth(kc) } : { endpoint };
}

/**
 * The credentials client-node would send: token, token file, exec plugin, auth provider or
 * basic auth in the Authorization header, and a client certificate an exec plugin returns
 * (review: it was dropped, and such a kubeconfig's requests went out anonymous).
 */
function kubeConfigAuth(kc: KubeConfig): KubeAuth {
  let certificate: ClientCertificate | undefined;
  return {
    header: async () => {
      const opts: { headers: Record<string, string>; auth?: string; cert?: string | Buffer; key?: string | Buffer } = { headers: {} };
      await kc.applyToHTTPSOptions(opts);
      const user = kc.getCurrentUser();
      // A static certificate is the endpoint's already; only a credential's own is passed on.
      const dynamic = !!(user?.exec || user?.authProvider);
      certificate = dynamic && opts.cert && opts.key ? { cert: opts.cert, key: opts.key } : undefined;
      // A token file read as it is keeps its newline, which no header may carry (client-go trims it).
      if (opts.headers.Authorization) return opts.headers.Authorization.trim();
      return opts.auth ? `Basic ${Buffer.from(opts.auth).toString('base64')}` : '';
    },
    clientCertificate: () => certificate,
    // client-node's authenticators refresh expiring tokens themselves, but an exec credential
    // with no expiry is kept until the process ends: after a 401, run the plugin again, as
    // client-go's exec authenticator does (review).
    invalidate: () => forgetExecCredential(kc, kc.getCurrentUser()?.name ?? ''),
  };
}

/** Drops client-node's cached ExecCredential of `userName` (ExecAuth.tokenCache; KubeConfig keeps its authenticators unexported). */
export function forgetExecCredential(kc: KubeConfig, userName = kc.getCurrentUser()?.name ?? ''): void {
  const authenticators = (kc as unknown as { authenticators?: { tokenCache?: Record<string, unknown> }[] }).authenticators ?? [];
  for (const a of authenticators) if (a.tokenCache && userName in a.tokenCache) a.tokenCache[userName] = null;
}

/**
 * What keeps a loaded kubeconfig from naming the one cluster to act on (no clusters, no
 * current-context, one naming no context, a context naming no cluster), as one line saying
 * what to fix, or undefined: the CLI's `--kubeconfig` and the relay's KUBECONFIG both ask it,
 * so client-node's "No active cluster!" never reaches a user. `where` names the file(s);
 * `kubectl` is the command that edits them (`kubectl --kubeconfig FILE`, or `kubectl` for
 * KUBECONFIG, which kubectl reads too).
 */
export function contextProblem(kc: KubeConfig, where: string, kubectl: string): string | undefined {
  const useContext = `${kubectl} config use-context NAME`;
  if (kc.getClusters().length === 0) return `${where} defines no clusters; add one (${kubectl} config set-cluster NAME --server URL)`;
  const context = kc.getCurrentContext();
  if (!context) return `${where} has no current-context; choose one with: ${useContext}`;
  if (!kc.getContextObject(context)) {
    const contexts = kc.getContexts().map((c) => c.name).join(', ') || 'none';
    return `${where}: current-context "${context}" is not one of its contexts (${contexts}); choose one with: ${useContext}`;
  }
  if (!kc.getCurrentCluster()) return `${where}: context "${context}" names no cluster it defines; fix the context or choose another with: ${useContext}`;
  return undefined;
}

/**
 * A loaded kubeconfig made ready for every client of it, its current cluster checked up
 * front (the CLI's and the relay's start; other clusters are not used, and kubectl does not
 * check them either): one that skips TLS verification and names a CA is refused, as is a
 * proxy ephemera's client cannot use (`socks5://`); and the environment's HTTPS_PROXY /
 * NO_PROXY (proxy.ts, client-go's rules) become the proxy-url of each cluster that has none,
 * so client-node's own requests (the relay's LIST and WATCH) take the way ephemera's client
 * takes, as a client-go program's would. Throws an Error naming the cluster and the fix.
 */
export function prepareKubeConfig(kc: KubeConfig, env: Record<string, string | undefined> = process.env): void {
  const current = kc.getCurrentCluster();
  for (const cluster of kc.getClusters()) {
    const checked = cluster.name === current?.name;
    const where = `kubeconfig cluster "${cluster.name}"`;
    if (checked) refuseInsecureWithCa({ insecure: cluster.skipTLSVerify, ca: !!(cluster.caData || cluster.caFile) }, where);
    const server = URL.parse(cluster.server);
    if (!server) continue;
    let proxy;
    try {
      proxy = proxyFor(server, cluster.proxyUrl, env);
    } catch (err) {
      if (checked) throw new Error(`${where}: ${(err as Error).message}`, { cause: err });
      continue;
    }
    if (proxy && !cluster.proxyUrl) Object.assign(cluster, { proxyUrl: proxy.url.href });
  }
}
