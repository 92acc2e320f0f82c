// The Kube contract, run against both implementations (client-node wrapper and the lean
// node:https client) through real HTTP against the embedded API server: the same reads,
// writes, subresources, patch kinds, error classes and server clock, so the engine
// cannot tell them apart.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startApiServer, type ApiServer } from '../../functions/cluster/index.ts';
import type { KubeAuth } from '../../functions/kube/auth.ts';
import { KubeError } from '../../functions/kube/errors.ts';
import type { Kube } from '../../functions/kube/kube.ts';
import type { Action } from '../../functions/engine/plan.ts';
import { job, pod } from '../support/relay-world.ts';

/** Makes the Kube under test for an API server URL. */
export type MakeKube = (url: string, opts: { timeoutMs?: number; auth?: KubeAuth }) => Kube;

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test reads of API answers

const SERVER_TIME = new Date('2031-05-06T07:08:09Z');
const POD = { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web-1' };
const JOB = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'default', name: 'check' };
const act = (a: Partial<Action> & Pick<Action, 'verb' | 'kind'>): Action => ({ apiVersion: 'v1', namespace: 'default', name: '', reason: 'test', ...a });

async function rejects(p: Promise<unknown>): Promise<KubeError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof KubeError, `a KubeError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the call to fail');
}

function objects(): unknown[] {
  return [
    pod('web-1', { app: 'web' }), pod('web-2', { app: 'web' }), { ...pod('db-1', { app: 'db' }), metadata: { name: 'db-1', namespace: 'other', labels: { app: 'db' } } },
    { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { zone: 'a' } } },
    job('check', { app: 'web' }),
  ];
}

/** Register the contract suite for one implementation. */
export function runKubeContract(name: string, make: MakeKube): void {
  describe(`Kube contract: ${name}`, () => {
    let server: ApiServer;
    let kube: Kube;
    before(async () => {
      server = await startApiServer({ objects: objects(), clock: () => SERVER_TIME });
    });
    after(() => server.close());
    beforeEach(() => {
      server.faults.clear();
      kube = make(server.url, { timeoutMs: 2000 });
    });

    describe('reads', () => readTests(() => ({ server, kube })));
    describe('writes', () => writeTests(() => ({ server, kube })));
    describe('errors', () => errorTests(() => ({ server, kube }), make));
    describe('credentials', () => authTests(() => server, make));
  });
}

type World = () => { server: ApiServer; kube: Kube };

function readTests(w: World): void {
  test('get returns the object as JSON, null for a missing one; cluster-scoped kinds need no namespace', async () => {
    const p = (await w().kube.get(POD)) as Json;
    assert.equal(p.metadata.name, 'web-1');
    assert.equal(p.spec.containers[0].name, 'main');
    assert.equal(await w().kube.get({ ...POD, name: 'nope' }), null);
    assert.equal(((await w().kube.get({ apiVersion: 'v1', kind: 'Node', name: 'n1' })) as Json).metadata.name, 'n1');
    assert.equal(((await w().kube.get(JOB)) as Json).spec.selector.matchLabels.app, 'web');
    assert.equal(((await w().kube.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'default', name: 'none' }))), null);
  });

  test('list: in a namespace, across namespaces, by label and field selector; resourceVersion of the list', async () => {
    const names = (l: { items: unknown[] }): string[] => l.items.map((i) => (i as Json).metadata.name).sort();
    const inDefault = await w().kube.list('v1', 'Pod', 'default');
    assert.deepEqual(names(inDefault), ['web-1', 'web-2']);
    assert.match(inDefault.resourceVersion ?? '', /^\d+$/);
    assert.deepEqual(names(await w().kube.list('v1', 'Pod', undefined)), ['db-1', 'web-1', 'web-2']);
    assert.deepEqual(names(await w().kube.list('v1', 'Pod', undefined, { labelSelector: 'app=db' })), ['db-1']);
    assert.deepEqual(names(await w().kube.list('v1', 'Pod', 'default', { fieldSelector: 'metadata.name=web-2' })), ['web-2']);
    assert.deepEqual(names(await w().kube.list('v1', 'Node', undefined, { labelSelector: 'zone=a' })), ['n1']);
    assert.deepEqual(names(await w().kube.list(JOB.apiVersion, 'EphemeralJob', 'default')), ['check']);
    assert.deepEqual(names(await w().kube.list(JOB.apiVersion, 'EphemeralJob', undefined)), ['check']);
    assert.equal(w().server.requests.filter((r) => r.query.labelSelector === 'app=db').length, 1, 'the selector went to the server');
  });

  test('a LIST of 128 KiB or more arrives gzipped, as kube-apiserver sends it, and reads the same; a small one does not', async () => {
    const { server, kube } = w();
    const many = Array.from({ length: 400 }, (_, i) => ({ ...pod(`big-${String(i).padStart(3, '0')}`, { app: 'big' }), metadata: { name: `big-${String(i).padStart(3, '0')}`, namespace: 'bulk', labels: { app: 'big' }, annotations: { note: 'x'.repeat(400) } } }));
    for (const p of many) server.store.put(p);
    try {
      server.requests.clear();
      const list = await kube.list('v1', 'Pod', 'bulk', { labelSelector: 'app=big' });
      assert.equal(list.items.length, 400);
      assert.deepEqual(list.items.map((i) => (i as Json).metadata.name), many.map((p) => p.metadata.name));
      assert.equal((list.items[7] as Json).metadata.annotations.note, 'x'.repeat(400));
      const raw = JSON.stringify(server.store.list({ apiVersion: 'v1', kind: 'Pod', namespace: 'bulk' })).length;
      const [big] = server.requests.entries;
      assert.ok(raw > 128 * 1024 && big !== undefined && big.bytes < raw / 10, `sent ${big?.bytes} B for ${raw} B of JSON`);
      // A client that does not ask for gzip gets the JSON as it is.
      const plain = await fetch(`${server.url}/api/v1/namespaces/bulk/pods`, { headers: { 'accept-encoding': 'identity' } });
      assert.equal(plain.headers.get('content-encoding'), null);
      assert.equal(((await plain.json()) as Json).items.length, 400);
      server.requests.clear();
      await kube.list('v1', 'Pod', 'default');
      const small = server.requests.entries[0];
      assert.ok(small !== undefined && small.bytes < 128 * 1024 && small.bytes > 1000, 'a small answer is sent as it is');
    } finally {
      for (const p of many) server.store.delete({ apiVersion: 'v1', kind: 'Pod', namespace: 'bulk', name: p.metadata.name });
    }
  });

  test('serverNow follows the Date header of the last answer, advanced by local time', async () => {
    const { kube } = w();
    assert.equal(kube.serverNow(), undefined, 'nothing seen yet');
    await kube.get({ ...POD, name: 'nope' }); // a 404 carries a Date too
    const seen = kube.serverNow();
    assert.ok(seen && seen.getTime() >= SERVER_TIME.getTime() && seen.getTime() < SERVER_TIME.getTime() + 5000, `server time, got ${seen?.toISOString()}`);
  });
}

function writeTests(w: World): void {
  test('create, update and delete a Lease; an Event; the answers are the stored objects', async () => {
    const { kube, server } = w();
    const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l1', namespace: 'default' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } };
    const created = (await kube.perform(act({ verb: 'create', apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', name: 'l1', body: lease }))) as Json;
    assert.match(created.metadata.resourceVersion, /^\d+$/);
    const updated = (await kube.perform(act({ verb: 'update', apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', name: 'l1', body: { ...created, spec: { ...created.spec, holderIdentity: 'b' } } }))) as Json;
    assert.equal(updated.spec.holderIdentity, 'b');
    const stale = await rejects(kube.perform(act({ verb: 'update', apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', name: 'l1', body: created })));
    assert.equal(stale.errorClass, 'conflict');
    const again = await rejects(kube.perform(act({ verb: 'create', apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', name: 'l1', body: lease })));
    assert.deepEqual([again.status, again.reason, again.errorClass], [409, 'AlreadyExists', 'already-exists']);
    await kube.perform(act({ verb: 'delete', apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', name: 'l1' }));
    assert.equal(await kube.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'default', name: 'l1' }), null);
    const ev = { apiVersion: 'v1', kind: 'Event', metadata: { generateName: 'check.', namespace: 'default' }, involvedObject: { kind: 'EphemeralJob', name: 'check', namespace: 'default' }, reason: 'Test', message: 'hello', type: 'Normal' };
    const made = (await kube.perform(act({ verb: 'create', kind: 'Event', body: ev }))) as Json;
    assert.match(made.metadata.name, /^check\./);
    assert.equal(server.store.list({ apiVersion: 'v1', kind: 'Event' }).length >= 1, true);
    // A repeat counted on it (engine/events.ts countRepeat): read it, merge-patch its count.
    const read = (await kube.get({ apiVersion: 'v1', kind: 'Event', namespace: 'default', name: made.metadata.name })) as Json;
    assert.equal(read.message, 'hello');
    const counted = (await kube.perform(act({ verb: 'patch', kind: 'Event', name: made.metadata.name, patchType: 'merge', body: { count: 2, lastTimestamp: '2026-01-01T00:00:09Z' } }))) as Json;
    // client-node's typed answer gives the time as a Date.
    assert.deepEqual([counted.count, new Date(counted.lastTimestamp).toISOString(), counted.message], [2, '2026-01-01T00:00:09.000Z', 'hello']);
    // The job's failure Warnings told already (ejob/controller.ts): a LIST by field selector.
    await kube.perform(act({ verb: 'create', kind: 'Event', body: { ...ev, metadata: { name: 'other', namespace: 'default' }, reason: 'Other' } }));
    const told = await kube.list('v1', 'Event', 'default', { fieldSelector: 'involvedObject.name=check,reason=Test' });
    assert.deepEqual(told.items.map((e) => (e as Json).metadata.name), [made.metadata.name]);
  });

  test('patch kinds: merge, strategic merge (lists merged by key) and JSON patch (the default)', async () => {
    const { kube } = w();
    await kube.perform(act({ verb: 'patch', kind: 'Pod', name: 'web-2', patchType: 'merge', body: { metadata: { labels: { merged: 'yes' } } } }));
    await kube.perform(act({ verb: 'patch', kind: 'Pod', name: 'web-2', patchType: 'strategic', body: { spec: { containers: [{ name: 'main', image: 'nginx:2' }] } } }));
    const afterSmp = (await kube.get({ ...POD, name: 'web-2' })) as Json;
    assert.equal(afterSmp.metadata.labels.merged, 'yes');
    assert.equal(afterSmp.spec.containers[0].image, 'nginx:2', 'strategic merge kept the container by name');
    await kube.perform(act({ verb: 'patch', kind: 'Pod', name: 'web-2', body: [{ op: 'add', path: '/metadata/annotations', value: { a: '1' } }] }));
    await kube.perform(act({ verb: 'patch', kind: 'Pod', name: 'web-2', patchType: 'json', body: [{ op: 'test', path: '/metadata/annotations/a', value: '1' }, { op: 'replace', path: '/metadata/annotations/a', value: '2' }] }));
    assert.equal(((await kube.get({ ...POD, name: 'web-2' })) as Json).metadata.annotations.a, '2');
    const failedTest = await rejects(kube.perform(act({ verb: 'patch', kind: 'Pod', name: 'web-2', patchType: 'json', body: [{ op: 'test', path: '/metadata/annotations/a', value: 'x' }] })));
    assert.ok(failedTest.status >= 400 && failedTest.status < 500, `a 4xx, got ${failedTest.status}`);
  });

  test('subresources: pod status, ephemeral containers (patch and update), custom status; custom create/patch/update/delete', async () => {
    const { kube } = w();
    await kube.perform(act({ verb: 'patch', kind: 'Pod', name: 'web-1', subresource: 'status', patchType: 'merge', body: { status: { message: 'hi' } } }));
    await kube.perform(act({ verb: 'patch', kind: 'Pod', name: 'web-1', subresource: 'ephemeralcontainers', patchType: 'strategic', body: { spec: { ephemeralContainers: [{ name: 'dbg', image: 'busybox', targetContainerName: 'main' }] } } }));
    // A second strategic patch merges by name (a merge patch would replace the list).
    await kube.perform(act({ verb: 'patch', kind: 'Pod', name: 'web-1', subresource: 'ephemeralcontainers', patchType: 'strategic', body: { spec: { ephemeralContainers: [{ name: 'dbg3', image: 'busybox' }] } } }));
    const p = (await kube.get(POD)) as Json;
    assert.equal(p.status.message, 'hi');
    assert.deepEqual(p.spec.ephemeralContainers.map((c: Json) => c.name), ['dbg', 'dbg3']);
    const replaced = (await kube.perform(act({ verb: 'update', kind: 'Pod', name: 'web-1', subresource: 'ephemeralcontainers', body: { ...p, spec: { ...p.spec, ephemeralContainers: [...p.spec.ephemeralContainers, { name: 'dbg2', image: 'busybox' }] } } }))) as Json;
    assert.deepEqual(replaced.spec.ephemeralContainers.map((c: Json) => c.name), ['dbg', 'dbg3', 'dbg2']);
    const g = { apiVersion: JOB.apiVersion, kind: 'EphemeralJob', name: 'j2' };
    const j = (await kube.perform(act({ ...g, verb: 'create', body: { ...job('j2', { app: 'web' }), metadata: { name: 'j2', namespace: 'default' } } }))) as Json;
    await kube.perform(act({ ...g, verb: 'patch', patchType: 'merge', body: { metadata: { labels: { x: 'y' } } } }));
    await kube.perform(act({ ...g, verb: 'patch', subresource: 'status', patchType: 'merge', body: { status: { running: 1 } } }));
    const cur = (await kube.get({ ...JOB, name: 'j2' })) as Json;
    assert.deepEqual([cur.metadata.labels.x, cur.status.running], ['y', 1]);
    const upd = (await kube.perform(act({ ...g, verb: 'update', subresource: 'status', body: { ...cur, status: { running: 2 } } }))) as Json;
    assert.equal(upd.status.running, 2);
    await kube.perform(act({ ...g, verb: 'update', body: { ...upd, spec: { ...upd.spec, parallelism: 3 } } }));
    assert.equal(((await kube.get({ ...JOB, name: 'j2' })) as Json).spec.parallelism, 3);
    await kube.perform(act({ ...g, verb: 'delete', body: { preconditions: { uid: j.metadata.uid } } }));
    assert.equal(await kube.get({ ...JOB, name: 'j2' }), null);
  });

  test('a pod delete sends its options (a failed uid precondition is a conflict)', async () => {
    const { kube } = w();
    const e = await rejects(kube.perform(act({ verb: 'delete', kind: 'Pod', name: 'web-2', body: { preconditions: { uid: 'not-the-uid' } } })));
    assert.equal(e.errorClass, 'conflict');
    assert.notEqual(await kube.get({ ...POD, name: 'web-2' }), null);
  });
}

function errorTests(w: World, make: MakeKube): void {
  const cases: { name: string; fault: Json; status: number; reason: string; errorClass: string; retryAfter?: number }[] = [
    { name: '404 naming the object, on a write', fault: { status: 404, name: 'web-1' }, status: 404, reason: 'NotFound', errorClass: 'not-found' },
    { name: '404 naming nothing (a path not served), on a write', fault: { status: 404 }, status: 404, reason: 'NotFound', errorClass: 'unserved' },
    { name: '409 Conflict', fault: { status: 409, reason: 'Conflict' }, status: 409, reason: 'Conflict', errorClass: 'conflict' },
    { name: '409 AlreadyExists', fault: { status: 409, reason: 'AlreadyExists' }, status: 409, reason: 'AlreadyExists', errorClass: 'already-exists' },
    { name: '422 Invalid', fault: { status: 422 }, status: 422, reason: 'Invalid', errorClass: 'invalid' },
    { name: '403 Forbidden', fault: { status: 403 }, status: 403, reason: 'Forbidden', errorClass: 'terminal' },
    { name: '429 with Retry-After', fault: { status: 429, retryAfterSeconds: 7 }, status: 429, reason: 'TooManyRequests', errorClass: 'transient', retryAfter: 7 },
    { name: '503 with Retry-After', fault: { status: 503, retryAfterSeconds: 3 }, status: 503, reason: 'ServiceUnavailable', errorClass: 'transient', retryAfter: 3 },
    // A proxy's day-long Retry-After is taken as 60 s: the key is not parked for a day (review).
    { name: '429 with a day-long Retry-After', fault: { status: 429, retryAfterSeconds: 86_400 }, status: 429, reason: 'TooManyRequests', errorClass: 'transient', retryAfter: 60 },
    { name: '500', fault: { status: 500, message: 'etcd is sad' }, status: 500, reason: 'InternalError', errorClass: 'transient' },
  ];
  for (const c of cases) {
    test(`${c.name} → ${c.errorClass}`, async () => {
      w().server.faults.add({ method: 'PATCH', pathIncludes: '/pods/web-1', ...c.fault });
      const e = await rejects(w().kube.perform(act({ verb: 'patch', kind: 'Pod', name: 'web-1', patchType: 'merge', body: {} })));
      assert.deepEqual([e.status, e.reason, e.errorClass, e.retryAfterSeconds], [c.status, c.reason, c.errorClass, c.retryAfter]);
      if (c.fault.message) assert.equal(e.message, c.fault.message);
    });
  }

  test('a 422 carries the Status causes', async () => {
    const e = await rejects(w().kube.perform(act({ verb: 'create', apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { namespace: 'default' } } })));
    assert.equal(e.errorClass, 'invalid');
    assert.ok(e.causes.length > 0 && e.causes.every((x) => typeof x.field === 'string'), JSON.stringify(e.causes));
  });

  test('a 404 that does not name the object read is thrown, never read as "absent"', async () => {
    w().server.faults.add({ method: 'GET', pathIncludes: '/pods/web-1', status: 404, message: 'the server could not find the requested resource' });
    assert.equal((await rejects(w().kube.get(POD))).errorClass, 'unserved');
    w().server.faults.add({ method: 'GET', pathIncludes: '/pods/web-1', status: 404, name: 'web-2' });
    assert.equal((await rejects(w().kube.get(POD))).errorClass, 'not-found');
    w().server.faults.add({ method: 'GET', pathIncludes: '/pods', status: 404, message: 'the server could not find the requested resource' });
    assert.equal((await rejects(w().kube.list('v1', 'Pod', 'default'))).errorClass, 'unserved');
    assert.equal(await w().kube.get({ ...POD, name: 'no-such-pod' }), null, "kube-apiserver's own NotFound names the pod: absent");
  });

  test('a 5xx on a get is thrown (only 404 reads as null)', async () => {
    w().server.faults.add({ method: 'GET', pathIncludes: '/pods/web-1', status: 502 });
    assert.equal((await rejects(w().kube.get(POD))).errorClass, 'transient');
  });

  test('a dropped connection is a transient network error (status 0)', async () => {
    w().server.faults.add({ pathIncludes: '/pods/web-1', reset: true });
    const e = await rejects(w().kube.get(POD));
    assert.deepEqual([e.status, e.reason, e.errorClass], [0, 'NetworkError', 'transient']);
    assert.ok(e.cause, 'the network error is kept as cause');
  });

  test('no answer within the timeout is a transient network error', async () => {
    const hang = await listen(createServer(() => {}));
    try {
      const kube = make(hang.url, { timeoutMs: 200 });
      const t = performance.now();
      const e = await rejects(kube.get(POD));
      assert.deepEqual([e.status, e.errorClass], [0, 'transient']);
      assert.ok(performance.now() - t < 1500, 'gave up near the timeout');
    } finally {
      await hang.close();
    }
  });

  test('a write given a timeout sends it as ?timeout= and gives up with it; held past it by the server, it is a transient failure and not carried out (review87 F1)', async () => {
    let release = (): void => undefined;
    w().server.faults.add({ method: 'PATCH', pathIncludes: '/pods/web-1', hold: new Promise<void>((r) => (release = r)) });
    const late = act({ verb: 'patch', kind: 'Pod', name: 'web-1', patchType: 'merge', body: { metadata: { labels: { late: 'yes' } } } });
    const e = await rejects(w().kube.perform(late, { timeoutMs: 150 }));
    // The server's 504 and the client's own give-up come at the same moment: either is heard.
    assert.equal(e.errorClass, 'transient');
    const sent = w().server.requests.entries.filter((r) => r.method === 'PATCH').at(-1);
    assert.match(sent?.query.timeout ?? '', /^\d+ms$/);
    assert.ok(Number.parseInt(sent?.query.timeout ?? '', 10) <= 150, `?timeout=${sent?.query.timeout}`);
    // The server answers at its deadline, which it counts from when the request came.
    for (const start = Date.now(); sent?.status === 0 && Date.now() - start < 10_000;) await new Promise((r) => setTimeout(r, 5));
    assert.equal(sent?.status, 504);
    release();
    assert.equal(((await w().kube.get(POD)) as Json).metadata.labels?.late, undefined, 'not carried out, even once released');
  });

  test('a write\'s timeout is never longer than the client\'s own; a write without one sends no ?timeout=', async () => {
    await make(w().server.url, { timeoutMs: 100 }).perform(act({ verb: 'patch', kind: 'Pod', name: 'web-1', patchType: 'merge', body: {} }), { timeoutMs: 5000 });
    const sent = w().server.requests.entries.filter((r) => r.method === 'PATCH').at(-1);
    assert.ok(Number.parseInt(sent?.query.timeout ?? '', 10) <= 100, `?timeout=${sent?.query.timeout}`);
    await w().kube.perform(act({ verb: 'patch', kind: 'Pod', name: 'web-1', patchType: 'merge', body: {} }));
    assert.equal(w().server.requests.entries.filter((r) => r.method === 'PATCH').at(-1)?.query.timeout, undefined);
  });

  test('unsupported kinds and actions, and a missing namespace, are refused before any request', async () => {
    const before = w().server.requests.entries.length;
    const e1 = await rejects(w().kube.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'x' }));
    assert.deepEqual([e1.status, e1.reason, e1.message], [400, 'Unsupported', 'unsupported kind v1 ConfigMap']);
    const e2 = await rejects(w().kube.perform(act({ verb: 'create', kind: 'Pod', name: 'x', body: {} })));
    assert.deepEqual([e2.reason, e2.message], ['Unsupported', 'unsupported kind v1 Pod']);
    const e3 = await rejects(w().kube.perform(act({ verb: 'create', apiVersion: JOB.apiVersion, kind: 'EphemeralJob', subresource: 'ephemeralcontainers', body: {} })));
    assert.deepEqual([e3.reason, e3.message], ['Unsupported', 'unsupported action EphemeralJob:create:ephemeralcontainers']);
    const e4 = await rejects(w().kube.get({ apiVersion: 'v1', kind: 'Pod', name: 'web-1' }));
    assert.deepEqual([e4.status, e4.reason, e4.errorClass], [400, 'BadRequest', 'terminal']);
    const e5 = await rejects(w().kube.list('coordination.k8s.io/v1', 'Lease', 'default'));
    assert.equal(e5.message, 'unsupported kind coordination.k8s.io/v1 Lease');
    assert.equal(w().server.requests.entries.length, before);
  });
}

function authTests(server: () => ApiServer, make: MakeKube): void {
  const counting = (): KubeAuth & { headers: number; invalidations: number } => {
    const a = {
      headers: 0, invalidations: 0,
      header: () => Promise.resolve(`Bearer token-${a.invalidations}`),
      invalidate: () => void a.invalidations++,
    };
    a.header = () => (a.headers++, Promise.resolve(`Bearer token-${a.invalidations}`));
    return a;
  };

  test('the auth header goes on every request; a 401 invalidates it and retries once', async () => {
    const seen: string[] = [];
    const echo = await listen(createServer((req, res) => {
      seen.push(req.headers.authorization ?? '');
      const fail = seen.length === 1;
      res.writeHead(fail ? 401 : 200, { 'content-type': 'application/json', date: SERVER_TIME.toUTCString() });
      res.end(JSON.stringify(fail ? { kind: 'Status', code: 401, reason: 'Unauthorized', message: 'expired' } : { kind: 'Pod', metadata: { name: 'web-1' } }));
    }));
    try {
      const auth = counting();
      const p = (await make(echo.url, { auth }).get(POD)) as Json;
      assert.equal(p.metadata.name, 'web-1');
      assert.deepEqual(seen, ['Bearer token-0', 'Bearer token-1']);
      assert.equal(auth.invalidations, 1);
    } finally {
      await echo.close();
    }
  });

  test('a second 401 is a terminal Unauthorized naming the refusal', async () => {
    server().faults.add({ pathIncludes: '/pods/web-1', status: 401, times: 2 });
    const auth = counting();
    const e = await rejects(make(server().url, { auth }).get(POD));
    assert.deepEqual([e.status, e.reason, e.errorClass], [401, 'Unauthorized', 'terminal']);
    assert.match(e.message, /refused a freshly read credential/);
    assert.equal(auth.invalidations, 1);
  });

  test('a credential that cannot be had is thrown as is, never retried', async () => {
    let calls = 0;
    const broken: KubeAuth = { header: () => (calls++, Promise.reject(new KubeError({ status: 401, reason: 'CredentialError', message: 'no role' }))), invalidate: () => {} };
    const e = await rejects(make(server().url, { auth: broken }).get(POD));
    assert.deepEqual([e.reason, e.message, calls], ['CredentialError', 'no role', 1]);
  });
}

/** Listen on a free loopback port. */
export async function listen(s: Server): Promise<{ url: string; close(): Promise<void> }> {
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => {
      s.closeAllConnections();
      s.close(() => resolve());
    }),
  };
}
