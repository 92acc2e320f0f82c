// A relay whose re-lists keep failing (a right revoked, an API server refusing) is blind to
// that kind while its metrics looked healthy and /readyz said ready (operability review): the
// failures are counted, logged with the path, and after a while /readyz says so. Leadership
// changes are counted too (flapping between scrapes does not show in the gauge).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { silentLogger, type Logger } from '../../functions/engine/logger.ts';
import { startApiServer } from '../../functions/cluster/index.ts';
import { createKube } from '../../functions/kube/client.ts';
import { createMetrics } from '../../relay/metrics.ts';
import { createRelay, startRelay } from '../../relay/relay.ts';
import { CollectingSink, eventually, FAST_BACKOFF, job, pod } from '../support/relay-world.ts';

const total = async (c: { get(): Promise<{ values: { value: number }[] }> }): Promise<number> => (await c.get()).values.reduce((n, v) => n + v.value, 0);

test('a LIST that keeps failing is counted and logged with its path, and /readyz turns not ready once it has failed long enough; a list that works clears it', async () => {
  const server = await startApiServer({ objects: [job('j', { app: 'web' }), pod('web-0', { app: 'web' })], bookmarkIntervalMs: 200 });
  const warned: string[] = [];
  const logger: Logger = { ...silentLogger, warn: (obj, msg) => void warned.push(`${msg ?? ''} ${JSON.stringify(obj)}`), child: () => logger };
  const relay = await startRelay({ kubeConfig: server.kubeConfig(), sink: new CollectingSink(), namespaces: [], relayId: 't', coalesceMs: 20, resyncSeconds: 3600, bufferMax: 100, logger, backoff: FAST_BACKOFF, listFailingUnreadyMs: 300 });
  try {
    await eventually(() => assert.ok(relay.ready()));
    // The pods' watch is cut and its history compacted (its return is a 410), and every LIST after it is refused.
    server.faults.add({ method: 'GET', pathIncludes: '/api/v1/pods', watch: false, status: 500, message: 'etcdserver: request timed out', times: Infinity });
    server.store.put(pod('web-1', { app: 'web' }));
    server.compact();
    server.faults.resetWatches();
    await eventually(async () => assert.ok((await total(relay.metrics.listFailures)) >= 2));
    assert.ok(warned.some((w) => w.startsWith('re-list failed; retrying') && w.includes('"path":"/api/v1/pods"')), warned.join('\n'));
    await eventually(() => assert.match(relay.readiness(), /^listing \/api\/v1\/pods has failed for \d+s: no change there is seen$/));
    assert.equal(relay.ready(), false);
    server.faults.clear();
    await eventually(() => assert.ok(relay.ready(), relay.readiness()));
  } finally {
    await relay.stop();
    await server.close();
  }
});

test('each change of leadership is counted', async () => {
  const server = await startApiServer({ objects: [] });
  const lock = (holder: string) => ({ namespace: 'ephemera-system', holder, leaseSeconds: 2, skewSeconds: 1 });
  const relay = await startRelay({ kubeConfig: server.kubeConfig(), sink: new CollectingSink(), namespaces: [], relayId: 'a', coalesceMs: 20, resyncSeconds: 3600, bufferMax: 100, logger: silentLogger, backoff: FAST_BACKOFF, election: { kube: createKube(server.kubeConfig()), lock: lock('a') } });
  try {
    await eventually(() => assert.ok(relay.isLeader()));
    assert.equal(await total(relay.metrics.leaderTransitions), 1);
  } finally {
    await relay.stop();
    await server.close();
  }
});

test('a kind whose list failed and then answers that it is absent (no CRD) keeps the relay ready: absent is an answer, not a failure (review)', async () => {
  const server = await startApiServer({ objects: [pod('web-0', { app: 'web' })], bookmarkIntervalMs: 200 });
  server.faults.add({ method: 'GET', pathIncludes: '/ephemeraljobs', watch: false, status: 500, message: 'busy', times: 1 });
  server.faults.add({ method: 'GET', pathIncludes: '/ephemeraljobs', watch: false, status: 404, times: Infinity });
  const relay = await startRelay({ kubeConfig: server.kubeConfig(), sink: new CollectingSink(), namespaces: [], relayId: 't', coalesceMs: 20, resyncSeconds: 3600, bufferMax: 100, logger: silentLogger, backoff: FAST_BACKOFF, listFailingUnreadyMs: 300, absentRetryMs: 60_000 });
  try {
    await eventually(() => assert.ok(relay.ready(), relay.readiness()));
    assert.equal(await total(relay.metrics.listFailures), 1);
    await new Promise((r) => setTimeout(r, 600));
    assert.ok(relay.ready(), relay.readiness());
  } finally {
    await relay.stop();
    await server.close();
  }
});

test('leader election that fails on every round (no right to the Lease\'s namespace) is counted, and /readyz says so once it has failed long enough; a round that works clears it (operability review)', async () => {
  const server = await startApiServer({ objects: [], bookmarkIntervalMs: 200 });
  // Every Lease request refused, as where the relay's Role does not reach the namespace.
  const refused = server.faults.add({ pathIncludes: '/leases', status: 403, reason: 'Forbidden', message: 'leases.coordination.k8s.io "ephemera-relay" is forbidden: User "relay" cannot get resource "leases" in the namespace "kube-system"', times: Infinity });
  const relay = await startRelay({ kubeConfig: server.kubeConfig(), sink: new CollectingSink(), namespaces: [], relayId: 'a', coalesceMs: 20, resyncSeconds: 3600, bufferMax: 100, logger: silentLogger, backoff: FAST_BACKOFF, electionFailingUnreadyMs: 300, election: { kube: createKube(server.kubeConfig()), lock: { namespace: 'kube-system', holder: 'a', leaseSeconds: 3, skewSeconds: 1 } } });
  try {
    await eventually(() => assert.match(relay.readiness(), /^leader election has failed for \d+s \(.*is forbidden.*\): no replica forwards$/));
    assert.ok((await total(relay.metrics.leaderElectionFailures)) >= 1);
    assert.equal(relay.isLeader(), false);
    refused.remove();
    await eventually(() => assert.ok(relay.ready() && relay.isLeader(), relay.readiness()));
  } finally {
    await relay.stop();
    await server.close();
  }
});

test('while the first list is refused, /readyz names the list and the refusal, not only that it waits (operability review)', async () => {
  const server = await startApiServer({ objects: [pod('web-0', { app: 'web' })], bookmarkIntervalMs: 200 });
  const refused = server.faults.add({ method: 'GET', pathIncludes: '/api/v1/pods', watch: false, status: 403, reason: 'Forbidden', message: 'pods is forbidden: User "relay" cannot list resource "pods" at the cluster scope', times: Infinity });
  const relay = createRelay({ kubeConfig: server.kubeConfig(), sink: new CollectingSink(), namespaces: [], relayId: 't', coalesceMs: 20, resyncSeconds: 3600, bufferMax: 100, logger: silentLogger, backoff: FAST_BACKOFF });
  try {
    await eventually(() => assert.match(relay.readiness(), /^waiting for the first list of \/api\/v1\/pods: failing for \d+s \(LIST \/api\/v1\/pods: HTTP 403: pods is forbidden: .*\)$/));
    refused.remove();
    await eventually(() => assert.ok(relay.ready(), relay.readiness()));
  } finally {
    await relay.stop();
    await server.close();
  }
});

test('every labelled series of a known kind is there from the start at 0, beside the process\'s own metrics (operability review)', async () => {
  const server = await startApiServer({ objects: [] });
  // As the relay and start commands make them (the process's own metrics are theirs alone).
  const relay = await startRelay({ kubeConfig: server.kubeConfig(), sink: new CollectingSink(), namespaces: [], relayId: 't', coalesceMs: 20, resyncSeconds: 3600, bufferMax: 100, logger: silentLogger, backoff: FAST_BACKOFF, metrics: createMetrics({ process: true }) });
  try {
    const text = await relay.metrics.registry.metrics();
    for (const name of ['events_forwarded_total', 'objects_unreadable_total', 'watch_restarts_total', 'list_failures_total', 'resource_absent']) {
      for (const kind of ['Pod', 'EphemeralJob']) assert.match(text, new RegExp(`^ephemera_relay_${name}\\{kind="${kind}"\\} 0$`, 'm'), `${name} ${kind}`);
    }
    assert.match(text, /^process_cpu_user_seconds_total /m);
    assert.match(text, /^nodejs_eventloop_lag_seconds /m);
    assert.doesNotMatch(await createMetrics().registry.metrics(), /^process_/m, 'not for every relay a process starts');
  } finally {
    await relay.stop();
    await server.close();
  }
});
