/* eslint-disable @typescript-eslint/no-explicit-any -- raw JSON from the wire and the store, read field by field */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { KubernetesObjectApi, type V1Pod } from '@kubernetes/client-node';
import { harness, mergePatch, pod, rejects } from './support.ts';

const EJOB = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'ephemeraljobs' };
const ejob = (name: string, spec: Record<string, unknown> = { selector: { matchLabels: { app: 'web' } } }): Record<string, unknown> =>
  ({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', metadata: { name }, spec });

describe('create, read, update', () => {
  test('a create carrying a resourceVersion is refused with 500, as etcd3\'s store refuses it (kubectl create -f of a saved object)', async () => {
    const { server } = await harness();
    const r = await fetch(`${server.url}/api/v1/namespaces/default/pods`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...pod('web'), metadata: { name: 'web', resourceVersion: '12' } }) });
    assert.equal(r.status, 500);
    assert.equal(((await r.json()) as any).message, 'resourceVersion should not be set on objects to be created');
    assert.equal(server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web' }), undefined);
    const zero = await fetch(`${server.url}/api/v1/namespaces/default/pods`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...pod('web'), metadata: { name: 'web', resourceVersion: '0' } }) });
    assert.equal(zero.status, 201, '"0" is no version: taken');
  });

  test('create sets uid, resourceVersion, creationTimestamp, generation and pod defaults; read returns it', async () => {
    let now = new Date('2026-03-01T10:00:00.250Z');
    const { core } = await harness({ clock: () => now });
    const created = await core.createNamespacedPod({ namespace: 'default', body: pod('web') as V1Pod });
    assert.match(created.metadata!.uid!, /^[0-9a-f-]{36}$/);
    assert.match(created.metadata!.resourceVersion!, /^\d+$/);
    assert.equal(created.metadata!.creationTimestamp!.toISOString(), '2026-03-01T10:00:00.000Z');
    assert.equal(created.metadata!.generation, 1);
    assert.equal(created.spec!.restartPolicy, 'Always');
    assert.equal(created.spec!.containers[0]!.imagePullPolicy, 'IfNotPresent');
    assert.equal(created.spec!.containers[0]!.terminationMessagePolicy, 'File');
    assert.equal(created.status!.phase, 'Pending');
    now = new Date('2026-03-01T10:05:00Z');
    const read = await core.readNamespacedPod({ namespace: 'default', name: 'web' });
    assert.equal(read.metadata!.uid, created.metadata!.uid);
    assert.equal(read.metadata!.resourceVersion, created.metadata!.resourceVersion);
  });

  test('answers write metadata in kube-apiserver\'s order (ObjectMeta\'s fields), whatever order the object was written in', async () => {
    const { server } = await harness();
    const body = { kind: 'Pod', apiVersion: 'v1', spec: { containers: [{ name: 'app', image: 'nginx' }] }, metadata: { labels: { app: 'web' }, annotations: { a: 'b' }, name: 'web', finalizers: ['x/y'] } };
    const created = await fetch(`${server.url}/api/v1/namespaces/default/pods`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(created.status, 201);
    const order = (text: string): string[] => Object.keys((JSON.parse(text) as { metadata: object }).metadata);
    const expected = ['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'labels', 'annotations', 'finalizers'];
    assert.deepEqual(order(await created.text()), expected);
    const listed = await (await fetch(`${server.url}/api/v1/namespaces/default/pods`)).text();
    assert.ok(listed.includes('"items":[{"metadata":{"name":"web","namespace":"default","uid":"'), listed.slice(0, 200));
    assert.deepEqual(Object.keys((JSON.parse(listed) as { items: { metadata: object }[] }).items[0]!.metadata), expected);
  });

  test('resourceVersion is one global counter across kinds', async () => {
    const { core, coord } = await harness();
    const a = await core.createNamespacedPod({ namespace: 'default', body: pod('a') as V1Pod });
    const l = await coord.createNamespacedLease({ namespace: 'default', body: { metadata: { name: 'l' }, spec: { holderIdentity: 'x' } } });
    const b = await core.createNamespacedPod({ namespace: 'default', body: pod('b') as V1Pod });
    const rvs = [a, l, b].map((o) => Number(o.metadata!.resourceVersion));
    assert.deepEqual(rvs, [rvs[0], rvs[0]! + 1, rvs[0]! + 2]);
  });

  test('404 is a metav1.Status NotFound', async () => {
    const { core } = await harness();
    const s = await rejects(core.readNamespacedPod({ namespace: 'default', name: 'nope' }), 404);
    assert.equal(s.status, 'Failure');
    assert.equal(s.reason, 'NotFound');
    assert.equal(s.message, 'pods "nope" not found');
    assert.deepEqual(s.details, { name: 'nope', kind: 'pods' });
  });

  test('409 AlreadyExists on a second create', async () => {
    const { core } = await harness();
    await core.createNamespacedPod({ namespace: 'default', body: pod('web') as V1Pod });
    const s = await rejects(core.createNamespacedPod({ namespace: 'default', body: pod('web') as V1Pod }), 409);
    assert.equal(s.reason, 'AlreadyExists');
  });

  test('generateName gives a 5-character suffix; no name at all is 422 Required', async () => {
    const { core } = await harness();
    const body = { metadata: { generateName: 'job-' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
    const a = await core.createNamespacedPod({ namespace: 'default', body });
    const b = await core.createNamespacedPod({ namespace: 'default', body });
    assert.match(a.metadata!.name!, /^job-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    assert.notEqual(a.metadata!.name, b.metadata!.name);
    const s = await rejects(core.createNamespacedPod({ namespace: 'default', body: { metadata: {}, spec: body.spec } }), 422);
    assert.equal(s.reason, 'Invalid');
    assert.deepEqual(s.details!.causes, [{ reason: 'FieldValueRequired', message: 'Required value: name or generateName is required', field: 'metadata.name' }]);
  });

  test('an invalid name is 422 Invalid on metadata.name', async () => {
    const { core } = await harness();
    const s = await rejects(core.createNamespacedPod({ namespace: 'default', body: pod('Web_1') as V1Pod }), 422);
    assert.equal(s.details!.causes![0]!.field, 'metadata.name');
    assert.equal(s.details!.causes![0]!.reason, 'FieldValueInvalid');
    assert.match(s.message!, /^Pod "Web_1" is invalid: metadata.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain/);
  });

  test('a pod without containers is 422 on spec.containers', async () => {
    const { core } = await harness();
    const s = await rejects(core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'x' }, spec: { containers: [] } } }), 422);
    assert.deepEqual(s.details!.causes!.map((c) => c.field), ['spec.containers']);
  });

  test('a namespace in the body that differs from the URL is 400', async () => {
    const { core } = await harness();
    const s = await rejects(core.createNamespacedPod({ namespace: 'default', body: pod('x', { namespace: 'other' }) as V1Pod }), 400);
    assert.equal(s.reason, 'BadRequest');
  });

  test('PUT with a stale resourceVersion is 409 Conflict; with the current one it succeeds and bumps it', async () => {
    const { core } = await harness();
    const created = await core.createNamespacedPod({ namespace: 'default', body: pod('web') as V1Pod });
    created.metadata!.labels = { v: '1' };
    const updated = await core.replaceNamespacedPod({ namespace: 'default', name: 'web', body: created });
    assert.ok(Number(updated.metadata!.resourceVersion) > Number(created.metadata!.resourceVersion));
    created.metadata!.labels = { v: '2' };
    const s = await rejects(core.replaceNamespacedPod({ namespace: 'default', name: 'web', body: created }), 409);
    assert.equal(s.reason, 'Conflict');
    assert.match(s.message!, /^Operation cannot be fulfilled on pods "web": the object has been modified/);
  });

  test('an update that changes nothing keeps the resourceVersion', async () => {
    const { core } = await harness();
    const created = await core.createNamespacedPod({ namespace: 'default', body: pod('web') as V1Pod });
    const same = await core.replaceNamespacedPod({ namespace: 'default', name: 'web', body: created });
    assert.equal(same.metadata!.resourceVersion, created.metadata!.resourceVersion);
  });

  test('PUT to a Lease that does not exist creates it (201), whatever resourceVersion it carries; a uid in it is a precondition (409); a ConfigMap is 404', async () => {
    // kube-apiserver: the lease strategy's AllowCreateOnUpdate() is true; the uid comes from
    // the object as a precondition (rest.DefaultUpdatedObjectInfo), which an absent object fails.
    const { server, coord, core } = await harness();
    const lease = { metadata: { name: 'l', resourceVersion: '12345' }, spec: { holderIdentity: 'x' } };
    const created = await coord.replaceNamespacedLease({ namespace: 'default', name: 'l', body: lease });
    assert.equal(created.spec!.holderIdentity, 'x');
    assert.notEqual(created.metadata!.resourceVersion, '12345');
    assert.equal(server.requests.entries.at(-1)?.status, 201);
    const s = await rejects(coord.replaceNamespacedLease({ namespace: 'default', name: 'gone', body: { metadata: { name: 'gone', uid: 'was-here', resourceVersion: '7' } } }), 409);
    assert.match(s.message!, /Precondition failed: UID in precondition: was-here, UID in object meta: $/);
    await rejects(core.replaceNamespacedConfigMap({ namespace: 'default', name: 'cm', body: { metadata: { name: 'cm', resourceVersion: '7' } } }), 404);
  });

  test('PUT of a custom resource needs metadata.resourceVersion (422)', async () => {
    const { custom } = await harness();
    await custom.createNamespacedCustomObject({ ...EJOB, namespace: 'default', body: ejob('j') });
    const s = await rejects(custom.replaceNamespacedCustomObject({ ...EJOB, namespace: 'default', name: 'j', body: ejob('j') }), 422);
    assert.equal(s.details!.causes![0]!.field, 'metadata.resourceVersion');
  });

  test('status subresource: the main endpoint ignores status, /status ignores everything else; spec changes bump generation', async () => {
    const { custom } = await harness();
    const created = (await custom.createNamespacedCustomObject({ ...EJOB, namespace: 'default', body: { ...ejob('j'), status: { phase: 'Bogus' } } })) as any;
    assert.equal(created.status, undefined, 'status is dropped on create');
    assert.equal(created.metadata.generation, 1);
    const withStatus = (await custom.replaceNamespacedCustomObjectStatus({
      ...EJOB, namespace: 'default', name: 'j',
      body: { ...created, spec: { selector: { matchLabels: { app: 'changed' } } }, metadata: { ...created.metadata, labels: { x: 'y' } }, status: { phase: 'Running' } },
    })) as any;
    assert.equal(withStatus.status.phase, 'Running');
    assert.deepEqual(withStatus.spec, created.spec, '/status keeps the spec');
    assert.equal(withStatus.metadata.labels, undefined, '/status keeps the metadata');
    assert.equal(withStatus.metadata.generation, 1, 'a status write does not bump generation');
    const mainWrite = (await custom.replaceNamespacedCustomObject({
      ...EJOB, namespace: 'default', name: 'j', body: { ...withStatus, spec: { selector: { matchLabels: { app: 'v2' } } }, status: { phase: 'Failed' } },
    })) as any;
    assert.equal(mainWrite.status.phase, 'Running', 'the main endpoint keeps the status');
    assert.deepEqual(mainWrite.spec.selector.matchLabels, { app: 'v2' });
    assert.equal(mainWrite.metadata.generation, 2);
    const labelsOnly = (await custom.replaceNamespacedCustomObject({ ...EJOB, namespace: 'default', name: 'j', body: { ...mainWrite, metadata: { ...mainWrite.metadata, labels: { a: 'b' } } } })) as any;
    assert.equal(labelsOnly.metadata.generation, 2, 'metadata changes do not bump generation');
  });

  test('lists across all namespaces, for core and custom resources, with the list resourceVersion', async () => {
    const { core, custom, server } = await harness();
    await core.createNamespacedPod({ namespace: 'a', body: pod('p1', { namespace: 'a' }) as V1Pod });
    await core.createNamespacedPod({ namespace: 'b', body: pod('p2', { namespace: 'b' }) as V1Pod });
    await custom.createNamespacedCustomObject({ ...EJOB, namespace: 'a', body: ejob('j1') });
    await custom.createNamespacedCustomObject({ ...EJOB, namespace: 'b', body: ejob('j2') });
    const pods = await core.listPodForAllNamespaces();
    assert.deepEqual(pods.items.map((p) => `${p.metadata!.namespace}/${p.metadata!.name}`), ['a/p1', 'b/p2']);
    assert.equal(pods.metadata!.resourceVersion, server.store.resourceVersion);
    const jobs = (await custom.listClusterCustomObject(EJOB)) as any;
    assert.deepEqual(jobs.items.map((j: any) => j.metadata.name), ['j1', 'j2']);
    assert.equal(jobs.items[0].kind, 'EphemeralJob', 'custom resource list items keep their kind');
    const inA = await core.listNamespacedPod({ namespace: 'a' });
    assert.deepEqual(inA.items.map((p) => p.metadata!.name), ['p1']);
  });

  test('a LIST is byte for byte the JSON of the objects as they are now: its per-object cache follows updates, deletes and re-creates', async () => {
    const { core, custom, server } = await harness({ objects: ['a', 'b', 'c'].map((n) => pod(n)) });
    await custom.createNamespacedCustomObject({ ...EJOB, namespace: 'default', body: ejob('j1') });
    const podDef = server.store.defFor('v1', 'Pod');
    const jobDef = server.store.defFor('apps.kruise.io/v1alpha1', 'EphemeralJob');
    // What the server sends, against JSON.stringify of the List object the REST layer builds.
    const same = async (path: string, def: typeof podDef, query: Record<string, string> = {}): Promise<any> => {
      const text = await (await fetch(`${server.url}${path}${Object.keys(query).length ? `?${new URLSearchParams(query)}` : ''}`)).text();
      assert.equal(text, JSON.stringify(server.rest.list(def, 'default', query)));
      return JSON.parse(text);
    };
    await same('/api/v1/namespaces/default/pods', podDef);
    await core.patchNamespacedPod({ namespace: 'default', name: 'b', body: { metadata: { labels: { step: '2' } } } }, mergePatch);
    await core.deleteNamespacedPod({ namespace: 'default', name: 'c', gracePeriodSeconds: 0 });
    await core.createNamespacedPod({ namespace: 'default', body: pod('d') as V1Pod });
    const list = await same('/api/v1/namespaces/default/pods', podDef);
    assert.deepEqual(list.items.map((p: any) => p.metadata.name), ['a', 'b', 'd']);
    assert.equal(list.items[1].metadata.labels.step, '2', 'the update, not the cached text of before');
    assert.equal(list.items[0].kind, undefined, 'built-in list items carry no kind');
    assert.equal((await same('/api/v1/namespaces/default/pods', podDef, { labelSelector: 'step=2' })).items.length, 1);
    assert.equal((await same('/api/v1/namespaces/default/pods', podDef, { limit: '1' })).metadata.continue !== undefined, true);
    assert.equal((await same('/apis/apps.kruise.io/v1alpha1/namespaces/default/ephemeraljobs', jobDef)).items[0].kind, 'EphemeralJob');
    await custom.patchNamespacedCustomObject({ ...EJOB, namespace: 'default', name: 'j1', body: { spec: { parallelism: 3 } } }, mergePatch);
    assert.equal((await same('/apis/apps.kruise.io/v1alpha1/namespaces/default/ephemeraljobs', jobDef)).items[0].spec.parallelism, 3);
  });

  test('limit and continue page through a list', async () => {
    const { core } = await harness({ objects: ['a', 'b', 'c', 'd', 'e'].map((n) => pod(n)) });
    const names: string[] = [];
    let cont: string | undefined;
    do {
      const page = await core.listNamespacedPod({ namespace: 'default', limit: 2, _continue: cont });
      names.push(...page.items.map((p) => p.metadata!.name!));
      cont = page.metadata!._continue;
      assert.ok(page.items.length <= 2);
    } while (cont);
    assert.deepEqual(names, ['a', 'b', 'c', 'd', 'e']);
  });

  test('every page of a paged list is the first page\'s snapshot, at its resourceVersion, whatever is written between pages', async () => {
    const { core } = await harness({ objects: ['a', 'b', 'c', 'd'].map((n) => pod(n, { labels: { v: '1' } })) });
    const first = await core.listNamespacedPod({ namespace: 'default', limit: 2 });
    await core.deleteNamespacedPod({ namespace: 'default', name: 'd' });
    await core.patchNamespacedPod({ namespace: 'default', name: 'c', body: { metadata: { labels: { v: '2' } } } }, mergePatch);
    await core.createNamespacedPod({ namespace: 'default', body: pod('cc') as V1Pod });
    const second = await core.listNamespacedPod({ namespace: 'default', limit: 2, _continue: first.metadata!._continue });
    assert.deepEqual(second.items.map((p) => `${p.metadata!.name}:${p.metadata!.labels?.v}`), ['c:1', 'd:1'], 'c as it was, d still there, cc not yet');
    assert.equal(second.metadata!.resourceVersion, first.metadata!.resourceVersion);
    const fresh = await core.listNamespacedPod({ namespace: 'default' });
    assert.deepEqual(fresh.items.map((p) => `${p.metadata!.name}:${p.metadata!.labels?.v ?? ''}`), ['a:1', 'b:1', 'c:2', 'cc:'], 'a new list reads the current state');
  });

  test('a continue token whose snapshot is no longer kept (32 newer paged lists) is 410 Expired, never pages of another state', async () => {
    const { core } = await harness({ objects: ['a', 'b', 'c'].map((n) => pod(n)) });
    const first = await core.listNamespacedPod({ namespace: 'default', limit: 1 });
    for (let i = 0; i < 32; i++) await core.listNamespacedPod({ namespace: 'default', limit: 1, fieldSelector: `metadata.name!=x${i}` });
    const s = await rejects(core.listNamespacedPod({ namespace: 'default', limit: 1, _continue: first.metadata!._continue }), 410);
    assert.equal(s.reason, 'Expired');
  });

  test('a continue token older than the compacted history is 410 Expired', async () => {
    const { core, server } = await harness({ objects: ['a', 'b', 'c'].map((n) => pod(n)) });
    const page = await core.listNamespacedPod({ namespace: 'default', limit: 1 });
    await core.createNamespacedPod({ namespace: 'default', body: pod('z') as V1Pod });
    server.compact();
    const s = await rejects(core.listNamespacedPod({ namespace: 'default', limit: 1, _continue: page.metadata!._continue }), 410);
    assert.equal(s.reason, 'Expired');
  });

  test('cluster-scoped nodes, namespaces, configmaps and leases are served', async () => {
    const { core, coord } = await harness({ objects: [{ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { type: 'virtual-kubelet' } } }] });
    const node = await core.readNode({ name: 'n1' });
    assert.equal(node.metadata!.labels!.type, 'virtual-kubelet');
    assert.equal(node.metadata!.namespace, undefined);
    await core.createNamespace({ body: { metadata: { name: 'team-a' } } });
    assert.deepEqual((await core.listNamespace()).items.map((n) => n.metadata!.name), ['team-a']);
    await core.createNamespacedConfigMap({ namespace: 'team-a', body: { metadata: { name: 'cfg' }, data: { k: 'v' } } });
    assert.equal((await core.readNamespacedConfigMap({ namespace: 'team-a', name: 'cfg' })).data!.k, 'v');
    const lease = await coord.createNamespacedLease({ namespace: 'default', body: { metadata: { name: 'lock' }, spec: { holderIdentity: 'me', leaseDurationSeconds: 15 } } });
    lease.spec!.holderIdentity = 'you';
    const renewed = await coord.replaceNamespacedLease({ namespace: 'default', name: 'lock', body: lease });
    assert.equal(renewed.spec!.holderIdentity, 'you');
  });

  test('seeded objects (and kind: List) are served as given, with fresh resourceVersions', async () => {
    const { core, server } = await harness({
      objects: [{ apiVersion: 'v1', kind: 'List', items: [pod('x', { status: { phase: 'Running' } }), pod('y')] }],
    });
    const x = await core.readNamespacedPod({ namespace: 'default', name: 'x' });
    assert.equal(x.status!.phase, 'Running');
    assert.equal(server.store.list({ kind: 'Pod' }).length, 2);
    await assert.rejects(import('../../functions/cluster/index.ts').then((m) => m.startApiServer({ objects: [{ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } }] })), /does not serve apps\/v1 Deployment/);
  });

  test('every response carries a Date header from the server clock', async () => {
    const { server } = await harness({ clock: () => new Date('2030-05-06T07:08:09Z') });
    for (const path of ['/api/v1/namespaces/default/pods', '/api/v1/namespaces/default/pods/missing', '/version']) {
      const res = await fetch(server.url + path);
      assert.equal(res.headers.get('date'), 'Mon, 06 May 2030 07:08:09 GMT', path);
    }
  });

  test('discovery is enough for KubernetesObjectApi', async () => {
    const { kc, server } = await harness();
    const api = KubernetesObjectApi.makeApiClient(kc);
    await api.create({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', metadata: { name: 'j', namespace: 'default' }, spec: {} } as any);
    await api.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' } });
    const read = await api.read({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', metadata: { name: 'j', namespace: 'default' } });
    assert.equal(read.metadata!.name, 'j');
    assert.ok(server.store.get({ apiVersion: 'v1', kind: 'Node', name: 'n' }));
    const groups = (await (await fetch(`${server.url}/apis`)).json()) as any;
    assert.ok(groups.groups.some((g: any) => g.name === 'coordination.k8s.io'));
    const v1 = (await (await fetch(`${server.url}/api/v1`)).json()) as any;
    assert.ok(v1.resources.some((r: any) => r.name === 'pods/ephemeralcontainers'));
  });

  test('an unknown path is 404 Status', async () => {
    const { server } = await harness();
    const res = await fetch(`${server.url}/api/v1/namespaces/default/widgets`);
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as any).kind, 'Status');
  });
});
