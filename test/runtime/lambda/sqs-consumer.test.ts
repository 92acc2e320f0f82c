import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import type { SQSEvent } from 'aws-lambda';
import { createSqsConsumer, FifoQueueError, type SqsConsumerDeps } from '../../../functions/runtime/lambda/sqs-consumer.ts';
import type { Envelope } from '../../../functions/api/envelope.ts';
import type { Controller } from '../../../functions/engine/controller.ts';
import { silentLogger, type Logger } from '../../../functions/engine/logger.ts';
import { CredentialError, UnknownClusterError } from '../../../functions/kube/credentials.ts';
import { KubeError } from '../../../functions/kube/errors.ts';
import { ALARM_CREDENTIALS, ALARM_THROTTLED } from '../../../functions/engine/apply.ts';
import { envelopeFor } from '../../support/ejob-world.ts';
import { ScriptedKube } from '../../support/scripted-kube.ts';

/** What the probe controller saw, in order. */
const seen: string[] = [];
const gates = new Map<string, Promise<void>>();

/**
 * A controller whose behaviour the pod name picks: boom-* throws, later-* asks for 30 s,
 * slow-* never finishes, far-* asks for an hour, busy-* gets a 429 with Retry-After 7 (apf-* 1), forbid-* a 403, wrapped-* a 400
 * as the cause of another error, stalled-* a 408, gate-X waits for gate X to open (set by the
 * test), ok-* just finishes.
 */
const probe: Controller<string> = {
  name: 'probe',
  route: async (e) => {
    const name = e.data.name;
    seen.push(`${e.cluster ?? '-'}:${name}`);
    if (name.startsWith('boom')) throw new Error('API unavailable');
    if (name.startsWith('slow')) await new Promise(() => {});
    if (name.startsWith('busy')) throw new KubeError({ status: 429, message: 'too many requests', retryAfterSeconds: 7 });
    if (name.startsWith('apf')) throw new KubeError({ status: 429, message: 'too many requests', retryAfterSeconds: 1 });
    if (name.startsWith('auth')) throw new CredentialError('cluster "b": secret ephemera/b is malformed');
    if (name.startsWith('forbid')) throw new KubeError({ status: 403, reason: 'Forbidden', message: 'leases.coordination.k8s.io "ejob-x" is forbidden' });
    if (name.startsWith('wrapped')) throw new Error('observe failed', { cause: new KubeError({ status: 400, reason: 'BadRequest', message: 'bad selector' }) });
    if (name.startsWith('stalled')) throw new KubeError({ status: 408, reason: 'Timeout', message: 'request timed out' });
    await gates.get(name);
    return name.startsWith('later') || name.startsWith('far') ? { keys: [`Pod/ns/${name}`] } : { keys: [], skipped: 'probe' };
  },
  observe: async (key) => key,
  plan: (key) => ({ actions: [], requeueAfterSeconds: key.includes('/far') ? 3600 : 30 }),
};

function consumer(extra: Partial<Omit<SqsConsumerDeps, 'deadLetter'>> & { deadLetter?: false | SqsConsumerDeps['deadLetter'] } = {}) {
  const requeued: [string, number][] = [];
  const dead: [string, string][] = [];
  seen.length = 0;
  const engine = { kube: new ScriptedKube(), controllers: [probe], lock: { namespace: 'x', holder: 'h', leaseSeconds: 15, skewSeconds: 5 }, clock: () => new Date(), logger: silentLogger };
  const { deadLetter: noDlq, ...rest } = extra;
  const consume = createSqsConsumer({
    engineFor: async (cluster) => {
      if (cluster === 'nowhere') throw new UnknownClusterError('cluster "nowhere" is not served by this deployment');
      // Its credentials never come (a lookup that hangs).
      if (cluster === 'stuck') return new Promise<never>(() => undefined);
      return engine;
    },
    requeue: async (e: Envelope, s: number) => void requeued.push([e.data.name, s]),
    ...(noDlq === false ? {} : { deadLetter: noDlq ?? (async (body: string, reason: string) => void dead.push([body, reason])) }),
    ...rest,
  });
  return { consume, requeued, dead };
}

type Rec = { messageId: string; body: string; attributes: Record<string, string>; messageAttributes: Record<string, { stringValue: string }> };
const record = (id: string, body: string, attrs: Partial<Rec> = {}): Rec => ({ messageId: id, body, attributes: {}, messageAttributes: {}, ...attrs });
const ev = (...records: Rec[]) => ({ Records: records }) as unknown as SQSEvent;
const pod = (name: string, cluster?: string) => JSON.stringify({ ...envelopeFor('Pod', 'ns', name), ...(cluster ? { cluster } : {}) });
const ids = (r: { batchItemFailures: { itemIdentifier: string }[] }) => r.batchItemFailures.map((f) => f.itemIdentifier);
const remaining = (ms: number) => {
  const end = Date.now() + ms;
  return { getRemainingTimeInMillis: () => end - Date.now() };
};


/** A queued message in virtual time. */
type Queued = { at: number; body: string };

/**
 * A standard queue in virtual time (Date mocked): every message handled when due, and the
 * relay's resync sending `pod`'s key every 600 s, for `hours`; the most copies queued at once
 * and the messages handled.
 */
async function withResyncs(t: TestContext, consume: (e: SQSEvent) => Promise<unknown>, queue: Queued[], o: { hours: number; pod: string; maxHandled?: number }): Promise<{ most: number; handled: number }> {
  const start = Date.now();
  let nextResync = start;
  let most = 0;
  let handled = 0;
  while (Date.now() < start + o.hours * 3_600_000 && handled < (o.maxHandled ?? Infinity)) {
    queue.sort((a, b) => a.at - b.at);
    const next = Math.min(queue[0]?.at ?? Infinity, nextResync);
    t.mock.timers.setTime(next);
    if (next === nextResync) {
      queue.push({ at: next, body: pod(o.pod) });
      nextResync += 600_000;
      continue;
    }
    const due = queue.splice(0, queue.filter((m) => m.at <= next).length);
    await consume(ev(...due.map((m, i) => record(`m${handled + i}`, m.body))));
    handled += due.length;
    most = Math.max(most, queue.length);
  }
  return { most, handled };
}


/**
 * A consumer whose one controller routes a pod's envelope to the jobs it names, observing each
 * with `observe`, with no retries and a 500 ms margin; `sent` collects the requeued envelopes
 * and their delays.
 */
function fanConsumer(observe: (key: string) => Promise<string>): { consume: ReturnType<typeof createSqsConsumer>; sent: [Envelope, number][]; e: Envelope } {
  const fan: Controller<string> = {
    name: 'fan',
    route: async (e) => ({ keys: (e.data.jobs ?? []).map((j) => `EphemeralJob/${e.data.namespace}/${j}`) }),
    observe,
    plan: () => ({ actions: [] }),
  };
  const engine = { kube: new ScriptedKube(), controllers: [fan], lock: { namespace: 'x', holder: 'h', leaseSeconds: 15, skewSeconds: 5 }, clock: () => new Date(), logger: silentLogger, retry: { retries: 0 } };
  const sent: [Envelope, number][] = [];
  const consume = createSqsConsumer({ engine, marginMs: 500, requeue: async (e: Envelope, s: number) => void sent.push([e, s]) });
  return { consume, sent, e: envelopeFor('Pod', 'ns', 'web-0') };
}
describe('Lambda SQS consumer', () => {
  test('handled messages are acknowledged; only failures are reported back (partial batch)', async () => {
    const { consume } = consumer();
    const r = await consume(ev(record('1', pod('ok-1')), record('2', pod('boom-2')), record('3', pod('ok-3'))));
    assert.deepEqual(ids(r), ['2']);
  });

  test('bad input goes to the dead-letter queue with a clear reason, acknowledged, never blocking the batch', async () => {
    const { consume, dead } = consumer();
    const r = await consume(ev(record('1', 'not json'), record('2', JSON.stringify({ specversion: '1.0', data: {} })), record('3', pod('ok')), record('4', pod('ok-x', 'Not_A_Name')), record('5', pod('x/y'))));
    assert.deepEqual(ids(r), []);
    assert.equal(dead.length, 4);
    assert.match(dead[0]?.[1] ?? '', /not JSON/);
    assert.match(dead[1]?.[1] ?? '', /invalid event envelope: .*id/);
    assert.match(dead[2]?.[1] ?? '', /cluster: a cluster name/);
    assert.match(dead[3]?.[1] ?? '', /data\.name: "x\/y" /, 'a name no object can have is bad input, not retried');
    assert.equal(dead[0]?.[0], 'not json', 'the original body is kept');
    assert.ok(seen.includes('-:ok'));
  });

  test('an envelope for a cluster this deployment does not serve is dead-lettered with the reason', async () => {
    const { consume, dead } = consumer();
    const r = await consume(ev(record('1', pod('ok-1', 'nowhere')), record('2', pod('ok-2'))));
    assert.deepEqual(ids(r), []);
    assert.match(dead[0]?.[1] ?? '', /cluster "nowhere" is not served/);
  });

  test('without a dead-letter queue configured, bad input is left to the queue redrive policy', async () => {
    const { consume } = consumer({ deadLetter: false });
    assert.deepEqual(ids(await consume(ev(record('1', '{')))), ['1']);
  });

  test('a FIFO batch is refused with a clear message (no per-message delay: requeues would hot-loop)', async () => {
    const { consume } = consumer();
    await assert.rejects(consume(ev(record('1', pod('ok'), { attributes: { MessageGroupId: 'g' } }))), FifoQueueError);
  });

  test('per key in order: after a failure the key\'s later records wait too; other keys go on', async () => {
    const { consume } = consumer();
    const r = await consume(ev(record('1', pod('boom')), record('2', pod('boom')), record('3', pod('ok-b'))));
    assert.deepEqual(ids(r), ['1', '2']);
    assert.deepEqual(seen.filter((s) => s.includes('boom')), ['-:boom'], 'the second record of the key was not attempted');
  });

  test('different keys run concurrently (each waits for the other to start)', async () => {
    let openA!: () => void;
    let openB!: () => void;
    gates.set('gate-a', new Promise<void>((r) => (openA = r)).then(() => openB()));
    gates.set('gate-b', new Promise<void>((r) => (openB = r)));
    const { consume } = consumer();
    const run = consume(ev(record('1', pod('gate-a')), record('2', pod('gate-b'))), remaining(5000));
    // gate-b is only opened by gate-a finishing, and gate-a only by the test once both started.
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(seen.sort(), ['-:gate-a', '-:gate-b'], 'both keys started before either finished');
    openA();
    assert.deepEqual(ids(await run), []);
  });

  test('each record is bounded by the invocation\'s remaining time; what cannot finish is redelivered', async () => {
    // slow-1 never finishes: that consume() answers at all is the bound being applied.
    const { consume } = consumer({ marginMs: 100 });
    const r = await consume(ev(record('1', pod('slow-1')), record('2', pod('ok-2')), record('3', pod('slow-1'))), remaining(1300));
    assert.deepEqual(ids(r), ['1', '3']);
    assert.ok(seen.includes('-:ok-2'));
  });

  test('a requeue or dead letter the queue does not answer ends with the invocation\'s time: that record is redelivered, the others acknowledged (review80 L2)', { timeout: 20_000 }, async () => {
    // Neither send ever answers: that consume() answers at all is the bound being applied.
    const signals: (AbortSignal | undefined)[] = [];
    const { consume } = consumer({
      marginMs: 500,
      // One that ignores its signal, one that gives up when it is aborted, as the SDK does.
      requeue: (e, _delay, signal) => (signals.push(signal), e.data.name.startsWith('later') ? new Promise<void>(() => undefined) : Promise.resolve()),
      deadLetter: (_body, _reason, signal) => (signals.push(signal), new Promise<void>((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason as Error)))),
    });
    const r = await consume(ev(record('1', pod('later-1')), record('2', pod('ok-2')), record('3', pod('forbid-3'))), remaining(1600));
    assert.deepEqual(ids(r), ['1', '3']);
    assert.ok(seen.includes('-:ok-2'));
    assert.equal(signals.length, 2);
    assert.ok(signals.every((x) => x?.aborted === true), 'each send was given a deadline, aborted by the time the batch answered');
  });

  test('a cluster whose credentials do not come within the invocation fails its record only (review80 L2)', { timeout: 20_000 }, async () => {
    const { consume } = consumer({ marginMs: 100 });
    const r = await consume(ev(record('1', pod('ok-1', 'stuck')), record('2', pod('ok-2'))), remaining(1300));
    assert.deepEqual(ids(r), ['1']);
    assert.ok(seen.includes('-:ok-2'));
  });

  test('with under a second left, records are not started at all', async () => {
    const { consume } = consumer({ marginMs: 0 });
    const r = await consume(ev(record('1', pod('ok-1'))), remaining(500));
    assert.deepEqual(ids(r), ['1']);
    assert.deepEqual(seen, []);
  });

  test('Retry-After from the API server is honoured: requeued with that delay, acknowledged', async () => {
    const { consume, requeued } = consumer();
    const r = await consume(ev(record('1', pod('busy-1'))));
    assert.deepEqual(ids(r), []);
    assert.deepEqual(requeued, [['busy-1', 7]]);
  });

  test('a throttled key\'s copies wait longer each time, jittered, at least the Retry-After, and a chain ends 900 s after it began: over hours of resyncs its request rate stays bounded (review90 M1)', async (t) => {
    // A standard queue in virtual time: the API server answers every request of the key 429
    // Retry-After 1 for ever; the relay's resync sends the key every 600 s. Requeued after
    // exactly Retry-After, each message was a chain that lived as long as the throttle, and
    // each resync added one: about 3,600 handlings an hour per chain, and a chain more each
    // 600 s.
    t.mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-01-01T00:00:00Z') });
    const queue: Queued[] = [];
    const delays: [number, number][] = [];
    const { consume } = consumer({ random: () => 0.5, requeue: async (e, s) => {
      delays.push([e.data.throttled ?? 0, s]);
      queue.push({ at: Date.now() + s * 1000, body: JSON.stringify(e) });
    } });
    const { most, handled } = await withResyncs(t, consume, queue, { hours: 2, pod: 'apf-stuck', maxHandled: 20_000 });
    // A chain's delays: 1, 2, 3, 6, 12, 24, then 45 s (jitter at its middle: ¾ of min(60, 1·2ⁿ), at least the Retry-After).
    assert.deepEqual(delays.slice(0, 9), [[1, 1], [2, 2], [3, 3], [4, 6], [5, 12], [6, 24], [7, 45], [8, 45], [9, 45]]);
    assert.ok(delays.every(([, s]) => s >= 1 && s <= 60), 'at least the Retry-After, at most 60 s');
    assert.ok(most <= 2, `at most 2 copies of the key queued at once (the chain and the resync's), got ${most}`);
    // About 21 handlings a chain of 900 s, one chain per resync: ~250 in 2 h, not ~40,000.
    assert.ok(handled <= 2 * 6 * 25, `messages handled in 2 h: ${handled}`);
  });

  test('a throttled copy handled at last goes on without its throttled count: a look again starts its delays over, in the same chain', async () => {
    const bodies: Envelope[] = [];
    const { consume } = consumer({ requeue: async (e) => void bodies.push(e) });
    const base = envelopeFor('Pod', 'ns', 'later-1');
    const since = new Date(Date.now() - 100_000).toISOString();
    await consume(ev(record('1', JSON.stringify({ ...base, data: { ...base.data, throttled: 5, looksSince: since } }))));
    assert.equal(bodies[0]?.data.throttled, undefined);
    assert.equal(bodies[0]?.data.looksSince, since);
  });

  test('a requeue after Retry-After is logged with the alarm value the stack counts (review: the copy is a new message, so a throttle that never ends reached neither the dead letters nor any alarm)', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = (bound: Record<string, unknown>): Logger => ({ ...silentLogger, warn: (obj, msg) => void lines.push({ ...bound, ...obj, msg }), error: (obj, msg) => void lines.push({ ...bound, ...obj, msg }), child: (more) => logger({ ...bound, ...more }) });
    const { consume } = consumer({ logger: logger({}) });
    await consume(ev(record('1', pod('busy-1', 'east'))));
    assert.deepEqual(lines.filter((l) => l.alarm !== undefined).map((l) => [l.alarm, l.status, l.retryAfterSeconds, l.messageId, l.cluster, l.subject]), [[ALARM_THROTTLED, 429, 7, '1', 'east', 'Pod/ns/busy-1']]);
  });

  test('an authentication failure is not retried: that cluster\'s other records fail at once, other clusters go on', async () => {
    const { consume } = consumer({ concurrency: 1 });
    const r = await consume(ev(record('1', pod('auth-1', 'b')), record('2', pod('ok-2', 'b')), record('3', pod('ok-3', 'a'))), remaining(5000));
    assert.deepEqual(ids(r).sort(), ['1', '2']);
    assert.ok(seen.includes('a:ok-3'));
    assert.ok(!seen.includes('b:ok-2'), 'not attempted after the cluster refused the credential');
  });

  test('a refusal no retry can change is dead-lettered at once with its reason; transient failures are redelivered', async () => {
    const { consume, dead } = consumer();
    const r = await consume(ev(record('1', pod('forbid-1')), record('2', pod('forbid-1')), record('3', pod('wrapped-3')), record('4', pod('stalled-4')), record('5', pod('boom-5')), record('6', pod('ok-6'))));
    assert.deepEqual(ids(r).sort(), ['4', '5'], 'only the transient failures are left for redelivery');
    assert.equal(dead.length, 3);
    assert.match(dead[0]?.[1] ?? '', /refused it for good \(HTTP 403 Forbidden\): leases.* is forbidden/);
    assert.match(dead.find(([body]) => body.includes('wrapped-3'))?.[1] ?? '', /HTTP 400 BadRequest\): bad selector/);
    assert.equal(seen.filter((x) => x === '-:forbid-1').length, 2, 'the key\'s later record is not blocked by the dead-lettered one');
    assert.ok(seen.includes('-:ok-6'));
  });

  test('a dead-lettering is logged with the record\'s messageId, cluster and subject (operability review)', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = (bound: Record<string, unknown>): Logger => ({ ...silentLogger, error: (obj, msg) => void lines.push({ ...bound, ...obj, msg }), child: (more) => logger({ ...bound, ...more }) });
    const { consume } = consumer({ logger: logger({}) });
    await consume(ev(record('1', pod('forbid-1', 'east'))));
    const line = lines.find((l) => String(l.msg).endsWith('dead-lettering'));
    assert.deepEqual([line?.messageId, line?.cluster, line?.subject], ['1', 'east', 'Pod/ns/forbid-1'], JSON.stringify(lines));
  });

  test('the engine\'s lines carry the record\'s messageId and cluster (operability review)', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = (bound: Record<string, unknown>): Logger => ({ ...silentLogger, warn: (obj, msg) => void lines.push({ ...bound, ...obj, msg }), child: (more) => logger({ ...bound, ...more }) });
    const { consume } = consumer({ logger: logger({}) });
    await consume(ev(record('7', pod('forbid-1', 'east'))));
    const line = lines.find((l) => l.msg === 'refused for good: the other keys go on');
    assert.deepEqual([line?.messageId, line?.cluster, line?.controller], ['7', 'east', 'probe'], JSON.stringify(lines));
  });

  test('every message left for redelivery is logged with the alarm field the AWS stack counts', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger: Logger = { ...silentLogger, warn: (obj, msg) => void lines.push({ ...obj, msg }), error: (obj, msg) => void lines.push({ ...obj, msg }), child: () => logger };
    const { consume } = consumer({ logger });
    const r = await consume(ev(record('1', pod('boom-1')), record('2', pod('auth-2', 'b')), record('3', pod('stalled-3'))));
    assert.deepEqual(ids(r).sort(), ['1', '2', '3']);
    // The refused credential's line has its own value (the stack counts it as a redelivery too).
    // The consumer's lines (the engine's own go to the same logger, without an alarm value).
    assert.deepEqual(lines.filter((l) => l.alarm !== undefined).map((l) => l.alarm).sort(), ['credentials', 'redelivery', 'redelivery'], JSON.stringify(lines));
  });

  test('a credential refused is logged with its own alarm value, which the stack alarms on at the first line (review: a quiet cluster never reached the redelivery threshold)', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = (bound: Record<string, unknown>): Logger => ({ ...silentLogger, warn: (obj, msg) => void lines.push({ ...bound, ...obj, msg }), error: (obj, msg) => void lines.push({ ...bound, ...obj, msg }), child: (more) => logger({ ...bound, ...more }) });
    const { consume } = consumer({ logger: logger({}) });
    const r = await consume(ev(record('1', pod('auth-1', 'b'))));
    assert.deepEqual(ids(r), ['1'], 'left for redelivery');
    assert.deepEqual(lines.filter((l) => l.alarm !== undefined).map((l) => [l.alarm, l.messageId, l.cluster, l.msg]), [[ALARM_CREDENTIALS, '1', 'b', 'authentication to the cluster failed: fix the credential source']]);
  });

  test('one key of an envelope refused for good does not keep its other keys from being handled; the envelope is dead-lettered for it once, and requeued for the others naming it reported', async () => {
    const handled: string[] = [];
    const pair: Controller<string> = {
      name: 'pair',
      route: async () => ({ keys: ['Pod/ns/refused', 'Pod/ns/fine'] }),
      observe: async (key) => {
        if (key.endsWith('refused')) throw new KubeError({ status: 400, reason: 'BadRequest', message: 'unable to parse requirement' });
        handled.push(key);
        return key;
      },
      plan: () => ({ actions: [], requeueAfterSeconds: 30 }),
    };
    const requeued: number[] = [];
    const bodies: Envelope[] = [];
    const dead: string[] = [];
    const engine = { kube: new ScriptedKube(), controllers: [pair], lock: { namespace: 'x', holder: 'h', leaseSeconds: 15, skewSeconds: 5 }, clock: () => new Date(), logger: silentLogger };
    const consume = createSqsConsumer({ engine, requeue: async (e: Envelope, s: number) => void (requeued.push(s), bodies.push(e)), deadLetter: async (_body: string, reason: string) => void dead.push(reason) });
    const r = await consume(ev(record('1', pod('any'))));
    assert.deepEqual(ids(r), []);
    assert.deepEqual(handled, ['Pod/ns/fine']);
    assert.deepEqual(requeued, [30], "the handled key's next look is kept");
    assert.equal(dead.length, 1);
    assert.deepEqual(bodies[0]?.data.reported, ['pair Pod/ns/refused']);
    await consume(ev(record('2', JSON.stringify(bodies[0]))));
    assert.deepEqual(handled, ['Pod/ns/fine', 'Pod/ns/fine'], 'the requeued copy handles every key again');
    assert.equal(dead.length, 1, 'and does not dead-letter the refused key a second time');
    assert.match(dead[0] ?? '', /pair Pod\/ns\/refused: the API server refused it for good \(HTTP 400 BadRequest\): unable to parse requirement/);
  });

  test('an envelope naming more jobs than one invocation can reconcile: the keys left at the deadline go on as their own message, each key is reconciled once (review62 F4)', async () => {
    const handled: string[] = [];
    const slow = async (key: string): Promise<string> => {
      await new Promise((resolve) => setTimeout(resolve, 400));
      handled.push(key);
      return key;
    };
    // As the EphemeralJob router takes a pod's stamped jobs, and the SidecarTerminator the pod itself.
    // Every job asks for another look in 30 s, as an unfinished one does.
    const fan: Controller<string> = { name: 'fan', route: async (e) => ({ keys: (e.data.jobs ?? []).map((j) => `EphemeralJob/${e.data.namespace}/${j}`) }), observe: slow, plan: () => ({ actions: [], requeueAfterSeconds: 30 }) };
    const side: Controller<string> = { name: 'side', route: async (e) => ({ keys: [`Pod/${e.data.namespace}/${e.data.name}`] }), observe: slow, plan: () => ({ actions: [] }) };
    const engine = { kube: new ScriptedKube(), controllers: [fan, side], lock: { namespace: 'x', holder: 'h', leaseSeconds: 15, skewSeconds: 5 }, clock: () => new Date(), logger: silentLogger };
    const sent: [Envelope, number][] = [];
    // The handlings get 2.5 s per pass; the sends after them, the margin.
    const consume = createSqsConsumer({ engine, marginMs: 500, requeue: async (e: Envelope, s: number) => void sent.push([e, s]) });
    const jobs = Array.from({ length: 10 }, (_, i) => `job-${i}`);
    let body = JSON.stringify({ ...envelopeFor('Pod', 'ns', 'web-0'), data: { ...envelopeFor('Pod', 'ns', 'web-0').data, jobs } });
    let passes = 0;
    const later: string[] = [];
    for (;;) {
      const before = handled.length;
      const r = await consume(ev(record(String(++passes), body)), remaining(3000));
      assert.deepEqual(ids(r), [], `pass ${passes} is acknowledged: its keys are not run again by a redelivery`);
      assert.ok(handled.length > before, `pass ${passes} reconciled at least one key`);
      // The next look 30 s on names only the jobs this pass ran (review: requeued whole, each requeue split again, and the messages multiplied).
      const again = sent.filter(([, delay]) => delay === 30);
      assert.equal(again.length, 1);
      const ranHere = handled.slice(before).filter((k) => k.startsWith('EphemeralJob/')).map((k) => k.split('/')[2]);
      assert.deepEqual(again[0]?.[0].data.jobs, ranHere);
      later.push(...(again[0]?.[0].data.jobs ?? []));
      const next = sent.find(([, delay]) => delay === 0);
      sent.length = 0;
      if (next === undefined) break;
      const notYet = jobs.filter((j) => !handled.includes(`EphemeralJob/ns/${j}`));
      assert.deepEqual(next[0].data.jobs, notYet, 'the message left names exactly the jobs not reconciled yet');
      body = JSON.stringify(next[0]);
    }
    assert.deepEqual(later.sort(), [...jobs].sort(), 'each job\'s next look is in exactly one requeued message');
    assert.ok(passes > 1, 'ten 400 ms keys do not fit one 2.5 s invocation');
    assert.deepEqual([...handled].sort(), [...jobs.map((j) => `EphemeralJob/ns/${j}`), 'Pod/ns/web-0'].sort(), 'every key once, the pod\'s own key too');
  });

  test('a key slower than those before it, still running when the invocation ends: the keys not finished, it among them, go on as their own message and the record is acknowledged; with none finished, it is left for redelivery (review)', async () => {
    const handled: string[] = [];
    const observe = async (key: string): Promise<string> => {
      // job-2 outlasts the invocation (unref'd: the abandoned handling keeps no test alive).
      await new Promise((resolve) => setTimeout(resolve, key.endsWith('/job-2') ? 60_000 : 50).unref());
      handled.push(key);
      return key;
    };
    // Each job asks for another look in 30 s; job-1 is refused for good.
    const fan: Controller<string> = {
      name: 'fan',
      route: async (e) => ({ keys: (e.data.jobs ?? []).map((j) => `EphemeralJob/${e.data.namespace}/${j}`) }),
      observe: async (key) => {
        if (key.endsWith('/job-1')) throw new KubeError({ status: 403, reason: 'Forbidden', message: 'leases is forbidden' });
        return observe(key);
      },
      plan: () => ({ actions: [], requeueAfterSeconds: 30 }),
    };
    const side: Controller<string> = { name: 'side', route: async (e) => ({ keys: [`Pod/${e.data.namespace}/${e.data.name}`] }), observe, plan: () => ({ actions: [] }) };
    const engine = { kube: new ScriptedKube(), controllers: [fan, side], lock: { namespace: 'x', holder: 'h', leaseSeconds: 15, skewSeconds: 5 }, clock: () => new Date(), logger: silentLogger };
    const sent: [Envelope, number][] = [];
    const dead: string[] = [];
    const consume = createSqsConsumer({ engine, marginMs: 500, requeue: async (e: Envelope, s: number) => void sent.push([e, s]), deadLetter: async (_body: string, reason: string) => void dead.push(reason) });
    const e = envelopeFor('Pod', 'ns', 'web-0');
    const r = await consume(ev(record('1', JSON.stringify({ ...e, data: { ...e.data, jobs: ['job-0', 'job-1', 'job-2', 'job-3'] } }))), remaining(2000));
    assert.deepEqual(ids(r), [], 'acknowledged: job-0 and job-1 are not run again');
    assert.deepEqual(handled, ['EphemeralJob/ns/job-0']);
    const now = sent.find(([, delay]) => delay === 0)?.[0];
    assert.deepEqual(now?.data.jobs, ['job-3', 'job-2'], 'those not finished at once, the slow one last (the pod\'s own key is routed by it too)');
    assert.deepEqual(now?.data.reported, ['fan EphemeralJob/ns/job-1'], 'naming the key refused');
    // What the finished keys did is kept (review): job-0's next look, job-1's dead letter.
    assert.deepEqual(sent.filter(([, delay]) => delay === 30).map(([m]) => m.data.jobs), [['job-0', 'job-1']]);
    assert.equal(dead.length, 1);
    assert.match(dead[0] ?? '', /fan EphemeralJob\/ns\/job-1: the API server refused it for good \(HTTP 403 Forbidden\)/);
    sent.length = 0;
    const stuck = await consume(ev(record('2', JSON.stringify({ ...e, data: { ...e.data, jobs: ['job-2'] } }))), remaining(2000));
    assert.deepEqual(ids(stuck), ['2'], 'no key finished: left for redelivery, which counts toward the dead letters');
    assert.equal(sent.length, 0);
  });

  test('cut at the deadline, a key that failed for now goes on with the keys not started, last, and the record is acknowledged (review: thrown, each redelivery was cut at the same place)', async () => {
    const handled: string[] = [];
    const { consume, sent, e } = fanConsumer(async (key) => {
      if (key.endsWith('/job-0')) throw new KubeError({ status: 500, message: 'etcdserver: request timed out' });
      await new Promise((resolve) => setTimeout(resolve, 400));
      handled.push(key);
      return key;
    });
    const jobs = ['job-0', 'job-1', 'job-2', 'job-3', 'job-4', 'job-5', 'job-6', 'job-7'];
    const r = await consume(ev(record('1', JSON.stringify({ ...e, data: { ...e.data, jobs } }))), remaining(2500));
    assert.deepEqual(ids(r), []);
    const rest = sent.find(([, delay]) => delay === 0)?.[0].data.jobs ?? [];
    assert.ok(handled.length >= 1 && rest.length > 1, `${handled.join(' ')} | ${rest.join(' ')}`);
    assert.equal(rest.at(-1), 'job-0', 'the key that failed for now, last');
    assert.deepEqual([...rest.slice(0, -1), ...handled.map((k) => k.split('/')[2])].sort(), jobs.slice(1), 'every other job either ran or goes on');
    const alone = await consume(ev(record('2', JSON.stringify({ ...e, data: { ...e.data, jobs: ['job-0'] } }))), remaining(2500));
    assert.deepEqual(ids(alone), ['2'], 'alone, it is thrown as before: redelivered, toward the dead letters');
  });

  test('cut at the deadline, the keys left go on after the longest Retry-After one of them that failed for now was answered with, not at once (review90 L2)', async () => {
    const { consume, sent, e } = fanConsumer(async (key) => {
      if (key.endsWith('/job-0')) throw new KubeError({ status: 429, reason: 'TooManyRequests', message: 'too many requests', retryAfterSeconds: 7 });
      if (key.endsWith('/job-1')) throw new KubeError({ status: 503, message: 'unavailable', retryAfterSeconds: 3 });
      await new Promise((resolve) => setTimeout(resolve, 400));
      return key;
    });
    const jobs = ['job-0', 'job-1', 'job-2', 'job-3', 'job-4', 'job-5', 'job-6', 'job-7'];
    const r = await consume(ev(record('1', JSON.stringify({ ...e, data: { ...e.data, jobs } }))), remaining(2500));
    assert.deepEqual(ids(r), []);
    assert.equal(sent.length, 1, sent.map(([x, d]) => `${d}: ${x.data.jobs?.join(' ')}`).join('; '));
    assert.deepEqual(sent[0]?.[0].data.jobs?.slice(-2), ['job-0', 'job-1'], 'the keys that failed for now, last');
    assert.equal(sent[0]?.[1], 7);
  });

  test('out of time while a key still runs, the keys left go on after the longest Retry-After a key that failed for now was answered with (review93 L1)', async () => {
    const { consume, sent, e } = fanConsumer(async (key) => {
      if (key.endsWith('/job-1')) throw new KubeError({ status: 429, reason: 'TooManyRequests', message: 'too many requests', retryAfterSeconds: 7 });
      // Still running when the invocation's time is up.
      if (key.endsWith('/job-2')) await new Promise((resolve) => setTimeout(resolve, 5000).unref());
      return key;
    });
    const r = await consume(ev(record('1', JSON.stringify({ ...e, data: { ...e.data, jobs: ['job-0', 'job-1', 'job-2'] } }))), remaining(2500));
    assert.deepEqual(ids(r), []);
    assert.equal(sent.length, 1, sent.map(([x, d]) => `${d}: ${x.data.jobs?.join(' ')}`).join('; '));
    assert.ok(sent[0]?.[0].data.jobs?.includes('job-1') && sent[0]?.[0].data.jobs?.includes('job-2'), `${sent[0]?.[0].data.jobs?.join(' ')}`);
    assert.equal(sent[0]?.[1], 7, 'no sooner than the server asked');
  });

  test('without a dead-letter queue configured, a terminal refusal is left to the queue redrive policy', async () => {
    const { consume } = consumer({ deadLetter: false });
    assert.deepEqual(ids(await consume(ev(record('1', pod('forbid-1'))))), ['1']);
  });

  test('a handler asking to look again later gets the envelope requeued with that delay', async () => {
    const { consume, requeued } = consumer();
    const r = await consume(ev(record('1', pod('later-1')), record('2', pod('ok'))));
    assert.deepEqual(ids(r), []);
    assert.deepEqual(requeued, [['later-1', 30]]);
  });

  test('a wait past SQS\'s 900 s delay limit sends no message (the relay\'s resync brings the job back); a message carrying the old chained-delay attribute is handled at once', async () => {
    const { consume, requeued } = consumer();
    const r = await consume(ev(record('1', pod('far-1')), record('2', pod('ok-1'), { messageAttributes: { 'ephemera-not-before': { stringValue: String(Date.now() + 3_600_000) } } })));
    assert.deepEqual(ids(r), []);
    assert.deepEqual(requeued, [], 'no 900 s hop, no chain');
    assert.deepEqual(seen, ['-:far-1', '-:ok-1']);
  });

  test('a chain of looks ends 900 s after it began: a copy carries when its chain began, and a look past that is left to the relay\'s resync (review70)', async () => {
    const bodies: Envelope[] = [];
    const { consume } = consumer({ requeue: async (e) => void bodies.push(e) });
    const before = Date.now();
    await consume(ev(record('1', pod('later-1'))));
    const since = Date.parse(bodies[0]?.data.looksSince ?? '');
    assert.ok(since >= before && since <= Date.now(), 'a message the relay sent starts a chain now');
    const copy = (sinceMs: number | string) => JSON.stringify({ ...envelopeFor('Pod', 'ns', 'later-2'), data: { ...envelopeFor('Pod', 'ns', 'later-2').data, looksSince: typeof sinceMs === 'string' ? sinceMs : new Date(sinceMs).toISOString() } });
    const at800 = new Date(Date.now() - 800_000).toISOString();
    await consume(ev(record('2', copy(at800))));
    assert.equal(bodies[1]?.data.looksSince, at800, 'a copy keeps its chain\'s start: 800 s + 30 s is within 900 s');
    await consume(ev(record('3', copy(Date.now() - 880_000))));
    assert.equal(bodies.length, 2, '880 s + 30 s is past 900 s: no message');
    for (const odd of ['yesterday', new Date(Date.now() + 3_600_000).toISOString()]) {
      await consume(ev(record('4', copy(odd))));
      assert.ok(Date.parse(bodies.at(-1)?.data.looksSince ?? '') >= before && bodies.at(-1)?.data.looksSince !== odd, `an unreadable or future start (${odd}) starts the chain anew`);
    }
  });

  test('a key that asks to look again for as long as a condition lasts: its copies on the queue stay bounded over hours of resyncs (review70)', async (t) => {
    // A standard queue in virtual time: the relay's resync sends the key every 600 s (as it
    // does any due pod or unfinished job) and the handler answers "look again in 30 s" for
    // ever (a CRR never served, an injection refused). Each resync used to start one more
    // chain that none ended: copies on the queue grew by one every 600 s.
    t.mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-01-01T00:00:00Z') });
    const queue: Queued[] = [];
    const { consume } = consumer({ requeue: async (e, s) => void queue.push({ at: Date.now() + s * 1000, body: JSON.stringify(e) }) });
    const { most, handled } = await withResyncs(t, consume, queue, { hours: 6, pod: 'later-stuck' });
    assert.ok(most <= 3, `at most 3 copies of the key queued at once, got ${most}`);
    // A chain is 900 s of 30 s looks, one per resync: about 30 messages per 600 s, not more each hour.
    assert.ok(handled <= 6 * 6 * 32, `messages handled in 6 h: ${handled}`);
  });
});
