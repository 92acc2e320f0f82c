import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { startFauxqs, type FauxqsServer } from 'fauxqs';
import { Envelope } from '../../functions/api/envelope.ts';
import { silentLogger } from '../../functions/engine/logger.ts';
import { startApiServer } from '../../functions/cluster/index.ts';
import { messageFor } from '../../relay/envelope.ts';
import { startRelay } from '../../relay/relay.ts';
import { fitBody, SQS_MAX_BYTES, sqsSink } from '../../relay/sinks/sqs.ts';
import { eventually, job, pod } from '../support/relay-world.ts';

function client(port: number): SQSClient {
  return new SQSClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 });
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
      const server = await startApiServer({ objects: [job('j', { app: 'web' }), ...Array.from({ length: 25 }, (_, i) => pod(`web-${i}`, { app: 'web' }))] });
      const relay = await startRelay({ kubeConfig: server.kubeConfig(), sink: sqsSink(sqs, queueUrl), namespaces: [], relayId: 't', coalesceMs: 10, resyncSeconds: 3600, bufferMax: 1000, logger: silentLogger });
      try {
        await relay.flush();
        const got = await drain(sqs, queueUrl);
        assert.equal(got.length, 26, 'one job + 25 pods, in batches of 10');
        assert.deepEqual(new Set(got.map((e) => e.data.name)).size, 26);
      } finally {
        await relay.stop();
        await server.close();
      }
    });
  }

  test('an outage loses nothing: buffered while SQS is down, sent after it is back', async () => {
    const down = await startFauxqs({ port: 0, logger: false });
    const port = down.port;
    const url = down.createQueue('outage').queueUrl;
    const server = await startApiServer({ objects: [job('j', { app: 'web' }), pod('web-1', { app: 'web' })] });
    const relay = await startRelay({ kubeConfig: server.kubeConfig(), sink: sqsSink(client(port), url), namespaces: [], relayId: 't', coalesceMs: 10, resyncSeconds: 3600, bufferMax: 1000, logger: silentLogger });
    let back: FauxqsServer | undefined;
    try {
      await relay.flush();
      assert.equal((await drain(client(port), url)).length, 2, 'delivered before the outage');
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
