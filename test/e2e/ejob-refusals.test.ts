// Writes the API server refuses for good (403, 404, 422): what they must stop, and when the
// key is looked at again (review of the engine, 2026-11-27).
import assert from 'node:assert/strict';
import { KubeError } from '../../functions/kube/errors.ts';
import { test } from 'node:test';
import type { ApiServer } from '../../functions/cluster/index.ts';
import { handle } from '../../functions/engine/engine.ts';
import { envelopeFor, finish, injected, jobStatus, probeJobObjects, STORY_NOW, worldWith } from '../support/ejob-world.ts';

const NS = 'default';

const objects = probeJobObjects;

/** The API server refuses requests `'METHOD path-part'` with 403 Forbidden and `message` (RBAC, Pod Security, a quota), `times` times. */
function forbid(server: ApiServer, request: string, message: string, times = Infinity): void {
  const [method, pathIncludes] = request.split(' ') as [string, string];
  server.faults.add({ method, pathIncludes, status: 403, reason: 'Forbidden', message, times });
}

/**
 * A job with ttlSecondsAfterFinished 0 whose one pod has run and ended, and whose status writes
 * (its verdict cannot land) or, once the verdict landed, whose deletion (the TTL) is refused.
 */
async function ttlZeroRefused(refused: 'status' | 'deletion'): Promise<Awaited<ReturnType<typeof worldWith>>> {
  // The server's clock the planner's (STORY_NOW): a verdict is stamped by the later of the two (review95 F4), and with the server's real time a TTL judged by the earlier would be months away.
  const w = await worldWith({ objects: objects({ pods: 1, parallelism: 1, ttlSecondsAfterFinished: 0 }), serverClock: () => STORY_NOW });
  await handle(envelopeFor('EphemeralJob', NS, 'probe', 'ADDED'), w.deps());
  finish(w.server, 'web-0', 0);
  if (refused === 'status') {
    forbid(w.server, 'PATCH /ephemeraljobs/probe/status', 'cannot patch resource "ephemeraljobs/status"');
    return w;
  }
  await handle(envelopeFor('Pod', NS, 'web-0'), w.deps());
  assert.equal(jobStatus(w.server, 'probe').phase, 'Succeeded');
  forbid(w.server, 'DELETE /ephemeraljobs/probe', 'cannot delete resource "ephemeraljobs"');
  return w;
}

const injectedPods = (server: ApiServer): string[] => Object.entries(injected(server)).filter(([, c]) => c.length > 0).map(([p]) => p).sort();
const leases = (server: ApiServer): number => server.store.list({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'ephemera-system' }).length;
/** The objects (kind, uid) the ActionRefused Warning Events are about, in `namespace` or all. */
const refusedOn = (server: ApiServer, namespace?: string): (string | undefined)[][] => server.store.list({ apiVersion: 'v1', kind: 'Event', ...(namespace ? { namespace } : {}) })
  .map((e) => e as { reason?: string; involvedObject?: { kind?: string; uid?: string } })
  .filter((e) => e.reason === 'ActionRefused')
  .map((e) => [e.involvedObject?.kind, e.involvedObject?.uid]);
const warnings = (server: ApiServer): string[] => server.store.list({ apiVersion: 'v1', kind: 'Event' }).filter((e) => (e as { type?: string }).type === 'Warning').map((e) => (e as { reason?: string }).reason ?? '');

test('a claim refused for good (the lock namespace missing) injects nothing, says why, and is tried again', async () => {
  const { server, deps } = await worldWith({ objects: objects({ pods: 3, parallelism: 2 }) });
  try {
    server.faults.add({ method: 'POST', pathIncludes: '/leases', status: 404, reason: 'NotFound', name: 'ephemera-system', message: 'namespaces "ephemera-system" not found', times: Infinity });
    const r = await handle(envelopeFor('EphemeralJob', NS, 'probe', 'ADDED'), deps());
    assert.deepEqual(injectedPods(server), [], 'no claim was written, so no pod may be injected');
    assert.equal(leases(server), 0);
    assert.equal(r.keys[0]?.outcome, 'refused');
    // The refusal as data too (ephemera invoke reports it from there), with the server's answer.
    assert.deepEqual(r.keys[0]?.refused?.map((x) => [`${x.action.verb} ${x.action.kind}`, (x.error as KubeError).status]), [['create Lease', 404]]);
    assert.ok(warnings(server).includes('ActionRefused'));
    assert.equal(r.requeueAfterSeconds, 5, 'looked at again when the claim could be made again (a third of the 15 s lease)');
  } finally { await server.close(); }
});

test('claims refused for good cannot spend replicas twice (no Lease record, no count of pods ever injected)', async () => {
  const { server, deps } = await worldWith({ objects: objects({ pods: 3, parallelism: 1, replicas: 1 }) });
  try {
    forbid(server, 'POST /leases', 'leases.coordination.k8s.io is forbidden');
    await handle(envelopeFor('EphemeralJob', NS, 'probe', 'ADDED'), deps());
    const first = injectedPods(server);
    if (first.length > 0) {
      finish(server, 'web-0', 0);
      server.store.delete({ apiVersion: 'v1', kind: 'Pod', namespace: NS, name: 'web-0' });
    }
    await handle(envelopeFor('Pod', NS, 'web-0', 'DELETED'), deps());
    const ever = new Set(server.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith('/ephemeralcontainers') && r.status === 200).map((r) => r.path));
    assert.equal(ever.size, 0, `pods injected without a claim: ${[...ever].join(', ')}`);
  } finally { await server.close(); }
});

test("a verdict whose seal is refused is not written: the seal comes first (functions/ejob/README.md, step 7)", async () => {
  const { server, deps } = await worldWith({ objects: objects({ pods: 2, parallelism: 2 }) });
  try {
    await handle(envelopeFor('EphemeralJob', NS, 'probe', 'ADDED'), deps());
    for (const p of ['web-0', 'web-1']) finish(server, p, 0);
    server.faults.add({ method: 'PUT', pathIncludes: '/leases', status: 422, reason: 'Invalid', message: 'Lease is invalid: metadata.annotations: Too long', times: Infinity });
    const r = await handle(envelopeFor('Pod', NS, 'web-1'), deps());
    assert.notEqual(jobStatus(server, 'probe').phase, 'Succeeded');
    assert.equal(r.keys[0]?.outcome, 'refused');
    assert.equal(r.requeueAfterSeconds, 10, 'looked at again, after the default wait for a refusal');
  } finally { await server.close(); }
});

test('injections refused for good bring the key back when their claims may be made again', async () => {
  const { server, deps } = await worldWith({ objects: objects({ pods: 3, parallelism: 3 }) });
  try {
    forbid(server, 'PATCH /ephemeralcontainers', 'pods "web" is forbidden: violates PodSecurity "restricted:latest"');
    const r = await handle(envelopeFor('EphemeralJob', NS, 'probe', 'ADDED'), deps());
    assert.deepEqual(injectedPods(server), []);
    assert.equal(r.keys[0]?.outcome, 'refused');
    assert.equal(r.requeueAfterSeconds, 5);
  } finally { await server.close(); }
});

test('a TTL of 0 whose status write is refused does not loop through the queue', async () => {
  const { server, deps } = await ttlZeroRefused('status');
  try {
    for (let i = 0; i < 3; i++) {
      const r = await handle(envelopeFor('EphemeralJob', NS, 'probe'), deps());
      assert.ok(r.requeueAfterSeconds !== null && r.requeueAfterSeconds >= 1, `reconcile ${i}: requeue ${r.requeueAfterSeconds}`);
    }
  } finally { await server.close(); }
});

test("a 404 on the job's read that names no object (a CRD not served yet) is no deletion: the job's Lease stays", async () => {
  const { server, deps } = await worldWith({ objects: objects({ pods: 2, parallelism: 1, replicas: 1 }) });
  try {
    await handle(envelopeFor('EphemeralJob', NS, 'probe', 'ADDED'), deps());
    assert.equal(leases(server), 1);
    server.faults.add({ method: 'GET', pathIncludes: '/ephemeraljobs/probe', status: 404, message: 'the server could not find the requested resource', times: 2 });
    const r = await handle(envelopeFor('EphemeralJob', NS, 'probe'), deps());
    assert.deepEqual(r.failed.map((f) => f.error.errorClass), ['unserved'], 'reported (the queue keeps a dead letter), not taken for a deletion');
    assert.equal(leases(server), 1, 'the claims record of a live job is kept');
  } finally { await server.close(); }
});

test('a claim whose answer was lost (applied, then a 503) is found taken on the retry: its injections go out now, not after the renewal', async () => {
  const { server, deps } = await worldWith({ objects: objects({ pods: 2, parallelism: 2 }) });
  try {
    server.faults.add({ method: 'POST', pathIncludes: '/leases', status: 503, after: true });
    const r = await handle(envelopeFor('EphemeralJob', NS, 'probe', 'ADDED'), { ...deps(), retry: { minTimeoutMs: 1 } });
    assert.equal(r.keys[0]?.outcome, 'done');
    assert.deepEqual(injectedPods(server), ['web-0', 'web-1']);
  } finally { await server.close(); }
});

test("a verdict's status write whose answer was lost is found written on the retry: its Event is still sent", async () => {
  const { server, deps } = await worldWith({ objects: objects({ pods: 2, parallelism: 2 }) });
  try {
    await handle(envelopeFor('EphemeralJob', NS, 'probe', 'ADDED'), deps());
    for (const p of ['web-0', 'web-1']) finish(server, p, 0);
    server.faults.add({ method: 'PATCH', pathIncludes: '/ephemeraljobs/probe/status', status: 503, after: true });
    await handle(envelopeFor('Pod', NS, 'web-1'), { ...deps(), retry: { minTimeoutMs: 1 } });
    assert.equal(jobStatus(server, 'probe').phase, 'Succeeded');
    const reasons = server.store.list({ apiVersion: 'v1', kind: 'Event' }).map((e) => (e as { reason?: string }).reason);
    assert.ok(reasons.includes('JobSucceeded'), JSON.stringify(reasons));
  } finally { await server.close(); }
});

test('the Warning Event of a refused write names the object by uid, so `kubectl describe` shows it', async () => {
  const { server, deps } = await worldWith({ objects: objects({ pods: 1, parallelism: 1 }) });
  try {
    forbid(server, 'PATCH /ephemeraljobs/probe/status', 'cannot patch resource "ephemeraljobs/status"');
    forbid(server, 'PATCH /ephemeralcontainers', 'violates PodSecurity');
    await handle(envelopeFor('EphemeralJob', NS, 'probe', 'ADDED'), deps());
    // On the job: its status write's refusal, and the injection's kind of refusal (operability review).
    assert.deepEqual(refusedOn(server).sort(), [['EphemeralJob', 'job-uid'], ['EphemeralJob', 'job-uid'], ['Pod', 'pod-uid-0']]);
  } finally { await server.close(); }
});

test('the same refusal met again backs off to two minutes; a status write never counts pods whose claim was refused', async () => {
  const { server, deps } = await worldWith({ objects: objects({ pods: 3, parallelism: 2 }) });
  try {
    forbid(server, 'POST /leases', 'leases.coordination.k8s.io is forbidden');
    const looks: (number | null)[] = [];
    for (let i = 0; i < 3; i++) looks.push((await handle(envelopeFor('EphemeralJob', NS, 'probe'), deps())).requeueAfterSeconds);
    assert.deepEqual(looks, [5, 120, 120], 'first when the claim may be made again, then the repeat waits on a person');
    const status = jobStatus(server, 'probe');
    assert.deepEqual([status.phase, status.match, status.waiting], ['Waiting', 3, 0], 'the status without the pods whose claim was refused');
  } finally { await server.close(); }
});

test('a refusal met again is counted on its Warning, as `kubectl describe` shows repeats; without the right to patch Events it stays at one', async () => {
  const refusals = (server: ApiServer): { count?: number; firstTimestamp?: string; lastTimestamp?: string }[] => server.store.list({ apiVersion: 'v1', kind: 'Event' })
    .filter((e) => (e as { reason?: string }).reason === 'ActionRefused') as { count?: number; firstTimestamp?: string; lastTimestamp?: string }[];
  for (const eventsPatchable of [true, false]) {
    let clock = Date.parse('2026-01-01T00:30:00Z');
    const { server, deps } = await worldWith({ objects: objects({ pods: 1, parallelism: 1 }), now: () => new Date(clock) });
    try {
      forbid(server, 'POST /leases', 'leases.coordination.k8s.io is forbidden');
      if (!eventsPatchable) forbid(server, 'PATCH /events/', 'cannot patch resource "events"');
      const looks: (number | null)[] = [];
      for (let i = 0; i < 3; i++) {
        looks.push((await handle(envelopeFor('EphemeralJob', NS, 'probe'), deps())).requeueAfterSeconds);
        clock += 120_000;
      }
      assert.deepEqual(looks, [5, 120, 120], 'the back-off is the same either way');
      const [w, ...more] = refusals(server);
      assert.equal(more.length, 0, 'one Warning for the one refusal');
      assert.deepEqual(
        { count: w?.count, first: w?.firstTimestamp, last: w?.lastTimestamp },
        eventsPatchable
          ? { count: 3, first: '2026-01-01T00:30:00Z', last: '2026-01-01T00:34:00Z' }
          : { count: 1, first: '2026-01-01T00:30:00Z', last: '2026-01-01T00:30:00Z' },
      );
      if (!eventsPatchable) continue;
      // An instance whose clock is behind counts the repeat, and moves lastTimestamp no way back (review).
      clock = Date.parse('2026-01-01T00:31:00Z');
      await handle(envelopeFor('EphemeralJob', NS, 'probe'), deps());
      const [behind] = refusals(server);
      assert.deepEqual({ count: behind?.count, last: behind?.lastTimestamp }, { count: 4, last: '2026-01-01T00:34:00Z' });
    } finally { await server.close(); }
  }
});

test('a refusal whose message changes each time (a quota\'s figures) is still the same refusal: one Warning, counted, with the latest message, and the key backs off', async () => {
  let clock = Date.parse('2026-01-01T00:30:00Z');
  const { server, deps } = await worldWith({ objects: objects({ pods: 1, parallelism: 1 }), now: () => new Date(clock) });
  try {
    const looks: (number | null)[] = [];
    for (const used of [3, 4, 5]) {
      forbid(server, 'POST /leases', `exceeded quota: leases, requested: count/leases=1, used: count/leases=${used}, limited: count/leases=${used}`, 1);
      looks.push((await handle(envelopeFor('EphemeralJob', NS, 'probe'), deps())).requeueAfterSeconds);
      clock += 120_000;
    }
    assert.deepEqual(looks, [5, 120, 120], 'met again, whatever its figures: it waits on a person');
    const ws = server.store.list({ apiVersion: 'v1', kind: 'Event' }).filter((e) => (e as { reason?: string }).reason === 'ActionRefused') as { count?: number; message?: string }[];
    assert.deepEqual(ws.map((w) => [w.count, /used: count\/leases=(\d)/.exec(w.message ?? '')?.[1]]), [[3, '5']]);
  } finally { await server.close(); }
});

test('a TTL deletion refused for good is not tried every second', async () => {
  const { server, deps } = await ttlZeroRefused('deletion');
  try {
    const looks: (number | null)[] = [];
    for (let i = 0; i < 2; i++) looks.push((await handle(envelopeFor('EphemeralJob', NS, 'probe'), deps())).requeueAfterSeconds);
    assert.deepEqual(looks, [10, 120]);
  } finally { await server.close(); }
});

test('the lock namespace missing: the refusal is shown on the job, the status is written without the claim, and the key backs off', async () => {
  const { server, deps } = await worldWith({ objects: objects({ pods: 2, parallelism: 1 }) });
  try {
    // What kube-apiserver answers a create in a namespace that does not exist (a GET there names the object).
    server.faults.add({ method: 'POST', pathIncludes: '/namespaces/ephemera-system/', status: 404, reason: 'NotFound', name: 'ephemera-system', message: 'namespaces "ephemera-system" not found', times: Infinity });
    const looks: (number | null)[] = [];
    for (let i = 0; i < 2; i++) looks.push((await handle(envelopeFor('EphemeralJob', NS, 'probe'), deps())).requeueAfterSeconds);
    assert.deepEqual(looks, [5, 120]);
    assert.deepEqual(refusedOn(server, NS), [['EphemeralJob', 'job-uid']]);
    assert.equal(jobStatus(server, 'probe').phase, 'Waiting');
  } finally { await server.close(); }
});

test('a refusal does not hold back the deadline: the key comes back when it is due', async () => {
  const created = new Date(Date.now() - 5_000).toISOString();
  const withDeadline = objects({ pods: 1, parallelism: 1 }).map((o) => ((o as { kind: string }).kind === 'EphemeralJob' ? { ...(o as object), metadata: { ...(o as { metadata: object }).metadata, creationTimestamp: created }, spec: { ...(o as { spec: object }).spec, activeDeadlineSeconds: 45 } } : o));
  const { server, deps } = await worldWith({ objects: withDeadline, now: () => new Date() });
  try {
    forbid(server, 'PATCH /ephemeraljobs/probe/status', 'cannot patch resource "ephemeraljobs/status"');
    const first = await handle(envelopeFor('EphemeralJob', NS, 'probe'), deps());
    const second = await handle(envelopeFor('EphemeralJob', NS, 'probe'), deps());
    assert.deepEqual([first.keys[0]?.outcome, second.keys[0]?.outcome], ['refused', 'refused']);
    assert.equal(first.requeueAfterSeconds, 5, "the claim's retry");
    assert.ok(second.requeueAfterSeconds !== null && second.requeueAfterSeconds > 30 && second.requeueAfterSeconds <= 40, `a repeat comes back at the deadline (in ~40 s), not in 120 s: ${second.requeueAfterSeconds}`);
  } finally { await server.close(); }
});

test('a verdict refused for good with a TTL of 0 backs off like any refusal (the TTL runs from a verdict that never landed)', async () => {
  const { server, deps } = await ttlZeroRefused('status');
  try {
    const looks: (number | null)[] = [];
    for (let i = 0; i < 3; i++) looks.push((await handle(envelopeFor('Pod', NS, 'web-0'), deps())).requeueAfterSeconds);
    assert.deepEqual(looks, [10, 120, 120]);
  } finally { await server.close(); }
});

test('a refused TTL deletion is shown on the job, by uid', async () => {
  const { server, deps } = await ttlZeroRefused('deletion');
  try {
    await handle(envelopeFor('EphemeralJob', NS, 'probe'), deps());
    assert.deepEqual(refusedOn(server, NS), [['EphemeralJob', 'job-uid']]);
  } finally { await server.close(); }
});

test('injections refused for good: the status does not count their pods as waiting', async () => {
  const { server, deps } = await worldWith({ objects: objects({ pods: 2, parallelism: 2 }) });
  try {
    forbid(server, 'PATCH /ephemeralcontainers', 'violates PodSecurity');
    await handle(envelopeFor('EphemeralJob', NS, 'probe', 'ADDED'), deps());
    const s = jobStatus(server, 'probe');
    assert.deepEqual([s.phase, s.match, s.waiting], ['Waiting', 2, 0]);
  } finally { await server.close(); }
});

test('one injection refused beside one that went through: the status without the claim goes, and the job is looked at again in a second to count the injected pod', async () => {
  const { server, deps } = await worldWith({ objects: objects({ pods: 2, parallelism: 2 }) });
  try {
    forbid(server, 'PATCH /pods/web-1/ephemeralcontainers', 'violates PodSecurity');
    const r = await handle(envelopeFor('EphemeralJob', NS, 'probe', 'ADDED'), deps());
    assert.deepEqual(injectedPods(server), ['web-0']);
    assert.equal(jobStatus(server, 'probe').waiting, 0);
    assert.equal(r.requeueAfterSeconds, 1);
    await handle(envelopeFor('EphemeralJob', NS, 'probe'), deps());
    assert.equal(jobStatus(server, 'probe').waiting, 1, 'the next look counts the injected pod');
  } finally { await server.close(); }
});

test("another pod's first refusal of a kind the job's Warning already shows is new: the key looks again at the plan's retry, not after a repeat's two minutes (review)", async () => {
  const all = objects({ pods: 3, parallelism: 3 });
  const later = all[2] as { metadata: { name: string } };
  const { server, deps } = await worldWith({ objects: all.filter((o) => o !== later) });
  try {
    forbid(server, 'PATCH /pods/web-0/ephemeralcontainers', 'admission webhook denied web-0', 1);
    const first = await handle(envelopeFor('EphemeralJob', NS, 'probe', 'ADDED'), deps());
    assert.deepEqual(first.keys[0]?.refused?.map((x) => x.action.name), ['web-0']);
    // A pod that comes later is refused alike, once: its own first refusal, though the job's Warning of that kind is there.
    server.store.put(later as never);
    forbid(server, 'PATCH /pods/web-2/ephemeralcontainers', 'admission webhook denied web-2', 1);
    const second = await handle(envelopeFor('Pod', NS, 'web-2', 'ADDED'), deps());
    assert.deepEqual(second.keys[0]?.refused?.map((x) => x.action.name), ['web-2']);
    assert.equal(second.requeueAfterSeconds, 5, 'a third of the 15 s lease, as after any first refusal in a plan that claimed pods, not a repeat\'s 120 s');
  } finally { await server.close(); }
});

test('a 500 for a request over etcd\'s limit is refused for good in both of its forms, any other 500 is not', () => {
  for (const message of ['etcdserver: request is too large', 'rpc error: code = ResourceExhausted desc = trying to send message larger than max (2100000 vs. 2097152)']) {
    assert.equal(new KubeError({ status: 500, reason: 'InternalError', message }).errorClass, 'terminal', message);
  }
  assert.equal(new KubeError({ status: 500, reason: 'InternalError', message: 'Internal error occurred: etcd is down' }).errorClass, 'transient');
});

test("a pod grown past etcd's request limit (500 \"etcdserver: request is too large\") is refused for good: not retried, told on the pod and the job (review)", async () => {
  const { server, deps } = await worldWith({ objects: objects({ pods: 1, parallelism: 1 }) });
  try {
    server.faults.add({ method: 'PATCH', pathIncludes: '/pods/web-0/ephemeralcontainers', status: 500, reason: 'InternalError', message: 'etcdserver: request is too large', times: Infinity });
    const r = await handle(envelopeFor('EphemeralJob', NS, 'probe', 'ADDED'), deps());
    assert.equal(r.keys[0]?.outcome, 'refused', 'not thrown for the queue to redeliver until dead-lettered');
    assert.equal(server.requests.filter((x) => x.method === 'PATCH' && x.path.endsWith('/ephemeralcontainers')).length, 1, 'sent once: sending it again cannot help');
    const told = server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: NS }).map((e) => e as { reason?: string; message?: string; involvedObject?: { kind?: string } }).filter((e) => e.reason === 'ActionRefused');
    assert.deepEqual(told.map((e) => e.involvedObject?.kind).sort(), ['EphemeralJob', 'Pod']);
    assert.ok(told.every((e) => e.message?.includes('etcdserver: request is too large')));
  } finally { await server.close(); }
});

test('a pod that refuses every injection is passed over: at parallelism 1 the other pods are claimed, injected and finish first, and it is tried again after them (review62 F5)', async () => {
  let now = Date.parse('2026-01-01T00:21:00Z');
  const { server, deps } = await worldWith({ objects: objects({ pods: 3, parallelism: 1 }), now: () => new Date(now), serverClock: () => new Date(now) });
  try {
    // web-0, the oldest and so the first claimed, has grown past etcd's limit.
    server.faults.add({ method: 'PATCH', pathIncludes: '/pods/web-0/ephemeralcontainers', status: 500, reason: 'InternalError', message: 'etcdserver: request is too large', times: Infinity });
    // Ten minutes of looks, 30 s apart (resyncs, requeues); each injected pod's container ends.
    for (let i = 0; i < 20; i++) {
      await handle(envelopeFor('EphemeralJob', NS, 'probe'), deps());
      for (const p of ['web-1', 'web-2']) if ((injected(server)[p] ?? []).length > 0) finish(server, p, 0);
      now += 30_000;
    }
    assert.deepEqual(Object.entries(injected(server)).filter(([, c]) => c.length > 0).map(([p]) => p).sort(), ['web-1', 'web-2']);
    const status = jobStatus(server, 'probe');
    assert.equal(status.succeeded, 2);
    assert.notEqual(status.phase, 'Succeeded', 'web-0 is still a target: the job does not claim success without it');
    const tries = server.requests.filter((r) => r.method === 'PATCH' && r.path.includes('/ephemeralcontainers')).map((r) => r.path.split('/')[6]);
    const firstOther = tries.findIndex((p) => p !== 'web-0');
    assert.ok(firstOther > 0 && tries.lastIndexOf('web-0') > tries.lastIndexOf('web-2'), `web-0 first, then the others, then web-0 again: ${tries.join(' ')}`);
  } finally { await server.close(); }
});

test("an injection's refusal names the template's container, not the pod's list index (review91 F5: a pod that had `kubectl debug` run on it shifted it)", async () => {
  const objs = objects({ pods: 1, parallelism: 1 }) as { kind: string; spec: Record<string, unknown> }[];
  // The pod already holds a debugger: the injection's containers come after it in the list kube-apiserver validates.
  objs[0]!.spec.ephemeralContainers = [{ name: 'debugger-x7k2p', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'app' }];
  const job = objs.find((o) => o.kind === 'EphemeralJob')!;
  const template = (job.spec.template as { ephemeralContainers: Record<string, unknown>[] }).ephemeralContainers;
  template.push({ ...template[0], name: 'probe-2' });
  const w = await worldWith({ objects: objs });
  try {
    // kube-apiserver's words for the merged pod: probe is its [1], probe-2 its [2].
    w.server.faults.add({ method: 'PATCH', pathIncludes: '/ephemeralcontainers', status: 422, reason: 'Invalid', times: Infinity,
      message: 'Pod "web-0" is invalid: [spec.ephemeralContainers[2].securityContext.procMount: Invalid value: "Unmasked": `hostUsers` must be false to use `Unmasked`, spec.ephemeralContainers[0].image: Required value, spec.ephemeralContainers[12].name: Required value]' });
    await handle(envelopeFor('EphemeralJob', NS, 'probe', 'ADDED'), w.deps());
    const told = w.server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: NS }).map((e) => e as { reason?: string; message?: string; involvedObject?: { kind?: string } }).filter((e) => e.reason === 'ActionRefused');
    assert.deepEqual(told.map((e) => e.involvedObject?.kind).sort(), ['EphemeralJob', 'Pod']);
    for (const e of told) {
      assert.match(e.message ?? '', /Pod "web-0" is invalid: \[spec\.template\.ephemeralContainers\[1\]\(probe-2\)\.securityContext\.procMount: Invalid value: "Unmasked"/, e.message);
      // The pod's own container, and an index no template container has, are left as the server said them.
      assert.match(e.message ?? '', /, spec\.ephemeralContainers\[0\]\.image: Required value, spec\.ephemeralContainers\[12\]\.name: Required value\]/, e.message);
    }
  } finally {
    await w.server.close();
  }
});

test("pods a pod-dependent security rule refuses the template in (spec.os, HostProcess) are failed at once through the whole loop: never claimed nor injected, the job ends naming the field (review91's pod-dependent rules)", async () => {
  let now = Date.parse('2026-01-01T00:21:00Z');
  const objs = objects({ pods: 3, parallelism: 1 }) as { kind: string; spec: Record<string, unknown> }[];
  // A template for Windows pods. web-0 is a linux pod that says so, web-1 a Windows HostProcess
  // pod by its container's own setting (one by its pod's would make the template's container
  // one too), web-2 a Windows pod.
  const template = (objs.find((o) => o.kind === 'EphemeralJob')!.spec.template as { ephemeralContainers: Record<string, unknown>[] }).ephemeralContainers;
  template[0]!.securityContext = { windowsOptions: { runAsUserName: 'ContainerUser' } };
  objs[0]!.spec.os = { name: 'linux' };
  Object.assign(objs[1]!.spec, { os: { name: 'windows' }, hostNetwork: true, containers: [{ name: 'app', image: 'nginx', securityContext: { windowsOptions: { hostProcess: true } } }] });
  objs[2]!.spec.os = { name: 'windows' };
  const { server, deps } = await worldWith({ objects: objs, now: () => new Date(now), serverClock: () => new Date(now) });
  try {
    // Ten minutes of looks, 30 s apart (resyncs, requeues); the injected pod's container ends.
    for (let i = 0; i < 20; i++) {
      await handle(envelopeFor('EphemeralJob', NS, 'probe'), deps());
      if ((injected(server)['web-2'] ?? []).length > 0) finish(server, 'web-2', 0);
      now += 30_000;
    }
    const writes = server.requests.filter((r) => r.method !== 'GET');
    assert.deepEqual(writes.filter((r) => r.path.includes('/ephemeralcontainers')).map((r) => r.path.split('/')[6]), ['web-2'], 'only web-2 is injected, once');
    const leaseWrites = writes.filter((r) => r.path.includes('/leases'));
    assert.ok(leaseWrites.length <= 3, `the Lease is written to claim web-2 and seal the verdict, not at every look: ${leaseWrites.length}`);
    const status = jobStatus(server, 'probe') as { phase?: string; failed?: number; succeeded?: number; conditions?: { type: string; message?: string }[] };
    assert.deepEqual([status.phase, status.failed, status.succeeded], ['Failed', 2, 1]);
    const failed = status.conditions?.find((c) => c.type === 'JobFailed')?.message ?? '';
    assert.equal(failed, "2 of 3 pods failed; 2 could not take the containers (web-0: the pod's spec.os.name is linux (securityContext.windowsOptions of probe: windows options cannot be set for a linux pod))");
    const onPod = (name: string): string[] => server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: NS }).map((e) => e as { type?: string; message?: string; involvedObject?: { name?: string } }).filter((e) => e.type === 'Warning' && e.involvedObject?.name === name).map((e) => e.message ?? '');
    assert.ok(onPod('web-1').some((m) => m.includes('the pod is a Windows HostProcess pod (probe is not a HostProcess container, securityContext.windowsOptions.hostProcess')), onPod('web-1').join('\n'));
    assert.deepEqual(warnings(server).filter((r) => r === 'ActionRefused'), [], 'nothing refused: nothing was sent to be');
  } finally { await server.close(); }
});
