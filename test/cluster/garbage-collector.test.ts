import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CoordinationV1Api, type V1Pod } from '@kubernetes/client-node';
import { harness, pod } from './support.ts';

const RS_UID = '0f0f0f0f-0000-4000-8000-0000000000a1';
const owned = (name: string, uid = RS_UID): Record<string, unknown> => {
  const p = pod(name) as { metadata: Record<string, unknown> };
  p.metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-rs', uid, controller: true }];
  return p;
};
const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'lock', namespace: 'default' }, spec: {} };

describe('garbage collector', () => {
  test('pods whose owner a seeded state does not hold survive a run that deletes something', async () => {
    const { core, server } = await harness({ objects: [owned('web-1'), owned('web-2'), lease] });
    // The first DELETE of any run (here the Lease release) used to sweep every pod whose owner was absent.
    await server.kubeConfig().makeApiClient(CoordinationV1Api).deleteNamespacedLease({ namespace: 'default', name: 'lock' });
    assert.deepEqual(server.store.list({ kind: 'Pod' }).map((p) => p.metadata.name), ['web-1', 'web-2']);
    await core.deleteNamespacedPod({ namespace: 'default', name: 'web-1' });
    assert.deepEqual(server.store.list({ kind: 'Pod' }).map((p) => p.metadata.name), ['web-2']);
  });

  test('a dependent goes once its owner is deleted here, even when it also names an owner never seen', async () => {
    const { core, server } = await harness();
    const owner = await core.createNamespacedPod({ namespace: 'default', body: pod('owner') as V1Pod });
    const dependent = owned('dep', owner.metadata!.uid);
    await core.createNamespacedPod({ namespace: 'default', body: dependent as V1Pod });
    const both = owned('both', owner.metadata!.uid) as { metadata: { ownerReferences: unknown[] } };
    both.metadata.ownerReferences.push({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'elsewhere', uid: RS_UID });
    await core.createNamespacedPod({ namespace: 'default', body: both as V1Pod });
    await core.deleteNamespacedPod({ namespace: 'default', name: 'owner' });
    // An owner not known to be gone keeps its dependent, as Kubernetes keeps one while any owner may exist.
    assert.deepEqual(server.store.list({ kind: 'Pod' }).map((p) => p.metadata.name), ['both']);
  });
});
