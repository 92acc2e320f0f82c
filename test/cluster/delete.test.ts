/* eslint-disable @typescript-eslint/no-explicit-any -- raw JSON from the wire and the store, read field by field */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { eventually, harness, mergePatch, pod, rawWatch, rejects } from './support.ts';

const EJOB = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'ephemeraljobs', namespace: 'default' };
const CLEANUP = 'apps.kruise.io/ephemeralcontainers-cleanup';

describe('DELETE', () => {
  test('a pod without finalizers goes at once and the answer is the pod', async () => {
    const { core, server } = await harness({ objects: [pod('web')] });
    const out = await core.deleteNamespacedPod({ namespace: 'default', name: 'web' });
    assert.equal(out.metadata!.name, 'web');
    assert.equal(server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web' }), undefined);
    await rejects(core.deleteNamespacedPod({ namespace: 'default', name: 'web' }), 404);
  });

  test('a custom resource without finalizers goes at once and the answer is a Success Status', async () => {
    const { custom } = await harness({ objects: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', metadata: { name: 'j', namespace: 'default' } }] });
    const out = (await custom.deleteNamespacedCustomObject({ ...EJOB, name: 'j' })) as any;
    assert.equal(out.kind, 'Status');
    assert.equal(out.status, 'Success');
    assert.equal(out.details.name, 'j');
  });

  test('finalizers: deletionTimestamp first, removal once an update empties them', async () => {
    const { custom, server } = await harness({
      clock: () => new Date('2026-02-02T02:02:02Z'),
      objects: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', metadata: { name: 'j', namespace: 'default', finalizers: [CLEANUP, 'other/keep'] } }],
    });
    const before = (await custom.getNamespacedCustomObject({ ...EJOB, name: 'j' })) as any;
    const marked = (await custom.deleteNamespacedCustomObject({ ...EJOB, name: 'j' })) as any;
    assert.equal(marked.metadata.deletionTimestamp, '2026-02-02T02:02:02Z');
    assert.equal(marked.metadata.deletionGracePeriodSeconds, 0);
    assert.equal(marked.metadata.generation, before.metadata.generation + 1, 'markAsDeleting: a new generation');
    const again = (await custom.deleteNamespacedCustomObject({ ...EJOB, name: 'j' })) as any;
    assert.equal(again.metadata.resourceVersion, marked.metadata.resourceVersion, 'a second delete changes nothing');
    assert.equal(again.metadata.generation, marked.metadata.generation);
    const s = await rejects(custom.patchNamespacedCustomObject({ ...EJOB, name: 'j', body: { metadata: { finalizers: [CLEANUP, 'other/keep', 'new/one'] } } }, mergePatch), 422);
    assert.equal(s.details!.causes![0]!.field, 'metadata.finalizers');
    const one = (await custom.patchNamespacedCustomObject({ ...EJOB, name: 'j', body: { metadata: { finalizers: ['other/keep'] } } }, mergePatch)) as any;
    assert.deepEqual(one.metadata.finalizers, ['other/keep']);
    assert.ok(server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'default', name: 'j' }));
    await custom.patchNamespacedCustomObject({ ...EJOB, name: 'j', body: [{ op: 'remove', path: '/metadata/finalizers' }] });
    assert.equal(server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'default', name: 'j' }), undefined);
  });

  test('an update that empties a deleting object\'s finalizers is not written: the stored object is deleted, and the answer is the request\'s at the version read (review74)', async () => {
    // registry Store.Update: errEmptiedFinalizers, then deleteWithoutFinalizers.
    const { custom, server } = await harness({ objects: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', metadata: { name: 'j', namespace: 'default', finalizers: [CLEANUP] } }] });
    const marked = (await custom.deleteNamespacedCustomObject({ ...EJOB, name: 'j' })) as any;
    const w = rawWatch(server.url, '/apis/apps.kruise.io/v1alpha1/namespaces/default/ephemeraljobs', { resourceVersion: marked.metadata.resourceVersion });
    try {
      const answer = (await custom.patchNamespacedCustomObject({ ...EJOB, name: 'j', body: { metadata: { finalizers: [] } } }, mergePatch)) as any;
      assert.equal(answer.metadata.resourceVersion, marked.metadata.resourceVersion, 'the answer is the request\'s object, at the version it was read at');
      assert.deepEqual(answer.metadata.finalizers ?? [], []);
      await eventually(() => w.events.length > 0, 'the DELETED event');
      const gone = w.events[0]!;
      assert.equal(gone.type, 'DELETED');
      assert.deepEqual(gone.object.metadata.finalizers, [CLEANUP], 'the stored object goes, its finalizers listed');
      assert.ok(Number(gone.object.metadata.resourceVersion) > Number(marked.metadata.resourceVersion), 'at a new resourceVersion');
    } finally {
      w.stop();
    }
  });

  test('a pod with a finalizer gets its grace period recorded', async () => {
    const { core } = await harness({ objects: [{ ...pod('web'), metadata: { name: 'web', namespace: 'default', finalizers: ['x/y'] } }] });
    const out = await core.deleteNamespacedPod({ namespace: 'default', name: 'web', gracePeriodSeconds: 7 });
    assert.ok(out.metadata!.deletionTimestamp);
    assert.equal(out.metadata!.deletionGracePeriodSeconds, 7);
  });

  test('preconditions: a wrong uid or resourceVersion is 409 and nothing is deleted', async () => {
    const { core, server } = await harness({ objects: [pod('web')] });
    const cur = await core.readNamespacedPod({ namespace: 'default', name: 'web' });
    const uid = await rejects(core.deleteNamespacedPod({ namespace: 'default', name: 'web', body: { preconditions: { uid: 'not-it' } } }), 409);
    assert.match(uid.message!, /^Operation cannot be fulfilled on Pod "web": the UID in the precondition \(not-it\) does not match the UID in record \([0-9a-f-]{36}\)\. The object might have been deleted and then recreated$/);
    const rv = await rejects(core.deleteNamespacedPod({ namespace: 'default', name: 'web', body: { preconditions: { resourceVersion: '1' } } }), 409);
    assert.match(rv.message!, /^Operation cannot be fulfilled on Pod "web": the ResourceVersion in the precondition \(1\) does not match the ResourceVersion in record \(\d+\)\. The object might have been modified$/);
    assert.ok(server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web' }));
    await core.deleteNamespacedPod({ namespace: 'default', name: 'web', body: { preconditions: { uid: cur.metadata!.uid, resourceVersion: cur.metadata!.resourceVersion } } });
    assert.equal(server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web' }), undefined);
  });

  test('DeleteOptions come from the body, or from the query only when the body is empty', async () => {
    const { server } = await harness({ objects: [{ ...pod('a'), metadata: { name: 'a', namespace: 'default', finalizers: ['x/y'] } }, { ...pod('b'), metadata: { name: 'b', namespace: 'default', finalizers: ['x/y'] } }] });
    const del = async (name: string, query: string, body?: unknown): Promise<any> => (await fetch(`${server.url}/api/v1/namespaces/default/pods/${name}?${query}`, { method: 'DELETE', ...(body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}) })).json();
    assert.equal((await del('a', 'gracePeriodSeconds=9', { gracePeriodSeconds: 3 })).metadata.deletionGracePeriodSeconds, 3, 'the body wins; its query is not read');
    assert.equal((await del('b', 'gracePeriodSeconds=9')).metadata.deletionGracePeriodSeconds, 9);
  });

  test('dependents go when their owner goes (garbage collection)', async () => {
    const { core, custom, server } = await harness();
    const owner = await core.createNamespacedPod({ namespace: 'default', body: pod('web') as V1Pod });
    await custom.createNamespacedCustomObject({
      group: 'apps.kruise.io', version: 'v1alpha1', plural: 'containerrecreaterequests', namespace: 'default',
      body: {
        apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ContainerRecreateRequest',
        metadata: { name: `sidecar-termination-${owner.metadata!.uid}`, ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web', uid: owner.metadata!.uid }] },
        spec: { podName: 'web', containers: [{ name: 'app' }] },
      },
    });
    assert.equal(server.store.list({ kind: 'ContainerRecreateRequest' }).length, 1);
    await core.deleteNamespacedPod({ namespace: 'default', name: 'web' });
    assert.equal(server.store.list({ kind: 'ContainerRecreateRequest' }).length, 0);
  });

  test('delete collection with a label selector', async () => {
    const { core, server } = await harness({ objects: [pod('a', { labels: { app: 'x' } }), pod('b', { labels: { app: 'y' } })] });
    await core.deleteCollectionNamespacedPod({ namespace: 'default', labelSelector: 'app=x' });
    assert.deepEqual(server.store.list({ kind: 'Pod' }).map((p) => p.metadata.name), ['b']);
  });
});
