import * as z from 'zod';
import { AwsRegion } from '../config.ts';

/** A cluster name as relays stamp it on envelopes (EPHEMERA_RELAY_CLUSTER). */
export const ClusterName = z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'a cluster name (lower-case letters, digits, "-" and ".")');

/** A Secrets Manager secret's ARN, whole (…:secret:<name>-<6 random characters>) or partial (…:secret:<name>). */
const SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:([a-z0-9-]+):\d{12}:secret:(.+)$/;
/** A KMS key's ARN. Not an alias: IAM authorizes Decrypt on the key itself. */
const KMS_KEY_ARN = /^arn:aws[a-z-]*:kms:([a-z0-9-]+):\d{12}:key\/[A-Za-z0-9-]+$/;

/** A secret's name or ARN; an ARN names its region (review: one without it was read in the function's region). */
const SecretId = (): z.ZodString => z.string().min(1).refine((id) => !id.startsWith('arn:') || SECRET_ARN.test(id), 'a secret name, or a secret ARN: arn:<partition>:secretsmanager:<region>:<account>:secret:<name>');
const KmsKeyArn = (): z.ZodString => z.string().regex(KMS_KEY_ARN, 'a KMS key ARN: arn:<partition>:kms:<region>:<account>:key/<key id> (not an alias)');

/** The region of a secret source when it names one: `region`, else its ARN's (undefined: the function's own). */
export function secretRegion(secret: { secretId: string; region?: string | undefined }): string | undefined {
  return secret.region ?? SECRET_ARN.exec(secret.secretId)?.[1];
}

/**
 * Whether a secret ARN is whole: Secrets Manager takes one whose name ends in a hyphen and six
 * letters or digits as whole (its random suffix), any other as partial (the docs' "Finding a
 * secret from a partial ARN").
 */
export function isWholeSecretArn(secretId: string): boolean {
  const name = SECRET_ARN.exec(secretId)?.[2];
  return name !== undefined && /-[A-Za-z0-9]{6}$/.test(name);
}

/** The secret's `region`, its ARN's region and its KMS key's region must be one: a secret's key is in the secret's region. */
function oneRegion(secret: { secretId: string; region?: string | undefined; kmsKeyArn?: string | undefined }, ctx: z.RefinementCtx): void {
  const arnRegion = SECRET_ARN.exec(secret.secretId)?.[1];
  if (secret.region !== undefined && arnRegion !== undefined && secret.region !== arnRegion) {
    ctx.addIssue({ code: 'custom', path: ['region'], message: `the secret's ARN is in ${arnRegion}, region says ${secret.region}: leave region out (the ARN's is used)` });
  }
  const keyRegion = secret.kmsKeyArn === undefined ? undefined : KMS_KEY_ARN.exec(secret.kmsKeyArn)?.[1];
  const region = secret.region ?? arnRegion;
  if (keyRegion !== undefined && region !== undefined && keyRegion !== region) {
    ctx.addIssue({ code: 'custom', path: ['kmsKeyArn'], message: `the key is in ${keyRegion}, the secret in ${region}: a secret is encrypted with a key of its own region` });
  }
}

/**
 * Where the functions find a cluster's endpoint, CA and credentials: by reference only,
 * never the credential itself (an environment variable is readable by anyone with
 * lambda:GetFunctionConfiguration, and holds 4 KB at most).
 *  - eks: endpoint and CA from DescribeCluster, a token signed with the function's own IAM
 *    role (what `aws eks get-token` does); `accessEntry` lets the IaC map the role.
 *  - secret: a Secrets Manager secret holding {server, certificateAuthorityData, token}, by
 *    name or ARN; `kmsKeyArn`, the customer-managed key it is encrypted with, lets the IaC
 *    allow the role to decrypt with it.
 *  - kubeconfig: KUBECONFIG or the in-cluster service account (all-in-cluster, local).
 */
export const ClusterSource = z.union([
  z.object({ eks: z.object({ name: z.string().min(1).max(100), region: AwsRegion.optional(), accessEntry: z.boolean().default(true) }).strict() }).strict(),
  z.object({ secret: z.object({ secretId: SecretId(), region: AwsRegion.optional(), kmsKeyArn: KmsKeyArn().optional() }).strict().superRefine(oneRegion) }).strict(),
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
