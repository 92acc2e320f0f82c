// Requeue through SQS with a scripted client (the SDK client is a constructor option:
// commands are recorded by class, nothing is mocked at module level), and against fauxqs
// for what SQS refuses in a body.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DeleteMessageCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { startFauxqs } from 'fauxqs';
import { sqsDeadLetter, sqsRequeue } from '../../../functions/runtime/lambda/sqs-queue.ts';
import { envelopeFor } from '../../support/ejob-world.ts';

function scripted(): { client: SQSClient; sent: SendMessageCommand['input'][] } {
  const sent: SendMessageCommand['input'][] = [];
  const client = { send: async (cmd: unknown) => (assert.ok(cmd instanceof SendMessageCommand), sent.push(cmd.input), {}) } as unknown as SQSClient;
  return { client, sent };
}

test('a delay within SQS\'s limit is a plain DelaySeconds', async () => {
  const { client, sent } = scripted();
  await sqsRequeue(client, 'https://q', () => 1_000_000)(envelopeFor('Pod', 'ns', 'p'), 29.2);
  assert.equal(sent[0]?.DelaySeconds, 30);
  assert.equal(sent[0]?.MessageAttributes, undefined);
});

test('a requeued envelope and a dead letter whose text holds what SQS refuses (U+FFFE, U+FFFF from a pod annotation; an emoji cut in two) are sent, meaning the same', async () => {
  const q = await startFauxqs({ port: 0, logger: false });
  const client = new SQSClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${q.port}`, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
  try {
    const { queueUrl } = q.createQueue('requeue-text');
    const { queueUrl: dlqUrl } = q.createQueue('dead-text');
    const env = envelopeFor('Pod', 'ns', 'p');
    const odd = { ...env, data: { ...env.data, snapshot: { metadata: { annotations: { 'ephemera.io/sidecar-termination': 'x\uFFFEy\uFFFF' } } } } };
    await sqsRequeue(client, queueUrl)(odd as typeof env, 0);
    const got = await client.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 1 }));
    const back = JSON.parse(got.Messages?.[0]?.Body ?? '{}') as typeof odd;
    assert.deepEqual(back.data.snapshot, odd.data.snapshot, 'the same text once parsed');
    const reasons: string[] = [];
    for (const reason of [`${'r'.repeat(999)}\u{1F600} and more`, 'refused: x\uFFFEy']) {
      await sqsDeadLetter(client, dlqUrl)('{}', reason);
      const dead = await client.send(new ReceiveMessageCommand({ QueueUrl: dlqUrl, WaitTimeSeconds: 1, MessageAttributeNames: ['All'] }));
      reasons.push(dead.Messages?.[0]?.MessageAttributes?.reason?.StringValue ?? '(none)');
      for (const m of dead.Messages ?? []) await client.send(new DeleteMessageCommand({ QueueUrl: dlqUrl, ReceiptHandle: m.ReceiptHandle }));
    }
    // Cut at 1,000 code points, never inside a pair (slice(0, 1000) left half the emoji: a lone surrogate); what SQS refuses replaced.
    assert.deepEqual(reasons, [`${'r'.repeat(999)}\u{1F600}`, 'refused: x\uFFFDy']);
  } finally {
    client.destroy();
    await q.stop();
  }
});
