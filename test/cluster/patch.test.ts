/* eslint-disable @typescript-eslint/no-explicit-any -- raw JSON from the wire and the store, read field by field */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { harness, mergePatch, pod, rejects, strategicPatch } from './support.ts';

const EJOB = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'ephemeraljobs', namespace: 'default' };

describe('PATCH', () => {
  test('client-node sends JSON Patch by default; add, replace and a passing test apply', async () => {
    const { core, server } = await harness({ objects: [pod('web', { labels: { app: 'web' } })] });
    const out = await core.patchNamespacedPod({
      namespace: 'default', name: 'web',
      body: [{ op: 'test', path: '/metadata/labels/app', value: 'web' }, { op: 'add', path: '/metadata/labels/tier', value: 'front' }, { op: 'replace', path: '/metadata/labels/app', value: 'api' }],
    });
    assert.deepEqual(out.metadata!.labels, { app: 'api', tier: 'front' });
    assert.equal(server.requests.entries.at(-1)!.verb, 'patch');
  });

  test('a failing JSON Patch test op is 422 and changes nothing', async () => {
    const { core, server } = await harness({ objects: [pod('web', { labels: { app: 'web' } })] });
    const before = server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web' })!;
    const body = await rejects(core.patchNamespacedPod({ namespace: 'default', name: 'web', body: [{ op: 'test', path: '/metadata/labels/app', value: 'other' }, { op: 'remove', path: '/metadata/labels' }] }), 422);
    assert.deepEqual(server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web' }), before);
    // As kube-apiserver (handlers/patch.go applyJSPatch): its generic 422, json-patch's words dropped, no causes.
    assert.equal(body.reason, 'Invalid');
    assert.equal(body.message, 'the server rejected our request due to an error in our request');
    assert.deepEqual(body.details?.causes ?? [], []);
    assert.match(server.history.rejected.at(-1)?.message ?? '', /testing value \/metadata\/labels\/app failed/, "the library's words stay in the run's history");
  });

  test('merge patch: null deletes a key, objects merge, lists replace', async () => {
    const { core } = await harness({ objects: [pod('web', { labels: { a: '1', b: '2' } })] });
    const out = await core.patchNamespacedPod({ namespace: 'default', name: 'web', body: { metadata: { labels: { a: null, c: '3' }, finalizers: ['x/y'] } } }, mergePatch);
    assert.deepEqual(out.metadata!.labels, { b: '2', c: '3' });
    assert.deepEqual(out.metadata!.finalizers, ['x/y']);
  });

  test('metadata.resourceVersion inside a merge patch is a precondition (409 when stale)', async () => {
    const { core } = await harness({ objects: [pod('web')] });
    const cur = await core.readNamespacedPod({ namespace: 'default', name: 'web' });
    const rv = cur.metadata!.resourceVersion!;
    const ok = await core.patchNamespacedPod({ namespace: 'default', name: 'web', body: { metadata: { resourceVersion: rv, labels: { a: '1' } } } }, mergePatch);
    assert.notEqual(ok.metadata!.resourceVersion, rv);
    const s = await rejects(core.patchNamespacedPod({ namespace: 'default', name: 'web', body: { metadata: { resourceVersion: rv, labels: { a: '2' } } } }, mergePatch), 409);
    assert.equal(s.reason, 'Conflict');
    assert.equal((await core.readNamespacedPod({ namespace: 'default', name: 'web' })).metadata!.labels!.a, '1');
  });

  test('strategic merge patch merges containers, env and conditions by their keys', async () => {
    const { core } = await harness({
      objects: [pod('web', {
        spec: { containers: [{ name: 'app', image: 'nginx:1', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }] }, { name: 'proxy', image: 'envoy:1' }] },
        status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }, { type: 'Initialized', status: 'True' }] },
      })],
    });
    const out = await core.patchNamespacedPod({ namespace: 'default', name: 'web', body: { spec: { containers: [{ name: 'proxy', image: 'envoy:2' }] } } }, strategicPatch);
    assert.deepEqual(out.spec!.containers.map((c) => `${c.name}=${c.image}`), ['app=nginx:1', 'proxy=envoy:2']);
    assert.deepEqual(out.spec!.containers[0]!.env!.map((e) => e.name), ['A', 'B'], 'untouched container keeps its env');
    const st = await core.patchNamespacedPodStatus({ namespace: 'default', name: 'web', body: { status: { conditions: [{ type: 'SidecarTerminated', status: 'True' }, { type: 'Ready', status: 'False' }] } } }, strategicPatch);
    assert.deepEqual(st.status!.conditions!.map((c) => `${c.type}=${c.status}`), ['Ready=False', 'Initialized=True', 'SidecarTerminated=True']);
    const merged = await core.patchNamespacedPod({ namespace: 'default', name: 'web', body: { metadata: { labels: { x: 'y' } } } }, strategicPatch);
    assert.deepEqual(merged.spec!.containers.map((c) => c.image), ['nginx:1', 'envoy:2']);
  });

  test('strategic merge $patch: delete removes a list item; finalizers merge as a set', async () => {
    const { core } = await harness({ objects: [{ ...pod('web'), metadata: { name: 'web', namespace: 'default', finalizers: ['a/b'] } }] });
    const out = await core.patchNamespacedPod({ namespace: 'default', name: 'web', body: { metadata: { finalizers: ['c/d', 'a/b'] } } }, strategicPatch);
    assert.deepEqual(out.metadata!.finalizers, ['a/b', 'c/d']);
    const del = await core.patchNamespacedPod({ namespace: 'default', name: 'web', body: { metadata: { '$deleteFromPrimitiveList/finalizers': ['a/b'] } } }, strategicPatch);
    assert.deepEqual(del.metadata!.finalizers, ['c/d']);
  });

  test('custom resources refuse strategic merge patch (415) and accept merge patch', async () => {
    const { custom } = await harness({ objects: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', metadata: { name: 'j', namespace: 'default' }, spec: { parallelism: 1 } }] });
    const s = await rejects(custom.patchNamespacedCustomObject({ ...EJOB, name: 'j', body: { spec: { parallelism: 2 } } }, strategicPatch), 415);
    assert.equal(s.reason, 'UnsupportedMediaType');
    const out = (await custom.patchNamespacedCustomObject({ ...EJOB, name: 'j', body: { spec: { paused: true } } }, mergePatch)) as any;
    assert.deepEqual(out.spec, { parallelism: 1, paused: true });
  });

  test('an unknown patch content type is 415; a malformed body is 400', async () => {
    const { server } = await harness({ objects: [pod('web')] });
    const url = `${server.url}/api/v1/namespaces/default/pods/web`;
    const a = await fetch(url, { method: 'PATCH', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    assert.equal(a.status, 415);
    const b = await fetch(url, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: '{not json' });
    assert.equal(b.status, 400);
  });

  test('PATCH of a missing object is 404', async () => {
    const { core } = await harness();
    await rejects(core.patchNamespacedPod({ namespace: 'default', name: 'nope', body: { metadata: { labels: { a: 'b' } } } }, mergePatch), 404);
  });

  test('patching a pod status keeps its spec, and the main resource keeps its status', async () => {
    const { core } = await harness({ objects: [pod('web', { status: { phase: 'Running' } })] });
    const st = await core.patchNamespacedPodStatus({ namespace: 'default', name: 'web', body: { spec: { nodeName: 'n9' }, status: { phase: 'Succeeded' } } }, mergePatch);
    assert.equal(st.status!.phase, 'Succeeded');
    assert.equal(st.spec!.nodeName, undefined);
    const main = await core.patchNamespacedPod({ namespace: 'default', name: 'web', body: { metadata: { labels: { a: 'b' } }, status: { phase: 'Failed' } } }, mergePatch);
    assert.equal(main.status!.phase, 'Succeeded');
  });

  test('pods/status stores the metadata it is sent but the ownerReferences, as podStatusStrategy does (a custom resource\'s /status keeps its metadata) (review74)', async () => {
    const { core } = await harness({ objects: [pod('web', { status: { phase: 'Running' } })] });
    const owner = { apiVersion: 'batch/v1', kind: 'Job', name: 'j', uid: 'u-j' };
    const st = await core.patchNamespacedPodStatus({ namespace: 'default', name: 'web', body: { metadata: { annotations: { 'ephemera.io/x': 'y' }, labels: { a: 'b' }, ownerReferences: [owner] }, status: { phase: 'Succeeded' } } }, mergePatch);
    assert.equal(st.status!.phase, 'Succeeded');
    assert.deepEqual([st.metadata!.annotations, st.metadata!.labels?.a, st.metadata!.ownerReferences], [{ 'ephemera.io/x': 'y' }, 'b', undefined]);
  });
});

describe('pod immutability on the main resource', () => {
  const base = pod('web', { spec: { containers: [{ name: 'app', image: 'app:1' }, { name: 'sidecar', image: 'envoy:1' }], activeDeadlineSeconds: 600, tolerations: [{ key: 'a', operator: 'Exists' }] } });

  test('container images may change (the virtual-kubelet sidecar swap)', async () => {
    const { core } = await harness({ objects: [base] });
    const out = await core.patchNamespacedPod({ namespace: 'default', name: 'web', body: { spec: { containers: [{ name: 'sidecar', image: 'pause:3.9' }] } } }, strategicPatch);
    assert.equal(out.spec!.containers[1]!.image, 'pause:3.9');
    assert.equal(out.metadata!.generation, 2);
  });

  test('activeDeadlineSeconds may only shrink; tolerations may only be added; grace period is immutable', async () => {
    const { core } = await harness({ objects: [base] });
    await core.patchNamespacedPod({ namespace: 'default', name: 'web', body: { spec: { activeDeadlineSeconds: 300, tolerations: [{ key: 'a', operator: 'Exists' }, { key: 'b', operator: 'Exists' }] } } }, mergePatch);
    const grow = await rejects(core.patchNamespacedPod({ namespace: 'default', name: 'web', body: { spec: { activeDeadlineSeconds: 900 } } }, mergePatch), 422);
    assert.equal(grow.details!.causes![0]!.field, 'spec.activeDeadlineSeconds');
    const drop = await rejects(core.patchNamespacedPod({ namespace: 'default', name: 'web', body: { spec: { tolerations: [] } } }, mergePatch), 422);
    assert.equal(drop.details!.causes![0]!.field, 'spec.tolerations');
    const grace = await rejects(core.patchNamespacedPod({ namespace: 'default', name: 'web', body: { spec: { terminationGracePeriodSeconds: 5 } } }, mergePatch), 422);
    assert.equal(grace.details!.causes![0]!.field, 'spec');
  });

  test('other spec changes are 422 Forbidden with the list of updatable fields', async () => {
    const { core } = await harness({ objects: [base] });
    for (const body of [
      { spec: { containers: [{ name: 'app', env: [{ name: 'X', value: '1' }] }] } },
      { spec: { nodeName: 'elsewhere' } },
      { spec: { restartPolicy: 'Never' } },
    ]) {
      const s = await rejects(core.patchNamespacedPod({ namespace: 'default', name: 'web', body }, strategicPatch), 422);
      assert.equal(s.reason, 'Invalid');
      assert.equal(s.details!.causes![0]!.reason, 'FieldValueForbidden');
      assert.match(s.details!.causes![0]!.message, /^Forbidden: pod updates may not change fields other than `spec.containers\[\*\]\.image`/);
    }
  });

  test('adding or removing containers is 422 Forbidden', async () => {
    const { core } = await harness({ objects: [base] });
    const s = await rejects(core.patchNamespacedPod({ namespace: 'default', name: 'web', body: { spec: { containers: [{ name: 'third', image: 'x:1' }] } } }, strategicPatch), 422);
    assert.deepEqual(s.details!.causes, [{ reason: 'FieldValueForbidden', message: 'Forbidden: pod updates may not add or remove containers', field: 'spec.containers' }]);
  });

  test('ephemeral containers cannot be added through the main resource or on create', async () => {
    const { core } = await harness({ objects: [base] });
    await rejects(core.patchNamespacedPod({ namespace: 'default', name: 'web', body: { spec: { ephemeralContainers: [{ name: 'dbg', image: 'busybox' }] } } }, strategicPatch), 422);
    const s = await rejects(core.createNamespacedPod({ namespace: 'default', body: pod('p2', { spec: { ephemeralContainers: [{ name: 'dbg', image: 'busybox' }] } }) as V1Pod }), 422);
    assert.equal(s.details!.causes![0]!.message, 'Forbidden: cannot be set on create');
  });

  test('a key named __proto__ (a valid ConfigMap data key) stays a key through create, read, list, update and every patch', async () => {
    const { server } = await harness();
    const base = `${server.url}/api/v1/namespaces/default/configmaps`;
    const send = async (method: string, url: string, body: string, type = 'application/json'): Promise<any> => {
      const res = await fetch(url, { method, headers: { 'content-type': type }, body });
      assert.ok(res.status < 300, `${method} ${url}: ${res.status} ${await res.clone().text()}`);
      return JSON.parse(await res.text());
    };
    const read = async (url: string): Promise<any> => JSON.parse(await (await fetch(url)).text());
    // JSON.parse, as the test reads the answers, makes "__proto__" an own key, as Go's decoder
    // would. Key order is not compared: Go writes a map's keys sorted, the fake as it keeps them.
    const data = (o: any): [string, unknown][] => Object.entries(o.data as object).sort(([a], [b]) => (a < b ? -1 : 1));
    const created = await send('POST', base, '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"odd"},"data":{"__proto__":"x","a":"1"}}');
    for (const got of [created, await read(`${base}/odd`), (await read(base)).items[0]]) assert.deepEqual(data(got), [['__proto__', 'x'], ['a', '1']]);
    const updated = await send('PUT', `${base}/odd`, JSON.stringify({ ...created, data: JSON.parse('{"__proto__":"y","a":"1"}') }));
    assert.deepEqual(data(updated), [['__proto__', 'y'], ['a', '1']]);
    assert.deepEqual(data(await send('PATCH', `${base}/odd`, '{"data":{"__proto__":"m","b":"2"}}', 'application/merge-patch+json')), [['__proto__', 'm'], ['a', '1'], ['b', '2']]);
    assert.deepEqual(data(await send('PATCH', `${base}/odd`, '{"data":{"__proto__":"s"}}', 'application/strategic-merge-patch+json')), [['__proto__', 's'], ['a', '1'], ['b', '2']]);
    assert.deepEqual(data(await send('PATCH', `${base}/odd`, '[{"op":"replace","path":"/data/__proto__","value":"j"}]', 'application/json-patch+json')), [['__proto__', 'j'], ['a', '1'], ['b', '2']]);
    assert.deepEqual(data(await send('PATCH', `${base}/odd`, '{"data":{"__proto__":null}}', 'application/merge-patch+json')), [['a', '1'], ['b', '2']]);
    // A patch naming __proto__ where there is none adds it as a key (not Object.prototype's fields).
    assert.deepEqual(data(await send('PATCH', `${base}/odd`, '{"data":{"__proto__":"m2"}}', 'application/merge-patch+json')), [['__proto__', 'm2'], ['a', '1'], ['b', '2']]);
    assert.deepEqual(data(await send('PATCH', `${base}/odd`, '{"data":{"__proto__":null}}', 'application/strategic-merge-patch+json')), [['a', '1'], ['b', '2']]);
    assert.deepEqual(data(await send('PATCH', `${base}/odd`, '{"data":{"__proto__":"s2"}}', 'application/strategic-merge-patch+json')), [['__proto__', 's2'], ['a', '1'], ['b', '2']]);
    assert.deepEqual(data(await send('PATCH', `${base}/odd`, '[{"op":"remove","path":"/data/__proto__"}]', 'application/json-patch+json')), [['a', '1'], ['b', '2']]);
    assert.deepEqual(data(await send('PATCH', `${base}/odd`, '[{"op":"add","path":"/data/__proto__","value":"k"}]', 'application/json-patch+json')), [['__proto__', 'k'], ['a', '1'], ['b', '2']]);
    assert.deepEqual(data(await send('PATCH', `${base}/odd`, '{"data":{"$patch":"replace","__proto__":"r","c":"3"}}', 'application/strategic-merge-patch+json')), [['__proto__', 'r'], ['c', '3']]);
    // Where there is none, a key of Object.prototype's is missing like any other: 422, and nothing leaks into Object.prototype.
    await send('PATCH', `${base}/odd`, '[{"op":"remove","path":"/data/__proto__"}]', 'application/json-patch+json');
    for (const op of ['{"op":"remove","path":"/data/__proto__"}', '{"op":"remove","path":"/data/constructor"}', '{"op":"replace","path":"/data/__proto__","value":"x"}', '{"op":"add","path":"/data/__proto__/x","value":"p"}']) {
      const res = await fetch(`${base}/odd`, { method: 'PATCH', headers: { 'content-type': 'application/json-patch+json' }, body: `[${op}]` });
      assert.equal(res.status, 422, `${op}: ${await res.text()}`);
    }
    assert.equal(({} as Record<string, unknown>).x, undefined);
    assert.deepEqual(data(await read(`${base}/odd`)), [['c', '3']]);
  });
});
