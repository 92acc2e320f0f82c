// The real AwsLookups: the SDK's default credential chain (the Lambda role), EKS
// DescribeCluster and Secrets Manager GetSecretValue, one client per region.
import { DescribeClusterCommand, EKSClient } from '@aws-sdk/client-eks';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import type { AwsLookups } from './credentials.ts';

/** AwsLookups over the AWS SDK, in the given default region. */
export function awsLookups(region: string): AwsLookups {
  const credentials = defaultProvider();
  const eks = perRegion((r) => new EKSClient({ region: r, credentials }));
  const secrets = perRegion((r) => new SecretsManagerClient({ region: r, credentials }));
  return {
    region,
    credentials,
    async describeCluster(name, r) {
      const out = await eks(r).send(new DescribeClusterCommand({ name }));
      const endpoint = out.cluster?.endpoint;
      const ca = out.cluster?.certificateAuthority?.data;
      if (!endpoint || !ca) throw new Error(`cluster ${name} has no endpoint or CA yet (status ${out.cluster?.status ?? 'unknown'})`);
      return { endpoint, certificateAuthorityData: ca };
    },
    async getSecret(secretId, r) {
      const out = await secrets(r).send(new GetSecretValueCommand({ SecretId: secretId }));
      if (out.SecretString === undefined) throw new Error('the secret has no SecretString (binary secrets are not supported)');
      return out.SecretString;
    },
  };
}

function perRegion<C>(make: (region: string) => C): (region: string) => C {
  const clients = new Map<string, C>();
  return (region) => {
    let c = clients.get(region);
    if (!c) {
      c = make(region);
      clients.set(region, c);
    }
    return c;
  };
}
