// The relay's own Lease requests under the RBAC its manifest ships (review94): its leader
// election and the claims-Lease sweep run with the relay's token against a server that
// enforces relay/manifest.yaml, and close() fails on any request the manifest refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startApiServer } from '../../functions/cluster/index.ts';
import { silentLogger } from '../../functions/engine/logger.ts';
import { createKube } from '../../functions/kube/client.ts';
import { startRelay } from '../../relay/relay.ts';
import { CollectingSink, eventually, FAST_BACKOFF, job, pod } from '../support/relay-world.ts';
import { grantChecked, shippedAuthorization, TOKENS } from '../support/shipped-rbac.ts';

test('an electing relay that sweeps claims Leases needs no grant its manifest lacks, and uses no get on pods or jobs (review94)', async () => {
  const server = grantChecked(await startApiServer({ objects: [job('j', { app: 'web' }), pod('web-1', { app: 'web' })], bookmarkIntervalMs: 200, authorization: shippedAuthorization() }));
  const kc = server.kubeConfig({ token: TOKENS.relay });
  const relay = await startRelay({
    kubeConfig: kc, sink: new CollectingSink(), namespaces: [], relayId: 'me', coalesceMs: 0, resyncSeconds: 3600, bufferMax: 100, logger: silentLogger, backoff: FAST_BACKOFF,
    leaseSweep: { namespace: 'ephemera-locks' },
    election: { kube: createKube(kc), lock: { namespace: 'ephemera-system', holder: 'me', leaseSeconds: 3, skewSeconds: 1 } },
  });
  try {
    await eventually(() => assert.ok(relay.isLeader(), 'the relay leads'));
    assert.equal(typeof (await relay.sweepLeases('test')), 'number', 'the sweep listed the claims Leases');
  } finally {
    await relay.stop();
    await server.close(); // fails on any request the shipped RBAC refused
  }
  const relayRequests = server.requests.entries.filter((e) => e.actor === TOKENS.relay || e.actor === undefined);
  const leaseVerbs = new Set(relayRequests.filter((e) => e.path.includes('/leases')).map((e) => e.verb));
  assert.ok(leaseVerbs.has('create') || leaseVerbs.has('update'), `the election wrote its Lease: ${[...leaseVerbs].join(', ')}`);
  assert.ok(leaseVerbs.has('list'), 'the sweep listed');
  const gets = relayRequests.filter((e) => e.verb === 'get' && /\/(pods|ephemeraljobs)\//.test(e.path));
  assert.deepEqual(gets.map((e) => e.path), [], 'the relay lists and watches pods and jobs; it never gets one');
});
