import { z } from 'zod';

/** A cluster name as relays stamp it on envelopes (EPHEMERA_RELAY_CLUSTER). */
export const ClusterName = z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'a cluster name (lower-case letters, digits, "-" and ".")');

/**
 * Where the functions find a cluster's endpoint, CA and credentials: by reference only,
 * never the credential itself (an environment variable is readable by anyone with
 * lambda:GetFunctionConfiguration, and holds 4 KB at most).
 *  - eks: endpoint and CA from DescribeCluster, a token signed with the function's own IAM
 *    role (what `aws eks get-token` does); `accessEntry` lets the IaC map the role.
 *  - secret: a Secrets Manager secret holding {server, certificateAuthorityData, token}.
 *  - kubeconfig: KUBECONFIG or the in-cluster service account (all-in-cluster, local).
 */
export const ClusterSource = z.union([
  z.object({ eks: z.object({ name: z.string().min(1).max(100), region: z.string().min(1).optional(), accessEntry: z.boolean().default(true) }).strict() }).strict(),
  z.object({ secret: z.object({ secretId: z.string().min(1), region: z.string().min(1).optional() }).strict() }).strict(),
  z.object({ kubeconfig: z.object({}).strict() }).strict(),
], { error: 'a cluster source: exactly one of {"eks":{"name":…}}, {"secret":{"secretId":…}}, {"kubeconfig":{}}' });
export type ClusterSource = z.infer<typeof ClusterSource>;

/** Every cluster one deployment serves, by the name relays stamp. */
export const ClusterSources = z.record(ClusterName, ClusterSource).refine((r) => Object.keys(r).length > 0, 'at least one cluster');
export type ClusterSources = z.infer<typeof ClusterSources>;

/**
 * What a "secret" cluster source's secret must hold (JSON). The token is a ServiceAccount
 * token (`kubectl create token ephemera-functions --duration …`); rotate it by updating
 * the secret: the functions re-read it on a 401.
 */
export const ClusterSecret = z.object({
  // http:// only on loopback: the embedded test cluster; a real API server speaks TLS.
  server: z.url().refine((u) => u.startsWith('https://') || /^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?\/?$/.test(u), 'an https:// API server URL'),
  /** Base64 PEM of the API server's CA (kubeconfig's certificate-authority-data); omit for a publicly trusted one. */
  certificateAuthorityData: z.base64().optional(),
  token: z.string().min(20, 'a bearer token'),
});
export type ClusterSecret = z.infer<typeof ClusterSecret>;
