import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eventually, job, pod, relayWorld } from '../support/relay-world.ts';

const POD = { apiVersion: 'v1', kind: 'Pod', namespace: 'default' } as const;
type PodLike = { metadata: Record<string, unknown>; status: Record<string, unknown> };

describe('relay watching through the fake API server', () => {
  test('the initial list emits events for what exists: the jobs that need work, and pods only when they need work alone (due sidecars), not every pod a job selects', async () => {
    const sidecar = [{ name: 'main', image: 'app' }, { name: 'proxy', image: 'envoy', env: [{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' }] }];
    const due = { ...pod('batch-1', { app: 'web' }, { restartPolicy: 'Never', containers: sidecar }), status: { phase: 'Running', containerStatuses: [{ name: 'main', state: { terminated: { exitCode: 0 } } }, { name: 'proxy', state: { running: {} } }] } };
    const w = await relayWorld([job('j', { app: 'web' }), pod('web-1', { app: 'web' }), pod('other', { app: 'db' }), due]);
    try {
      await w.relay.flush();
      assert.ok(w.relay.ready());
      // Each pod the job selects would be one more reconcile of the job, LISTing all its pods
      // (review: O(N²) at every start). The job goes once, from the replay after the pods'
      // list, so one of its reconciles follows every pod state listed.
      assert.deepEqual(w.sink.subjects().sort(), ['RESYNC EphemeralJob/default/j', 'RESYNC Pod/default/batch-1']);
      const env = w.sink.got.find((e) => e.data.name === 'batch-1');
      assert.equal(env?.specversion, '1.0');
      assert.deepEqual(env?.data.jobs, [], 'the job it is selected by is sent itself');
      assert.deepEqual((env?.data.snapshot as { metadata: { labels: unknown } }).metadata.labels, { app: 'web' });
    } finally {
      await w.close();
    }
  });

  test('watch events are forwarded, coalesced per key, and changes nobody reads are dropped', async () => {
    const w = await relayWorld([job('j', { app: 'web' }), pod('web-1', { app: 'web' })]);
    try {
      await w.relay.flush();
      w.sink.clear();
      const p = w.server.store.get({ ...POD, name: 'web-1' }) as unknown as PodLike;
      // Irrelevant changes (an annotation; a label that selects the pod for the same jobs) are
      // dropped; three relevant ones become one event.
      w.server.store.put({ ...p, metadata: { ...p.metadata, annotations: { a: 'b' } } });
      w.server.store.put({ ...p, metadata: { ...p.metadata, labels: { app: 'web', v: '1' } } });
      for (const phase of ['Pending', 'Failed', 'Running']) {
        const cur = w.server.store.get({ ...POD, name: 'web-1' }) as unknown as PodLike;
        w.server.store.put({ ...cur, status: { ...cur.status, phase, containerStatuses: [{ name: 'main', restartCount: Math.random(), state: { running: {} } }] } });
      }
      await eventually(async () => {
        await w.relay.flush();
        assert.deepEqual(w.sink.subjects(), ['MODIFIED Pod/default/web-1']);
      });
      assert.ok(((await w.relay.metrics.coalesced.get()).values[0]?.value ?? 0) >= 1, 'bursts were coalesced');
      const latest = w.server.store.get({ ...POD, name: 'web-1' }) as { metadata: { resourceVersion: string } };
      assert.equal(w.sink.got[0]?.data.resourceVersion, latest.metadata.resourceVersion, 'the latest resourceVersion wins');
    } finally {
      await w.close();
    }
  });

  test('410 Gone → re-list; a delete missed during the gap is emitted', async () => {
    const w = await relayWorld([job('j', { app: 'web' }), pod('web-1', { app: 'web' }), pod('web-2', { app: 'web' })]);
    try {
      await w.relay.flush();
      w.sink.clear();
      // Break the watch and lose history: the relay must re-list and notice web-2 is gone.
      w.server.faults.add({ watch: true, status: 410, times: 1 });
      w.server.store.delete({ ...POD, name: 'web-2' });
      w.server.compact();
      w.server.faults.resetWatches();
      await eventually(async () => {
        await w.relay.flush();
        assert.ok(w.sink.subjects().includes('DELETED Pod/default/web-2'), w.sink.subjects().join(', '));
      }, 10_000);
      const restarts = (await w.relay.metrics.watchRestarts.get()).values.reduce((n, v) => n + v.value, 0);
      assert.ok(restarts >= 1);
    } finally {
      await w.close();
    }
  });

  test('the sink being down loses nothing: the latest need per key is sent after recovery', async () => {
    const w = await relayWorld([job('j', { app: 'web' }), pod('web-1', { app: 'web' })]);
    try {
      await w.relay.flush();
      w.sink.clear();
      w.sink.failing = true;
      const cur = w.server.store.get({ ...POD, name: 'web-1' }) as unknown as PodLike;
      w.server.store.put({ ...cur, status: { ...cur.status, phase: 'Failed' } });
      await eventually(async () => {
        await w.relay.flush();
        assert.equal((await w.relay.metrics.bufferDepth.get()).values[0]?.value, 1);
      });
      w.sink.failing = false;
      await eventually(async () => {
        await w.relay.flush();
        assert.deepEqual(w.sink.subjects(), ['MODIFIED Pod/default/web-1']);
      }, 10_000);
    } finally {
      await w.close();
    }
  });
});
