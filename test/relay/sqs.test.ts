import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BatchRequestTooLong, DeleteMessageCommand, ReceiveMessageCommand, SQSClient, type SendMessageBatchCommandInput, type SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { startFauxqs, type FauxqsServer } from 'fauxqs';
import { Envelope } from '../../functions/api/envelope.ts';
import { silentLogger } from '../../functions/engine/logger.ts';
import { startApiServer } from '../../functions/cluster/index.ts';
import { messageFor, type Message } from '../../relay/envelope.ts';
import { startRelay } from '../../relay/relay.ts';
import { entryBytes, fitBody, packBatches, signingRegion, SQS_MAX_BYTES, sqsSink } from '../../relay/sinks/sqs.ts';
import { eventually, job, pod } from '../support/relay-world.ts';

function client(port: number): SQSClient {
  return new SQSClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 });
}

/**
 * A client that records the entry count of each SendMessageBatch it sends, and refuses those
 * of more than `refuseOver` entries with BatchRequestTooLong (as a queue with a smaller
 * limit would), recording those too.
 */
function recording(port: number, refuseOver = Infinity): { sqs: SQSClient; sent: number[]; refused: number[] } {
  const sqs = client(port);
  const sent: number[] = [];
  const refused: number[] = [];
  sqs.middlewareStack.add(
    (next) => async (args) => {
      const n = (args.input as SendMessageBatchCommandInput).Entries?.length ?? 0;
      if (n > refuseOver) {
        refused.push(n);
        throw new BatchRequestTooLong({ message: `Batch requests cannot be longer than ${SQS_MAX_BYTES} bytes.`, $metadata: {} });
      }
      sent.push(n);
      return next(args);
    },
    { step: 'initialize', name: 'recordBatches' },
  );
  return { sqs, sent, refused };
}

/** Pod `p-<i>`'s message, its snapshot padded with `pad` bytes. */
function padded(i: number, pad: number): Message {
  return messageFor({ kind: 'Pod', event: 'MODIFIED', namespace: 'ns', name: `p-${i}`, at: Date.now() }, { relayId: 't' }, JSON.stringify({ metadata: { name: `p-${i}`, namespace: 'ns', labels: { pad: 'x'.repeat(pad) } } }));
}

async function drain(sqs: SQSClient, url: string): Promise<Envelope[]> {
  const out: Envelope[] = [];
  for (;;) {
    const r = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    if (!r.Messages?.length) return out;
    for (const m of r.Messages) {
      out.push(Envelope.parse(JSON.parse(m.Body ?? '')));
      await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle }));
    }
  }
}

describe('relay → SQS (fauxqs)', () => {
  let q: FauxqsServer;
  before(async () => {
    q = await startFauxqs({ port: 0, logger: false });
  });
  after(async () => q.stop());

  for (const fifo of [false, true]) {
    test(`${fifo ? 'FIFO' : 'standard'} queue: every envelope arrives, valid against the schema`, async () => {
      const name = `events-${fifo ? 'fifo' : 'std'}${fifo ? '.fifo' : ''}`;
      const { queueUrl } = q.createQueue(name, fifo ? { attributes: { FifoQueue: 'true' } } : {});
      const sqs = client(q.port);
      const server = await startApiServer({ objects: [job('j', { app: 'web' })] });
      const relay = await startRelay({ kubeConfig: server.kubeConfig(), sink: sqsSink(sqs, queueUrl), namespaces: [], relayId: 't', coalesceMs: 10, resyncSeconds: 3600, bufferMax: 1000, logger: silentLogger });
      try {
        // Pods created once it runs: each a live event (the first list sends the job, not its pods).
        for (let i = 0; i < 25; i++) server.store.put(pod(`web-${i}`, { app: 'web' }));
        const got: Envelope[] = [];
        await eventually(async () => {
          await relay.flush();
          got.push(...(await drain(sqs, queueUrl)));
          assert.equal(got.length, 26, 'one job + 25 pods, in batches of 10');
        }, 10_000);
        assert.deepEqual(new Set(got.map((e) => e.data.name)).size, 26);
      } finally {
        await relay.stop();
        await server.close();
      }
    });
  }

  test('a pod whose annotation holds U+FFFE or U+FFFF (kube-apiserver takes them, SQS does not) is delivered, meaning the same', async () => {
    const { queueUrl } = q.createQueue('odd-text');
    const sqs = client(q.port);
    const odd = pod('web-odd', { app: 'web' }) as { metadata: Record<string, unknown> };
    const server = await startApiServer({ objects: [job('j', { app: 'web' })] });
    const relay = await startRelay({ kubeConfig: server.kubeConfig(), sink: sqsSink(sqs, queueUrl), namespaces: [], relayId: 't', coalesceMs: 10, resyncSeconds: 3600, bufferMax: 1000, logger: silentLogger });
    try {
      server.store.put({ ...odd, metadata: { ...odd.metadata, annotations: { 'ephemera.io/sidecar-termination': 'crr\uFFFE\uFFFF' } } } as never);
      const got: Envelope[] = [];
      await eventually(async () => {
        await relay.flush();
        got.push(...(await drain(sqs, queueUrl)));
        assert.ok(got.some((e) => e.data.name === 'web-odd'));
      }, 10_000);
      const sent = got.find((e) => e.data.name === 'web-odd');
      assert.ok(sent, `delivered (was refused for good, InvalidMessageContents): ${got.map((e) => e.data.name).join(', ')}`);
      assert.equal((sent.data.snapshot as { metadata: { annotations: Record<string, string> } }).metadata.annotations['ephemera.io/sidecar-termination'], 'crr\uFFFE\uFFFF');
    } finally {
      await relay.stop();
      await server.close();
    }
  });

  test('an outage loses nothing: buffered while SQS is down, sent after it is back', async () => {
    const down = await startFauxqs({ port: 0, logger: false });
    const port = down.port;
    const url = down.createQueue('outage').queueUrl;
    const server = await startApiServer({ objects: [job('j', { app: 'web' })] });
    const relay = await startRelay({ kubeConfig: server.kubeConfig(), sink: sqsSink(client(port), url), namespaces: [], relayId: 't', coalesceMs: 10, resyncSeconds: 3600, bufferMax: 1000, logger: silentLogger });
    let back: FauxqsServer | undefined;
    try {
      server.store.put(pod('web-1', { app: 'web' }));
      const before: Envelope[] = [];
      await eventually(async () => {
        await relay.flush();
        before.push(...(await drain(client(port), url)));
        assert.equal(before.length, 2, 'delivered before the outage');
      }, 10_000);
      await down.stop();
      for (let i = 2; i <= 4; i++) server.store.put(pod(`web-${i}`, { app: 'web' }));
      await eventually(async () => {
        await relay.flush();
        assert.equal((await relay.metrics.bufferDepth.get()).values[0]?.value, 3);
      }, 15_000);
      back = await startFauxqs({ port, logger: false });
      back.createQueue('outage');
      await eventually(async () => {
        await relay.flush();
        assert.equal((await relay.metrics.bufferDepth.get()).values[0]?.value, 0);
      }, 20_000);
      const got = await drain(client(port), url);
      assert.deepEqual(got.map((e) => e.data.name).sort(), ['web-2', 'web-3', 'web-4']);
    } finally {
      await relay.stop();
      await server.close();
      await back?.stop();
    }
  });

  for (const fifo of [false, true]) {
    test(`${fifo ? 'FIFO' : 'standard'} queue: ten envelopes of ~150 KB (1.5 MB in all) all arrive, in batches under 1 MiB`, async () => {
      const { queueUrl } = q.createQueue(`large-${fifo ? 'fifo.fifo' : 'std'}`, fifo ? { attributes: { FifoQueue: 'true' } } : {});
      const { sqs, sent, refused } = recording(q.port);
      const messages = Array.from({ length: 10 }, (_, i) => padded(i, 150_000));
      assert.ok(messages.reduce((n, m) => n + Buffer.byteLength(m.body), 0) > SQS_MAX_BYTES, 'more than one batch can carry');
      const outcomes = await sqsSink(sqs, queueUrl).send(messages);
      assert.deepEqual(outcomes, messages.map(() => ({ ok: true })));
      assert.deepEqual(sent, [6, 4], 'as many as fit in 1 MiB, then the rest');
      assert.deepEqual(refused, []);
      const got = await drain(client(q.port), queueUrl);
      assert.deepEqual(got.map((e) => e.data.name).sort(), messages.map((_, i) => `p-${i}`).sort());
      assert.ok(got.every((e) => e.data.snapshot !== undefined), 'each with its snapshot');
      sent.length = 0;
      assert.deepEqual(await sqsSink(sqs, queueUrl).send(Array.from({ length: 10 }, (_, i) => padded(10 + i, 100))), Array.from({ length: 10 }, () => ({ ok: true })));
      assert.deepEqual(sent, [10], 'ten that fit go in one SendMessageBatch');
      assert.equal((await drain(client(q.port), queueUrl)).length, 10);
    });
  }

  test('packBatches: at most 10 entries and 1 MiB (bodies and attributes) per batch, in order', () => {
    const e = (id: number, bytes: number, attrs?: SendMessageBatchRequestEntry['MessageAttributes']): SendMessageBatchRequestEntry => ({ Id: String(id), MessageBody: 'x'.repeat(bytes), ...(attrs ? { MessageAttributes: attrs } : {}) });
    const shape = (bs: SendMessageBatchRequestEntry[][]) => bs.map((b) => b.map((x) => Number(x.Id)));
    assert.deepEqual(shape(packBatches(Array.from({ length: 25 }, (_, i) => e(i, 10)))), [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [10, 11, 12, 13, 14, 15, 16, 17, 18, 19], [20, 21, 22, 23, 24]]);
    assert.deepEqual(shape(packBatches(Array.from({ length: 10 }, (_, i) => e(i, 150_000)))), [[0, 1, 2, 3, 4, 5], [6, 7, 8, 9]]);
    assert.deepEqual(shape(packBatches([e(0, SQS_MAX_BYTES / 2), e(1, SQS_MAX_BYTES / 2)])), [[0, 1]], 'exactly 1 MiB fits');
    assert.deepEqual(shape(packBatches([e(0, SQS_MAX_BYTES / 2), e(1, SQS_MAX_BYTES / 2 + 1)])), [[0], [1]]);
    assert.deepEqual(shape(packBatches([e(0, 10), e(1, SQS_MAX_BYTES + 1), e(2, 10)])), [[0], [1], [2]], 'one over the limit goes alone');
    const attrs = { ab: { DataType: 'String', StringValue: 'xy' }, bin: { DataType: 'Binary', BinaryValue: new Uint8Array(4) } };
    assert.equal(entryBytes(e(0, 0, attrs)), 2 + 6 + 2 + (3 + 6 + 4), 'attribute name, type and value');
    assert.equal(entryBytes({ Id: '0', MessageBody: 'é' }), 2, 'UTF-8 bytes');
    assert.deepEqual(shape(packBatches([e(0, SQS_MAX_BYTES - 30, attrs), e(1, 10)])), [[0], [1]], 'attributes count toward the limit');
  });

  test('a batch SQS refuses as too long is split in two, down to single entries; a single one stays failed (retried)', async () => {
    const { queueUrl } = q.createQueue('split');
    const { sqs, sent, refused } = recording(q.port, 2);
    const messages = Array.from({ length: 5 }, (_, i) => padded(i, 10));
    assert.deepEqual(await sqsSink(sqs, queueUrl).send(messages), messages.map(() => ({ ok: true })));
    assert.deepEqual(refused, [5, 3], '5 → 3 + 2, 3 → 2 + 1');
    assert.deepEqual(sent, [2, 1, 2]);
    assert.deepEqual((await drain(client(q.port), queueUrl)).map((e) => e.data.name).sort(), ['p-0', 'p-1', 'p-2', 'p-3', 'p-4']);
    const none = recording(q.port, 0);
    const outcomes = await sqsSink(none.sqs, queueUrl).send(messages.slice(0, 2));
    assert.deepEqual(none.refused, [2, 1, 1]);
    assert.ok(outcomes.length === 2 && outcomes.every((o) => !o.ok && !o.permanent && /cannot be longer/.test(o.error)), JSON.stringify(outcomes));
  });

  test('an envelope over the size limit is sent without its snapshot', () => {
    const pod = (labels: Record<string, string>) => messageFor({ kind: 'Pod', event: 'MODIFIED', namespace: 'ns', name: 'p', at: Date.now() }, { relayId: 't' }, JSON.stringify({ metadata: { name: 'p', namespace: 'ns', labels } }));
    const body = JSON.parse(fitBody(pod({ x: 'y'.repeat(SQS_MAX_BYTES) }))) as Envelope;
    assert.equal(body.data.snapshot, undefined);
    assert.equal(body.data.name, 'p');
    assert.ok((JSON.parse(fitBody(pod({ x: 'y' }))) as Envelope).data.snapshot);
    const stamped = (jobs: string[]) => messageFor({ kind: 'Pod', event: 'MODIFIED', namespace: 'ns', name: 'p', at: Date.now(), jobs }, { relayId: 't' }, JSON.stringify({ metadata: { name: 'p', labels: { x: 'y'.repeat(SQS_MAX_BYTES) } } }));
    assert.deepEqual((JSON.parse(fitBody(stamped(['j']))) as Envelope).data.jobs, ['j'], 'the job names stay when the snapshot goes');
    const huge = (JSON.parse(fitBody(stamped(Array.from({ length: 5000 }, (_, i) => `j-${i}-${'x'.repeat(250)}`)))) as Envelope).data;
    assert.equal(huge.jobs, undefined, 'unless even they do not fit: the router lists the jobs');
    assert.equal(huge.name, 'p');
  });
});

describe('the region the relay signs for', () => {
  test('is the queue URL\'s, whatever AWS_REGION says (EKS credential webhooks set the cluster\'s); AWS_REGION for an endpoint or URL that names none (review)', () => {
    assert.equal(signingRegion('https://sqs.us-east-1.amazonaws.com/123456789012/q', 'eu-west-1'), 'us-east-1');
    assert.equal(signingRegion('https://sqs.cn-north-1.amazonaws.com.cn/123456789012/q', 'eu-west-1'), 'cn-north-1');
    assert.equal(signingRegion('https://ap-south-1.queue.amazonaws.com/123456789012/q', 'eu-west-1'), 'ap-south-1');
    assert.equal(signingRegion('http://127.0.0.1:9324/000000000000/q', 'eu-west-1'), 'eu-west-1');
    assert.equal(signingRegion('https://sqs.us-east-1.amazonaws.com/123456789012/q', 'eu-west-1', 'http://127.0.0.1:9324'), 'eu-west-1', 'a custom endpoint: the region configured');
    assert.equal(signingRegion('not a url', 'eu-west-1'), 'eu-west-1');
    assert.equal(signingRegion('https://queue.amazonaws.com/123456789012/q', 'eu-west-1'), 'us-east-1', 'the legacy global host');
    assert.equal(signingRegion('https://sqs-fips.us-gov-west-1.amazonaws.com/123456789012/q', 'eu-west-1'), 'us-gov-west-1');
    assert.equal(signingRegion('https://sqs.ap-northeast-1.api.aws/123456789012/q', 'eu-west-1'), 'ap-northeast-1', 'dual-stack');
  });

  test('a request to a queue in another region than AWS_REGION is signed for the queue\'s', async () => {
    const url = 'https://sqs.us-east-1.amazonaws.com/123456789012/q';
    let scope = '';
    const requestHandler = {
      handle: async (req: { headers: Record<string, string> }) => {
        scope = /Credential=[^/]+\/\d+\/([^/]+)\/sqs\//.exec(req.headers.authorization ?? '')?.[1] ?? '(none)';
        throw new Error('captured');
      },
    };
    const client = new SQSClient({ region: signingRegion(url, 'eu-west-1'), requestHandler, credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }, maxAttempts: 1 });
    await sqsSink(client, url, { timeoutMs: 2000 }).send([messageFor({ kind: 'Pod', event: 'MODIFIED', namespace: 'ns', name: 'p', at: Date.now() }, { relayId: 't' }, JSON.stringify({ metadata: { name: 'p', namespace: 'ns' } }))]).catch(() => undefined);
    assert.equal(scope, 'us-east-1');
  });
});
