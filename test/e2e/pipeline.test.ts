// The whole production path on one machine: relay (watching the fake API server over
// HTTP) → SQS (fauxqs) → the Lambda SQS consumer → engine → client-node → API server, with
// the simulated kubelet running the injected containers. Proposal Story 1 to the end.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { startFauxqs } from 'fauxqs';
import { createSqsConsumer } from '../../functions/runtime/lambda/sqs-consumer.ts';
import { sqsRequeue } from '../../functions/runtime/lambda/sqs-queue.ts';
import { silentLogger } from '../../functions/engine/logger.ts';
import { ejobController } from '../../functions/ejob/controller.ts';
import { createKube } from '../../functions/kube/client.ts';
import { SimKubelet, startApiServer } from '../../functions/cluster/index.ts';
import { startRelay } from '../../relay/relay.ts';
import { sqsSink } from '../../relay/sinks/sqs.ts';
import { fixture, inFlight, jobStatus, STORY_NOW } from '../support/ejob-world.ts';
import { eventually } from '../support/relay-world.ts';

test('Story 1 through relay → SQS → Lambda consumer → engine: Failed with 2 of 4, never two pods in flight', async () => {
  const q = await startFauxqs({ port: 0, logger: false });
  const { queueUrl } = q.createQueue('ephemera-events');
  const sqs = new SQSClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${q.port}`, credentials: { accessKeyId: 't', secretAccessKey: 't' } });
  const server = await startApiServer({ objects: fixture('test/fixtures/stories/story1-state.yaml') });
  const kubelet = new SimKubelet(server, { ephemeral: (pod) => ({ exitCode: String((pod.metadata as { name: string }).name).includes('no-work') ? 1 : 0 }) });
  const relay = await startRelay({ kubeConfig: server.kubeConfig(), sink: sqsSink(sqs, queueUrl), namespaces: [], relayId: 'e2e', coalesceMs: 10, resyncSeconds: 3600, bufferMax: 1000, logger: silentLogger });
  const consume = createSqsConsumer({
    engine: { kube: createKube(server.kubeConfig()), controllers: [ejobController], lock: { namespace: 'ephemera-system', holder: 'lambda', leaseSeconds: 15, skewSeconds: 5 }, clock: () => STORY_NOW, logger: silentLogger },
    requeue: sqsRequeue(sqs, queueUrl),
  });
  let maxInFlight = 0;
  try {
    await eventually(async () => {
      await relay.flush();
      const r = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
      const messages = r.Messages ?? [];
      const event = { Records: messages.map((m) => ({ messageId: m.MessageId, body: m.Body, attributes: {} })) } as unknown as SQSEvent;
      const { batchItemFailures } = await consume(event);
      const failed = new Set(batchItemFailures.map((f) => f.itemIdentifier));
      for (const m of messages) if (!failed.has(m.MessageId ?? '')) await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }));
      maxInFlight = Math.max(maxInFlight, inFlight(server).length);
      kubelet.tick();
      assert.ok(jobStatus(server, 'hello-world-ephemeral-job').completionTime, 'job not finished yet');
    }, 30_000);
    const s = jobStatus(server, 'hello-world-ephemeral-job');
    assert.deepEqual({ phase: s.phase, match: s.match, succeeded: s.succeeded, failed: s.failed }, { phase: 'Failed', match: 4, succeeded: 2, failed: 2 });
    assert.ok(maxInFlight <= 1, `${maxInFlight} pods in flight at once`);
  } finally {
    await relay.stop();
    await server.close();
    await q.stop();
  }
});
