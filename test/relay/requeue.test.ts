// In-process requeues (the memory sink's `requeueAfter`) bring a key back, not an old event:
// the requeued envelope is handled again as the key's state now (a RESYNC from the watch
// cache, with its current snapshot and jobs), never as a newer event's replacement.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';
import type { Envelope } from '../../functions/api/envelope.ts';
import { eventually, job, pod, relayWorld } from '../support/relay-world.ts';

const POD = { apiVersion: 'v1', kind: 'Pod', namespace: 'default' } as const;
type World = Awaited<ReturnType<typeof relayWorld>>;
type PodLike = { metadata: { uid: string; resourceVersion: string }; spec: Record<string, unknown> };

const stored = (w: World): PodLike => w.server.store.get({ ...POD, name: 'p' }) as unknown as PodLike;
const sentP = (w: World): Envelope[] => w.sink.got.filter((e) => e.data.kind === 'Pod' && e.data.name === 'p');
/** What a handler needs of an envelope of p: which pod, which event, which jobs. */
const brief = (e: Envelope | undefined): unknown => e && { event: e.data.event, uid: e.data.uid, jobs: e.data.jobs };
const podSeen = async (w: World, type: string): Promise<number> => (await w.relay.metrics.seen.get()).values.filter((v) => v.labels.kind === 'Pod' && v.labels.type === type).reduce((n, v) => n + v.value, 0);

/** Delete p and return the DELETED envelope the relay sent for it (what a handler would requeue). */
async function deleteP(w: World): Promise<Envelope> {
  w.server.store.delete({ ...POD, name: 'p' });
  await eventually(async () => {
    await w.relay.flush();
    assert.ok(sentP(w).some((e) => e.data.event === 'DELETED'), 'the deletion was sent');
  });
  const deleted = sentP(w).find((e) => e.data.event === 'DELETED');
  assert.ok(deleted);
  w.sink.clear();
  return deleted;
}

describe('an in-process requeue brings the key back, not the old event', () => {
  test('a requeued DELETED of an old pod does not overwrite the queued ADDED of its same-name replacement', async () => {
    // A long coalescing window: the replacement's ADDED is still queued when the requeue fires.
    const w = await relayWorld([job('a', { app: 'a' }), job('b', { app: 'b' }), pod('p', { app: 'a' })], { coalesceMs: 60_000 });
    try {
      await w.relay.flush();
      const old = stored(w).metadata.uid;
      const deleted = await deleteP(w);
      assert.deepEqual(brief(deleted), { event: 'DELETED', uid: old, jobs: ['a'] });
      w.server.store.put(pod('p', { app: 'b' }));
      const replacement = stored(w).metadata.uid;
      await eventually(async () => assert.equal(await podSeen(w, 'ADDED'), 1, 'the relay queued the replacement'));
      w.relay.requeue(deleted, 0);
      await sleep(20); // a later timer: the requeue's (0 ms) has fired by then
      await w.relay.flush();
      assert.deepEqual(sentP(w).map(brief), [{ event: 'ADDED', uid: replacement, jobs: ['b'] }], 'the queued ADDED of the new pod went out as it was');
    } finally {
      await w.close();
    }
  });

  test('with nothing queued for the key, the requeue sends its state now: current snapshot and jobs, as a replay', async () => {
    const w = await relayWorld([job('a', { app: 'web' }), pod('p', { app: 'web' })]);
    try {
      await w.relay.flush();
      assert.deepEqual(sentP(w), [], 'the first list sends the job, not its pods');
      w.server.store.put({ ...stored(w), spec: { ...stored(w).spec, nodeName: 'node-1' } });
      await eventually(async () => {
        await w.relay.flush();
        assert.equal(sentP(w).length, 1);
      });
      const first = sentP(w)[0];
      assert.deepEqual(brief(first), { event: 'MODIFIED', uid: stored(w).metadata.uid, jobs: ['a'] });
      // Since then: a second job selects p, and p changed (a field the functions read).
      w.server.store.put(job('b', { app: 'web' }));
      w.server.store.put({ ...stored(w), spec: { ...stored(w).spec, nodeName: 'node-2' } });
      await eventually(async () => {
        await w.relay.flush();
        assert.ok(sentP(w).filter((e) => e.data.event === 'MODIFIED').length === 2);
      });
      w.sink.clear();
      w.relay.requeue(first as Envelope, 0);
      await eventually(async () => {
        await w.relay.flush();
        assert.equal(sentP(w).length, 1);
      });
      const [again] = sentP(w);
      assert.deepEqual(brief(again), { event: 'RESYNC', uid: stored(w).metadata.uid, jobs: ['a', 'b'] }, 'the jobs that concern p now');
      // As a replay: the cache keeps no resourceVersion, and the requeued one is stale.
      assert.ok(first?.data.resourceVersion !== undefined);
      assert.equal(again?.data.resourceVersion, undefined, 'not the requeued event\'s resourceVersion');
      assert.equal((again?.data.snapshot as { spec: { nodeName?: string } }).spec.nodeName, 'node-2');
    } finally {
      await w.close();
    }
  });

  test('a key requeued twice comes back once, at the earlier time, with the later payload (the pod has left the cache)', async () => {
    const w = await relayWorld([job('a', { app: 'a' }), job('b', { app: 'b' }), pod('p', { app: 'a' })]);
    try {
      await w.relay.flush();
      const first = await deleteP(w);
      w.server.store.put(pod('p', { app: 'b' }));
      await eventually(async () => {
        await w.relay.flush();
        assert.equal(sentP(w).length, 1, 'the replacement was sent');
      });
      const second = await deleteP(w);
      assert.deepEqual([first.data.jobs, second.data.jobs], [['a'], ['b']]);
      w.relay.requeue(first, 30);
      w.relay.requeue(second, 60);
      await eventually(async () => {
        await w.relay.flush();
        assert.equal(sentP(w).length, 1);
      });
      await sleep(80); // past the later time asked for: still one
      await w.relay.flush();
      assert.deepEqual(sentP(w).map(brief), [brief(second)], 'the later requeue\'s payload, once');
    } finally {
      await w.close();
    }
  });
});
