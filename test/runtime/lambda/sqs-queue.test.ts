// Requeue through SQS with a scripted client (the SDK client is a constructor option:
// commands are recorded by class, nothing is mocked at module level).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { MAX_SQS_DELAY_SECONDS, NOT_BEFORE_ATTRIBUTE, sqsRequeue } from '../../../functions/runtime/lambda/sqs-queue.ts';
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

test('a day-long wait is chained: 900 s hops carrying when it is due (96 messages, not a hot loop)', async () => {
  const { client, sent } = scripted();
  let now = 1_000_000;
  const requeue = sqsRequeue(client, 'https://q', () => now);
  const env = envelopeFor('EphemeralJob', 'ns', 'j');
  await requeue(env, 86_400);
  assert.equal(sent[0]?.DelaySeconds, MAX_SQS_DELAY_SECONDS);
  const due = Number(sent[0]?.MessageAttributes?.[NOT_BEFORE_ATTRIBUTE]?.StringValue);
  assert.equal(due, 1_000_000 + 86_400_000);
  // What the consumer does on each early arrival: send it on for the rest.
  let hops = 1;
  while (now + 1000 < due) {
    now += MAX_SQS_DELAY_SECONDS * 1000;
    if (now + 1000 >= due) break;
    await requeue(env, Math.ceil((due - now) / 1000));
    hops++;
  }
  assert.equal(hops, 96);
  assert.equal(Number(sent.at(-1)?.MessageAttributes?.[NOT_BEFORE_ATTRIBUTE]?.StringValue ?? due), due, 'every hop keeps the same due time');
  assert.match(JSON.parse(sent.at(-1)?.MessageBody ?? '{}').id, /^test-\d+\+requeue@\d+$/, 'requeue ids do not grow with each hop');
});
