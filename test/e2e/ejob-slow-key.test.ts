// The in-process path (`npm start`, `ephemera relay --sink memory`, the all-in-cluster
// manifest): one namespace whose API writes hang must not hold the others' jobs. The memory
// sink's handlings are the delivery queue's sends, one key each, up to its concurrency
// (review80 M1: one batch at a time, and a batch lasted as long as its slowest handling, up
// to the 60 s handling timeout). Relay → in-process sink → engine → API server over HTTP.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startApiServer, type ApiServer } from '../../functions/cluster/index.ts';
import { ejobController } from '../../functions/ejob/controller.ts';
import { handle } from '../../functions/engine/engine.ts';
import { silentLogger } from '../../functions/engine/logger.ts';
import { createKube } from '../../functions/kube/client.ts';
import { startRelay, type Relay } from '../../relay/relay.ts';
import { memorySink } from '../../relay/sinks/memory.ts';
import { eventually } from '../support/relay-world.ts';

const LOCKS = 'ephemera-locks';
const namespace = (name: string): unknown => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const pod = (ns: string): unknown => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-0', namespace: ns, labels: { app: 'web' } },
  spec: { containers: [{ name: 'app', image: 'nginx' }] },
  status: { phase: 'Running', containerStatuses: [{ name: 'app', state: { running: {} } }] },
});
const job = (ns: string): unknown => ({
  apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', metadata: { name: 'probe', namespace: ns },
  spec: { selector: { matchLabels: { app: 'web' } }, parallelism: 1, template: { ephemeralContainers: [{ name: 'probe', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'app', command: ['true'] }] } },
});
const injected = (server: ApiServer, ns: string): boolean => ((server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: ns, name: 'web-0' }) as { spec: { ephemeralContainers?: unknown[] } } | undefined)?.spec.ephemeralContainers ?? []).length > 0;

describe('the in-process path: a slow key (review80 M1)', () => {
  test('a namespace whose injection hangs does not hold another namespace\'s job: it is injected while the hung write still waits, and the hung one once it answers', async () => {
    const server = await startApiServer({ objects: [namespace('slow'), namespace('fast'), namespace(LOCKS), pod('slow')] });
    let answer = (): void => undefined;
    const hung = server.faults.add({ method: 'PATCH', pathIncludes: '/namespaces/slow/pods/web-0/ephemeralcontainers', hold: new Promise<void>((r) => (answer = r)), times: Infinity });
    // The client waits as long as the test does: the slow handling ends only when the write is answered.
    const deps = { kube: createKube(server.kubeConfig(), { timeoutMs: 120_000 }), controllers: [ejobController], lock: { namespace: LOCKS, holder: 'fn', leaseSeconds: 15, skewSeconds: 5 }, clock: () => new Date(), logger: silentLogger };
    const slowEnded: string[] = [];
    const box: { relay?: Relay } = {};
    // The memory sink's own defaults (4 workers, 60 s per handling), as `npm start` has them.
    const sink = memorySink(async (e) => {
      try {
        return await handle(e, deps);
      } finally {
        if (e.data.namespace === 'slow') slowEnded.push(e.subject);
      }
    }, (e, ms) => box.relay?.requeue(e, ms));
    const relay = (box.relay = await startRelay({ kubeConfig: server.kubeConfig(), namespaces: [], relayId: 'e2e', coalesceMs: 10, resyncSeconds: 3600, bufferMax: 1000, logger: silentLogger, sink, stopWaitMs: 100 }));
    try {
      server.store.put(job('slow') as never);
      await eventually(() => assert.equal(hung.hits, 1, 'the slow job\'s injection is under way'));
      server.store.put(pod('fast') as never);
      server.store.put(job('fast') as never);
      await eventually(() => assert.ok(injected(server, 'fast'), 'the fast namespace\'s job injected its pod'), 15_000);
      assert.deepEqual(slowEnded, [], 'while the slow namespace\'s handling still waited for its write');
      assert.equal(injected(server, 'slow'), false);
      answer();
      await eventually(() => assert.ok(injected(server, 'slow'), 'the hung one is injected once its write is answered'), 15_000);
    } finally {
      answer();
      await relay.stop();
      await server.close();
    }
  });
});
