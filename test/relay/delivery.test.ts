// The delivery side: a bounded queue under a hanging or failing sink, partial batch
// failures, deadlines on every send, honest health and metrics, per-key requeues.
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { describe, mock, test } from 'node:test';
import { SQSClient, type SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { Envelope } from '../../functions/api/envelope.ts';
import { DeliveryQueue } from '../../relay/delivery-queue.ts';
import { envelopeOf, messageFor, type Message, type Queued } from '../../relay/envelope.ts';
import { Requeue } from '../../relay/requeue.ts';
import { memorySink, REPORT_AGAIN_MS } from '../../relay/sinks/memory.ts';
import { sqsSink } from '../../relay/sinks/sqs.ts';
import { CollectingSink, eventually, job, pod, relayWorld } from '../support/relay-world.ts';
import { silentLogger } from '../../functions/engine/logger.ts';
import { KubeError } from '../../functions/kube/errors.ts';
import type { SendOutcome } from '../../relay/sinks/sink.ts';

const POD = { apiVersion: 'v1', kind: 'Pod', namespace: 'default' } as const;
type PodLike = { metadata: Record<string, unknown> & { resourceVersion: string }; spec: Record<string, unknown>; status: Record<string, unknown> };
const counter = async (c: { get(): Promise<{ values: { value: number }[] }> }): Promise<number> => (await c.get()).values.reduce((n, v) => n + v.value, 0);
const message = (name: string): Message => messageFor({ kind: 'Pod', event: 'MODIFIED', namespace: 'ns', name, at: Date.now() }, { relayId: 't' }, JSON.stringify({ metadata: { name, namespace: 'ns' } }));
const pods = (n: number) => Array.from({ length: n }, (_, i) => pod(`web-${i}`, { app: 'web' }));

/**
 * A relay over job j whose pods are created once it runs: each a live ADDED event, forwarded
 * (the first list sends the job, not its pods); resolves once the relay has seen them all.
 */
async function withLivePods(list: Record<string, unknown>[], overrides: Parameters<typeof relayWorld>[1] = {}): Promise<Awaited<ReturnType<typeof relayWorld>>> {
  const w = await relayWorld([job('j', { app: 'web' })], overrides);
  for (const p of list) w.server.store.put(p as never);
  await eventually(async () => assert.equal(await counter(w.relay.metrics.seen), 1 + list.length));
  return w;
}

/** A relevant change (the node, which the sidecar terminator reads) to every pod, `rounds` times. */
function churn(w: { server: { store: { get(k: unknown): unknown; put(o: unknown): unknown } } }, n: number, rounds: number): void {
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < n; i++) {
      const p = w.server.store.get({ ...POD, name: `web-${i}` }) as PodLike;
      w.server.store.put({ ...p, spec: { ...p.spec, nodeName: `node-${r}` } });
    }
  }
}

describe('a hanging sink', () => {
  test('memory stays bounded by the keys, readyz fails past the grace, and after recovery each pod\'s latest state is sent once', async () => {
    const w = await withLivePods(pods(50), { deliveryGraceSeconds: 0.3, coalesceMs: 5 });
    try {
      await w.relay.flush();
      w.sink.clear();
      const forwardedBefore = await counter(w.relay.metrics.forwarded);
      const offeredBefore = w.sink.offered;
      w.sink.hang();
      churn(w, 50, 20); // 1,000 relevant changes over 50 pods
      await eventually(async () => assert.equal(await counter(w.relay.metrics.seen), 51 + 1000));
      // Per key at most the state in flight (handed to the hung sink) and the latest one.
      const depth = (await w.relay.metrics.bufferDepth.get()).values[0]?.value ?? -1;
      assert.ok(depth <= 100, `queue holds ${depth} entries for 50 pods`);
      assert.ok(w.sink.offered - offeredBefore <= 50, `${w.sink.offered - offeredBefore} envelopes handed to a sink that never answered`);
      await eventually(() => assert.match(w.relay.readiness(), /the sink has taken nothing for/));
      assert.equal(w.relay.ready(), false);
      assert.equal(await counter(w.relay.metrics.forwarded), forwardedBefore, 'nothing counted as forwarded while nothing was acknowledged');
      assert.ok(((await w.relay.metrics.oldestUndelivered.get()).values[0]?.value ?? 0) > 0.3);

      w.sink.release();
      await eventually(async () => {
        await w.relay.flush();
        assert.equal((await w.relay.metrics.bufferDepth.get()).values[0]?.value, 0);
      });
      assert.ok(w.relay.ready());
      for (let i = 0; i < 50; i++) {
        const latest = (w.server.store.get({ ...POD, name: `web-${i}` }) as unknown as PodLike).metadata.resourceVersion;
        const sent = w.sink.got.filter((e) => e.data.name === `web-${i}`);
        assert.equal(sent.filter((e) => e.data.resourceVersion === latest).length, 1, `web-${i}: latest state once`);
        // At most the one state that was already in flight when the sink hung, then the latest.
        assert.ok(sent.length <= 2, `web-${i} sent ${sent.length} times`);
      }
      assert.equal(await counter(w.relay.metrics.forwarded), forwardedBefore + w.sink.got.length);
    } finally {
      await w.close();
    }
  });

  test('a full queue drops no need: it overflows, then replays the cache once the sink drains it', async () => {
    const w = await withLivePods(pods(20), { bufferMax: 5, coalesceMs: 5 });
    try {
      await eventually(async () => {
        await w.relay.flush();
        assert.equal((await w.relay.metrics.bufferDepth.get()).values[0]?.value, 0);
      });
      w.sink.clear();
      w.sink.failing = true;
      churn(w, 20, 1);
      await eventually(async () => assert.ok(await counter(w.relay.metrics.overflowed) > 0));
      assert.ok(((await w.relay.metrics.bufferDepth.get()).values[0]?.value ?? 99) <= 5);
      w.sink.failing = false;
      // The pods' changes that did not fit are the job's: it is replayed, and its reconcile reads them all.
      await eventually(async () => {
        await w.relay.flush();
        assert.ok(w.sink.subjects().includes('RESYNC EphemeralJob/default/j'), w.sink.subjects().join(', '));
      }, 10_000);
    } finally {
      await w.close();
    }
  });
});

describe('a replay bigger than the queue, with live traffic', () => {
  const item = (name: string): Queued => ({ kind: 'Pod', event: 'MODIFIED', namespace: 'ns', name, at: 0 });

  test('every key is delivered and the overflow is replayed once: the replay does not make live events overflow again', async () => {
    const capacity = 4;
    /** The watch cache: what a replay reads (live keys join it as they are created). */
    const cache = Array.from({ length: 20 }, (_, i) => `cached-${i}`);
    let replays = 0;
    let liveLeft = 30;
    let deepest = 0;
    const sink = new CollectingSink();
    const q: DeliveryQueue = new DeliveryQueue({
      // The watch brings one new pod during every send, for the first 30 sends.
      sink: { name: 'live', send: (messages) => {
        deepest = Math.max(deepest, q.depth);
        if (liveLeft-- > 0) {
          const name = `live-${30 - liveLeft}`;
          cache.push(name);
          q.add(item(name));
        }
        return sink.send(messages);
      } },
      capacity, windowMs: 0, logger: silentLogger,
      build: (x) => messageFor(x, { relayId: 't' }, undefined),
      hooks: { resyncNeeded: () => {
        replays++;
        return (function* () {
          for (const name of cache) yield item(name);
        })();
      } },
    });
    try {
      // Five changes at once into a queue of four: the fifth overflows, which asks for a replay.
      for (let i = 0; i < 5; i++) q.add(item(`cached-${i}`));
      for (let sent = -1; sent !== sink.offered;) {
        sent = sink.offered;
        await q.flush();
      }
      const delivered = new Set(sink.got.map((e) => e.data.name));
      assert.deepEqual(cache.filter((name) => !delivered.has(name)), [], 'every key was delivered');
      assert.equal(liveLeft < 0, true, 'the live traffic ran its course during the replay');
      assert.equal(replays, 1, 'one replay for the one overflow');
      assert.ok(deepest <= capacity, `the queue held ${deepest} keys, more than its ${capacity}`);
      assert.equal(q.depth, 0);
    } finally {
      await q.stop();
    }
  });

  test('an overflow during the last batch of a replay is replayed too, without waiting for another acknowledgement (review)', async () => {
    // The replay's last entries were pulled in, its end not yet seen; live events then fill
    // the queue and one more overflows while that batch is in flight. Its acknowledgement came
    // before the replay was found exhausted, so no replay followed in a quiet cluster.
    const capacity = 4;
    const cache = ['c0', 'c1'];
    let replays = 0;
    let burst = false;
    const sink = new CollectingSink();
    const q: DeliveryQueue = new DeliveryQueue({
      sink: { name: 'live', send: (messages) => {
        if (burst && replays === 1) {
          burst = false;
          for (let i = 0; q.depth < capacity; i++) {
            cache.push(`live-${i}`);
            q.add(item(`live-${i}`));
          }
          cache.push('overflowed');
          assert.equal(q.add(item('overflowed')), false, 'the queue is full');
        }
        return sink.send(messages);
      } },
      capacity, windowMs: 0, logger: silentLogger,
      build: (x) => messageFor(x, { relayId: 't' }, undefined),
      hooks: { resyncNeeded: () => {
        replays++;
        burst = true;
        return cache.map(item).values();
      } },
    });
    try {
      for (let i = 0; i <= capacity; i++) q.add(item(`first-${i}`));
      for (let sent = -1; sent !== sink.offered;) {
        sent = sink.offered;
        await q.flush();
      }
      assert.ok(sink.got.some((e) => e.data.name === 'overflowed'), `the overflowed key was never replayed (${replays} replays)`);
      assert.equal(q.depth, 0);
    } finally {
      await q.stop();
    }
  });

  test('a replay does not wait behind live keys that are held or keep failing while the queue has room (review)', async () => {
    const sent: string[] = [];
    const q = new DeliveryQueue({
      sink: { name: 'some-fail', send: async (messages) => messages.map((m) => (m.key.includes('/bad') ? { ok: false, error: 'throttled' } : (sent.push(m.key.split('/').at(-1) ?? ''), { ok: true }))) },
      capacity: 6, windowMs: 0, logger: silentLogger, backoff: { minMs: 60_000, maxMs: 60_000 },
      build: (x) => messageFor(x, { relayId: 't' }, undefined),
      hooks: { resyncNeeded: () => [].values() },
    });
    try {
      // Half the queue: two keys the sink keeps refusing (backing off a minute), one held for a minute.
      q.add(item('bad-1'));
      q.add(item('bad-2'));
      q.add(item('held'), 60_000);
      await eventually(() => assert.equal(q.depth, 3));
      await eventually(() => assert.ok(!sent.includes('bad-1')));
      q.backfill([item('r0'), item('r1')].values());
      await eventually(() => assert.deepEqual(sent.filter((k) => k.startsWith('r')), ['r0', 'r1']));
      assert.ok(!sent.includes('held'), 'the hold still holds');
    } finally {
      await q.stop();
    }
  });

  test('replay entries the sink keeps refusing leave the replay\'s share: the replay, later ones and an overflow go on (review)', async () => {
    const sent: string[] = [];
    let replays = 0;
    const q = new DeliveryQueue({
      sink: { name: 'some-fail', send: async (messages) => messages.map((m) => (m.key.includes('/bad') ? { ok: false, error: 'throttled' } : (sent.push(m.key.split('/').at(-1) ?? ''), { ok: true }))) },
      capacity: 4, windowMs: 0, logger: silentLogger, backoff: { minMs: 5, maxMs: 40 },
      build: (x) => messageFor(x, { relayId: 't' }, undefined),
      hooks: { resyncNeeded: () => (replays++, [item('bad-0'), item('live-9')].values()) },
    });
    try {
      // The replay's share is 2: before, its two refused entries held it for good.
      q.backfill(['bad-0', 'bad-1', 'good-0', 'good-1'].map(item).values());
      await eventually(() => assert.deepEqual(sent.filter((k) => k.startsWith('good')), ['good-0', 'good-1']));
      // Two live keys fit beside the refused ones; the third overflows and is replayed.
      for (const k of ['live-7', 'live-8', 'live-9']) q.add(item(k));
      await eventually(() => assert.ok(sent.includes('live-9'), `the overflowed key was never replayed (${replays} replays)`));
      q.backfill([item('good-2')].values(), 'due');
      await eventually(() => assert.ok(sent.includes('good-2'), 'a later replay went nowhere'));
      assert.ok(q.depth <= 4);
    } finally {
      await q.stop();
    }
  });

  test('while the sink takes nothing, a replay keeps to its half of the queue: a live key still fits, and no replay follows (review)', async () => {
    let down = true;
    let replays = 0;
    const sent = new Set<string>();
    const q = new DeliveryQueue({
      sink: { name: 'down', send: async (messages) => messages.map((m) => (down ? { ok: false, error: 'unavailable' } : (sent.add(m.key.split('/').at(-1) ?? ''), { ok: true }))) },
      // Slow enough that no entry fails five times within the 300 ms looked at.
      capacity: 10, windowMs: 0, logger: silentLogger, backoff: { minMs: 100, maxMs: 400 },
      build: (x) => messageFor(x, { relayId: 't' }, undefined),
      hooks: { resyncNeeded: () => (replays++, [].values()) },
    });
    try {
      q.backfill(Array.from({ length: 30 }, (_, i) => item(`r${i}`)).values(), 'due');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(q.depth, 5, 'the replay\'s half, retried');
      assert.equal(q.add(item('live')), true);
      down = false;
      await eventually(() => assert.equal(sent.size, 31));
      assert.equal(replays, 0, 'nothing overflowed');
    } finally {
      await q.stop();
    }
  });

  test('at most one replay waits behind the one being sent, however many resyncs come while the sink is down (review)', async () => {
    const sent: string[] = [];
    let down = true;
    const q = new DeliveryQueue({
      sink: { name: 'down', send: async (messages) => messages.map((m) => (down ? { ok: false, error: 'unavailable' } : (sent.push(m.key.split('/').at(-1) ?? ''), { ok: true }))) },
      capacity: 2, windowMs: 0, logger: silentLogger, backoff: { minMs: 5, maxMs: 20 },
      build: (x) => messageFor(x, { relayId: 't' }, undefined),
      hooks: { resyncNeeded: () => [].values() },
    });
    const waiting = (): number => (q as unknown as { backfills: unknown[] }).backfills.length;
    try {
      q.backfill(['a', 'b', 'c'].map(item).values());
      await eventually(() => assert.equal(q.depth, 2));
      q.backfill([item('all-1')].values(), 'all');
      for (let i = 0; i < 20; i++) q.backfill([item(`due-${i}`)].values(), 'due');
      assert.equal(waiting(), 2, 'the one being sent and one waiting');
      q.backfill([item('all-2')].values(), 'all');
      assert.equal(waiting(), 2);
      down = false;
      await eventually(() => assert.equal(q.depth + waiting(), 0));
      assert.deepEqual(sent.filter((k) => !['a', 'b', 'c'].includes(k)), ['all-2'], 'the waiting "all" kept its place before "due" ones, and the newest "all" took it');
    } finally {
      await q.stop();
    }
  });

  test('a requeue that finds the queue full is refused, and asks for no replay: with a queue of 2, requeued keys replayed the cache for good (review)', async () => {
    let replays = 0;
    const q = new DeliveryQueue({
      sink: { name: 'slow', send: async (messages) => messages.map(() => ({ ok: true })) },
      capacity: 2, windowMs: 60_000, logger: silentLogger,
      build: (x) => messageFor(x, { relayId: 't' }, undefined),
      hooks: { resyncNeeded: () => (replays++, [].values()) },
    });
    try {
      assert.equal(q.add(item('a')), true);
      assert.equal(q.add(item('b')), true);
      assert.equal(q.requeue(item('a')), true, 'a key already waiting is no new entry');
      assert.equal(q.requeue(item('c')), false);
      await q.flush();
      assert.equal(q.depth, 0);
      assert.equal(replays, 0);
    } finally {
      await q.stop();
    }
  });
});

describe('partial batch failures', () => {
  test('SendMessageBatch with failed entries: only those are sent again; a SenderFault is not retried', async () => {
    const calls: string[][] = [];
    let failedOnce = false;
    const client = {
      async send(cmd: SendMessageBatchCommand) {
        const entries = cmd.input.Entries ?? [];
        calls.push(entries.map((e) => (JSON.parse(e.MessageBody ?? '') as Envelope).data.name));
        const failed = entries.filter((e) => {
          const name = (JSON.parse(e.MessageBody ?? '') as Envelope).data.name;
          if (name === 'web-poison') return true;
          if (name === 'web-3' && !failedOnce) return (failedOnce = true);
          return false;
        });
        return {
          Successful: entries.filter((e) => !failed.includes(e)).map((e) => ({ Id: e.Id, MessageId: 'm', MD5OfMessageBody: '' })),
          Failed: failed.map((e) => ({ Id: e.Id, Code: 'x', SenderFault: (JSON.parse(e.MessageBody ?? '') as Envelope).data.name === 'web-poison' })),
        };
      },
    } as unknown as SQSClient;
    const w = await withLivePods([...pods(15), pod('web-poison', { app: 'web' })], { sink: sqsSink(client, 'https://sqs.example/q') });
    try {
      await eventually(async () => {
        await w.relay.flush();
        assert.equal(await counter(w.relay.metrics.forwarded), 16);
      });
      const sent = calls.flat();
      assert.equal(sent.filter((n) => n === 'web-3').length, 2, 'the failed entry was sent again');
      assert.equal(sent.filter((n) => n === 'web-poison').length, 1, 'a refused entry is not retried');
      assert.equal(sent.length, 18, 'everything else once');
      assert.deepEqual(calls.at(-1), ['web-3'], 'the retry carried only the failed entry');
      assert.equal(await counter(w.relay.metrics.rejected), 1);
    } finally {
      await w.close();
    }
  });
});

describe('a FIFO queue', () => {
  test('a retry of the same state keeps its MessageDeduplicationId (a try SQS took but whose answer was lost is dropped as a duplicate); a newer state gets a new one (review)', async () => {
    const tries: { name: string; rv: string; dedup: string; group: string }[] = [];
    let failWeb3 = 1;
    let onFail: (() => void) | undefined;
    const client = {
      async send(cmd: SendMessageBatchCommand) {
        const entries = cmd.input.Entries ?? [];
        const failed = entries.filter((e) => {
          const env = JSON.parse(e.MessageBody ?? '') as Envelope;
          tries.push({ name: env.data.name, rv: env.data.resourceVersion ?? '', dedup: e.MessageDeduplicationId ?? '', group: e.MessageGroupId ?? '' });
          return env.data.name === 'web-3' && failWeb3-- > 0;
        });
        if (failed.length > 0) onFail?.();
        return {
          Successful: entries.filter((e) => !failed.includes(e)).map((e) => ({ Id: e.Id, MessageId: 'm', MD5OfMessageBody: '' })),
          Failed: failed.map((e) => ({ Id: e.Id, Code: 'InternalError', SenderFault: false })),
        };
      },
    } as unknown as SQSClient;
    const w = await withLivePods(pods(5), { sink: sqsSink(client, 'https://sqs.example/q.fifo') });
    try {
      await eventually(async () => {
        await w.relay.flush();
        assert.equal(await counter(w.relay.metrics.forwarded), 6);
      });
      const web3 = tries.filter((x) => x.name === 'web-3');
      assert.equal(web3.length, 2, 'tried twice');
      assert.equal(web3[0]?.dedup, web3[1]?.dedup, 'the retry of the same state kept its deduplication id');
      assert.equal(new Set(tries.map((x) => x.dedup)).size, 6, 'every other message its own id');
      // A newer state queued while the key backs off is another message: a new id.
      failWeb3 = 1;
      onFail = () => {
        onFail = undefined;
        const p = w.server.store.get({ ...POD, name: 'web-3' }) as unknown as PodLike;
        w.server.store.put({ ...p, spec: { ...p.spec, nodeName: 'node-late' } });
      };
      churn(w, 4, 1);
      await eventually(async () => {
        await w.relay.flush();
        const last = tries.filter((x) => x.name === 'web-3').slice(2);
        assert.equal(last.length, 2, JSON.stringify(last));
        assert.notEqual(last[0]?.rv, last[1]?.rv, 'the retry carried the newer state');
        assert.notEqual(last[0]?.dedup, last[1]?.dedup, 'so it has a new id');
      });
    } finally {
      await w.close();
    }
  });
});

describe('message ids on retry, at the queue', () => {
  test('a replay merged into a key backing off sends a new id: the cache may be newer than the try that failed (review)', async () => {
    const tries: { id: string; rv: string | undefined }[] = [];
    let fail = 1;
    const q = new DeliveryQueue({
      sink: { name: 'fails-once', send: async (ms) => ms.map((m) => (tries.push({ id: m.id, rv: envelopeOf(m).data.resourceVersion }), fail-- > 0 ? { ok: false, error: 'timeout' } : { ok: true })) },
      capacity: 10, windowMs: 0, logger: silentLogger, backoff: { minMs: 200, maxMs: 200 },
      build: (x, sameId) => messageFor(x, { relayId: 't' }, undefined, sameId),
      hooks: { resyncNeeded: () => [].values() },
    });
    try {
      q.add({ kind: 'Pod', event: 'MODIFIED', namespace: 'ns', name: 'p', at: 0, resourceVersion: '1' });
      await eventually(() => assert.equal(tries.length, 1));
      // While it backs off, a replay brings the cached state, changed meanwhile.
      q.backfill([{ kind: 'Pod', event: 'RESYNC', namespace: 'ns', name: 'p', at: 0, resourceVersion: '2' } as Queued].values());
      await eventually(async () => {
        await q.flush();
        assert.equal(tries.length, 2);
      });
      assert.equal(tries[1]?.rv, '2');
      assert.notEqual(tries[1]?.id, tries[0]?.id);
    } finally {
      await q.stop();
    }
  });
});

describe('deadlines', () => {
  test('a queue endpoint that never answers: each send ends by its deadline, every entry reported failed', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((s) => sockets.add(s)); // accepts, never answers
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    const client = new SQSClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, credentials: { accessKeyId: 't', secretAccessKey: 't' }, requestHandler: { requestTimeout: 200, throwOnRequestTimeout: true } });
    try {
      const sink = sqsSink(client, `http://127.0.0.1:${port}/000000000000/q`, { timeoutMs: 500 });
      const out = await sink.send(Array.from({ length: 12 }, (_, i) => message(`p${i}`)));
      assert.equal(out.length, 12);
      assert.ok(out.every((o) => !o.ok));
    } finally {
      client.destroy();
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });
});

describe('in-memory sink and requeues (workqueue semantics)', () => {
  const queued = (name: string) => ({ kind: 'Pod', event: 'MODIFIED', namespace: 'ns', name, at: Date.now() }) as const;

  test('a requeue past what a timer can hold (a 30-day TTL) waits, rather than firing at once (review)', async () => {
    const fired: string[] = [];
    const q = new Requeue((e) => fired.push(e.name));
    q.after(queued('far'), 30 * 86_400_000);
    await new Promise((r) => setTimeout(r, 40));
    assert.deepEqual(fired, []);
    assert.equal(q.size, 1);
    q.stop();
  });

  test('once stopped, a requeue asks for nothing: handlers answering during the shutdown arm no timer (review)', async () => {
    const fired: string[] = [];
    const q = new Requeue((e) => fired.push(e.name));
    q.after(queued('a'), 10);
    q.stop();
    q.after(queued('b'), 0);
    assert.equal(q.size, 0);
    await new Promise((r) => setTimeout(r, 40));
    assert.deepEqual(fired, []);
  });

  test('a key asked back many times has one timer, at the earliest time asked', async () => {
    const fired: string[] = [];
    const q = new Requeue((e) => fired.push(e.name));
    for (let i = 0; i < 100; i++) q.after(queued('a'), 1000 - i);
    q.after(queued('a'), 30);
    q.after(queued('b'), 30);
    assert.equal(q.size, 2);
    await eventually(() => assert.deepEqual(fired.sort(), ['a', 'b']));
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(fired.sort(), ['a', 'b'], 'each key came back once');
    q.stop();
  });

  test('an overdue handling fails its entry, and the key is not handed to a second worker while it still runs', async () => {
    let calls = 0;
    let block = true;
    let finish = (): void => undefined;
    const sink = memorySink(async () => {
      calls++;
      if (block) await new Promise<void>((r) => (finish = r));
      return { requeueAfterSeconds: null };
    }, () => undefined, { timeoutMs: 30 });
    const first = await sink.send([message('a')]);
    assert.equal(first[0]?.ok, false);
    const second = await sink.send([message('a')]);
    assert.match((second[0] as { error: string }).error, /still being handled/);
    assert.equal(calls, 1, 'not handed to a second worker');
    block = false;
    finish();
    await eventually(async () => assert.equal((await sink.send([message('a')]))[0]?.ok, true));
    assert.equal(calls, 2);
  });

  test('a handling that never ends: retries while it runs are no attempts; once it has run past hungAfterMs the key is dropped, saying why (review)', async () => {
    const sink = memorySink(() => new Promise(() => undefined), () => undefined, { timeoutMs: 10, maxAttempts: 2, hungAfterMs: 80 });
    assert.equal((await sink.send([message('a')]))[0]?.ok, false);
    // A slow handling ends, and its key is handled again then: not dropped by maxAttempts.
    for (let i = 0; i < 3; i++) assert.deepEqual(await sink.send([message('a')]), [{ ok: false, error: 'Pod/ns/a is still being handled' }]);
    await new Promise((r) => setTimeout(r, 100));
    const [hung] = await sink.send([message('a')]);
    assert.equal((hung as { permanent?: boolean }).permanent, true);
    assert.match((hung as { error: string }).error, /Pod\/ns\/a's handling has run \d+ s \(hung\): dropped/);
  });
});

describe('the in-process path: a slow key holds one worker, not the others (review80 M1)', () => {
  const item = (name: string, resourceVersion = '1'): Queued => ({ kind: 'Pod', event: 'MODIFIED', namespace: 'ns', name, uid: name, resourceVersion, at: Date.now() });
  const queueOver = (sink: ConstructorParameters<typeof DeliveryQueue>[0]['sink']): DeliveryQueue => new DeliveryQueue({ sink, capacity: 100, windowMs: 5, logger: silentLogger, build: (x, id) => messageFor(x, { relayId: 't' }, undefined, id), hooks: { resyncNeeded: () => [].values() } });
  /** A gate per name: `wait(name)` resolves once `open(name)` (or openAll) is called. */
  const gates = () => {
    const opens = new Map<string, () => void>();
    const waits = new Map<string, Promise<void>>();
    const gate = (name: string): Promise<void> => {
      if (!waits.has(name)) waits.set(name, new Promise<void>((r) => opens.set(name, r)));
      return waits.get(name)!;
    };
    return { wait: gate, open: (name: string) => { void gate(name); opens.get(name)?.(); }, openAll: () => { for (const o of opens.values()) o(); } };
  };

  test('keys that come due while a handling hangs are handled before it ends (the handling timeout is 60 s: the old queue waited for it)', async () => {
    const order: string[] = [];
    const g = gates();
    const sink = memorySink(async (e) => {
      order.push(`start ${e.data.name}`);
      if (e.data.name === 'slow') await g.wait('slow');
      order.push(`end ${e.data.name}`);
      return { requeueAfterSeconds: null };
    }, () => undefined);
    const q = queueOver(sink);
    try {
      q.add(item('slow'));
      await eventually(() => assert.deepEqual(order, ['start slow']));
      for (const n of ['a', 'b', 'c', 'd', 'e']) q.add(item(n));
      await eventually(() => assert.equal(order.filter((o) => o.startsWith('end ')).length, 5), 10_000);
      assert.ok(!order.includes('end slow'), `every other key was handled while the slow one ran: ${order.join(', ')}`);
      g.open('slow');
      await eventually(() => assert.ok(order.includes('end slow')));
    } finally {
      g.openAll();
      await q.stop();
    }
  });

  test('the sink\'s concurrency bounds the handlings at once; a key freed by an ending handling is taken then', async () => {
    let now = 0;
    let most = 0;
    const started: string[] = [];
    const g = gates();
    const sink = memorySink(async (e) => {
      started.push(e.data.name);
      most = Math.max(most, ++now);
      await g.wait(e.data.name);
      now--;
      return { requeueAfterSeconds: null };
    }, () => undefined, { concurrency: 2 });
    const q = queueOver(sink);
    try {
      for (const n of ['a', 'b', 'c']) q.add(item(n));
      await eventually(() => assert.deepEqual(started, ['a', 'b']));
      g.open('b');
      await eventually(() => assert.deepEqual(started, ['a', 'b', 'c'], 'c is taken by the worker b left'));
      g.openAll();
      await q.flush();
      assert.equal(most, 2);
    } finally {
      g.openAll();
      await q.stop();
    }
  });

  test('a key is never in two sends at once: its newer state waits for the send under way while other keys go; then it goes', async () => {
    const sent: string[] = [];
    const g = gates();
    const sink = {
      name: 'pool', concurrency: 4, batchMax: 1,
      async send(messages: Message[]): Promise<SendOutcome[]> {
        const e = envelopeOf(messages[0]!);
        sent.push(`${e.data.name}@${e.data.resourceVersion}`);
        await g.wait(`${e.data.name}@${e.data.resourceVersion}`);
        return [{ ok: true }];
      },
    };
    const q = queueOver(sink);
    try {
      q.add(item('a', '1'));
      await eventually(() => assert.deepEqual(sent, ['a@1']));
      q.add(item('a', '2'));
      q.add(item('b'));
      g.open('b@1');
      await eventually(() => assert.deepEqual(sent, ['a@1', 'b@1']));
      g.open('a@1');
      await eventually(() => assert.deepEqual(sent, ['a@1', 'b@1', 'a@2'], 'its newer state once the first send ended'));
      g.openAll();
      await q.flush();
      assert.equal(q.depth, 0);
    } finally {
      g.openAll();
      await q.stop();
    }
  });

  test('an overdue handling that ends is no failure: its requeue is armed, and a key whose handlings always overrun is never given up', async () => {
    const requeued: number[] = [];
    let release = (): void => undefined;
    const sink = memorySink(async () => {
      await new Promise<void>((r) => (release = r));
      return { requeueAfterSeconds: 7 };
    }, (_e, ms) => void requeued.push(ms), { timeoutMs: 10, maxAttempts: 2 });
    for (let round = 1; round <= 3; round++) {
      const [out] = await sink.send([message('a')]);
      assert.deepEqual(out, { ok: false, error: 'handling Pod/ns/a took longer than 10 ms (its result is kept when it ends)' }, `round ${round}: failed for now, not given up`);
      release();
      await eventually(() => assert.equal(requeued.length, round, 'the requeue it asked for is armed when it ends'));
    }
    assert.deepEqual(requeued, [7000, 7000, 7000]);
  });

  test('an overdue handling that ends failing counts as a failed attempt then', async () => {
    let release = (): void => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const sink = memorySink(async () => {
      await gate;
      throw new KubeError({ status: 503, message: 'unavailable' });
    }, () => undefined, { timeoutMs: 10, maxAttempts: 2 });
    assert.equal((await sink.send([message('a')]))[0]?.ok, false);
    release();
    // Retries while it still runs are no attempts; the next handling's failure is the second.
    await eventually(async () => assert.deepEqual((await sink.send([message('a')]))[0], { ok: false, permanent: true, error: 'gave up after 2 attempts: unavailable' }));
  });

  test('relay.stop() returns while handlings hang: the leader Lease is not held past the pod\'s grace period (nothing is lost: the successor replays)', { timeout: 30_000 }, async () => {
    let release = (): void => undefined;
    const gate = new Promise<void>((r) => (release = r));
    let started = 0;
    let ended = 0;
    const sink = memorySink(async () => {
      started++;
      await gate;
      ended++;
      return { requeueAfterSeconds: null };
    }, () => undefined);
    const w = await relayWorld([job('j', { app: 'web' })], { sink, stopWaitMs: 100 });
    try {
      await eventually(() => assert.equal(started, 1, 'the job\'s handling hangs'));
      w.server.store.put(pod('web-1', { app: 'web' }));
      await eventually(() => assert.equal(started, 2, 'and its pod\'s'));
      await w.relay.stop();
      assert.equal(ended, 0, 'stop() returned while both still hung');
    } finally {
      release();
      await w.server.close();
    }
  });
});

describe('a failing key', () => {
  test('backs off on its own: a key added after it failed many times is delivered at once', async () => {
    // Were the whole queue to back off with the failing key, after six failures it would
    // wait 50·2⁶ ms = 3.2 s; the key added then must not wait for that.
    const w = await relayWorld([job('j', { app: 'web' })], { backoff: { minMs: 50, maxMs: 60_000, random: () => 1 } });
    try {
      w.sink.failSubjects.add('Pod/default/poison');
      w.server.store.put(pod('poison', { app: 'web' }));
      await eventually(async () => assert.ok(await counter(w.relay.metrics.sendFailures) >= 6), 10_000);
      w.server.store.put(pod('healthy', { app: 'web' }));
      await eventually(() => assert.ok(w.sink.subjects().includes('ADDED Pod/default/healthy'), w.sink.subjects().join(', ')), 1500);
      assert.ok(!w.sink.subjects().some((s) => s.endsWith('poison')), 'the failing key was not delivered');
      assert.equal(await counter(w.relay.metrics.bufferDepth), 1, 'the failing key is still queued, nothing lost');
    } finally {
      await w.close();
    }
  });
});

describe('the memory sink\'s dead-letter path', () => {
  const refused = new KubeError({ status: 403, reason: 'Forbidden', message: 'leases is forbidden' });
  test('an error retrying cannot fix is reported permanent at once; the queue logs the key, counts and drops it', async () => {
    let calls = 0;
    const sink = memorySink(async () => {
      calls++;
      throw new Error('observe failed', { cause: refused });
    }, () => undefined);
    const logged: unknown[] = [];
    const logger = { ...silentLogger, error: (o: unknown) => void logged.push(o) } as typeof silentLogger;
    const w = await relayWorld([job('j', { app: 'web' })], { sink, logger });
    try {
      w.server.store.put(pod('web-1', { app: 'web' }));
      await eventually(async () => assert.equal(await counter(w.relay.metrics.rejected), 2));
      assert.equal(calls, 2, 'each key handled once, not retried');
      assert.deepEqual(logged.map((o) => (o as { key: string }).key).sort(), ['EphemeralJob/default/j', 'Pod/default/web-1']);
      assert.equal(await counter(w.relay.metrics.bufferDepth), 0);
    } finally {
      await w.close();
    }
  });

  test('a transient error is retried, then dropped after maxAttempts; a success in between resets the count', async () => {
    let calls = 0;
    let fail = true;
    const sink = memorySink(async () => {
      calls++;
      if (fail) throw new KubeError({ status: 503, message: 'unavailable' });
      return { requeueAfterSeconds: null };
    }, () => undefined, { maxAttempts: 3 });
    const send = async (name = 'a'): Promise<SendOutcome | undefined> => (await sink.send([message(name)]))[0];
    assert.deepEqual(await send(), { ok: false, error: 'unavailable' });
    fail = false;
    assert.deepEqual(await send(), { ok: true });
    fail = true;
    assert.deepEqual(await send(), { ok: false, error: 'unavailable' });
    assert.deepEqual(await send(), { ok: false, error: 'unavailable' });
    assert.deepEqual(await send('b'), { ok: false, error: 'unavailable' }, 'another key counts on its own');
    assert.deepEqual(await send(), { ok: false, permanent: true, error: 'gave up after 3 attempts: unavailable' }, 'the third failure in a row is the last');
    assert.equal(calls, 6);
  });

  test('the first KubeError in the cause chain decides: a retryable error wrapping a final one is retried', async () => {
    const sink = memorySink(async () => {
      throw new KubeError({ status: 503, message: 'unavailable', cause: refused });
    }, () => undefined);
    const [out] = await sink.send([message('a')]);
    assert.deepEqual(out, { ok: false, error: 'unavailable' });
  });

  test('keys of an envelope refused for good beside others that were handled: their requeue is kept, and the refused keys are reported permanent once, not on every pass', async () => {
    const requeued: number[] = [];
    const sink = memorySink(async () => ({ requeueAfterSeconds: 5, failed: [{ controller: 'ejob', key: 'EphemeralJob/default/bad', error: refused }] }), (_e, ms) => void requeued.push(ms));
    assert.deepEqual((await sink.send([message('a')]))[0], { ok: false, permanent: true, error: 'not retryable: ejob EphemeralJob/default/bad: leases is forbidden' });
    assert.deepEqual((await sink.send([message('a')]))[0], { ok: true }, 'the requeue brings it back; reported already');
    assert.deepEqual(requeued, [5000, 5000]);
  });

  test('a key still refused for good is reported again after REPORT_AGAIN_MS: a refusal that persists keeps showing (operability review)', async () => {
    let now = 0;
    const sink = memorySink(async () => ({ requeueAfterSeconds: 5, failed: [{ controller: 'ejob', key: 'EphemeralJob/default/bad', error: refused }] }), () => undefined, { now: () => now });
    assert.equal((await sink.send([message('a')]))[0]?.ok, false);
    now += REPORT_AGAIN_MS - 1;
    assert.deepEqual((await sink.send([message('a')]))[0], { ok: true }, 'within the window: not again');
    now += 1;
    assert.deepEqual((await sink.send([message('a')]))[0], { ok: false, permanent: true, error: 'not retryable: ejob EphemeralJob/default/bad: leases is forbidden' }, 'reported again');
  });
});

test('a wall clock stepped back an hour does not stop delivery: the queue keeps its own monotonic time (time review)', async () => {
  const sink = new CollectingSink();
  const wall = Date.now();
  mock.timers.enable({ apis: ['Date'], now: wall });
  const q = new DeliveryQueue({ sink, capacity: 10, windowMs: 20, logger: silentLogger, build: (x) => messageFor(x, { relayId: 't' }, undefined), hooks: { resyncNeeded: () => [].values() } });
  try {
    assert.equal(q.add({ kind: 'Pod', event: 'MODIFIED', namespace: 'default', name: 'before', resourceVersion: '1', at: wall }), true);
    mock.timers.setTime(wall - 3_600_000);
    assert.equal(q.add({ kind: 'Pod', event: 'MODIFIED', namespace: 'default', name: 'after', resourceVersion: '1', at: wall - 3_600_000 }), true);
    // Waited for by the monotonic clock (the mocked Date stands still).
    const end = performance.now() + 2000;
    while (sink.got.length < 2 && performance.now() < end) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(sink.got.map((e) => e.data.name).sort(), ['after', 'before']);
  } finally {
    mock.timers.reset();
    await q.stop();
  }
});

describe('several sends at once: a send\'s end does not leave a due key waiting for a later timer (review83 M1)', () => {
  const item = (name: string, rv = '1'): Queued => ({ kind: 'Pod', event: 'MODIFIED', namespace: 'ns', name, uid: name, resourceVersion: rv, at: Date.now() });
  const build = (x: Queued, id?: string): Message => messageFor(x, { relayId: 't' }, undefined, id);

  test('a failed key\'s retry goes at its time, not when a pod held for a minute is due', async () => {
    const order: string[] = [];
    let failures = 0;
    const sink = memorySink(async (e) => {
      order.push(e.data.name);
      if (e.data.name === 'b' && failures++ === 0) throw new Error('transient');
      return { requeueAfterSeconds: null };
    }, () => undefined);
    const q = new DeliveryQueue({ sink, capacity: 100, windowMs: 20, logger: silentLogger, backoff: { minMs: 100, maxMs: 30_000, random: () => 0.5 }, build, hooks: { resyncNeeded: () => [].values() } });
    // Held for a minute: before the fix the retry waited for that timer.
    q.add(item('held'), 60_000);
    q.add(item('b'));
    await eventually(() => assert.deepEqual(order, ['b', 'b']), 5000);
    await q.stop();
  });

  test('a key\'s newer state, queued while its older one was sent, goes once that send ends, not when a pod held for a minute is due', async () => {
    const order: string[] = [];
    let release: () => void = () => {};
    const sink = {
      name: 'pool', concurrency: 4, batchMax: 1,
      async send(messages: Message[]) {
        const e = envelopeOf(messages[0] as Message);
        order.push(`${e.data.name}@${e.data.resourceVersion}`);
        if (e.data.name === 'a' && e.data.resourceVersion === '1') await new Promise<void>((r) => (release = r));
        return [{ ok: true as const }];
      },
    };
    const q = new DeliveryQueue({ sink, capacity: 100, windowMs: 50, logger: silentLogger, build, hooks: { resyncNeeded: () => [].values() } });
    q.add(item('held'), 60_000);
    q.add(item('a', '1'));
    await eventually(() => assert.deepEqual(order, ['a@1']));
    q.add(item('a', '2'));
    release();
    await eventually(() => assert.deepEqual(order, ['a@1', 'a@2']), 5000);
    await q.stop();
  });
});

describe('the memory sink under throttling (review90 L1)', () => {
  const throttled = new KubeError({ status: 429, reason: 'TooManyRequests', message: 'too many requests', retryAfterSeconds: 32 });

  test('a handling the API server throttled fails with the server\'s wait and is no attempt: the key is never dropped for it', async () => {
    let calls = 0;
    const sink = memorySink(async () => {
      calls++;
      throw new Error('observe failed', { cause: throttled });
    }, () => undefined, { maxAttempts: 3 });
    for (let i = 0; i < 10; i++) assert.deepEqual((await sink.send([message('a')]))[0], { ok: false, error: 'observe failed', retryAfterMs: 32_000 });
    assert.equal(calls, 10);
  });

  test('the delivery queue retries a key no sooner than the wait the sink was asked for, when that is longer than its backoff', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    let clock = 0;
    const sent: number[] = [];
    const sink = {
      name: 'throttled', concurrency: 4, batchMax: 1,
      async send(): Promise<SendOutcome[]> {
        sent.push(clock);
        return [sent.length === 1 ? { ok: false, error: 'too many requests', retryAfterMs: 32_000 } : { ok: true }];
      },
    };
    const build = (x: Queued, id?: string): Message => messageFor(x, { relayId: 't' }, undefined, id);
    const q = new DeliveryQueue({ sink, capacity: 100, windowMs: 10, logger: silentLogger, backoff: { minMs: 200, maxMs: 30_000, random: () => 1 }, build, now: () => clock, hooks: { resyncNeeded: () => [].values() } });
    const advance = async (ms: number): Promise<void> => {
      for (let left = ms; left > 0; left -= 100) {
        clock += Math.min(100, left);
        t.mock.timers.tick(Math.min(100, left));
        for (let i = 0; i < 5; i++) await new Promise<void>((r) => queueMicrotask(r));
      }
    };
    q.add({ kind: 'Pod', event: 'MODIFIED', namespace: 'ns', name: 'a', uid: 'a', resourceVersion: '1', at: Date.now() });
    await advance(100);
    assert.equal(sent.length, 1);
    // Its own backoff would have retried it after 200 ms.
    await advance(31_000);
    assert.equal(sent.length, 1, 'not before the server\'s 32 s');
    await advance(1_200);
    assert.equal(sent.length, 2);
    await q.stop();
  });
});
