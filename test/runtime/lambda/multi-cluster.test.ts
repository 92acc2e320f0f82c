// One function deployment, two clusters: two embedded API servers behind one SQS queue
// (fauxqs), envelopes stamped with their cluster, credentials from a scripted Secrets
// Manager (no module mocks), the Lambda consumer built from its environment as in production.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DeleteMessageCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { startFauxqs } from 'fauxqs';
import { startApiServer, type ApiServer } from '../../../functions/cluster/index.ts';
import type { AwsLookups } from '../../../functions/kube/credentials.ts';
import { buildConsumer } from '../../../functions/runtime/lambda/lambda.ts';
import { envelopeFor, injected } from '../../support/ejob-world.ts';
import { pod } from '../../support/relay-world.ts';

const job = {
  apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob',
  metadata: { name: 'check', namespace: 'default', uid: 'job-uid-1' },
  spec: { selector: { matchLabels: { app: 'web' } }, parallelism: 1, template: { ephemeralContainers: [{ name: 'probe', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'main' }] } },
};

describe('one deployment, two clusters behind one queue', () => {
  let q: Awaited<ReturnType<typeof startFauxqs>>;
  let sqs: SQSClient;
  let queueUrl: string;
  let dlqUrl: string;
  const servers: Record<string, ApiServer> = {};
  const secretReads: string[] = [];
  let rotatedTokenA = 'token-for-cluster-a-0001';

  const aws = (): AwsLookups => ({
    region: 'us-east-1',
    credentials: async () => ({ accessKeyId: 'unused', secretAccessKey: 'unused' }),
    describeCluster: async () => {
      throw new Error('no EKS here');
    },
    getSecret: async (id) => {
      secretReads.push(id);
      if (id === 'ephemera/a') return JSON.stringify({ server: servers.a!.url, token: rotatedTokenA });
      if (id === 'ephemera/b') return JSON.stringify({ server: servers.b!.url, token: 'token-for-cluster-b-0001' });
      if (id === 'ephemera/broken') return JSON.stringify({ server: 'ftp://x', token: 'short' });
      throw new Error(`ResourceNotFoundException: ${id}`);
    },
  });

  before(async () => {
    q = await startFauxqs({ port: 0, logger: false });
    queueUrl = q.createQueue('ephemera-events').queueUrl;
    dlqUrl = q.createQueue('ephemera-dead-letters').queueUrl;
    sqs = new SQSClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${q.port}`, credentials: { accessKeyId: 't', secretAccessKey: 't' } });
    servers.a = await startApiServer({ objects: [pod('web-a', { app: 'web' }), job] });
    servers.b = await startApiServer({ objects: [pod('web-b', { app: 'web' }), job] });
  });
  after(async () => {
    await servers.a?.close();
    await servers.b?.close();
    await q.stop();
  });

  const env = (): Record<string, string> => ({
    EPHEMERA_QUEUE_URL: queueUrl,
    EPHEMERA_DLQ_URL: dlqUrl,
    EPHEMERA_CLUSTERS: JSON.stringify({ a: { secret: { secretId: 'ephemera/a' } }, b: { secret: { secretId: 'ephemera/b' } }, broken: { secret: { secretId: 'ephemera/broken' } } }),
    EPHEMERA_LOCK_NAMESPACE: 'ephemera-locks',
    LOG_LEVEL: 'silent',
  });

  async function drain(consume: ReturnType<typeof buildConsumer>): Promise<{ failed: number; handled: number }> {
    const r = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, MessageAttributeNames: ['All'] }));
    const messages = r.Messages ?? [];
    const event = { Records: messages.map((m) => ({ messageId: m.MessageId, body: m.Body, attributes: {}, messageAttributes: {} })) } as unknown as SQSEvent;
    const end = Date.now() + 30_000;
    const { batchItemFailures } = await consume(event, { getRemainingTimeInMillis: () => end - Date.now() } as never);
    const failed = new Set(batchItemFailures.map((f) => f.itemIdentifier));
    for (const m of messages) if (!failed.has(m.MessageId ?? '')) await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }));
    return { failed: failed.size, handled: messages.length - failed.size };
  }

  const send = (cluster: string | undefined, name = 'check') => sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify({ ...envelopeFor('EphemeralJob', 'default', name), ...(cluster ? { cluster } : {}) }) }));

  test('each envelope reaches its own cluster: endpoint and credentials picked per cluster', async () => {
    servers.a!.faults.add({ status: 401, times: 1, reason: 'Unauthorized', message: 'token expired' });
    rotatedTokenA = 'token-for-cluster-a-0002';
    const consume = buildConsumer(env(), { sqs, aws });
    await send('a');
    await send('b');
    const r = await drain(consume);
    assert.deepEqual(r, { failed: 0, handled: 2 });
    assert.deepEqual(injected(servers.a!), { 'web-a': ['probe'] });
    assert.deepEqual(injected(servers.b!), { 'web-b': ['probe'] });
    // Each server saw only its own job's work and its own Leases.
    for (const name of ['a', 'b']) {
      const paths = servers[name]!.requests.entries.map((e) => e.path);
      assert.ok(paths.some((p) => p.includes('/namespaces/ephemera-locks/leases')), `cluster ${name} got the Lease`);
      assert.ok(paths.some((p) => p.endsWith(`/pods/web-${name}/ephemeralcontainers`)));
    }
    // The 401 on cluster a made the functions read its secret again (a rotated token), once.
    assert.deepEqual(secretReads.filter((s) => s === 'ephemera/a').length, 2);
    assert.deepEqual(secretReads.filter((s) => s === 'ephemera/b').length, 1);
  });

  test('an unknown cluster is dead-lettered with its reason; a malformed secret names the secret and is not retried', async () => {
    const consume = buildConsumer(env(), { sqs, aws });
    await send('elsewhere');
    await send('broken');
    const r = await drain(consume);
    assert.deepEqual(r, { failed: 1, handled: 1 });
    const dead = await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 10, MessageAttributeNames: ['All'] }));
    assert.equal(dead.Messages?.length, 1);
    assert.match(dead.Messages?.[0]?.MessageAttributes?.reason?.StringValue ?? '', /cluster "elsewhere" is not served by this deployment \(EPHEMERA_CLUSTERS has: a, b, broken\)/);
  });

  test('an envelope without a cluster is refused when several are served and no default is set', async () => {
    const consume = buildConsumer({ ...env(), EPHEMERA_DLQ_URL: undefined }, { sqs, aws });
    await send(undefined);
    const r = await drain(consume);
    assert.equal(r.failed, 1, 'left to the redrive policy (no DLQ URL configured)');
  });

  test('bad configuration stops the function, naming the variable', () => {
    assert.throws(() => buildConsumer({ ...env(), EPHEMERA_CLUSTERS: '{"a": {"token": "abc"}}' }), /EPHEMERA_CLUSTERS/);
    assert.throws(() => buildConsumer({ ...env(), EPHEMERA_CLUSTERS: 'prod' }), /EPHEMERA_CLUSTERS: JSON/);
    assert.throws(() => buildConsumer({ ...env(), EPHEMERA_DEFAULT_CLUSTER: 'c' }), /EPHEMERA_DEFAULT_CLUSTER: "c" is not one of EPHEMERA_CLUSTERS/);
    assert.throws(() => buildConsumer({ ...env(), EPHEMERA_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/1/q.fifo' }), /EPHEMERA_QUEUE_URL: FIFO queues are not supported/);
  });
});
