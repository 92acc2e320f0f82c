/* eslint-disable @typescript-eslint/no-explicit-any -- raw JSON from the wire and the store, read field by field */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { harness, pod, rejects } from './support.ts';

describe('fault injection', () => {
  test('a 500 then success', async () => {
    const { core, server } = await harness({ objects: [pod('web')] });
    const fault = server.faults.add({ method: 'GET', pathIncludes: '/pods/web', status: 500 });
    const s = await rejects(core.readNamespacedPod({ namespace: 'default', name: 'web' }), 500);
    assert.equal(s.reason, 'InternalError');
    const ok = await core.readNamespacedPod({ namespace: 'default', name: 'web' });
    assert.equal(ok.metadata!.name, 'web');
    assert.equal(fault.hits, 1);
    assert.deepEqual(server.requests.entries.map((r) => r.status), [500, 200]);
  });

  test('times, method and path narrow what fails; the failed write changes nothing', async () => {
    const { core, server } = await harness();
    server.faults.add({ method: 'POST', pathIncludes: '/pods', status: 503, times: 2 });
    await core.listNamespacedPod({ namespace: 'default' });
    await rejects(core.createNamespacedPod({ namespace: 'default', body: pod('a') as V1Pod }), 503);
    await rejects(core.createNamespacedPod({ namespace: 'default', body: pod('a') as V1Pod }), 503);
    assert.equal(server.store.list({ kind: 'Pod' }).length, 0);
    await core.createNamespacedPod({ namespace: 'default', body: pod('a') as V1Pod });
    assert.equal(server.store.list({ kind: 'Pod' }).length, 1);
  });

  test('429 carries Retry-After and details.retryAfterSeconds', async () => {
    const { server } = await harness();
    server.faults.add({ status: 429, retryAfterSeconds: 3 });
    const res = await fetch(`${server.url}/api/v1/namespaces/default/pods`);
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('retry-after'), '3');
    const body = (await res.json()) as any;
    assert.equal(body.reason, 'TooManyRequests');
    assert.equal(body.details.retryAfterSeconds, 3);
  });

  test('a conflict can be injected with its reason', async () => {
    const { core, server } = await harness({ objects: [pod('web')] });
    server.faults.add({ method: 'PATCH', status: 409, reason: 'Conflict', message: 'injected' });
    const s = await rejects(core.patchNamespacedPod({ namespace: 'default', name: 'web', body: [{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }] }), 409);
    assert.equal(s.reason, 'Conflict');
    assert.equal(s.message, 'injected');
  });

  test('reset drops the connection without an answer', async () => {
    const { core, server } = await harness({ objects: [pod('web')] });
    server.faults.add({ reset: true });
    await assert.rejects(core.readNamespacedPod({ namespace: 'default', name: 'web' }));
    assert.equal(server.requests.entries[0]!.status, 0);
    await core.readNamespacedPod({ namespace: 'default', name: 'web' });
  });

  test('clear() removes faults; remove() one; bad specs are refused', async () => {
    const { core, server } = await harness();
    const f = server.faults.add({ status: 500, times: Infinity });
    f.remove();
    await core.listNamespacedPod({ namespace: 'default' });
    server.faults.add({ status: 500, times: Infinity });
    server.faults.clear();
    await core.listNamespacedPod({ namespace: 'default' });
    assert.throws(() => server.faults.add({}), /needs a status or reset/);
    assert.throws(() => server.faults.add({ status: 200 }), /400\.\.599/);
  });
});

describe('request log', () => {
  test('records method, path, query, verb, status and bytes of every request', async () => {
    const { core, server } = await harness({ objects: [pod('web', { labels: { app: 'web' } })] });
    await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web' });
    await rejects(core.readNamespacedPod({ namespace: 'default', name: 'nope' }), 404);
    const [list, get] = server.requests.entries;
    assert.equal(list!.method, 'GET');
    assert.equal(list!.path, '/api/v1/namespaces/default/pods');
    assert.equal(list!.query.labelSelector, 'app=web');
    assert.equal(list!.verb, 'list');
    assert.equal(list!.status, 200);
    assert.ok(list!.bytes > 200);
    assert.equal(get!.verb, 'get');
    assert.equal(get!.status, 404);
    assert.deepEqual(server.requests.totals((r) => r.status === 404).requests, 1);
    server.requests.clear();
    assert.equal(server.requests.entries.length, 0);
  });
});
