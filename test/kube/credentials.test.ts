// Cluster credentials over real HTTP: the bearer token each request carries, where it comes
// from (EKS IAM token, Secrets Manager), and what a bad source says. AWS calls are scripted.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { awsLookups } from '../../functions/kube/aws-lookups.ts';
import { clusterConnections, CredentialError, readClusterSecret, type AwsLookups } from '../../functions/kube/credentials.ts';
import { EKS_TOKEN_PREFIX } from '../../functions/kube/eks-token.ts';
import { KubeError } from '../../functions/kube/errors.ts';
import { createHttpsKube } from '../../functions/kube/https-kube.ts';

/** A tiny API server that records Authorization headers and answers 401 to tokens in `refuse`. */
let server: Server;
let url = '';
const seen: string[] = [];
const refuse = new Set<string>();
before(async () => {
  server = createServer((req, res) => {
    const auth = req.headers.authorization ?? '';
    seen.push(auth);
    res.setHeader('content-type', 'application/json');
    if (refuse.has(auth)) {
      res.statusCode = 401;
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Unauthorized', message: 'Unauthorized', code: 401 }));
      return;
    }
    res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

function lookups(over: Partial<AwsLookups> = {}): AwsLookups & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    region: 'us-east-1',
    credentials: async () => ({ accessKeyId: 'AKID', secretAccessKey: 'secret' }),
    describeCluster: async (name, region) => {
      calls.push(`describe ${name} ${region}`);
      return { endpoint: url, certificateAuthorityData: '' };
    },
    getSecret: async (id) => {
      calls.push(`secret ${id}`);
      return JSON.stringify({ server: url, token: `token-of-${id}-${calls.length}` });
    },
    ...over,
  };
}

const getNode = async (conn: Awaited<ReturnType<ReturnType<typeof clusterConnections>['connect']>>) => createHttpsKube(conn.endpoint, { timeoutMs: 2000, ...(conn.auth ? { auth: conn.auth } : {}) }).get({ apiVersion: 'v1', kind: 'Node', name: 'n1' });

describe('cluster credentials', () => {
  test('EKS: endpoint from DescribeCluster (once), every request carries a k8s-aws-v1 token for that cluster', async () => {
    const aws = lookups();
    const conns = clusterConnections({ prod: { eks: { name: 'prod-eks', region: 'eu-west-1', accessEntry: true } } }, () => aws);
    seen.length = 0;
    const conn = await conns.connect('prod');
    await getNode(conn);
    await getNode(await conns.connect('prod'));
    assert.deepEqual(aws.calls, ['describe prod-eks eu-west-1']);
    assert.equal(seen.length, 2);
    const token = seen[0]!.replace(/^Bearer /, '');
    assert.ok(token.startsWith(EKS_TOKEN_PREFIX));
    const presigned = new URL(Buffer.from(token.slice(EKS_TOKEN_PREFIX.length), 'base64url').toString());
    assert.equal(presigned.hostname, 'sts.eu-west-1.amazonaws.com');
    assert.equal(seen[1], seen[0], 'the token is reused while fresh');
  });

  test('Secrets Manager: a 401 re-reads the secret once (rotation without a redeploy); a second 401 is a terminal error', async () => {
    const aws = lookups();
    const conn = await clusterConnections({ edge: { secret: { secretId: 'ephemera/edge' } } }, () => aws).connect('edge');
    seen.length = 0;
    refuse.add('Bearer token-of-ephemera/edge-1');
    await getNode(conn);
    assert.deepEqual(seen, ['Bearer token-of-ephemera/edge-1', 'Bearer token-of-ephemera/edge-2']);
    refuse.add('Bearer token-of-ephemera/edge-2');
    refuse.add('Bearer token-of-ephemera/edge-3');
    const err = await getNode(conn).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof KubeError);
    assert.equal(err.status, 401);
    assert.equal(err.errorClass, 'terminal');
    assert.match(err.message, /refused a freshly read credential \(cluster "edge": the token in secret ephemera\/edge \(us-east-1\); refused, it has expired or was revoked: put a valid one in the secret\)/);
    assert.deepEqual(aws.calls, ['secret ephemera/edge', 'secret ephemera/edge', 'secret ephemera/edge']);
  });

  test('a missing or malformed secret names the secret and what was expected', async () => {
    const read = (text: string) => readClusterSecret('edge', 'ephemera/edge', async () => text);
    await assert.rejects(read('not json'), /cluster "edge": secret ephemera\/edge is not JSON; expected \{"server"/);
    await assert.rejects(read('{"server":"ftp://x","token":"t"}'), /secret ephemera\/edge is malformed: server: an https:\/\/ API server URL; token: a bearer token/);
    await assert.rejects(readClusterSecret('edge', 'ephemera/edge', async () => {
      throw new Error('ResourceNotFoundException');
    }), (e: unknown) => e instanceof CredentialError && /cannot read secret ephemera\/edge .*secretsmanager:GetSecretValue.*ResourceNotFoundException/.test(e.message));
  });

  test('a secret its KMS key keeps from the role: the hint names the key and kmsKeyArn, not GetSecretValue (review)', async () => {
    const refusedBy = (name: string, message: string) => readClusterSecret('edge', 'ephemera/edge', async () => {
      throw Object.assign(new Error(message), { name });
    }).then(() => assert.fail('read'), (e: unknown) => (assert.ok(e instanceof CredentialError), e.message));
    for (const [name, message] of [['AccessDeniedException', 'Access to KMS is not allowed'], ['DecryptionFailure', 'Secrets Manager can\'t decrypt the protected secret text using the provided KMS key.'], ['AccessDeniedException', 'User: arn:aws:sts::1:assumed-role/r/f is not authorized to perform: kms:Decrypt on resource: arn:aws:kms:eu-west-1:2:key/k']] as const) {
      const m = await refusedBy(name, message);
      assert.match(m, /^cluster "edge": cannot read secret ephemera\/edge \(the secret's KMS key refused the role: set the cluster's "kmsKeyArn" in the deploy settings/, message);
      assert.doesNotMatch(m, /may the role call secretsmanager:GetSecretValue/);
    }
    assert.match(await refusedBy('AccessDeniedException', 'User: r is not authorized to perform: secretsmanager:GetSecretValue'), /may the role call secretsmanager:GetSecretValue on it\? A secret in another account needs a resource policy allowing the role too\): /);
    assert.match(await refusedBy('ResourceNotFoundException', 'Secrets Manager can\'t find the specified secret ephemera/kms-edge.'), /may the role call secretsmanager:GetSecretValue/, 'a secret\'s name is not a KMS error');
  });

  test('a secret named by its ARN is read in the ARN\'s region, not the function\'s (review)', async () => {
    const regions: string[] = [];
    const aws = lookups({ getSecret: async (_id, region) => (regions.push(region), JSON.stringify({ server: url, token: 'x'.repeat(20) })) });
    const sources = { far: { secret: { secretId: 'arn:aws:secretsmanager:eu-west-1:999999999999:secret:ephemera/far-AbCdEf' } }, here: { secret: { secretId: 'ephemera/here' } }, named: { secret: { secretId: 'ephemera/named', region: 'ap-south-1' } } };
    const conns = clusterConnections(sources, () => aws);
    for (const name of ['far', 'here', 'named']) await conns.connect(name);
    assert.deepEqual(regions, ['eu-west-1', 'us-east-1', 'ap-south-1']);
  });

  test('an AWS endpoint that never answers (a VPC with no route to it) fails within the SDK timeouts, and the error says so rather than blaming IAM', { timeout: 20_000 }, async () => {
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' });
    try {
      const aws = awsLookups('us-east-1', { endpoint: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, timeouts: { connectionTimeout: 500, requestTimeout: 500, throwOnRequestTimeout: true } });
      const conns = clusterConnections({ prod: { eks: { name: 'prod', accessEntry: true } }, edge: { secret: { secretId: 'ephemera/edge' } } }, () => aws);
      await assert.rejects(conns.connect('prod'), /EKS DescribeCluster prod in us-east-1 failed \(no answer from EKS in us-east-1: in a VPC, the function needs a NAT gateway or an interface endpoint for eks\)/);
      await assert.rejects(conns.connect('edge'), /cannot read secret ephemera\/edge \(no answer from Secrets Manager/);
    } finally {
      Object.assign(process.env, { AWS_ACCESS_KEY_ID: saved.id ?? '', AWS_SECRET_ACCESS_KEY: saved.secret ?? '' });
      if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
      if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
      silent.close();
    }
  });

  test('a DescribeCluster failure is a CredentialError naming the cluster and the permission; the next call tries again', async () => {
    let fail = true;
    const aws = lookups({ describeCluster: async () => {
      if (fail) throw new Error('AccessDeniedException');
      return { endpoint: url, certificateAuthorityData: '' };
    } });
    const conns = clusterConnections({ prod: { eks: { name: 'prod', accessEntry: true } } }, () => aws);
    await assert.rejects(conns.connect('prod'), /cluster "prod": EKS DescribeCluster prod in us-east-1 failed \(does the role allow eks:DescribeCluster\?\): AccessDeniedException/);
    fail = false;
    assert.ok(await conns.connect('prod'));
  });
});
