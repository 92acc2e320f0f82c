// An EKS bearer token signed in-process with the function's own IAM role, as
// `aws eks get-token` and aws-iam-authenticator make it (pkg/token/token.go): a presigned
// STS GetCallerIdentity URL whose signature covers the `x-k8s-aws-id: <cluster>` header,
// base64url-encoded (no padding) after the `k8s-aws-v1.` prefix. The API server's
// authenticator replays the URL to STS, so the token proves the role without any
// long-lived secret. STS honours such a URL for 15 minutes after X-Amz-Date whatever
// X-Amz-Expires says; 60 is what every client sends (older authenticators insist on ≤ 60).
// The signer (and the @smithy/core it drags in) loads on the first token, not at import:
// it would add ~15 ms to every cold start of a deployment that serves no EKS cluster.
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { awsPartition } from './aws-partition.ts';
import { cjsExports } from './cjs-import.ts';

/** The token's version prefix. */
export const EKS_TOKEN_PREFIX = 'k8s-aws-v1.';
/** The header whose signed value binds a token to one cluster. */
export const CLUSTER_ID_HEADER = 'x-k8s-aws-id';
/** STS accepts a presigned GetCallerIdentity URL this long after its X-Amz-Date. */
export const EKS_TOKEN_LIFETIME_MS = 15 * 60_000;
/** A token is replaced when this old: well inside its lifetime, allowing for clock skew. */
export const EKS_TOKEN_REFRESH_AFTER_MS = 10 * 60_000;

/** What a token is made from. */
export interface EksTokenInput {
  /** The EKS cluster's name (what the token is bound to). */
  cluster: string;
  /** The region whose regional STS endpoint signs (the cluster's region). */
  region: string;
  credentials: AwsCredentialIdentity;
  /** The signing time (the token is valid 15 minutes from it). */
  now: Date;
}

/** A signed token and when it stops being accepted. */
export interface EksToken {
  token: string;
  expiresAt: Date;
}

/** Sign one token. Pure apart from the hashing: same input, same token. */
export async function signEksToken(input: EksTokenInput): Promise<EksToken> {
  const hostname = stsHostname(input.region);
  const [{ Sha256 }, { SignatureV4 }] = await Promise.all([cjsExports(import('@aws-crypto/sha256-js')), cjsExports(import('@smithy/signature-v4'))]);
  const signer = new SignatureV4({ service: 'sts', region: input.region, credentials: input.credentials, sha256: Sha256, applyChecksum: false });
  const signed = await signer.presign(
    {
      method: 'GET', protocol: 'https:', hostname, path: '/',
      query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
      headers: { host: hostname, [CLUSTER_ID_HEADER]: input.cluster },
    },
    { expiresIn: 60, signingDate: input.now },
  );
  const query = Object.entries(signed.query ?? {})
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
  const url = `https://${hostname}/?${query}`;
  return { token: EKS_TOKEN_PREFIX + Buffer.from(url, 'utf8').toString('base64url'), expiresAt: new Date(input.now.getTime() + EKS_TOKEN_LIFETIME_MS) };
}

/**
 * The regional STS endpoint, under the region's partition's DNS suffix (China, the European
 * Sovereign Cloud and the ISO partitions have their own): aws-iam-authenticator accepts only
 * sts.<region>.<that suffix> (review: eusc-de-east-1 was signed for ….amazonaws.com, a host that
 * does not exist, and every request got a 401).
 */
function stsHostname(region: string): string {
  return `sts.${region}.${awsPartition(region).dnsSuffix}`;
}

/** A cached token for one cluster: signed on first use, re-signed when ten minutes old or after a 401. */
export interface EksTokenSource {
  /** The current token (signs a new one when due). */
  token(): Promise<string>;
  /** Forget the cached token (after a 401). */
  invalidate(): void;
}

/** A token source over an AWS credential provider (the SDK's default chain in Lambda). */
export function eksTokenSource(opts: { cluster: string; region: string; credentials: AwsCredentialIdentityProvider; clock?: () => Date }): EksTokenSource {
  const clock = opts.clock ?? ((): Date => new Date());
  let cached: { token: string; signedAt: number } | undefined;
  return {
    async token() {
      const now = clock();
      if (cached && now.getTime() - cached.signedAt < EKS_TOKEN_REFRESH_AFTER_MS) return cached.token;
      const t = await signEksToken({ cluster: opts.cluster, region: opts.region, credentials: await opts.credentials(), now });
      cached = { token: t.token, signedAt: now.getTime() };
      return t.token;
    },
    invalidate() {
      cached = undefined;
    },
  };
}
