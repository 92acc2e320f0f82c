import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeInformer, Watch, type V1Pod } from '@kubernetes/client-node';
import { eventually, harness, mergePatch, pod, rawWatch, type Harness } from './support.ts';

const PODS = '/api/v1/namespaces/default/pods';

function podInformer(h: Harness) {
  const informer = makeInformer(h.kc, PODS, () => h.core.listNamespacedPod({ namespace: 'default' }));
  const seen: string[] = [];
  const errors: unknown[] = [];
  informer.on('add', (p: V1Pod) => seen.push(`add ${p.metadata!.name}`));
  informer.on('update', (p: V1Pod) => seen.push(`update ${p.metadata!.name}`));
  informer.on('delete', (p: V1Pod) => seen.push(`delete ${p.metadata!.name}`));
  informer.on('error', (e: unknown) => errors.push(e));
  return { informer, seen, errors };
}

function listCount(h: Harness): number {
  return h.server.requests.filter((r) => r.verb === 'list' && r.path === PODS).length;
}

describe('WATCH', () => {
  test('from a resourceVersion: only later events, in order, with the DELETED object at a new version', async () => {
    const h = await harness({ objects: [pod('old')] });
    const rv = h.server.store.resourceVersion;
    await h.core.createNamespacedPod({ namespace: 'default', body: pod('web') as V1Pod });
    const w = rawWatch(h.server.url, PODS, { resourceVersion: rv });
    await eventually(() => w.events.length === 1, 'the backlog event');
    await h.core.patchNamespacedPod({ namespace: 'default', name: 'web', body: { metadata: { labels: { a: 'b' } } } }, mergePatch);
    await h.core.deleteNamespacedPod({ namespace: 'default', name: 'web' });
    await eventually(() => w.events.length === 3, 'three events');
    w.stop();
    assert.deepEqual(w.events.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED web', 'MODIFIED web', 'DELETED web']);
    const rvs = w.events.map((e) => Number(e.object.metadata.resourceVersion));
    assert.deepEqual([...rvs].sort((a, b) => a - b), rvs);
    assert.equal(new Set(rvs).size, 3);
    assert.equal(w.events[0]!.object.kind, 'Pod', 'watch objects carry kind');
  });

  test('without a resourceVersion: synthetic ADDED for what exists, then changes', async () => {
    const h = await harness({ objects: [pod('a'), pod('b')] });
    const w = rawWatch(h.server.url, PODS, {});
    await eventually(() => w.events.length === 2, 'initial events');
    await h.core.deleteNamespacedPod({ namespace: 'default', name: 'a' });
    await eventually(() => w.events.length === 3, 'delete event');
    w.stop();
    assert.deepEqual(w.events.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED a', 'ADDED b', 'DELETED a']);
  });

  test('a too-old resourceVersion gets an ERROR event with a 410 Expired Status, then the stream ends', async () => {
    const h = await harness({ objects: [pod('a')] });
    const rv = h.server.store.resourceVersion;
    await h.core.createNamespacedPod({ namespace: 'default', body: pod('b') as V1Pod });
    h.server.compact();
    const w = rawWatch(h.server.url, PODS, { resourceVersion: rv });
    await w.ended;
    assert.equal(w.events.length, 1);
    assert.equal(w.events[0]!.type, 'ERROR');
    assert.equal(w.events[0]!.object.code, 410);
    assert.equal(w.events[0]!.object.reason, 'Expired');
    assert.match(w.events[0]!.object.message, /^too old resource version: \d+ \(\d+\)$/);
  });

  test('watchHistory bounds how far back a watch can resume', async () => {
    const h = await harness({ watchHistory: 2 });
    const rv = h.server.store.resourceVersion;
    for (const n of ['a', 'b', 'c']) await h.core.createNamespacedPod({ namespace: 'default', body: pod(n) as V1Pod });
    const w = rawWatch(h.server.url, PODS, { resourceVersion: rv });
    await w.ended;
    assert.equal(w.events[0]!.type, 'ERROR');
  });

  test('label and field selectors filter, and turn objects leaving the selection into DELETED', async () => {
    const h = await harness({ objects: [pod('a', { labels: { app: 'web' } }), pod('b', { labels: { app: 'db' } })] });
    const w = rawWatch(h.server.url, PODS, { labelSelector: 'app=web', fieldSelector: 'metadata.name!=zzz' });
    await eventually(() => w.events.length === 1, 'initial');
    await h.core.patchNamespacedPod({ namespace: 'default', name: 'b', body: { metadata: { labels: { app: 'web' } } } }, mergePatch);
    await h.core.patchNamespacedPod({ namespace: 'default', name: 'a', body: { metadata: { labels: { app: 'gone' } } } }, mergePatch);
    await h.core.patchNamespacedPod({ namespace: 'default', name: 'a', body: { metadata: { labels: { other: 'x' } } } }, mergePatch);
    await eventually(() => w.events.length === 3, 'transitions');
    w.stop();
    assert.deepEqual(w.events.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED a', 'ADDED b', 'DELETED a']);
  });

  test('allowWatchBookmarks gets periodic BOOKMARK events at the current resourceVersion', async () => {
    const h = await harness({ objects: [pod('a')], bookmarkIntervalMs: 20 });
    const w = rawWatch(h.server.url, PODS, { resourceVersion: h.server.store.resourceVersion, allowWatchBookmarks: 'true' });
    await eventually(() => w.events.some((e) => e.type === 'BOOKMARK'), 'a bookmark');
    w.stop();
    const b = w.events.find((e) => e.type === 'BOOKMARK')!;
    assert.deepEqual(b.object, { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: h.server.store.resourceVersion } });
  });

  test('no bookmarks unless asked for', async () => {
    const h = await harness({ bookmarkIntervalMs: 5 });
    const w = rawWatch(h.server.url, PODS, { resourceVersion: h.server.store.resourceVersion });
    await new Promise((r) => setTimeout(r, 60));
    await h.core.createNamespacedPod({ namespace: 'default', body: pod('x') as V1Pod });
    await eventually(() => w.events.length === 1, 'the add');
    w.stop();
    assert.deepEqual(w.events.map((e) => e.type), ['ADDED']);
  });

  test('timeoutSeconds ends the stream cleanly (after a last bookmark when allowed)', async () => {
    const h = await harness({ bookmarkIntervalMs: 60_000 });
    const w = rawWatch(h.server.url, PODS, { timeoutSeconds: '1', allowWatchBookmarks: 'true' });
    await w.ended;
    assert.deepEqual(w.events.map((e) => e.type), ['BOOKMARK']);
    assert.equal(h.server.faults.openWatches, 0);
  });

  test('client-node Watch receives typed events; the request log counts watch bytes', async () => {
    const h = await harness({ objects: [pod('a')] });
    const got: string[] = [];
    let done: unknown = 'not yet';
    const ctl = await new Watch(h.kc).watch(PODS, { resourceVersion: h.server.store.resourceVersion }, (type, obj) => got.push(`${type} ${obj.metadata.name}`), (err) => (done = err));
    await eventually(() => h.server.faults.openWatches === 1, 'watch open');
    await h.core.createNamespacedPod({ namespace: 'default', body: pod('b') as V1Pod });
    await eventually(() => got.length === 1, 'event');
    h.server.faults.closeWatches();
    await eventually(() => done !== 'not yet', 'done callback');
    ctl.abort();
    assert.deepEqual(got, ['ADDED b']);
    assert.equal(done, null, 'a clean server close ends the watch without an error');
    const rec = h.server.requests.filter((r) => r.watch)[0]!;
    assert.equal(rec.verb, 'watch');
    assert.ok(rec.bytes > 100, `watch bytes counted: ${rec.bytes}`);
  });
});

describe('client-node informers', () => {
  test('list then watch: adds, updates and deletes arrive', async () => {
    const h = await harness({ objects: [pod('a')] });
    const { informer, seen } = podInformer(h);
    await informer.start();
    await eventually(() => seen.includes('add a'), 'initial add');
    await h.core.createNamespacedPod({ namespace: 'default', body: pod('b') as V1Pod });
    await h.core.patchNamespacedPod({ namespace: 'default', name: 'a', body: { metadata: { labels: { x: 'y' } } } }, mergePatch);
    await h.core.deleteNamespacedPod({ namespace: 'default', name: 'b' });
    await eventually(() => seen.length === 4, 'four callbacks');
    await informer.stop();
    assert.deepEqual(seen, ['add a', 'add b', 'update a', 'delete b']);
  });

  test('a clean close resumes from the last resourceVersion without a re-list', async () => {
    const h = await harness({ objects: [pod('a')] });
    const { informer, seen } = podInformer(h);
    await informer.start();
    await eventually(() => h.server.faults.openWatches === 1, 'watching');
    h.server.faults.closeWatches();
    await h.core.createNamespacedPod({ namespace: 'default', body: pod('b') as V1Pod });
    await eventually(() => seen.includes('add b'), 'add after resume');
    await informer.stop();
    assert.equal(listCount(h), 1);
    const watches = h.server.requests.filter((r) => r.watch);
    assert.ok(watches.length >= 2);
    assert.equal(watches[1]!.query.resourceVersion, watches[0]!.query.resourceVersion, 'resumed from the listed version (nothing happened in between)');
  });

  test('410 as a watch ERROR event: re-list, and a delete missed during the gap is reported', async () => {
    const h = await harness({ objects: [pod('a'), pod('b')] });
    const { informer, seen, errors } = podInformer(h);
    await informer.start();
    await eventually(() => seen.length === 2 && h.server.faults.openWatches === 1, 'synced and watching');
    // All synchronous: the informer cannot reconnect before b is gone and history compacted.
    h.server.faults.closeWatches();
    h.server.store.delete({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'b' });
    h.server.store.put(pod('c'));
    h.server.compact();
    await eventually(() => seen.includes('delete b') && seen.includes('add c'), 're-list found the changes');
    await informer.stop();
    assert.equal(listCount(h), 2);
    assert.deepEqual(errors, []);
    assert.equal(informer.get('b', 'default'), undefined);
  });

  test('410 as an HTTP status on the watch request also re-lists', async () => {
    const h = await harness({ objects: [pod('a')] });
    const { informer, seen, errors } = podInformer(h);
    await informer.start();
    await eventually(() => h.server.faults.openWatches === 1, 'watching');
    h.server.faults.add({ watch: true, status: 410, reason: 'Gone' });
    h.server.faults.closeWatches();
    await eventually(() => listCount(h) === 2, 'a second list');
    await h.core.createNamespacedPod({ namespace: 'default', body: pod('z') as V1Pod });
    await eventually(() => seen.includes('add z'), 'watching again after the re-list');
    await informer.stop();
    assert.deepEqual(errors, []);
  });

  test('a reset watch connection reaches the error handler (the informer stops; callers restart it)', async () => {
    const h = await harness({ objects: [pod('a')] });
    const { informer, errors } = podInformer(h);
    await informer.start();
    await eventually(() => h.server.faults.openWatches === 1, 'watching');
    assert.equal(h.server.faults.resetWatches(), 1);
    await eventually(() => errors.length === 1, 'error callback');
    await informer.stop();
  });
});
