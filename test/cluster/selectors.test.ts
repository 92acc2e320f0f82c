import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { harness, pod, rejects } from './support.ts';

const pods = [
  pod('a', { labels: { app: 'web', tier: 'front' }, spec: { nodeName: 'n1' }, status: { phase: 'Running' } }),
  pod('b', { labels: { app: 'web', tier: 'back' }, spec: { nodeName: 'n2' }, status: { phase: 'Succeeded' } }),
  pod('c', { labels: { app: 'db' }, spec: { nodeName: 'n1' }, status: { phase: 'Running' } }),
  pod('d', { spec: { nodeName: 'n2' }, status: { phase: 'Pending' } }),
  pod('e', { namespace: 'other', labels: { app: 'web', version: '3' }, status: { phase: 'Running' } }),
];

describe('label selectors', () => {
  const cases: [string, string[]][] = [
    ['app=web', ['a', 'b']],
    ['app==web', ['a', 'b']],
    ['app!=web', ['c', 'd']],
    ['app in (web,db)', ['a', 'b', 'c']],
    ['app in (web, db),tier notin (back)', ['a', 'c']],
    ['tier', ['a', 'b']],
    ['!tier', ['c', 'd']],
    ['app=web,tier=front', ['a']],
    ['tier notin (front)', ['b', 'c', 'd']],
    ['', ['a', 'b', 'c', 'd']],
  ];
  for (const [selector, want] of cases) {
    test(`"${selector}" selects ${want.join(',')}`, async () => {
      const { core } = await harness({ objects: pods });
      const list = await core.listNamespacedPod({ namespace: 'default', labelSelector: selector });
      assert.deepEqual(list.items.map((p) => p.metadata!.name), want);
    });
  }

  test('gt and lt compare integers', async () => {
    const { core } = await harness({ objects: pods });
    assert.deepEqual((await core.listPodForAllNamespaces({ labelSelector: 'version>2' })).items.map((p) => p.metadata!.name), ['e']);
    assert.deepEqual((await core.listPodForAllNamespaces({ labelSelector: 'version<3' })).items.map((p) => p.metadata!.name), []);
  });

  test('a malformed selector is 400 BadRequest', async () => {
    const { core } = await harness({ objects: pods });
    for (const bad of ['app in web', 'a b c', 'in (x)=', 'app=-bad-']) {
      const s = await rejects(core.listNamespacedPod({ namespace: 'default', labelSelector: bad }), 400);
      assert.equal(s.reason, 'BadRequest', bad);
    }
  });
});

describe('field selectors', () => {
  const cases: [string, string[]][] = [
    ['metadata.name=a', ['a']],
    ['metadata.name!=a', ['b', 'c', 'd']],
    ['status.phase=Running', ['a', 'c']],
    ['status.phase!=Running,status.phase!=Succeeded', ['d']],
    ['spec.nodeName==n2', ['b', 'd']],
    ['metadata.namespace=default,spec.nodeName=n1', ['a', 'c']],
  ];
  for (const [selector, want] of cases) {
    test(`"${selector}" selects ${want.join(',')}`, async () => {
      const { core } = await harness({ objects: pods });
      const list = await core.listNamespacedPod({ namespace: 'default', fieldSelector: selector });
      assert.deepEqual(list.items.map((p) => p.metadata!.name), want);
    });
  }

  test('across namespaces, metadata.namespace filters', async () => {
    const { core } = await harness({ objects: pods });
    const list = await core.listPodForAllNamespaces({ fieldSelector: 'metadata.namespace=other' });
    assert.deepEqual(list.items.map((p) => p.metadata!.name), ['e']);
  });

  test("an Event's fields as kube-apiserver selects them: involvedObject.*, reason, and source = source.component, else reportingComponent", async () => {
    const ev = (name: string, o: Record<string, unknown>): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'Event', metadata: { name, namespace: 'default' }, involvedObject: { kind: 'EphemeralJob', name: 'j', namespace: 'default', uid: 'job-uid' }, reason: 'Failed', type: 'Warning', message: 'm', ...o });
    const objects = [ev('a', { source: { component: 'ephemera' } }), ev('b', { reason: 'Other', source: { component: 'ephemera' } }), ev('c', { involvedObject: { kind: 'Pod', name: 'p', namespace: 'default', uid: 'pod-uid' } }), ev('d', { reportingComponent: 'kubelet' })];
    const { core } = await harness({ objects });
    const names = async (fieldSelector: string): Promise<string[]> => (await core.listNamespacedEvent({ namespace: 'default', fieldSelector })).items.map((e) => e.metadata!.name!).sort();
    assert.deepEqual(await names('involvedObject.uid=job-uid,reason=Failed'), ['a', 'd']);
    assert.deepEqual(await names('source=ephemera'), ['a', 'b']);
    assert.deepEqual(await names('source=kubelet'), ['d']);
  });

  test('an unsupported field is 400 "field label not supported"', async () => {
    const { core, custom } = await harness({ objects: pods });
    const s = await rejects(core.listNamespacedPod({ namespace: 'default', fieldSelector: 'spec.containers=x' }), 400);
    assert.equal(s.message, 'field label not supported: spec.containers');
    await rejects(custom.listClusterCustomObject({ group: 'apps.kruise.io', version: 'v1alpha1', plural: 'ephemeraljobs', fieldSelector: 'status.phase=Running' }), 400);
  });
});
