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
    assert.throws(() => server.faults.add({}), /needs a status, reset: true, delayMs or hold/);
    assert.throws(() => server.faults.add({ delayMs: -1 }), /delayMs must be ≥ 0/);
    assert.throws(() => server.faults.add({ status: 200 }), /400\.\.599/);
  });
});

describe('faults after the write, slow requests, actors, counts', () => {
  test('a 500 after the write: the client sees the error, the write took effect and is in the history', async () => {
    const { core, server } = await harness({ objects: [pod('web')] });
    server.faults.add({ method: 'PATCH', status: 500, after: true });
    await rejects(core.patchNamespacedPod({ namespace: 'default', name: 'web', body: [{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }] }), 500);
    const stored = server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web' })!;
    assert.deepEqual(stored.metadata.labels, { a: 'b' });
    const last = server.history.writes.at(-1)!;
    assert.equal(last.verb, 'patch');
    assert.equal(last.object.metadata.resourceVersion, stored.metadata.resourceVersion);
    assert.deepEqual(server.faults.fired(), { '500 after write': 1 });
  });

  test('a reset after the write drops the answer but keeps the write', async () => {
    const { core, server } = await harness();
    server.faults.add({ method: 'POST', reset: true, after: true, label: 'reset after write' });
    await assert.rejects(core.createNamespacedPod({ namespace: 'default', body: pod('a') as V1Pod }));
    assert.equal(server.store.list({ kind: 'Pod' }).length, 1);
    assert.equal(server.requests.entries[0]!.status, 0);
    assert.deepEqual(server.faults.fired(), { 'reset after write': 1 });
  });

  test('a reset before the write changes nothing', async () => {
    const { core, server } = await harness();
    server.faults.add({ method: 'POST', reset: true });
    await assert.rejects(core.createNamespacedPod({ namespace: 'default', body: pod('a') as V1Pod }));
    assert.equal(server.store.list({ kind: 'Pod' }).length, 0);
    assert.deepEqual(server.history.writes, []);
  });

  test('delayMs holds a request; a client that gives up still finds the write applied (stalled)', async () => {
    const { server } = await harness();
    server.faults.add({ method: 'POST', delayMs: 300, label: 'stalled' });
    const res = fetch(`${server.url}/api/v1/namespaces/default/pods`, { method: 'POST', body: JSON.stringify(pod('slow')), signal: AbortSignal.timeout(50) });
    await assert.rejects(res, /abort|timeout/i);
    assert.equal(server.store.list({ kind: 'Pod' }).length, 0, 'not yet applied while stalled');
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(server.store.list({ kind: 'Pod' }).length, 1);
    assert.deepEqual(server.faults.fired(), { stalled: 1 });
  });

  test('hold keeps a request until its promise settles, then handles it', async () => {
    const { server } = await harness();
    let answer = (): void => undefined;
    const fault = server.faults.add({ method: 'POST', hold: new Promise<void>((r) => (answer = r)), label: 'held' });
    const res = fetch(`${server.url}/api/v1/namespaces/default/pods`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(pod('held')) });
    await new Promise<void>((r) => { const poll = (): void => void (fault.hits > 0 ? r() : setTimeout(poll, 5)); poll(); });
    assert.equal(server.store.list({ kind: 'Pod' }).length, 0, 'not applied while held');
    answer();
    assert.equal((await res).status, 201);
    assert.equal(server.store.list({ kind: 'Pod' }).length, 1);
    assert.deepEqual(server.faults.fired(), { held: 1 });
  });

  test('the actor is the bearer token of the kubeconfig (else the User-Agent); faults can target one actor', async () => {
    const { server } = await harness();
    const headers = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });
    server.faults.add({ actor: 'proc-2', status: 503 });
    const ok = await fetch(`${server.url}/api/v1/namespaces/default/pods`, { method: 'POST', headers: headers('proc-1'), body: JSON.stringify(pod('a')) });
    const refused = await fetch(`${server.url}/api/v1/namespaces/default/pods`, { method: 'POST', headers: headers('proc-2'), body: JSON.stringify(pod('b')) });
    assert.deepEqual([ok.status, refused.status], [201, 503]);
    assert.deepEqual(server.requests.entries.map((r) => r.actor), ['proc-1', 'proc-2']);
    assert.deepEqual(server.history.writes.map((w) => [w.actor, w.verb, w.object.metadata.name]), [['proc-1', 'create', 'a']]);
    assert.match(server.kubeconfigYaml({ token: 'proc-3' }), /token: "proc-3"/);
  });

  test('refused writes are recorded apart from injected faults; in-process writes are attributed to in-process', async () => {
    const { core, server } = await harness({ objects: [pod('web')] });
    server.faults.add({ method: 'PATCH', status: 422 });
    await rejects(core.patchNamespacedPod({ namespace: 'default', name: 'web', body: [{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }] }), 422);
    await rejects(core.createNamespacedPod({ namespace: 'default', body: pod('web') as V1Pod }), 409);
    assert.deepEqual(server.history.rejected.map((r) => [r.verb, r.status]), [['create', 409]]);
    server.store.put(pod('direct'));
    assert.deepEqual(server.history.writes.map((w) => [w.actor, w.verb]), [['in-process', 'store']]);
  });

  test('watch breaks are counted by kind', async () => {
    const { server } = await harness();
    const ctl = new AbortController();
    const res = await fetch(`${server.url}/api/v1/pods?watch=1`, { signal: ctl.signal });
    assert.equal(res.status, 200);
    assert.equal(server.faults.resetWatches(), 1);
    server.faults.count('compaction');
    assert.deepEqual(server.faults.fired(), { compaction: 1, 'watch reset': 1 });
    ctl.abort();
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
