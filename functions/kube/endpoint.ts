/**
 * client-go refuses a cluster that both skips verification and names a CA ("specifying a
 * root certificates file with the insecure flag is not allowed"): the CA would be ignored
 * and the credentials sent to any server (security review). `where` names the cluster.
 */
export function refuseInsecureWithCa(cluster: { insecure: boolean; ca: boolean }, where: string): void {
  if (cluster.insecure && cluster.ca) {
    throw new Error(`${where}: insecure-skip-tls-verify and a certificate authority together are refused, as kubectl refuses them (the CA would be ignored and the credentials sent to any server): drop one`);
  }
}

/**
 * How to reach one API server: its URL and TLS material, already resolved (PEM contents,
 * not file names or base64). Credentials that expire come separately as a KubeAuth.
 */
export interface KubeEndpoint {
  /** `https://host[:port][/prefix]`; `http://` only for the embedded test cluster. */
  server: string;
  /** PEM of the CA(s) that sign the server's certificate; the system's roots when absent. */
  ca?: string | Buffer;
  /** Client certificate and key (PEM) for x509 client authentication. */
  cert?: string | Buffer;
  key?: string | Buffer;
  /** kubeconfig's insecure-skip-tls-verify: accept any server certificate. */
  insecureSkipTlsVerify?: boolean;
  /** kubeconfig's tls-server-name: the name to verify the certificate against (SNI). */
  tlsServerName?: string;
  /**
   * kubeconfig's disable-compression: do not ask for gzip. The embedded cluster sets it (it
   * is in-process: compressing a large LIST costs both ends CPU and saves no network).
   */
  disableCompression?: boolean;
  /**
   * kubeconfig's proxy-url: every request goes through this HTTP(S) proxy. Absent: the
   * environment's HTTPS_PROXY / NO_PROXY, as client-go reads them (proxy.ts).
   */
  proxyUrl?: string;
  /** Extra headers on every request (kubeconfig's `as`: Impersonate-User). */
  headers?: Record<string, string>;
}
