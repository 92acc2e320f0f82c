// Per-cluster connections for the functions: endpoint, CA and a short-lived or re-readable
// credential, from a ClusterSource reference. Nothing here reads the environment; the AWS
// calls come in as AwsLookups so tests pass scripted ones (no module mocks).
import type { AwsCredentialIdentityProvider } from '@smithy/types';
import { formatZodIssues } from '../api/field-path.ts';
import type { KubeAuth } from './auth.ts';
import { ClusterSecret, secretRegion, type ClusterSource, type ClusterSources } from './cluster-source.ts';
import { eksTokenSource } from './eks-token.ts';
import type { KubeEndpoint } from './endpoint.ts';
import { KubeError } from './errors.ts';
import { loadKubeconfigConnection, type KubeConnection } from './kubeconfig-file.ts';

/** The AWS calls the credential sources need (real ones: aws-lookups.ts). */
export interface AwsLookups {
  /** The default region (the function's own). */
  region: string;
  /** The function's IAM credentials (SDK default chain). */
  credentials: AwsCredentialIdentityProvider;
  /** EKS DescribeCluster: the endpoint and base64 CA of a cluster. */
  describeCluster(name: string, region: string): Promise<{ endpoint: string; certificateAuthorityData: string }>;
  /** Secrets Manager GetSecretValue: the secret's string. */
  getSecret(secretId: string, region: string): Promise<string>;
}

/**
 * A credential that cannot be had or was refused: never retried (it will not fix itself
 * within an invocation), named after the cluster and where the credential comes from.
 * A KubeError with status 401 so every layer already treats it as terminal.
 */
export class CredentialError extends KubeError {
  constructor(message: string, cause?: unknown) {
    super({ status: 401, reason: 'CredentialError', message, cause });
    this.name = 'CredentialError';
  }
}

/** An envelope names a cluster this deployment does not serve: bad input (dead-letter it). */
export class UnknownClusterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnknownClusterError';
  }
}

/** How to reach one cluster: its endpoint (server, CA) and the bearer token source. */
export interface ClusterConnection {
  name: string;
  endpoint: KubeEndpoint;
  /** Absent when the kubeconfig authenticates by client certificate alone. */
  auth?: KubeAuth;
}

/**
 * Connections by cluster name, made once per process and cached; a connection older than
 * CONNECTION_REFRESH_MS is made again in the background, served once it is made (until then,
 * and if it fails, the one before).
 */
export interface ClusterConnections {
  /** The cluster names served, sorted. */
  readonly names: string[];
  connect(name: string): Promise<ClusterConnection>;
}

/** Connections for the given sources. `kubeconfig` sources use `loadKubeconfig` (default: KUBECONFIG / in-cluster). */
export function clusterConnections(sources: ClusterSources, aws: () => AwsLookups, loadKubeconfig: () => Promise<KubeConnection> = loadKubeconfigConnection, now: () => number = Date.now): ClusterConnections {
  const made = new Map<string, { connection: Promise<ClusterConnection>; at: number; next?: Promise<unknown> }>();
  return {
    names: Object.keys(sources).sort(),
    connect(name) {
      const source = sources[name];
      if (!source) return Promise.reject(new UnknownClusterError(`cluster "${name}" is not served by this deployment (EPHEMERA_CLUSTERS has: ${Object.keys(sources).sort().join(', ')})`));
      const entry = made.get(name);
      if (!entry) {
        const connection = connectTo(name, source, aws, loadKubeconfig);
        // A failed connect is not cached: the next message tries again (e.g. after a fix to IAM).
        connection.catch(() => made.delete(name));
        made.set(name, { connection, at: now() });
        return connection;
      }
      // The server and CA are read again now and then: a secret or cluster fixed (a CA
      // rotated, a wrong server corrected) reaches a warm instance without a redeploy (review:
      // it kept failing until a cold start). A refresh that fails keeps the connection made.
      if (entry.next === undefined && now() - entry.at >= CONNECTION_REFRESH_MS) {
        // The same server and TLS settings keep the connection made, and with it the client,
        // its sockets and clock (final read: a new one every 5 minutes for nothing).
        entry.next = Promise.all([connectTo(name, source, aws, loadKubeconfig), entry.connection]).then(
          ([c, was]) => made.set(name, { connection: sameEndpoint(c.endpoint, was.endpoint) ? entry.connection : Promise.resolve(c), at: now() }),
          () => Object.assign(entry, { at: now(), next: undefined }),
        );
      }
      return entry.connection;
    },
  };
}

/** How long a cluster's connection (server, CA, credential source) serves before it is read again. */
export const CONNECTION_REFRESH_MS = 5 * 60_000;

/** Whether two endpoints reach the same server the same way (certificates compared as text). */
function sameEndpoint(a: KubeEndpoint, b: KubeEndpoint): boolean {
  const text = (e: KubeEndpoint): string => JSON.stringify({ ...e, ca: e.ca?.toString(), cert: e.cert?.toString(), key: e.key?.toString() });
  return text(a) === text(b);
}

async function connectTo(name: string, source: ClusterSource, aws: () => AwsLookups, loadKubeconfig: () => Promise<KubeConnection>): Promise<ClusterConnection> {
  if ('kubeconfig' in source) {
    try {
      return { name, ...(await loadKubeconfig()) };
    } catch (err) {
      throw new CredentialError(`cluster "${name}": ${(err as Error).message}`, err);
    }
  }
  if ('eks' in source) return eksConnection(name, source.eks, aws());
  return secretConnection(name, source.secret, aws());
}

async function eksConnection(name: string, eks: { name: string; region?: string | undefined }, aws: AwsLookups): Promise<ClusterConnection> {
  const region = eks.region ?? aws.region;
  let described: { endpoint: string; certificateAuthorityData: string };
  try {
    described = await aws.describeCluster(eks.name, region);
  } catch (err) {
    const why = unreachable(err) ? `no answer from EKS in ${region}: in a VPC, the function needs a NAT gateway or an interface endpoint for eks` : 'does the role allow eks:DescribeCluster?';
    throw new CredentialError(`cluster "${name}": EKS DescribeCluster ${eks.name} in ${region} failed (${why}): ${(err as Error).message}`, err);
  }
  const tokens = eksTokenSource({ cluster: eks.name, region, credentials: aws.credentials });
  return {
    name,
    endpoint: endpointFor(described.endpoint, described.certificateAuthorityData),
    auth: {
      header: async () => {
        try {
          return `Bearer ${await tokens.token()}`;
        } catch (err) {
          throw new CredentialError(`cluster "${name}": cannot sign an EKS token (no AWS credentials?): ${(err as Error).message}`, err);
        }
      },
      invalidate: () => tokens.invalidate(),
      // What the on-call needs to read in the log line (operability review).
      source: `cluster "${name}": an EKS token for ${eks.name} in ${region}; refused, the functions' role is most likely not mapped: aws eks list-access-entries --cluster-name ${eks.name} --region ${region}, and the access entry needs the group ephemera:functions`,
    },
  };
}

async function secretConnection(name: string, secret: { secretId: string; region?: string | undefined }, aws: AwsLookups): Promise<ClusterConnection> {
  // An ARN is read in its own region (review: it was read in the function's, where it is not).
  const region = secretRegion(secret) ?? aws.region;
  const read = (): Promise<ClusterSecret> => readClusterSecret(name, secret.secretId, () => aws.getSecret(secret.secretId, region));
  const first = await read();
  let token: Promise<string> | undefined = Promise.resolve(first.token);
  return {
    name,
    endpoint: endpointFor(first.server, first.certificateAuthorityData),
    auth: {
      header: async () => {
        token ??= read().then((s) => s.token);
        const t = token;
        t.catch(() => {
          if (token === t) token = undefined;
        });
        return `Bearer ${await t}`;
      },
      // After a 401 the secret is read again: a rotated token is picked up without a redeploy.
      invalidate: () => {
        token = undefined;
      },
      source: `cluster "${name}": the token in secret ${secret.secretId} (${region}); refused, it has expired or was revoked: put a valid one in the secret`,
    },
  };
}

/** Read and check a cluster secret; a missing or malformed one names the secret and what was expected. */
export async function readClusterSecret(cluster: string, secretId: string, get: () => Promise<string>): Promise<ClusterSecret> {
  let text: string;
  try {
    text = await get();
  } catch (err) {
    throw new CredentialError(`cluster "${cluster}": cannot read secret ${secretId} (${unreadable(err)}): ${(err as Error).message}`, err);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CredentialError(`cluster "${cluster}": secret ${secretId} is not JSON; expected {"server":"https://…","certificateAuthorityData":"<base64 PEM>","token":"…"}`);
  }
  const r = ClusterSecret.safeParse(json);
  if (!r.success) throw new CredentialError(`cluster "${cluster}": secret ${secretId} is malformed: ${formatZodIssues(r.error.issues, '')}; expected {"server":"https://…","certificateAuthorityData":"<base64 PEM>","token":"…"}`);
  return r.data;
}

/** An endpoint from a server URL and a base64 PEM CA; the bearer token is added per request by KubeAuth. */
export function endpointFor(server: string, caData: string | undefined): KubeEndpoint {
  return caData ? { server, ca: Buffer.from(caData, 'base64') } : { server };
}

/** What most likely keeps a secret from being read, for the error's hint. */
function unreadable(err: unknown): string {
  if (unreachable(err)) return 'no answer from Secrets Manager: in a VPC, the function needs a NAT gateway or an interface endpoint for secretsmanager';
  // GetSecretValue says "Access to KMS is not allowed" when the role may not decrypt with the
  // secret's customer-managed key, DecryptionFailure when KMS refuses it (a disabled key, a key
  // policy that leaves the role out): the hint named only GetSecretValue (review).
  const e = err as { name?: unknown; message?: unknown } | null;
  if (e?.name === 'DecryptionFailure' || /\bKMS\b|\bkms:/.test(String(e?.message))) {
    return 'the secret\'s KMS key refused the role: set the cluster\'s "kmsKeyArn" in the deploy settings to the key the secret is encrypted with (a customer-managed key; the stack then grants kms:Decrypt through Secrets Manager), and the key\'s policy must allow the role (FunctionsRoleArn) when the key is in another account';
  }
  return 'does it exist, and may the role call secretsmanager:GetSecretValue on it? A secret in another account needs a resource policy allowing the role too';
}

/** An AWS call that got no answer (the SDK's timeouts, a refused or unresolvable endpoint), not a refusal. */
function unreachable(err: unknown): boolean {
  const e = err as { name?: unknown; code?: unknown } | null;
  return e?.name === 'TimeoutError' || ['ETIMEDOUT', 'ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH'].includes(String(e?.code));
}
