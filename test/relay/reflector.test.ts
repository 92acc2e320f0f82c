// The relay's list/watch loop against the fake API server: startup under errors, re-lists
// beside live events, one fingerprint for list and watch, bad objects, cache resync.
import assert from 'node:assert/strict';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { describe, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { silentLogger } from '../../functions/engine/logger.ts';
import { startApiServer } from '../../functions/cluster/index.ts';
import { createMetrics } from '../../relay/metrics.ts';
import { grantChecked, shippedAuthorization, TOKENS } from '../support/shipped-rbac.ts';
import { Reflector } from '../../relay/reflector.ts';
import { ListError } from '../../relay/raw-list.ts';
import { createRelay, startRelay } from '../../relay/relay.ts';
import { CollectingSink, eventually, FAST_BACKOFF, job, pod, relayWorld } from '../support/relay-world.ts';

const POD = { apiVersion: 'v1', kind: 'Pod', namespace: 'default' } as const;
type PodLike = { metadata: Record<string, unknown>; status: { containerStatuses: Record<string, unknown>[] } & Record<string, unknown> };
const getPod = (w: { server: { store: { get(k: unknown): unknown } } }, name: string): PodLike => w.server.store.get({ ...POD, name }) as PodLike;
const counter = async (c: { get(): Promise<{ values: { value: number }[] }> }): Promise<number> => (await c.get()).values.reduce((n, v) => n + v.value, 0);

describe('relay start under a busy API server', () => {
  test('500, 503, 429 and resets on the first list: the loop retries, becomes ready, forwards what exists', async () => {
    const server = await startApiServer({ objects: [job('j', { app: 'web' }), pod('web-1', { app: 'web' })] });
    const faults = [
      server.faults.add({ watch: false, method: 'GET', pathIncludes: '/ephemeraljobs', status: 500, times: 1 }),
      server.faults.add({ watch: false, method: 'GET', pathIncludes: '/ephemeraljobs', status: 503, retryAfterSeconds: 1, times: 1 }),
      server.faults.add({ watch: false, method: 'GET', pathIncludes: '/ephemeraljobs', reset: true, times: 1 }),
      server.faults.add({ watch: false, method: 'GET', pathIncludes: '/pods', status: 429, times: 2 }),
      server.faults.add({ watch: false, method: 'GET', pathIncludes: '/pods', reset: true, times: 1 }),
    ];
    const sink = new CollectingSink();
    const relay = createRelay({ kubeConfig: server.kubeConfig(), sink, namespaces: [], relayId: 't', coalesceMs: 10, resyncSeconds: 3600, bufferMax: 100, logger: silentLogger, backoff: FAST_BACKOFF });
    try {
      assert.equal(relay.ready(), false);
      assert.match(relay.readiness(), /^waiting for the first list/);
      await relay.synced();
      assert.deepEqual(faults.map((f) => f.hits), [1, 1, 1, 2, 1], 'every fault was hit and survived');
      assert.ok(relay.ready());
      await relay.flush();
      assert.deepEqual(sink.subjects(), ['RESYNC EphemeralJob/default/j'], 'the job once, whose reconcile reads its pods');
    } finally {
      await relay.stop();
      await server.close();
    }
  });

  test('an API server down for a while at start: readyz stays false, nothing crashes, ready once it answers', async () => {
    const server = await startApiServer({ objects: [job('j', { app: 'web' })] });
    const down = server.faults.add({ watch: false, pathIncludes: '/ephemeraljobs', status: 503, times: Infinity });
    const relay = createRelay({ kubeConfig: server.kubeConfig(), sink: new CollectingSink(), namespaces: [], relayId: 't', coalesceMs: 10, resyncSeconds: 3600, bufferMax: 100, logger: silentLogger, backoff: FAST_BACKOFF });
    try {
      await eventually(() => assert.ok(down.hits >= 4));
      assert.equal(relay.ready(), false);
      down.remove();
      await relay.synced();
      assert.ok(relay.ready());
    } finally {
      await relay.stop();
      await server.close();
    }
  });
});

describe('stopping', () => {
  test('stop() does not wait for a LIST the API server never answers', { timeout: 10_000 }, async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((sock) => sockets.add(sock));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const kc = new KubeConfig();
    const server = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
    kc.loadFromOptions({ clusters: [{ name: 'c', server, skipTLSVerify: true }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
    const relay = createRelay({ kubeConfig: kc, sink: new CollectingSink(), namespaces: [], relayId: 't', coalesceMs: 10, resyncSeconds: 3600, bufferMax: 100, logger: silentLogger, backoff: FAST_BACKOFF });
    try {
      await eventually(() => assert.ok(sockets.size > 0, 'the list is under way'));
      await relay.stop();
      assert.equal(relay.ready(), false);
    } finally {
      for (const sock of sockets) sock.destroy();
      await new Promise((r) => silent.close(r));
    }
  });
});

describe('one loop owns list and watch', () => {
  test('re-lists while pods keep coming: no DELETED for a living pod, the watch resourceVersion never goes backwards', async () => {
    const w = await relayWorld([job('j', { app: 'web' }), pod('web-0', { app: 'web' })]);
    try {
      await w.relay.flush();
      for (let i = 1; i <= 40; i++) {
        w.server.store.put(pod(`web-${i}`, { app: 'web' }));
        if (i % 5 === 0) w.relay.resync('test', 'all');
        if (i % 10 === 0) {
          // Lose history and cut the watch: the loop must re-list, between watches.
          w.server.compact();
          w.server.faults.resetWatches();
        }
        await new Promise((r) => setTimeout(r, 5));
      }
      await eventually(async () => {
        await w.relay.flush();
        const names = new Set(w.sink.got.filter((e) => e.data.kind === 'Pod').map((e) => e.data.name));
        // web-0, there at the first list, goes as its job's reconcile; every pod added later is sent.
        assert.equal(names.size, 40);
        assert.ok(!names.has('web-0'));
      }, 10_000);
      assert.deepEqual(w.sink.subjects().filter((s) => s.startsWith('DELETED')), [], 'no pod was deleted');
      const watchVersions = w.server.requests.filter((r) => r.watch && r.path === '/api/v1/pods').map((r) => Number(r.query.resourceVersion));
      assert.ok(watchVersions.length >= 3, `watches: ${watchVersions.join(',')}`);
      assert.deepEqual(watchVersions, [...watchVersions].sort((a, b) => a - b), `resume versions: ${watchVersions.join(',')}`);
      const lists = w.server.requests.filter((r) => !r.watch && r.verb === 'list' && r.path === '/api/v1/pods');
      // At most one list per watch end (never a list beside a running watch).
      assert.ok(lists.length <= watchVersions.length, `${lists.length} lists for ${watchVersions.length} watches`);
    } finally {
      await w.close();
    }
  });

  test('a clean watch close resumes from the last resourceVersion without a re-list', async () => {
    const w = await relayWorld([job('j', { app: 'web' }), pod('web-1', { app: 'web' })]);
    try {
      const lists = () => w.server.requests.filter((r) => r.verb === 'list').length;
      const podWatches = (): number[] => w.server.requests.filter((r) => r.watch && r.path === '/api/v1/pods').map((r) => Number(r.query.resourceVersion));
      const before = lists();
      // A change the watch brings moves the resume version past the list's (review: a loop
      // resuming from its last LIST replays all since, and re-lists once that is compacted).
      const p = w.server.store.get({ ...POD, name: 'web-1' }) as unknown as PodLike;
      w.server.store.put({ ...p, spec: { ...(p as { spec?: Record<string, unknown> }).spec, nodeName: 'node-2' } });
      await eventually(async () => {
        await w.relay.flush();
        assert.ok(w.sink.subjects().includes('MODIFIED Pod/default/web-1'));
      });
      const seen = Number((w.server.store.get({ ...POD, name: 'web-1' }) as unknown as { metadata: { resourceVersion: string } }).metadata.resourceVersion);
      const [listed] = podWatches();
      assert.ok(listed !== undefined && listed < seen);
      w.server.faults.closeWatches();
      w.server.store.put(pod('web-2', { app: 'web' }));
      await eventually(async () => {
        await w.relay.flush();
        assert.ok(w.sink.subjects().includes('ADDED Pod/default/web-2'));
      });
      assert.equal(lists(), before);
      const resumed = podWatches().at(-1) ?? 0;
      assert.ok(podWatches().length >= 2 && resumed >= seen, `resumed from ${resumed}, the list was at ${listed}, the last change seen at ${seen}`);
    } finally {
      await w.close();
    }
  });
});

describe('a watch that brings nothing', () => {
  test('through a proxy that buffers responses, a silent watch is resumed once and a second in a row lists again, so changes still arrive; the changes that list finds are warned of and counted (review)', async () => {
    const server = grantChecked(await startApiServer({ objects: [job('j', { app: 'web' }), pod('web-1', { app: 'web' })], bookmarkIntervalMs: 100, authorization: shippedAuthorization() }));
    // A reverse proxy that sends each response only once it is whole: a watch brings nothing until the server ends it.
    const upstream = new URL(server.url);
    const proxy = createHttpServer((req, res) => {
      const up = httpRequest({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (ur) => {
        const chunks: Buffer[] = [];
        ur.on('data', (c: Buffer) => chunks.push(c));
        ur.on('end', () => {
          const body = Buffer.concat(chunks);
          const headers = { ...ur.headers };
          delete headers['transfer-encoding'];
          res.writeHead(ur.statusCode ?? 502, { ...headers, 'content-length': String(body.length) }).end(body);
        });
      });
      // A watch the relay gives up on, or the proxy's own close, resets these sockets: an
      // 'error' with no listener was an uncaught ECONNRESET after the test (a CI run failed so).
      up.on('error', () => res.destroy());
      req.on('error', () => up.destroy());
      req.pipe(up);
      res.on('close', () => up.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    const kc = server.kubeConfig({ token: TOKENS.relay });
    const via = new KubeConfig();
    via.loadFromOptions({ clusters: kc.clusters.map((c) => ({ ...c, server: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` })), users: kc.users, contexts: kc.contexts, currentContext: kc.currentContext });
    const sink = new CollectingSink();
    const warned: string[] = [];
    const logger = { ...silentLogger, warn: (o: Record<string, unknown>, msg?: string) => void warned.push(`${msg}: ${String(o.reason)}`), child: () => logger };
    const metrics = createMetrics();
    const relay = await startRelay({ kubeConfig: via, sink, namespaces: [], relayId: 'test', coalesceMs: 20, resyncSeconds: 3600, bufferMax: 1000, logger, backoff: FAST_BACKOFF, watchIdleMs: 300, metrics });
    try {
      const sent = (): number => sink.subjects().filter((x) => x.endsWith(' EphemeralJob/default/j')).length;
      await eventually(async () => {
        await relay.flush();
        assert.equal(sent(), 1, 'the job, once its pods are listed');
      });
      const j = server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'default', name: 'j' }) as unknown as { spec: Record<string, unknown> };
      // (store.put bumps no generation: a selector change is one the relay sees without it.)
      server.store.put({ ...j, spec: { ...j.spec, selector: { matchLabels: { app: 'api' } } } });
      // And the list after the silent watches fails once: the check of what it finds waits for the one that works.
      server.faults.add({ method: 'GET', pathIncludes: '/ephemeraljobs', watch: false, status: 500, message: 'etcdserver: request timed out', times: 1 });
      // The watch never brings it (the proxy holds the stream); the list after two silent watches does.
      await eventually(async () => {
        await relay.flush();
        assert.equal(sent(), 2, sink.subjects().join(', '));
      }, 10_000);
      assert.ok(warned.some((w) => w.startsWith('a list after silent watches found changes they never brought')), warned.join('\n'));
      assert.ok(await counter(metrics.watchRestarts) >= 1, 'counted');
    } finally {
      sink.release();
      await relay.stop();
      proxy.closeAllConnections();
      await new Promise<void>((r) => proxy.close(() => r()));
      await server.close();
    }
  });
});

describe('an API server that sends no bookmarks', () => {
  test('a quiet resource\'s silent watches are resumed and listed again without a warning or a count: nothing was missed (final read: no bookmark before the first event, or no watch cache)', async () => {
    // Bookmarks an hour apart: none comes during the test, and nothing changes.
    const server = grantChecked(await startApiServer({ objects: [job('j', { app: 'web' }), pod('web-1', { app: 'web' })], bookmarkIntervalMs: 3_600_000, authorization: shippedAuthorization() }));
    const warned: string[] = [];
    const logger = { ...silentLogger, warn: (_o: Record<string, unknown>, msg?: string) => void warned.push(msg ?? ''), child: () => logger };
    const relay = await startRelay({ kubeConfig: server.kubeConfig({ token: TOKENS.relay }), sink: new CollectingSink(), namespaces: [], relayId: 'test', coalesceMs: 20, resyncSeconds: 3600, bufferMax: 1000, logger, backoff: FAST_BACKOFF, watchIdleMs: 200 });
    try {
      const lists = (): number => server.requests.filter((r) => r.verb === 'list').length;
      const before = lists();
      await eventually(() => assert.ok(lists() >= before + 2, 'listed again after silent watches'), 10_000);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      // Every second silent watch lists, not every one after the second (final read).
      const podWatches = server.requests.filter((r) => r.watch && r.path === '/api/v1/pods').length;
      const podLists = server.requests.filter((r) => r.verb === 'list' && r.path === '/api/v1/pods').length;
      assert.ok(podLists <= Math.ceil(podWatches / 2) + 1, `${podLists} lists for ${podWatches} watches`);
      assert.equal(await counter(relay.metrics.watchRestarts), 0, 'no restart counted');
      assert.deepEqual(warned, []);
      assert.ok(relay.ready(), relay.readiness());
    } finally {
      await relay.stop();
      await server.close();
    }
  });
});

describe('one fingerprint for list and watch items', () => {
  const irrelevant = (p: PodLike): PodLike => ({
    ...p,
    metadata: { ...p.metadata, annotations: { touched: String(Math.random()) } },
    status: { ...p.status, containerStatuses: p.status.containerStatuses.map((s) => ({ ...s, restartCount: 7 })) },
  });

  test('after the initial list, and again after a re-list, an annotation + restartCount change forwards nothing', async () => {
    const names = ['web-1', 'web-2', 'web-3', 'web-4'];
    // Job v2 makes label v=2 one the functions read: it changes which jobs select the pod.
    const w = await relayWorld([job('j', { app: 'web' }), job('v2', { v: '2' }), ...names.map((n) => pod(n, { app: 'web' }, { restartPolicy: 'Never' }))]);
    try {
      await w.relay.flush();
      w.sink.clear();
      for (const n of names) w.server.store.put(irrelevant(getPod(w, n)));
      // A relevant change after them proves the irrelevant ones were seen (and dropped), not pending.
      w.server.store.put({ ...getPod(w, 'web-1'), metadata: { ...getPod(w, 'web-1').metadata, labels: { app: 'web', v: '2' } } });
      await eventually(async () => {
        await w.relay.flush();
        assert.deepEqual(w.sink.subjects(), ['MODIFIED Pod/default/web-1']);
      });
      const relisted = w.server.requests.filter((r) => r.verb === 'list').length;
      w.server.compact();
      w.server.faults.resetWatches();
      await eventually(() => assert.ok(w.server.requests.filter((r) => r.verb === 'list').length > relisted, 're-listed'));
      await eventually(() => assert.ok(w.server.faults.openWatches >= 2, 'watching again'));
      w.sink.clear();
      for (const n of names) w.server.store.put(irrelevant(getPod(w, n)));
      w.server.store.put({ ...getPod(w, 'web-2'), metadata: { ...getPod(w, 'web-2').metadata, labels: { app: 'web', v: '2' } } });
      await eventually(async () => {
        await w.relay.flush();
        assert.deepEqual(w.sink.subjects(), ['MODIFIED Pod/default/web-2'], 'the re-list forwarded nothing unchanged, the irrelevant changes nothing');
      });
    } finally {
      await w.close();
    }
  });
});

describe('bad input', () => {
  test('an object the relay cannot parse is counted and skipped; the loop goes on', async () => {
    const w = await relayWorld([job('j', { app: 'web' }), pod('web-1', { app: 'web' })]);
    try {
      await w.relay.flush();
      w.sink.clear();
      w.server.store.put({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'odd', namespace: 'default', labels: { app: 'web' } }, spec: { containers: 'not a list' } });
      w.server.store.put(pod('web-2', { app: 'web' }));
      await eventually(async () => {
        await w.relay.flush();
        assert.deepEqual(w.sink.subjects(), ['ADDED Pod/default/web-2']);
      });
      assert.equal(await counter(w.relay.metrics.unreadable), 1);
    } finally {
      await w.close();
    }
  });

  test('a pod deleted while unreadable is reported DELETED, with the last state the relay could read', async () => {
    const w = await relayWorld([job('j', { app: 'web' }), pod('web-1', { app: 'web' })]);
    try {
      await w.relay.flush();
      w.sink.clear();
      w.server.store.put({ ...getPod(w, 'web-1'), spec: { containers: 'not a list' } });
      await eventually(async () => assert.equal(await counter(w.relay.metrics.unreadable), 1));
      w.server.store.delete({ ...POD, name: 'web-1' });
      await eventually(async () => {
        await w.relay.flush();
        assert.deepEqual(w.sink.subjects(), ['DELETED Pod/default/web-1']);
      });
    } finally {
      await w.close();
    }
  });

  test('a pod that became unreadable during a watch gap is not reported DELETED by the re-list: it is still there', async () => {
    const w = await relayWorld([job('j', { app: 'web' }), pod('web-1', { app: 'web' })]);
    try {
      await w.relay.flush();
      w.sink.clear();
      // The pod watch is cut and cannot come back; meanwhile web-1 changes into something the
      // relay cannot read and history is compacted: the watch's return is a 410 and a re-list.
      const down = w.server.faults.add({ watch: true, pathIncludes: '/pods', status: 500, times: Infinity });
      w.server.faults.resetWatches();
      await eventually(() => assert.ok(down.hits >= 1));
      w.server.store.put({ ...getPod(w, 'web-1'), spec: { containers: 'not a list' } });
      w.server.compact();
      const relisted = w.server.requests.filter((r) => r.verb === 'list' && r.path.endsWith('/pods')).length;
      down.remove();
      await eventually(() => assert.ok(w.server.requests.filter((r) => r.verb === 'list' && r.path.endsWith('/pods')).length > relisted, 're-listed the pods'));
      await eventually(async () => assert.equal(await counter(w.relay.metrics.unreadable), 1, 'the re-list found web-1 unreadable'));
      w.server.store.put(pod('web-2', { app: 'web' }));
      await eventually(async () => {
        await w.relay.flush();
        assert.ok(w.sink.subjects().includes('ADDED Pod/default/web-2'));
      });
      assert.deepEqual(w.sink.subjects().filter((x) => x.includes('web-1')), [], 'no DELETED invented for the pod that is still there');
    } finally {
      await w.close();
    }
  });
});

describe('periodic resync replays the cache', () => {
  test('only unfinished jobs, jobs whose TTL has come or comes within 900 s (the reconcile then sends the exact SQS delay), due pods, and no LIST', async () => {
    const done = (name: string, completionTime: string, ttl: number) => ({ ...job(name, { app: 'none' }), spec: { selector: { matchLabels: { app: 'none' } }, template: { ephemeralContainers: [{ name: 'ec', image: 'busybox' }] }, ttlSecondsAfterFinished: ttl }, status: { phase: 'Succeeded', completionTime } });
    const sidecar = [{ name: 'main', image: 'app' }, { name: 'proxy', image: 'envoy', env: [{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' }] }];
    const sidecarPod = (name: string, mainState: Record<string, unknown>) => ({
      ...pod(name, { app: 'batch' }, { restartPolicy: 'Never', containers: sidecar }),
      status: { phase: 'Running', containerStatuses: [{ name: 'main', state: mainState }, { name: 'proxy', state: { running: {} } }] },
    });
    const now = Date.now();
    const w = await relayWorld([
      job('open', { app: 'web' }),
      done('finished-recently', new Date(now - 10_000).toISOString(), 3600),
      done('finished-long-ago', new Date(now - 7200_000).toISOString(), 3600),
      done('expires-in-10-min', new Date(now - 3000_000).toISOString(), 3600),
      done('expires-in-20-min', new Date(now - 2400_000).toISOString(), 3600),
      ...Array.from({ length: 10 }, (_, i) => pod(`web-${i}`, { app: 'web' })),
      sidecarPod('due', { terminated: { exitCode: 0 } }),
      sidecarPod('not-due', { running: {} }),
    ]);
    try {
      await w.relay.flush();
      w.sink.clear();
      const lists = w.server.requests.filter((r) => r.verb === 'list').length;
      w.relay.resync('test');
      await w.relay.flush();
      assert.deepEqual(w.sink.subjects().sort(), ['RESYNC EphemeralJob/default/expires-in-10-min', 'RESYNC EphemeralJob/default/finished-long-ago', 'RESYNC EphemeralJob/default/open', 'RESYNC Pod/default/due']);
      assert.equal(w.server.requests.filter((r) => r.verb === 'list').length, lists, 'the resync listed nothing');
    } finally {
      await w.close();
    }
  });
});

describe('a watch\'s deletion whose object cannot be read', () => {
  test('is no change a later list after silent watches missed: no warning (review92 B1)', async () => {
    type O = { name: string; v?: string; uid: string };
    const missed: number[] = [];
    const deleted: string[] = [];
    const r = new Reflector<O>({
      kind: 'Pod', path: '/api/v1/pods', kubeConfig: new KubeConfig(),
      listPage: async (_cont, _signal, each) => {
        each({ name: 'b', v: '1', uid: 'u2' });
        return { items: [], resourceVersion: '10', continue: undefined };
      },
      decode: (raw) => {
        const o = raw as O;
        if (o.v === undefined) return { key: o.name, error: 'cannot read it' } as never;
        return { key: o.name, fingerprint: `${o.name}|${o.v}|${o.uid}`, object: o };
      },
      fromFingerprint: (fp) => {
        const [name = '', v = '', uid = ''] = fp.split('|');
        return { name, v, uid };
      },
      uid: (o) => o.uid,
      onEvent: (type, d) => void (type === 'DELETED' && deleted.push(d.key)),
      onMissed: (n) => void missed.push(n),
      logger: silentLogger,
    });
    r.cache.set('a', 'a|1|u1');
    r.cache.set('b', 'b|1|u2');
    const inside = r as unknown as { afterSilence: boolean; list(reason: string): Promise<void>; apply(type: string, raw: unknown): void };
    // The watch brings a's deletion, its last state unreadable: a goes, told as DELETED.
    inside.apply('DELETED', { name: 'a', uid: 'u1', metadata: { resourceVersion: '11' } });
    assert.deepEqual(deleted, ['a']);
    // Two silent watches later the list finds exactly the cache: nothing was missed.
    inside.afterSilence = true;
    await inside.list('silent');
    assert.deepEqual(missed, []);
  });
});

describe('a list after silent watches that fails partway', () => {
  test('the changes its prefix took still count in the list that works: the warning is not lost (review89)', async () => {
    type O = { name: string; v: string; uid: string };
    const missed: number[] = [];
    let calls = 0;
    const items: O[] = [{ name: 'a', v: '2', uid: 'u1' }, { name: 'b', v: '1', uid: 'u2' }];
    const r = new Reflector<O>({
      kind: 'Pod', path: '/api/v1/pods', kubeConfig: new KubeConfig(),
      listPage: async (_cont, _signal, each) => {
        calls++;
        each(items[0]); // the change the silent watches never brought arrives first
        if (calls === 1) throw new Error('the answer was cut off');
        each(items[1]);
        return { items: [], resourceVersion: '10', continue: undefined };
      },
      decode: (raw) => {
        const o = raw as O;
        return { key: o.name, fingerprint: `${o.name}|${o.v}|${o.uid}`, object: o };
      },
      fromFingerprint: (fp) => {
        const [name = '', v = '', uid = ''] = fp.split('|');
        return { name, v, uid };
      },
      uid: (o) => o.uid,
      onEvent: () => undefined,
      onMissed: (n) => void missed.push(n),
      logger: silentLogger,
    });
    // As after two silent watches: the cache holds a@1 and b@1; a@2 was never watched.
    r.cache.set('a', 'a|1|u1');
    r.cache.set('b', 'b|1|u2');
    const inside = r as unknown as { afterSilence: boolean; list(reason: string): Promise<void> };
    inside.afterSilence = true;
    await assert.rejects(inside.list('silent'), /cut off/);
    assert.deepEqual(missed, [], 'nothing said while no list worked');
    await inside.list('silent');
    assert.deepEqual(missed, [1]);
  });
});

describe('a later page of a list that fails (review90 M2)', () => {
  type O = { name: string };
  /** A reflector over `pages` (three of them: a, b, c), whose listPage is `page`; counts its calls by continue token. */
  const paged = (page: (cont: string | undefined, calls: number) => void, onListFailure?: () => void) => {
    const calls = new Map<string, number>();
    const pages: Record<string, { items: O[]; continue?: string }> = { '': { items: [{ name: 'a' }], continue: 'p2' }, p2: { items: [{ name: 'b' }], continue: 'p3' }, p3: { items: [{ name: 'c' }] } };
    const events: string[] = [];
    const r = new Reflector<O>({
      kind: 'Pod', path: '/api/v1/pods', kubeConfig: new KubeConfig(),
      listPage: async (cont, _signal, each) => {
        const n = (calls.get(cont ?? '') ?? 0) + 1;
        calls.set(cont ?? '', n);
        page(cont, n);
        const p = pages[cont ?? '']!;
        p.items.forEach(each);
        return { items: [], resourceVersion: '10', continue: p.continue };
      },
      decode: (raw) => ({ key: (raw as O).name, fingerprint: (raw as O).name, object: raw as O }),
      fromFingerprint: (fp) => ({ name: fp }),
      uid: () => undefined,
      onEvent: (type, d, changed) => void events.push(`${type} ${d.key}${changed ? '' : ' (same)'}`),
      ...(onListFailure ? { onListFailure } : {}),
      logger: silentLogger,
      backoff: { minMs: 1, maxMs: 2 },
    });
    return { calls, events, list: () => (r as unknown as { list(reason: string): Promise<void> }).list('test'), r };
  };

  test('a page refused for now (a 429, a reset) is asked for again with its continue token; the list does not start over', async () => {
    let failures = 0;
    const w = paged((cont, n) => {
      if (cont === 'p2' && n <= 2) throw new ListError(429, 'LIST /api/v1/pods: HTTP 429: too many requests', { retryAfterMs: 1 });
      if (cont === 'p3' && n === 1) throw new Error('socket hang up');
    }, () => void failures++);
    await w.list();
    assert.deepEqual(Object.fromEntries(w.calls), { '': 1, p2: 3, p3: 2 });
    assert.deepEqual(w.events, ['RESYNC a', 'RESYNC b', 'RESYNC c']);
    assert.equal(failures, 3, 'each failed page counts as a failed LIST');
    assert.equal(w.r.listFailure(), undefined, 'the list worked');
  });

  test('a 410 Expired on a continue token fails the list, which starts over from the first page', async () => {
    const w = paged((cont, n) => {
      if (cont === 'p2' && n === 1) throw new ListError(410, 'LIST /api/v1/pods: HTTP 410: The provided continue parameter is too old');
    });
    await assert.rejects(w.list(), /410/);
    await w.list();
    assert.deepEqual(Object.fromEntries(w.calls), { '': 2, p2: 2, p3: 1 });
  });

  test('a page that keeps failing is asked for a bounded number of times, then the list fails', async () => {
    const w = paged((cont) => {
      if (cont === 'p2') throw new ListError(500, 'LIST /api/v1/pods: HTTP 500: etcdserver: request timed out');
    });
    await assert.rejects(w.list(), /500/);
    assert.equal(w.calls.get('p2'), 11, 'the page and 10 retries');
    assert.match(w.r.listFailure() ?? '', /HTTP 500/);
  });

  test('through the fake API server refusing every second pod LIST, a list of three pages still syncs, its first page asked once', async () => {
    const pods = Array.from({ length: 25 }, (_, i) => pod(`web-${i}`, { app: 'web' }));
    const server = await startApiServer({ objects: [job('j', { app: 'web' }), ...pods] });
    const upstream = new URL(server.url);
    let podLists = 0;
    let firstPages = 0;
    const proxy = createHttpServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      if (u.pathname === '/api/v1/pods' && u.searchParams.get('watch') !== 'true') {
        if (!u.searchParams.has('continue')) firstPages++;
        // Every second one refused, as APF refuses a share of them: a restarted list's second page would be refused each time.
        if (podLists++ % 2 === 1) return void res.writeHead(429, { 'content-type': 'text/plain' }).end('Too many requests, please try again later.\n');
      }
      const up = httpRequest({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (ur) => {
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        ur.pipe(res);
      });
      up.on('error', () => res.destroy());
      req.on('error', () => up.destroy());
      req.pipe(up);
      res.on('close', () => up.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    const kc = server.kubeConfig();
    const via = new KubeConfig();
    via.loadFromOptions({ clusters: kc.clusters.map((c) => ({ ...c, server: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` })), users: kc.users, contexts: kc.contexts, currentContext: kc.currentContext });
    const relay = createRelay({ kubeConfig: via, sink: new CollectingSink(), namespaces: [], relayId: 'test', coalesceMs: 20, resyncSeconds: 3600, bufferMax: 1000, logger: silentLogger, backoff: FAST_BACKOFF, listPageSize: 10 });
    try {
      await eventually(() => assert.ok(relay.ready(), relay.readiness()));
      assert.equal(firstPages, 1);
      assert.equal(podLists, 5, 'pages 1, 2, 2, 3, 3');
    } finally {
      await relay.stop();
      proxy.closeAllConnections();
      await new Promise<void>((r) => proxy.close(() => r()));
      await server.close();
    }
  });
});
