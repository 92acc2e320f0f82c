// A namespace's deletion through real HTTP: the namespace registry's DELETE and the
// NamespaceLifecycle admission plugin's answers to creates in it, word for word (review96 N1).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { harness, mergePatch, pod, rejects } from './support.ts';

const ns = (name: string, spec?: Record<string, unknown>): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name }, ...(spec ? { spec } : {}) });
const configMap = (name: string, namespace: string): { apiVersion: string; kind: string; metadata: { name: string; namespace: string } } => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace } });

type Answer = { status: number; body: { kind?: string; metadata?: { name?: string; deletionTimestamp?: string }; status?: { phase?: string } | string; message?: string } };

/** DELETE of a Namespace, raw: client-node reads every answer as a Status, and kube-apiserver's is the Namespace. */
async function deleteNamespace(url: string, name: string): Promise<Answer> {
  const res = await fetch(`${url}/api/v1/namespaces/${name}`, { method: 'DELETE' });
  return { status: res.status, body: (await res.json()) as Answer['body'] };
}

describe('namespace lifecycle', () => {
  test('the first DELETE marks the namespace Terminating and answers it; creates in it get NamespaceLifecycle\'s 403 with its cause; other writes go on', async () => {
    const { core, coord, custom, server } = await harness({ clock: () => new Date('2026-03-03T03:03:03Z'), objects: [ns('ci-1'), pod('web', { namespace: 'ci-1' })] });
    const marked = await deleteNamespace(server.url, 'ci-1');
    assert.deepEqual([marked.status, marked.body.kind, marked.body.metadata?.deletionTimestamp, marked.body.status], [200, 'Namespace', '2026-03-03T03:03:03Z', { phase: 'Terminating' }]);
    assert.equal((await core.readNamespace({ name: 'ci-1' })).status?.phase, 'Terminating', 'kept: the namespace controller has its contents to delete');

    const s = await rejects(core.createNamespacedConfigMap({ namespace: 'ci-1', body: configMap('c', 'ci-1') }), 403);
    assert.deepEqual({ reason: s.reason, message: s.message, details: s.details }, {
      reason: 'Forbidden',
      message: 'configmaps "c" is forbidden: unable to create new content in namespace ci-1 because it is being terminated',
      details: { name: 'c', kind: 'configmaps', causes: [{ reason: 'NamespaceTerminating', message: 'namespace ci-1 is being terminated', field: 'metadata.namespace' }] },
    });
    // A custom resource's, named by its generateName as admission names it (before the name is made).
    const crr = await rejects(custom.createNamespacedCustomObject({ group: 'apps.kruise.io', version: 'v1alpha1', plural: 'ephemeraljobs', namespace: 'ci-1', body: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', metadata: { generateName: 'probe-' } } }), 403);
    assert.equal(crr.message, 'ephemeraljobs.apps.kruise.io "probe-" is forbidden: unable to create new content in namespace ci-1 because it is being terminated');
    assert.deepEqual(crr.details?.causes?.map((c) => c.reason), ['NamespaceTerminating']);
    // A PUT that creates (a Lease) is a create to admission too.
    await rejects(coord.replaceNamespacedLease({ namespace: 'ci-1', name: 'l', body: { metadata: { name: 'l' }, spec: {} } }), 403);

    // Updates and deletes are not creates: the namespace controller and the objects' owners go on.
    await core.patchNamespacedPod({ namespace: 'ci-1', name: 'web', body: { metadata: { labels: { a: 'b' } } } }, mergePatch);
    await core.deleteNamespacedPod({ namespace: 'ci-1', name: 'web' });
    // Other namespaces are not touched.
    await core.createNamespacedConfigMap({ namespace: 'default', body: configMap('c', 'default') });
  });

  test('a later DELETE: 409 while spec.finalizers holds anything, else the namespace goes; creates in it then get the namespace\'s 404', async () => {
    const { core, server } = await harness({ objects: [ns('held', { finalizers: ['kubernetes'] }), ns('ci-2')] });
    await deleteNamespace(server.url, 'held');
    const c = await deleteNamespace(server.url, 'held');
    assert.equal(c.status, 409);
    assert.equal(c.body.message, 'Operation cannot be fulfilled on namespaces "held": The system is ensuring all content is removed from this namespace.  Upon completion, this namespace will automatically be purged by the system.');

    await deleteNamespace(server.url, 'ci-2');
    const gone = await deleteNamespace(server.url, 'ci-2');
    assert.deepEqual([gone.status, gone.body.kind, gone.body.metadata?.name], [200, 'Namespace', 'ci-2'], 'the deleted namespace is the answer (ReturnDeletedObject)');
    assert.equal(server.store.get({ apiVersion: 'v1', kind: 'Namespace', name: 'ci-2' }), undefined);
    const s = await rejects(core.createNamespacedConfigMap({ namespace: 'ci-2', body: configMap('c', 'ci-2') }), 404);
    assert.deepEqual({ reason: s.reason, message: s.message, details: s.details }, { reason: 'NotFound', message: 'namespaces "ci-2" not found', details: { name: 'ci-2', kind: 'namespaces' } });
    // Created again, it takes content again.
    await core.createNamespace({ body: ns('ci-2') });
    await core.createNamespacedConfigMap({ namespace: 'ci-2', body: configMap('c', 'ci-2') });
  });

  test('the immortal namespaces may not be deleted; namespaces never stored are not checked (no world has to seed them)', async () => {
    const { core, server } = await harness({ objects: [ns('default')] });
    const s = await deleteNamespace(server.url, 'default');
    assert.deepEqual([s.status, s.body.message], [403, 'namespaces "default" is forbidden: this namespace may not be deleted']);
    assert.equal((await deleteNamespace(server.url, 'kube-system')).status, 403, 'refused by admission before the namespace is looked up');
    assert.equal((await core.readNamespace({ name: 'default' })).metadata?.deletionTimestamp, undefined);
    await core.createNamespacedConfigMap({ namespace: 'never-made', body: configMap('c', 'never-made') });
  });
});
