// Requeue through SQS with a scripted client (the SDK client is a constructor option:
// commands are recorded by class, nothing is mocked at module level), and against fauxqs
// for what SQS refuses in a body.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DeleteMessageCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { startFauxqs } from 'fauxqs';
import type { Envelope } from '../../../functions/api/envelope.ts';
import { SQS_MAX_BYTES } from '../../../functions/api/sqs-text.ts';
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

test('the consumer\'s deadline reaches the SDK: a requeue and a dead letter pass their signal as the call\'s abortSignal (review80 L2)', async () => {
  const options: unknown[] = [];
  const client = { send: async (_cmd: unknown, o?: unknown) => void options.push(o) } as unknown as SQSClient;
  const signal = AbortSignal.timeout(60_000);
  await sqsRequeue(client, 'https://q')(envelopeFor('Pod', 'ns', 'p'), 0, signal);
  await sqsDeadLetter(client, 'https://dlq')('{}', 'bad', signal);
  await sqsRequeue(client, 'https://q')(envelopeFor('Pod', 'ns', 'p'), 0);
  assert.deepEqual(options, [{ abortSignal: signal }, { abortSignal: signal }, {}]);
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

/** An envelope naming job j whose JSON text is `slack` bytes under SQS's limit (the relay's fitBody kept its snapshot). */
function nearLimit(slack: number): Envelope {
  const env = envelopeFor('Pod', 'ns', 'p');
  const base = { ...env, data: { ...env.data, jobs: ['j'], snapshot: { metadata: { labels: { big: '' } } } } };
  const pad = SQS_MAX_BYTES - slack - Buffer.byteLength(JSON.stringify(base));
  return { ...base, data: { ...base.data, snapshot: { metadata: { labels: { big: 'x'.repeat(pad) } } } } };
}

test('a look-again copy of an envelope that just fitted fits too: without its snapshot, keeping its job names; a dead letter\'s reason is cut to what fits beside its body (review80 L1)', async () => {
  const q = await startFauxqs({ port: 0, logger: false });
  const client = new SQSClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${q.port}`, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
  try {
    const { queueUrl } = q.createQueue('near-limit');
    const { queueUrl: dlqUrl } = q.createQueue('near-limit-dead');
    const env = nearLimit(10);
    assert.equal(Buffer.byteLength(JSON.stringify(env)), SQS_MAX_BYTES - 10);
    const receive = async (): Promise<Envelope | undefined> => {
      const got = await client.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 1 }));
      for (const m of got.Messages ?? []) await client.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }));
      return got.Messages?.[0]?.Body === undefined ? undefined : (JSON.parse(got.Messages[0].Body) as Envelope);
    };
    await sqsRequeue(client, queueUrl)({ ...env, data: { ...env.data, looksSince: new Date().toISOString() } }, 0);
    const sent = await receive();
    assert.equal(sent?.data.snapshot, undefined, 'SQS took it, without the snapshot (the handlers read the object)');
    assert.deepEqual(sent?.data.jobs, ['j'], 'the job names stay');
    const small = envelopeFor('Pod', 'ns', 'small');
    await sqsRequeue(client, queueUrl)(small, 0);
    assert.deepEqual((await receive())?.data, small.data, 'an envelope that fits goes whole');

    const body = JSON.stringify(nearLimit(100));
    const reason = `ejob: the API server refused it for good (HTTP 403 Forbidden): ${'x'.repeat(500)}`;
    await sqsDeadLetter(client, dlqUrl)(body, reason);
    const dead = await client.send(new ReceiveMessageCommand({ QueueUrl: dlqUrl, WaitTimeSeconds: 1, MessageAttributeNames: ['All'] }));
    const m = dead.Messages?.[0];
    assert.equal(m?.Body, body, 'the body as it came');
    const kept = m?.MessageAttributes?.reason?.StringValue ?? '';
    assert.ok(kept.length > 0 && reason.startsWith(kept), 'the reason, cut');
    assert.equal(Buffer.byteLength(body) + Buffer.byteLength('reason') + Buffer.byteLength('String') + Buffer.byteLength(kept), SQS_MAX_BYTES, 'to exactly what fits');
    await sqsDeadLetter(client, dlqUrl)(JSON.stringify(nearLimit(0)), reason);
    const bare = await client.send(new ReceiveMessageCommand({ QueueUrl: dlqUrl, WaitTimeSeconds: 1, MessageAttributeNames: ['All'] }));
    assert.equal(bare.Messages?.[0]?.MessageAttributes?.reason, undefined, 'no room at all: sent without it (the log line has it)');
  } finally {
    client.destroy();
    await q.stop();
  }
});
