// A job deleted while no relay watched: its claims Lease is found by the next relay's sweep
// (relay/lease-sweep.ts) and deleted by the functions on the existing departed() path; a job
// created again under the same name meanwhile keeps its Lease (functions/ejob/README.md,
// "When a job goes"). Relay → in-process sink → engine → API server over HTTP.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SimKubelet, startApiServer, type ApiServer } from '../../functions/cluster/index.ts';
import { ejobController, jobKey, jobLeaseName } from '../../functions/ejob/controller.ts';
import { CLAIMS_ANNOTATION, KEY_ANNOTATION, LEASE_LABEL, type LeaseRecord } from '../../functions/ejob/lease-record.ts';
import { handle } from '../../functions/engine/engine.ts';
import { silentLogger } from '../../functions/engine/logger.ts';
import { createKube } from '../../functions/kube/client.ts';
import { startRelay, type Relay } from '../../relay/relay.ts';
import { memorySink } from '../../relay/sinks/memory.ts';
import { fixture, STORY_NOW } from '../support/ejob-world.ts';
import { eventually } from '../support/relay-world.ts';

const JOB = 'hello-world-ephemeral-job';
const NS = 'default';
const LOCKS = 'ephemera-locks';
const EJOB = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob' };
const LEASE = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: LOCKS, name: jobLeaseName(jobKey(NS, JOB)) };

type Obj = { metadata: { uid?: string; labels?: Record<string, string>; annotations?: Record<string, string> } } & Record<string, unknown>;
const leaseIn = (server: ApiServer): Obj | undefined => server.store.get(LEASE) as Obj | undefined;
const recordIn = (server: ApiServer): LeaseRecord | undefined => {
  const text = leaseIn(server)?.metadata.annotations?.[CLAIMS_ANNOTATION];
  return text === undefined ? undefined : (JSON.parse(text) as LeaseRecord);
};

/** A relay whose sink runs the functions in this process (as `ephemera relay --sink memory`). */
async function relayWithFunctions(server: ApiServer): Promise<Relay> {
  const deps = { kube: createKube(server.kubeConfig()), controllers: [ejobController], lock: { namespace: LOCKS, holder: 'fn', leaseSeconds: 15, skewSeconds: 5 }, clock: () => STORY_NOW, logger: silentLogger };
  const box: { relay?: Relay } = {};
  box.relay = await startRelay({
    kubeConfig: server.kubeConfig(), namespaces: [], relayId: 'e2e', coalesceMs: 10, resyncSeconds: 3600, bufferMax: 1000, logger: silentLogger,
    sink: memorySink(async (e) => handle(e, deps), (e, ms) => box.relay?.requeue(e, ms)),
    leaseSweep: { namespace: LOCKS },
  });
  return box.relay;
}

/** Run until the job has claimed a pod on its Lease, then stop the relay. */
async function claimThenStop(server: ApiServer): Promise<string> {
  const kubelet = new SimKubelet(server, { ephemeral: () => ({ exitCode: 0 }) });
  const relay = await relayWithFunctions(server);
  try {
    await eventually(async () => {
      await relay.flush();
      kubelet.tick();
      assert.ok((recordIn(server)?.total ?? 0) > 0, 'no claim yet');
    }, 10_000);
  } finally {
    await relay.stop();
  }
  const lease = leaseIn(server)!;
  assert.equal(lease.metadata.labels?.[LEASE_LABEL], 'true', 'the claims Lease is labelled for the sweep');
  assert.equal(lease.metadata.annotations?.[KEY_ANNOTATION], jobKey(NS, JOB), 'and names its job');
  return (server.store.get({ ...EJOB, namespace: NS, name: JOB }) as Obj).metadata.uid ?? '';
}

describe('a job deleted while no relay watched: the claims Lease sweep', () => {
  test('the next relay\'s first sync sends the job\'s key, and the functions delete its Lease', async () => {
    const server = await startApiServer({ objects: fixture('test/fixtures/stories/story1-state.yaml') });
    try {
      await claimThenStop(server);
      server.store.delete({ ...EJOB, namespace: NS, name: JOB });
      assert.ok(leaseIn(server), 'no relay saw the deletion: the Lease is left');
      const relay = await relayWithFunctions(server);
      try {
        await eventually(async () => {
          await relay.flush();
          assert.equal(leaseIn(server), undefined, 'the Lease is gone');
        });
        assert.equal((await relay.metrics.leaseSweeps.get()).values[0]?.value, 1);
        const deletes = server.requests.filter((r) => r.verb === 'delete' && r.path.endsWith(`/leases/${LEASE.name}`));
        assert.equal(deletes.length, 1, 'deleted by the functions, once');
      } finally {
        await relay.stop();
      }
    } finally {
      await server.close();
    }
  });

  test('a job created again under the same name before the relay came back keeps its Lease, and claims on it', async () => {
    const server = await startApiServer({ objects: fixture('test/fixtures/stories/story1-state.yaml') });
    try {
      const oldUid = await claimThenStop(server);
      server.store.delete({ ...EJOB, namespace: NS, name: JOB });
      const manifest = fixture('test/fixtures/stories/story1-state.yaml').find((o) => o.kind === 'EphemeralJob') as Obj;
      const { uid: _uid, ...metadata } = manifest.metadata;
      const newUid = (server.store.put({ ...manifest, metadata }) as Obj).metadata.uid ?? '';
      assert.notEqual(newUid, oldUid);
      const relay = await relayWithFunctions(server);
      try {
        assert.equal(await relay.sweepLeases('test'), 0, 'the job is in the cache: no key is sent for its Lease');
        await eventually(async () => {
          await relay.flush();
          assert.equal(recordIn(server)?.job, newUid, 'the new job\'s claims are on the Lease');
        });
        assert.equal((await relay.metrics.leaseSweeps.get()).values[0]?.value ?? 0, 0);
        assert.equal(server.requests.filter((r) => r.verb === 'delete' && r.path.endsWith(`/leases/${LEASE.name}`)).length, 0, 'never deleted');
      } finally {
        await relay.stop();
      }
      assert.ok(leaseIn(server), 'the Lease is still there');
    } finally {
      await server.close();
    }
  });
});
