import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { silentLogger } from '../../functions/engine/logger.ts';
import { startApiServer } from '../../functions/cluster/index.ts';
import { Reflector } from '../../relay/reflector.ts';
import { createRelay } from '../../relay/relay.ts';
import { CollectingSink, eventually, FAST_BACKOFF, job, pod } from '../support/relay-world.ts';

const sidecar = [{ name: 'main', image: 'app' }, { name: 'proxy', image: 'envoy', env: [{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' }] }];
/** A pod whose main container exited while its sidecar runs: the SidecarTerminator's work. */
const duePod = {
  ...pod('batch-1', { app: 'batch' }, { restartPolicy: 'Never', containers: sidecar }),
  status: { phase: 'Running', containerStatuses: [{ name: 'main', state: { terminated: { exitCode: 0 } } }, { name: 'proxy', state: { running: {} } }] },
};

async function world(status: number, jobsFirstMs?: number): Promise<{ server: Awaited<ReturnType<typeof startApiServer>>; relay: ReturnType<typeof createRelay>; sink: CollectingSink; installCrd(): void; close(): Promise<void> }> {
  const server = await startApiServer({ objects: [duePod], bookmarkIntervalMs: 200 });
  // Every non-watch request on the EphemeralJob collection: as without the CRD (404) or the list right (403).
  const fault = server.faults.add({ pathIncludes: '/ephemeraljobs', watch: false, status, times: Infinity });
  const sink = new CollectingSink();
  const relay = createRelay({ kubeConfig: server.kubeConfig(), sink, namespaces: [], relayId: 'test', coalesceMs: 0, resyncSeconds: 3600, bufferMax: 100, logger: silentLogger, backoff: FAST_BACKOFF, absentRetryMs: 100, ...(jobsFirstMs !== undefined ? { jobsFirstMs } : {}) });
  return { server, relay, sink, installCrd: () => fault.remove(), close: async () => { await relay.stop(); await server.close(); } };
}

describe('relay in a cluster without EphemeralJobs', () => {
  for (const status of [404, 403]) {
    test(`a ${status} on the EphemeralJob list: pods are still watched, a due sidecar pod is forwarded, readyz is ready`, async () => {
      const w = await world(status);
      try {
        await eventually(async () => {
          await w.relay.flush();
          assert.deepEqual(w.sink.subjects(), ['RESYNC Pod/default/batch-1']);
        });
        assert.equal(w.sink.got[0]?.data.jobs, undefined, 'no job stamp: the relay does not know the jobs, the functions list them');
        assert.equal(w.relay.readiness(), 'ready');
        assert.equal((await w.relay.metrics.absent.get()).values.find((v) => v.labels.kind === 'EphemeralJob')?.value, 1);
      } finally {
        await w.close();
      }
    });
  }

  test('a job list that keeps failing (500) does not hold back the pods: after jobsFirstMs they are listed and a due sidecar pod forwarded, naming no jobs (review)', async () => {
    const w = await world(500, 300);
    try {
      const podRequests = (): number => w.server.requests.filter((r) => r.path.endsWith('/pods')).length;
      await eventually(async () => {
        await w.relay.flush();
        assert.deepEqual(w.sink.subjects(), ['RESYNC Pod/default/batch-1']);
      });
      assert.ok(podRequests() >= 1);
      assert.equal(w.sink.got[0]?.data.jobs, undefined, 'no job stamp: the jobs are not known yet');
      assert.match(w.relay.readiness(), /^waiting for the first list of \/apis\/apps\.kruise\.io\/v1alpha1\/ephemeraljobs: failing for \d+s \(.*HTTP 500/, 'not ready while the jobs cannot be listed, and why');
      // The job list recovers: its jobs are forwarded, and pods are named with them from then on.
      w.server.store.put(job('j', { app: 'batch' }));
      w.installCrd();
      await eventually(async () => {
        await w.relay.flush();
        assert.ok(w.sink.subjects().includes('RESYNC EphemeralJob/default/j'), w.sink.subjects().join(', '));
      });
      await w.relay.synced();
      assert.equal(w.relay.readiness(), 'ready');
      const p = w.server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'batch-1' }) as Record<string, unknown>;
      w.server.store.put({ ...p, status: { phase: 'Running', containerStatuses: [{ name: 'main', state: { terminated: { exitCode: 0 } } }, { name: 'proxy', state: { terminated: { exitCode: 0 } } }] } });
      await eventually(async () => {
        await w.relay.flush();
        assert.deepEqual(w.sink.got.at(-1)?.data.jobs, ['j']);
      });
    } finally {
      await w.close();
    }
  });

  test('while the job list keeps failing, resyncs still replay the due sidecar pods once the pods are listed (review: a new leader replayed nothing)', async () => {
    const w = await world(500, 200);
    try {
      await eventually(async () => {
        await w.relay.flush();
        assert.deepEqual(w.sink.subjects(), ['RESYNC Pod/default/batch-1']);
      });
      w.sink.clear();
      w.relay.resync('became leader', 'all');
      await w.relay.flush();
      assert.deepEqual(w.sink.subjects(), ['RESYNC Pod/default/batch-1']);
      w.sink.clear();
      w.relay.resync('periodic resync', 'due');
      await w.relay.flush();
      assert.deepEqual(w.sink.subjects(), ['RESYNC Pod/default/batch-1']);
      assert.equal(w.sink.got[0]?.data.jobs, undefined);
    } finally {
      await w.close();
    }
  });

  test('the job list keeps being tried slowly: a CRD installed later is picked up and its jobs forwarded', async () => {
    const w = await world(404);
    try {
      const jobLists = (): number => w.server.requests.filter((r) => r.verb === 'list' && r.path.includes('/ephemeraljobs')).length;
      await eventually(() => assert.ok(jobLists() >= 3, `${jobLists()} job lists`));
      w.server.store.put(job('j', { app: 'web' }));
      w.installCrd();
      await eventually(async () => {
        await w.relay.flush();
        assert.ok(w.sink.subjects().includes('RESYNC EphemeralJob/default/j'), w.sink.subjects().join(', '));
      });
      assert.equal((await w.relay.metrics.absent.get()).values.find((v) => v.labels.kind === 'EphemeralJob')?.value, 0);
    } finally {
      await w.close();
    }
  });

  test('a 404 for a moment on the job list is over within seconds, though absent lists are retried every minute (chaos seed 11146)', async () => {
    const server = await startApiServer({ objects: [job('j', { app: 'web' })] });
    server.faults.add({ pathIncludes: '/ephemeraljobs', watch: false, status: 404, times: 2 });
    const sink = new CollectingSink();
    const relay = createRelay({ kubeConfig: server.kubeConfig(), sink, namespaces: [], relayId: 'test', coalesceMs: 0, resyncSeconds: 3600, bufferMax: 100, logger: silentLogger, backoff: FAST_BACKOFF, absentRetryMs: 60_000 });
    try {
      await eventually(async () => {
        await relay.flush();
        assert.ok(sink.subjects().includes('RESYNC EphemeralJob/default/j'), sink.subjects().join(', '));
      });
      const jobLists = server.requests.filter((r) => r.verb === 'list' && r.path.includes('/ephemeraljobs')).length;
      assert.equal(jobLists, 3, 'two answered 404, the third listed the job');
    } finally {
      await relay.stop();
      await server.close();
    }
  });

  test('with namespaces, the gauge stays up while any of them cannot list its jobs (review)', async () => {
    const server = await startApiServer({ objects: [{ ...job('ja', { app: 'web' }), metadata: { name: 'ja', namespace: 'a' } }, { ...job('jb', { app: 'web' }), metadata: { name: 'jb', namespace: 'b' } }] });
    const fa = server.faults.add({ pathIncludes: '/namespaces/a/ephemeraljobs', watch: false, status: 403, times: Infinity });
    const fb = server.faults.add({ pathIncludes: '/namespaces/b/ephemeraljobs', watch: false, status: 403, times: Infinity });
    const relay = createRelay({ kubeConfig: server.kubeConfig(), sink: new CollectingSink(), namespaces: ['a', 'b'], relayId: 'test', coalesceMs: 0, resyncSeconds: 3600, bufferMax: 100, logger: silentLogger, backoff: FAST_BACKOFF, absentRetryMs: 100 });
    const gauge = async (): Promise<number | undefined> => (await relay.metrics.absent.get()).values.find((v) => v.labels.kind === 'EphemeralJob')?.value;
    const lists = (ns: string): number => server.requests.filter((r) => r.verb === 'list' && r.path.includes(`/namespaces/${ns}/ephemeraljobs`)).length;
    try {
      await eventually(async () => assert.equal(await gauge(), 1));
      fa.remove();
      const before = lists('a');
      await eventually(() => assert.ok(lists('a') > before, 'namespace a listed again'));
      await relay.flush();
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(await gauge(), 1, 'b still answers 403');
      fb.remove();
      await eventually(async () => assert.equal(await gauge(), 0));
    } finally {
      await relay.stop();
      await server.close();
    }
  });

  for (const [status, why] of [[404, 'the CRD is deleted'], [403, 'the list and watch right is revoked']] as const) {
    test(`${why} while the relay runs: the watch's ${status} leads to the list, which sets the gauge and logs as at start`, async () => {
      const server = await startApiServer({ objects: [job('j', { app: 'web' }), duePod] });
      const warned: string[] = [];
      const logger = { ...silentLogger, warn: (_o: unknown, msg?: string) => void warned.push(msg ?? '') } as typeof silentLogger;
      const sink = new CollectingSink();
      const relay = createRelay({ kubeConfig: server.kubeConfig(), sink, namespaces: [], relayId: 'test', coalesceMs: 0, resyncSeconds: 3600, bufferMax: 100, logger, backoff: FAST_BACKOFF, absentRetryMs: 100 });
      const gauge = async (): Promise<number | undefined> => (await relay.metrics.absent.get()).values.find((v) => v.labels.kind === 'EphemeralJob')?.value;
      try {
        await relay.synced();
        assert.notEqual(await gauge(), 1);
        const fault = server.faults.add({ pathIncludes: '/ephemeraljobs', status, times: Infinity });
        // The running watch ends (as the API server ends watches of a deleted CRD); the next one is refused.
        server.faults.closeWatches();
        await eventually(async () => assert.equal(await gauge(), 1));
        assert.ok(warned.some((m) => m.includes(status === 404 ? 'is not installed' : 'may not list')), warned.join(' | '));
        await relay.flush();
        // A deleted CRD took its jobs with it; a right refused says only that they cannot be
        // seen: before, a 403 for a moment sent a DELETED for every job (review).
        const deleted = sink.subjects().filter((x) => x.startsWith('DELETED EphemeralJob'));
        assert.deepEqual(deleted, status === 404 ? ['DELETED EphemeralJob/default/j'] : []);
        if (status === 403) {
          sink.clear();
          fault.remove();
          await eventually(async () => assert.equal(await gauge(), 0));
          await relay.flush();
          assert.deepEqual(sink.subjects().filter((x) => x.includes('EphemeralJob')), [], 'the list that works again finds the job as it was');
        }
      } finally {
        await relay.stop();
        await server.close();
      }
    });
  }
});

describe('absent lists are tried again quickly a few times, then every retryMs', () => {
  /** A job reflector whose lists answer as `answer(n)` says (n from 1), its watches 404; lists counted for `ms`. */
  async function lists(answer: (n: number) => 'absent' | 'ok', ms: number, watchStatus = 404): Promise<{ lists: number; events: Record<string, number> }> {
    const server = await startApiServer({ objects: [] });
    server.faults.add({ pathIncludes: '/ephemeraljobs', watch: true, status: watchStatus, times: Infinity });
    let n = 0;
    const events: Record<string, number> = {};
    const jobs = [0, 1, 2].map((i) => ({ metadata: { namespace: 'default', name: `j${i}`, uid: `u${i}` } }));
    const r = new Reflector<{ metadata: { name: string; uid: string } }>({
      kind: 'EphemeralJob', path: '/apis/apps.kruise.io/v1alpha1/ephemeraljobs', kubeConfig: server.kubeConfig(), logger: silentLogger,
      listPage: async (_cont, _signal, map) => {
        n++;
        if (answer(n) === 'absent') throw Object.assign(new Error('the server could not find the requested resource'), { statusCode: 404 });
        return { items: jobs.map(map), resourceVersion: '1' };
      },
      decode: (raw: unknown) => {
        const o = raw as { metadata: { name: string; uid: string } };
        return { key: `default/${o.metadata.name}`, fingerprint: JSON.stringify(o), object: o };
      },
      fromFingerprint: (fp) => JSON.parse(fp) as { metadata: { name: string; uid: string } },
      uid: (o) => o.metadata.uid,
      onEvent: (type) => void (events[type] = (events[type] ?? 0) + 1),
      // 10 ms · 2^n, no jitter: the quick tries wait 10, 20, 40, 80, 160 ms.
      backoff: { minMs: 10, maxMs: 60_000, random: () => 1 },
      absent: { statuses: [404, 403], keep: [403], retryMs: 60_000, onChange: () => undefined },
    });
    r.start();
    await new Promise((done) => setTimeout(done, ms));
    await r.stop();
    await server.close();
    return { lists: n, events };
  }

  test('a CRD that stays absent: five quick tries, then one list a retryMs', async () => {
    assert.equal((await lists(() => 'absent', 1500)).lists, 6);
  });

  for (const watchStatus of [404, 410]) test(`lists answering 404 and 200 in turn, each watch ending at once with ${watchStatus}: they settle too, not a list of every job every few ms (reviews)`, async () => {
    const got = await lists((n) => (n % 2 === 1 ? 'absent' : 'ok'), 1500, watchStatus);
    assert.ok(got.lists >= 6 && got.lists <= 12, `${got.lists} lists, events ${JSON.stringify(got.events)}`);
  });

  for (const end of [403, 410]) test(`a watch that ran, then ended with ${end}, ends the run of absent lists: the next absent list is tried again quickly (review)`, async () => {
    // A server whose watches bring one job, then after 1.2 s an ERROR; its lists are answered by listPage.
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { namespace: 'default', name: 'j9', uid: 'u9', resourceVersion: '2' } } })}\n`);
      setTimeout(() => res.end(`${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: end, message: 'injected' } })}\n`), 1200);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
    const kc = new KubeConfig();
    kc.loadFromOptions({ clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as { port: number }).port}`, skipTLSVerify: true }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
    // Lists 1–5 and 7 answer 403: five quick tries are spent before the watch that runs.
    const refused = new Set([1, 2, 3, 4, 5, 7]);
    const at: number[] = [];
    const t0 = performance.now();
    const r = new Reflector<{ metadata: { name: string; uid: string } }>({
      kind: 'EphemeralJob', path: '/apis/apps.kruise.io/v1alpha1/ephemeraljobs', kubeConfig: kc, logger: silentLogger,
      listPage: async () => {
        at.push(performance.now() - t0);
        if (refused.has(at.length)) throw Object.assign(new Error('forbidden'), { statusCode: 403 });
        return { items: [], resourceVersion: '1' };
      },
      decode: (raw: unknown) => {
        const o = raw as { metadata: { name: string; uid: string } };
        return { key: `default/${o.metadata.name}`, fingerprint: JSON.stringify(o), object: o };
      },
      fromFingerprint: (fp) => JSON.parse(fp) as { metadata: { name: string; uid: string } },
      uid: (o) => o.metadata.uid,
      onEvent: () => undefined,
      backoff: { minMs: 10, maxMs: 60_000, random: () => 1 },
      absent: { statuses: [404, 403], keep: [403], retryMs: 60_000, onChange: () => undefined },
    });
    r.start();
    try {
      await eventually(() => assert.ok(at.length >= 8, `${at.length} lists`), 5000);
      assert.ok((at[7] ?? Infinity) - (at[6] ?? 0) < 1000, `list 8 ${Math.round((at[7] ?? 0) - (at[6] ?? 0))} ms after list 7`);
    } finally {
      await r.stop();
      server.closeAllConnections();
      server.close();
    }
  });
});


describe('a pod list that keeps failing', () => {
  test('does not hold the jobs\' events for good: after podsFirstMs the jobs needing work are sent, and later job changes too (review)', async () => {
    const server = await startApiServer({ objects: [job('j', { app: 'web' })], bookmarkIntervalMs: 200 });
    server.faults.add({ pathIncludes: '/pods', watch: false, method: 'GET', status: 500, times: Infinity });
    const sink = new CollectingSink();
    const relay = createRelay({ kubeConfig: server.kubeConfig(), sink, namespaces: [], relayId: 'test', coalesceMs: 0, resyncSeconds: 3600, bufferMax: 100, logger: silentLogger, backoff: FAST_BACKOFF, podsFirstMs: 300 });
    try {
      await eventually(async () => {
        await relay.flush();
        assert.deepEqual(sink.subjects(), ['RESYNC EphemeralJob/default/j']);
      });
      server.store.put(job('k', { app: 'db' }));
      await eventually(async () => {
        await relay.flush();
        assert.ok(sink.subjects().includes('ADDED EphemeralJob/default/k'), sink.subjects().join(', '));
      });
      assert.match(relay.readiness(), /^waiting for the first list of \/api\/v1\/pods: /, 'still not ready: the pods are not seen');
    } finally {
      await relay.stop();
      await server.close();
    }
  });
});
