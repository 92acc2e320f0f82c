import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { SQSEvent } from 'aws-lambda';
import { createSqsConsumer } from '../../../functions/runtime/lambda/sqs-consumer.ts';
import type { Envelope } from '../../../functions/api/envelope.ts';
import type { Controller } from '../../../functions/engine/controller.ts';
import { silentLogger } from '../../../functions/engine/logger.ts';
import { envelopeFor } from '../../support/ejob-world.ts';
import { ScriptedKube } from '../../support/scripted-kube.ts';

/** A controller that fails for pods named boom-*, and asks to look again in 30 s for later-*. */
const probe: Controller<string> = {
  name: 'probe',
  route: async (e) => {
    if (e.data.name.startsWith('boom')) throw new Error('API unavailable');
    return e.data.name.startsWith('later') ? { keys: [`Pod/ns/${e.data.name}`] } : { keys: [], skipped: 'probe' };
  },
  observe: async (key) => key,
  plan: () => ({ actions: [], requeueAfterSeconds: 30 }),
};

function consumer(extra: { deadLetter?: boolean } = {}) {
  const requeued: [string, number][] = [];
  const dead: [string, string][] = [];
  const engine = { kube: new ScriptedKube(), controllers: [probe], lock: { namespace: 'x', holder: 'h', leaseSeconds: 15, skewSeconds: 5 }, clock: () => new Date(), logger: silentLogger };
  const consume = createSqsConsumer({
    engine,
    requeue: async (e: Envelope, s: number) => void requeued.push([e.data.name, s]),
    ...(extra.deadLetter === false ? {} : { deadLetter: async (body: string, reason: string) => void dead.push([body, reason]) }),
  });
  return { consume, requeued, dead };
}

const record = (id: string, body: string, group?: string) => ({ messageId: id, body, attributes: group ? { MessageGroupId: group } : {} });
const ev = (...records: ReturnType<typeof record>[]) => ({ Records: records }) as unknown as SQSEvent;
const pod = (name: string) => JSON.stringify(envelopeFor('Pod', 'ns', name));

describe('Lambda SQS consumer', () => {
  test('handled messages are acknowledged; only failures are reported back (partial batch)', async () => {
    const { consume } = consumer();
    const r = await consume(ev(record('1', pod('ok-1')), record('2', pod('boom-2')), record('3', pod('ok-3'))));
    assert.deepEqual(r.batchItemFailures, [{ itemIdentifier: '2' }]);
  });

  test('bad input goes to the dead-letter queue with a clear reason and is acknowledged', async () => {
    const { consume, dead } = consumer();
    const r = await consume(ev(record('1', 'not json'), record('2', JSON.stringify({ specversion: '1.0', data: {} })), record('3', pod('ok'))));
    assert.deepEqual(r.batchItemFailures, []);
    assert.equal(dead.length, 2);
    assert.match(dead[0]?.[1] ?? '', /not JSON/);
    assert.match(dead[1]?.[1] ?? '', /invalid event envelope: .*id/);
    assert.equal(dead[0]?.[0], 'not json', 'the original body is kept');
  });

  test('without a dead-letter queue configured, bad input is left to the queue redrive policy', async () => {
    const { consume } = consumer({ deadLetter: false });
    const r = await consume(ev(record('1', '{')));
    assert.deepEqual(r.batchItemFailures, [{ itemIdentifier: '1' }]);
  });

  test('FIFO: after a failure, the rest of that message group fails too (order kept); other groups go on', async () => {
    const { consume } = consumer();
    const r = await consume(ev(record('1', pod('boom'), 'g1'), record('2', pod('ok-a'), 'g1'), record('3', pod('ok-b'), 'g2')));
    assert.deepEqual(r.batchItemFailures.map((f) => f.itemIdentifier), ['1', '2']);
  });

  test('a handler asking to look again later gets the envelope requeued with that delay', async () => {
    const { consume, requeued } = consumer();
    const r = await consume(ev(record('1', pod('later-1')), record('2', pod('ok'))));
    assert.deepEqual(r.batchItemFailures, []);
    assert.deepEqual(requeued, [['later-1', 30]]);
  });
});
