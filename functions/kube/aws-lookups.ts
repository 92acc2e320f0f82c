// The real AwsLookups: the SDK's default credential chain (the Lambda role), EKS
// DescribeCluster and Secrets Manager GetSecretValue, one client per region. The SDK
// modules load on first use: a deployment with only kubeconfig sources never loads them,
// and none of them slows the import of the Lambda bundle.
import type { EKSClient } from '@aws-sdk/client-eks';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { AwsCredentialIdentityProvider } from '@smithy/types';
import type { AwsLookups } from './credentials.ts';

/**
 * Bounds on one AWS call: the SDK's defaults wait minutes, so a function in a VPC with no
 * route to the service (no NAT gateway, no interface endpoint) hung until the Lambda's own
 * timeout (review).
 */
export const AWS_CALL_TIMEOUTS = { connectionTimeout: 3000, requestTimeout: 10_000, throwOnRequestTimeout: true };

/** AwsLookups over the AWS SDK, in the given default region (`endpoint`: one for every service, for tests). */
export function awsLookups(region: string, o: { endpoint?: string; timeouts?: typeof AWS_CALL_TIMEOUTS } = {}): AwsLookups {
  const options = { requestHandler: o.timeouts ?? AWS_CALL_TIMEOUTS, ...(o.endpoint ? { endpoint: o.endpoint } : {}) };
  let provider: Promise<AwsCredentialIdentityProvider> | undefined;
  const credentials: AwsCredentialIdentityProvider = async (props) => {
    provider ??= import('@aws-sdk/credential-provider-node').then((m) => m.defaultProvider());
    return (await provider)(props);
  };
  const eks = perRegion(async (r): Promise<EKSClient> => new (await import('@aws-sdk/client-eks')).EKSClient({ region: r, credentials, ...options }));
  const secrets = perRegion(async (r): Promise<SecretsManagerClient> => new (await import('@aws-sdk/client-secrets-manager')).SecretsManagerClient({ region: r, credentials, ...options }));
  return {
    region,
    credentials,
    async describeCluster(name, r) {
      const { DescribeClusterCommand } = await import('@aws-sdk/client-eks');
      const out = await (await eks(r)).send(new DescribeClusterCommand({ name }));
      const endpoint = out.cluster?.endpoint;
      const ca = out.cluster?.certificateAuthority?.data;
      if (!endpoint || !ca) throw new Error(`cluster ${name} has no endpoint or CA yet (status ${out.cluster?.status ?? 'unknown'})`);
      return { endpoint, certificateAuthorityData: ca };
    },
    async getSecret(secretId, r) {
      const { GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
      const out = await (await secrets(r)).send(new GetSecretValueCommand({ SecretId: secretId }));
      if (out.SecretString === undefined) throw new Error('the secret has no SecretString (binary secrets are not supported)');
      return out.SecretString;
    },
  };
}

function perRegion<C>(make: (region: string) => Promise<C>): (region: string) => Promise<C> {
  const clients = new Map<string, Promise<C>>();
  return (region) => {
    let c = clients.get(region);
    if (!c) {
      c = make(region);
      // A client that failed to load is not kept: the next call tries again.
      c.catch(() => clients.delete(region));
      clients.set(region, c);
    }
    return c;
  };
}
