// A pod deleted and created again under the same name is two objects (two uids): the jobs
// that cared about the old one are told it went, whether the relay saw the change on the
// watch or only through a re-list, and however close together the two events came.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Envelope } from '../../functions/api/envelope.ts';
import { eventually, job, pod, relayWorld } from '../support/relay-world.ts';

const POD = { apiVersion: 'v1', kind: 'Pod', namespace: 'default' } as const;
type World = Awaited<ReturnType<typeof relayWorld>>;

const uidOfP = (w: World): string => (w.server.store.get({ ...POD, name: 'p' }) as unknown as { metadata: { uid: string } }).metadata.uid;
const sentP = (w: World): Envelope[] => w.sink.got.filter((e) => e.data.kind === 'Pod' && e.data.name === 'p');
const brief = (e: Envelope): unknown => ({ event: e.data.event, uid: e.data.uid, jobs: e.data.jobs, labels: (e.data.snapshot as { metadata: { labels: unknown } }).metadata.labels });
const podSeen = async (w: World): Promise<number> => (await w.relay.metrics.seen.get()).values.filter((v) => v.labels.kind === 'Pod').reduce((n, v) => n + v.value, 0);

/** Jobs a (app=a) and b (app=b), and pod p (app=a), everything listed and sent. */
async function world(overrides: Parameters<typeof relayWorld>[1] = {}): Promise<World> {
  const w = await relayWorld([job('a', { app: 'a' }), job('b', { app: 'b' }), pod('p', { app: 'a' })], overrides);
  await w.relay.flush();
  w.sink.clear();
  return w;
}

describe('a pod replaced under the same name', () => {
  test('found by a re-list: DELETED for the old uid (its jobs, its last state) first, then the new one', async () => {
    const w = await world();
    try {
      const old = uidOfP(w);
      // Cut the pod watch; its next start answers 410, so the relay only learns by listing.
      w.server.faults.add({ watch: true, pathIncludes: '/pods', status: 410, times: 1 });
      w.server.faults.resetWatches();
      w.server.store.delete({ ...POD, name: 'p' });
      w.server.store.put(pod('p', { app: 'b' }));
      const replacement = uidOfP(w);
      // The re-list's event for the new pod: what it found is queued by then, in the order found.
      await eventually(async () => {
        await w.relay.flush();
        assert.ok(sentP(w).some((e) => e.data.event === 'RESYNC'), 're-listed');
      }, 10_000);
      assert.deepEqual(sentP(w).map(brief), [
        { event: 'DELETED', uid: old, jobs: ['a'], labels: { app: 'a' } },
        { event: 'RESYNC', uid: replacement, jobs: ['b'], labels: { app: 'b' } },
      ]);
    } finally {
      await w.close();
    }
  });

  test('on the watch, within one coalescing window: the DELETED is not merged into the new pod\'s ADDED', async () => {
    const w = await world({ coalesceMs: 60_000 });
    try {
      const old = uidOfP(w);
      const seen = await podSeen(w);
      w.server.store.delete({ ...POD, name: 'p' });
      w.server.store.put(pod('p', { app: 'b' }));
      const replacement = uidOfP(w);
      await eventually(async () => assert.equal(await podSeen(w), seen + 2, 'the relay saw both events'));
      await w.relay.flush();
      assert.deepEqual(sentP(w).map(brief), [
        { event: 'DELETED', uid: old, jobs: ['a'], labels: { app: 'a' } },
        { event: 'ADDED', uid: replacement, jobs: ['b'], labels: { app: 'b' } },
      ]);
    } finally {
      await w.close();
    }
  });

  test('events of one pod still coalesce: a change then the deletion of the same uid is one DELETED', async () => {
    const w = await world({ coalesceMs: 60_000 });
    try {
      const old = uidOfP(w);
      const seen = await podSeen(w);
      const cur = w.server.store.get({ ...POD, name: 'p' }) as unknown as { spec: Record<string, unknown> };
      w.server.store.put({ ...cur, spec: { ...cur.spec, nodeName: 'node-2' } });
      w.server.store.delete({ ...POD, name: 'p' });
      await eventually(async () => assert.equal(await podSeen(w), seen + 2, 'the relay saw both events'));
      await w.relay.flush();
      assert.deepEqual(sentP(w).map(brief), [{ event: 'DELETED', uid: old, jobs: ['a'], labels: { app: 'a' } }]);
    } finally {
      await w.close();
    }
  });
});
