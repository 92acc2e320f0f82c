// The claims Lease sweep (relay/lease-sweep.ts): at its first sync, and at each resync, a
// leader relay lists the labelled claims Leases in the lock namespace and sends the key of
// every job its watch cache lacks; nothing else, and nothing while it cannot know the jobs.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { objectKey } from '../../functions/api/envelope.ts';
import { startApiServer, type ApiServer } from '../../functions/cluster/index.ts';
import { KEY_ANNOTATION, LEASE_LABEL } from '../../functions/ejob/lease-record.ts';
import { leaseName } from '../../functions/engine/lock.ts';
import { silentLogger, type Logger } from '../../functions/engine/logger.ts';
import { createKube } from '../../functions/kube/client.ts';
import { createRelay, startRelay, type Relay, type RelayOptions } from '../../relay/relay.ts';
import { CollectingSink, eventually, FAST_BACKOFF, job } from '../support/relay-world.ts';

const LOCKS = 'ephemera-locks';

function claimsLease(jobNs: string, jobName: string, o: { namespace?: string; labelled?: boolean } = {}): Record<string, unknown> {
  const key = objectKey('EphemeralJob', jobNs, jobName);
  return {
    apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
    metadata: { name: leaseName('ejob', key), namespace: o.namespace ?? LOCKS, ...(o.labelled === false ? {} : { labels: { [LEASE_LABEL]: 'true' } }), annotations: { [KEY_ANNOTATION]: key, 'ephemera.io/ejob-claims': JSON.stringify({ v: 1, job: 'uid-1', total: 1, claims: [] }) } },
    spec: { holderIdentity: 'ephemera', leaseDurationSeconds: 15 },
  };
}

/** A logger that keeps its warnings. */
function warnings(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const logger: Logger = { ...silentLogger, warn: (obj, msg) => void lines.push(`${msg ?? ''} ${JSON.stringify(obj)}`), child: () => logger };
  return { logger, lines };
}

async function world(objects: unknown[], overrides: Partial<RelayOptions> = {}, prepare?: (s: ApiServer) => void): Promise<{ server: ApiServer; relay: Relay; sink: CollectingSink; swept(): string[]; close(): Promise<void> }> {
  const server = await startApiServer({ objects, bookmarkIntervalMs: 200 });
  prepare?.(server);
  const sink = new CollectingSink();
  const relay = await startRelay({ kubeConfig: server.kubeConfig(), sink, namespaces: [], relayId: 'test', coalesceMs: 0, resyncSeconds: 3600, bufferMax: 100, logger: silentLogger, backoff: FAST_BACKOFF, leaseSweep: { namespace: LOCKS }, ...overrides });
  const swept = (): string[] => sink.subjects().filter((s) => s.startsWith('DELETED EphemeralJob/'));
  return { server, relay, sink, swept, close: async () => { await relay.stop(); await server.close(); } };
}

const sweeps = async (relay: Relay): Promise<number> => (await relay.metrics.leaseSweeps.get()).values[0]?.value ?? 0;
const leaseLists = (server: ApiServer): number => server.requests.filter((r) => r.verb === 'list' && r.path.includes('/leases')).length;

describe('relay: the claims Lease sweep', () => {
  test('at its first sync, a labelled Lease whose job is missing gets a job event; a live job, an unlabelled Lease, another namespace, an unwatched namespace get none', async () => {
    const w = await world([
      job('here', { app: 'web' }),
      claimsLease('default', 'here'),
      claimsLease('default', 'gone'),
      claimsLease('default', 'unlabelled', { labelled: false }),
      claimsLease('default', 'elsewhere', { namespace: 'other-locks' }),
      claimsLease('unwatched', 'gone-too'),
    ], { namespaces: ['default'] });
    try {
      await eventually(async () => {
        await w.relay.flush();
        assert.deepEqual(w.swept(), ['DELETED EphemeralJob/default/gone']);
      });
      const env = w.sink.got.find((e) => e.data.event === 'DELETED');
      assert.deepEqual(env?.data.snapshot, { metadata: { name: 'gone', namespace: 'default' } }, 'a job event as a DELETED one makes: the identity only');
      assert.equal(await sweeps(w.relay), 1);
      // Asked again (as at a resync): the same key, nothing more.
      assert.equal(await w.relay.sweepLeases('test'), 1);
      await w.relay.flush();
      assert.equal(await sweeps(w.relay), 2);
      assert.ok(w.server.requests.filter((r) => r.verb === 'list' && r.path.includes(`/namespaces/${LOCKS}/leases`) && r.query.labelSelector === `${LEASE_LABEL}=true`).length > 0, 'one labelled LIST in the lock namespace');
    } finally {
      await w.close();
    }
  });

  test('while the EphemeralJob list answers 404 the jobs are unknown: no sweep, no Lease list', async () => {
    const w = await world([claimsLease('default', 'gone')], { absentRetryMs: 100 }, (s) => void s.faults.add({ pathIncludes: '/ephemeraljobs', watch: false, status: 404, times: Infinity }));
    try {
      assert.equal(await w.relay.sweepLeases('test'), undefined);
      await w.relay.flush();
      assert.deepEqual(w.swept(), []);
      assert.equal(await sweeps(w.relay), 0);
      assert.equal(leaseLists(w.server), 0);
    } finally {
      await w.close();
    }
  });

  test('a relay that is not the leader sweeps nothing and lists no Lease', async () => {
    const server = await startApiServer({ objects: [
      claimsLease('default', 'gone'),
      // The leader Lease, held by another replica for an hour.
      { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: leaseName('relay', 'leader'), namespace: 'ephemera-system' }, spec: { holderIdentity: 'other', leaseDurationSeconds: 3600, renewTime: new Date().toISOString().replace(/\.\d+Z$/, '.000000Z') } },
    ] });
    const sink = new CollectingSink();
    const relay = await startRelay({ kubeConfig: server.kubeConfig(), sink, namespaces: [], relayId: 'me', coalesceMs: 0, resyncSeconds: 3600, bufferMax: 100, logger: silentLogger, leaseSweep: { namespace: LOCKS }, election: { kube: createKube(server.kubeConfig()), lock: { namespace: 'ephemera-system', holder: 'me', leaseSeconds: 3, skewSeconds: 1 } } });
    try {
      await eventually(() => assert.ok(server.requests.filter((r) => r.path.includes('/namespaces/ephemera-system/leases/')).length > 0, 'an election round ran'));
      assert.equal(relay.isLeader(), false);
      assert.equal(await relay.sweepLeases('test'), undefined);
      await relay.flush();
      assert.deepEqual(sink.got, []);
      assert.equal(leaseLists(server), 0);
    } finally {
      await relay.stop();
      await server.close();
    }
  });

  test('a labelled Lease whose key names a job that cannot exist is skipped, with one warning naming it, not one per sweep (review80 L3)', async () => {
    const log = warnings();
    const forged = { ...claimsLease('default', 'x'), metadata: { name: 'left-over', namespace: LOCKS, labels: { [LEASE_LABEL]: 'true' }, annotations: { [KEY_ANNOTATION]: 'EphemeralJob/Team_A/Nightly.Check' } } };
    const w = await world([forged, claimsLease('default', 'gone')], { logger: log.logger });
    try {
      await eventually(async () => {
        await w.relay.flush();
        assert.deepEqual(w.swept(), ['DELETED EphemeralJob/default/gone']);
      });
      assert.equal(await w.relay.sweepLeases('periodic resync'), 1, 'the other Lease\'s key is still sent');
      assert.equal(await w.relay.sweepLeases('periodic resync'), 1);
      await w.relay.flush();
      assert.ok(!w.sink.subjects().some((s) => s.includes('Team_A')), 'the impossible key is never sent');
      const lines = log.lines.filter((l) => l.includes('cannot exist'));
      assert.equal(lines.length, 1, 'one warning over three sweeps');
      assert.match(lines[0]!, /"lease":"ephemera-locks\/left-over","key":"EphemeralJob\/Team_A\/Nightly.Check","problem":"namespace \\"Team_A\\": a lowercase RFC 1123 label/);
    } finally {
      await w.close();
    }
  });

  test('a Lease list that fails is logged once and the relay goes on; the next sweep sends the key', async () => {
    const log = warnings();
    const w = await world([claimsLease('default', 'gone')], { logger: log.logger }, (s) => void s.faults.add({ pathIncludes: `/namespaces/${LOCKS}/leases`, method: 'GET', watch: false, status: 500, times: 1 }));
    try {
      await eventually(() => assert.equal(log.lines.filter((l) => l.includes('claims Lease sweep')).length, 1));
      assert.match(log.lines[0]!, /the Lease list failed; trying again at the next resync/);
      assert.equal(leaseLists(w.server), 1, 'not retried before the next resync');
      assert.ok(w.relay.ready(), 'the relay goes on');
      assert.equal(await w.relay.sweepLeases('periodic resync'), 1);
      await w.relay.flush();
      assert.deepEqual(w.swept(), ['DELETED EphemeralJob/default/gone']);
    } finally {
      await w.close();
    }
  });

  test('stop() does not wait for a sweep whose Lease list the API server is slow to answer, and logs no failure for it (review)', { timeout: 20_000 }, async () => {
    const log = warnings();
    const w = await world([claimsLease('default', 'gone')], { logger: log.logger }, (s) => void s.faults.add({ pathIncludes: `/namespaces/${LOCKS}/leases`, method: 'GET', watch: false, delayMs: 6000, times: Infinity, label: 'a slow Lease list' }));
    await eventually(() => assert.equal(leaseLists(w.server), 1, 'the first sync\'s sweep is under way'));
    const started = performance.now();
    await w.relay.stop();
    const ms = performance.now() - started;
    assert.ok(ms < 3000, `stop() took ${Math.round(ms)} ms`);
    assert.deepEqual(log.lines.filter((l) => l.includes('claims Lease sweep')), []);
    await w.server.close();
  });

  test('the periodic resync sweeps: a Lease left after the first sync is found at the next one', async () => {
    const server = await startApiServer({ objects: [] });
    const sink = new CollectingSink();
    const relay = createRelay({ kubeConfig: server.kubeConfig(), sink, namespaces: [], relayId: 'test', coalesceMs: 0, resyncSeconds: 1, bufferMax: 100, logger: silentLogger, backoff: FAST_BACKOFF, leaseSweep: { namespace: LOCKS } });
    try {
      await relay.synced();
      server.store.put(claimsLease('default', 'gone'));
      await eventually(async () => {
        await relay.flush();
        assert.ok(sink.subjects().includes('DELETED EphemeralJob/default/gone'));
      }, 5000);
    } finally {
      await relay.stop();
      await server.close();
    }
  });
});
