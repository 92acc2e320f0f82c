// The parallelism bugs the issue reproduced against the old controller, and the claim
// window's purpose, as deterministic schedules through real HTTP (several engine instances,
// invariants checked from the API server's state after every step). Both bug schedules
// fail on the code before this rebuild (checked against commit 5a00cd1: 3 pods in flight at
// parallelism 2; a second pod injected while the first one's container still starts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { handle } from '../../functions/engine/engine.ts';
import type { Action } from '../../functions/engine/plan.ts';
import type { Kube } from '../../functions/kube/kube.ts';
import { runSchedule, withWrites } from '../support/ejob-chaos.ts';
import { CRDS, envelopeFor, finish, fixture, inFlight, injected, jobStatus, inWorld, worldWith } from '../support/ejob-world.ts';
import type { ApiServer } from '../../functions/cluster/index.ts';
import type { Fault } from '../../functions/cluster/faults.ts';
import type { EngineDeps, HandleResult } from '../../functions/engine/engine.ts';

const JOB = 'hello-world-ephemeral-job';

/** A Kube that dies right after its first successful injection (before the status write). */
function diesAfterInjection(kube: Kube): Kube {
  return withWrites(kube, async (action: Action, options) => {
    const res = await kube.perform(action, options);
    if (action.subresource === 'ephemeralcontainers') throw new Error('killed after the injection');
    return res;
  });
}

for (const { label, crd } of CRDS) describe(`EphemeralJob regressions (${label})`, () => {
  test('bug 1: killed after injecting but before the status write — later pod events never push a 3rd pod in flight at parallelism 2', async () => {
    // Old code: the ledger in status still listed the injected pod as queued; a later pod
    // event skipped it as "no longer a target" without counting its slot and injected the next.
    const objects = fixture('test/fixtures/stories/story1-state.yaml');
    const job = objects.find((o) => o.kind === 'EphemeralJob') as { spec: { parallelism: number } };
    job.spec.parallelism = 2;
    await inWorld({ objects, crd }, async ({ server, deps }) => {
      await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), deps('a'));
      const [first, second] = inFlight(server);
      assert.ok(first && second);
      finish(server, first, 0); // one slot frees; `second` still runs
      const d = deps('b');
      await assert.rejects(handle(envelopeFor('Pod', 'default', first), { ...d, kube: diesAfterInjection(d.kube) }), /killed/);
      assert.equal(inFlight(server).length, 2, 'the third pod was injected, then the process died');
      // The crashed event is redelivered first (this is what broke the old ledger: the
      // injected pod was still "queued" there, was skipped as no longer a target and the
      // next pod injected: 3 in flight), then every pod's event by fresh instances.
      const p2 = server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: second }) as unknown as { status: Record<string, unknown> };
      server.store.put({ ...p2, status: { ...p2.status, ephemeralContainerStatuses: [{ name: 'helloworld-ec', state: { running: {} } }] } } as never);
      for (const [i, pod] of [first, ...Object.keys(injected(server)).reverse()].entries()) {
        await handle(envelopeFor('Pod', 'default', pod), deps(`c${i}`));
        assert.ok(inFlight(server).length <= 2, `after ${pod}'s event: ${inFlight(server).join(', ')} in flight`);
      }
      const st = jobStatus(server, JOB);
      assert.deepEqual({ running: st.running, waiting: st.waiting, succeeded: st.succeeded }, { running: 1, waiting: 1, succeeded: 1 }, 'the status caught up with the injection that was never recorded');
    });
  });

  test('bug 2: a pod whose outcome is "failed" (bad image) keeps its slot while its other container still starts', async () => {
    const objects = fixture('test/fixtures/stories/story1-state.yaml');
    const job = objects.find((o) => o.kind === 'EphemeralJob') as { spec: { template: { ephemeralContainers: Record<string, unknown>[] } } };
    const good = job.spec.template.ephemeralContainers[0] ?? {};
    job.spec.template.ephemeralContainers.push({ ...good, name: 'broken', image: 'no-such-registry.invalid/x' });
    await inWorld({ objects, crd }, async ({ server, deps }) => {
      await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), deps());
      const [pod] = inFlight(server);
      assert.ok(pod);
      const stored = server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: pod }) as unknown as { status: Record<string, unknown> };
      server.store.put({ ...stored, status: { ...stored.status, ephemeralContainerStatuses: [
        { name: 'broken', state: { waiting: { reason: 'InvalidImageName' } } },
        { name: good.name, state: { waiting: { reason: 'ContainerCreating' } } },
      ] } } as never);
      await handle(envelopeFor('Pod', 'default', pod), deps());
      assert.deepEqual(Object.entries(injected(server)).filter(([, c]) => c.length > 0).map(([p]) => p), [pod], 'no second pod while one container of the first is still starting');
      assert.equal(jobStatus(server, JOB).failed, 1, 'its outcome counts as failed already');
      // Once that container ends, the slot frees.
      server.store.put({ ...stored, status: { ...stored.status, ephemeralContainerStatuses: [
        { name: 'broken', state: { waiting: { reason: 'InvalidImageName' } } },
        { name: good.name, state: { terminated: { exitCode: 0 } } },
      ] } } as never);
      await handle(envelopeFor('Pod', 'default', pod), deps());
      assert.equal(Object.values(injected(server)).filter((c) => c.length > 0).length, 2);
    });
  });

  test('paused mid-run: its pods end and its deadline passes, and it stays Paused, judged only once resumed; the deadline runs again from the resume', async () => {
    // Review: a paused job was failed by activeDeadlineSeconds, or finished (Succeeded, its
    // TTL running) when the pods in flight ended, and took no pod after its resume.
    const objects = fixture('test/fixtures/stories/story1-state.yaml');
    const spec = (objects.find((o) => o.kind === 'EphemeralJob') as { spec: Record<string, unknown> }).spec;
    Object.assign(spec, { parallelism: 2, activeDeadlineSeconds: 120 }); // created 00:20:00: due 00:22:00
    let now = Date.parse('2026-01-01T00:21:00Z');
    const { server, deps } = await worldWith({ objects, crd, now: () => new Date(now), serverClock: () => new Date(now) });
    const edit = (paused: boolean): void => {
      const job = server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'default', name: JOB }) as unknown as { spec: object };
      server.store.put({ ...job, spec: { ...job.spec, paused } } as never);
    };
    try {
      await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), deps());
      const first = inFlight(server);
      assert.equal(first.length, 2);
      edit(true);
      now += 10_000;
      await handle(envelopeFor('EphemeralJob', 'default', JOB), deps());
      for (const pod of first) finish(server, pod, 0);
      now = Date.parse('2026-01-01T00:25:00Z'); // past the deadline, still paused
      await handle(envelopeFor('Pod', 'default', first[0] as string), deps());
      const paused = jobStatus(server, JOB);
      assert.deepEqual([paused.phase, paused.succeeded, paused.completionTime], ['Paused', 2, undefined], 'held: no verdict, no deadline');
      const reasons = (server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: 'default' }) as { reason?: string }[]).map((e) => e.reason);
      assert.ok(!reasons.includes('DeadlineExceeded') && !reasons.includes('JobSucceeded'), reasons.join(', '));
      edit(false);
      now += 10_000;
      await handle(envelopeFor('EphemeralJob', 'default', JOB), deps());
      const resumed = jobStatus(server, JOB);
      assert.deepEqual([resumed.phase, resumed.startTime, Object.values(injected(server)).filter((c) => c.length > 0).length], ['Running', '2026-01-01T00:25:10Z', 4], 'the two pods left are injected; the deadline runs from the resume');
      for (const pod of inFlight(server)) finish(server, pod, 0);
      now += 30_000;
      await handle(envelopeFor('EphemeralJob', 'default', JOB), deps());
      assert.deepEqual([jobStatus(server, JOB).phase, jobStatus(server, JOB).succeeded], ['Succeeded', 4]);
    } finally {
      await server.close();
    }
  });

  test('a failure is told on the job when it is counted, once, and stays told after its pod is deleted (the verdict no longer counts it)', async () => {
    const { server, deps } = await worldWith({ objects: fixture('test/fixtures/stories/story1-state.yaml'), crd });
    const jobWarnings = (): string[] => (server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: 'default' }) as unknown as { involvedObject: { kind: string }; type: string; reason: string; message: string; count: number }[])
      .filter((e) => e.involvedObject.kind === 'EphemeralJob' && e.type === 'Warning').map((e) => `${e.reason}: ${e.message} (x${e.count})`);
    try {
      await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), deps());
      const [first] = inFlight(server);
      assert.ok(first);
      finish(server, first, 2);
      await handle(envelopeFor('Pod', 'default', first), deps());
      await handle(envelopeFor('EphemeralJob', 'default', JOB), deps()); // a look that counts nothing new
      assert.deepEqual(jobWarnings(), [`EphemeralContainerFailed: pod ${first}: container helloworld-ec exited with code 2 (Error) (x1)`]);
      server.store.delete({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: first });
      for (let pod = inFlight(server)[0]; pod !== undefined; pod = inFlight(server)[0]) {
        finish(server, pod, 0);
        await handle(envelopeFor('Pod', 'default', pod), deps());
      }
      assert.equal(jobStatus(server, JOB).phase, 'Succeeded', 'the failed pod is gone: no target of the verdict');
      assert.equal(jobWarnings().filter((w) => w.includes(`pod ${first}:`)).length, 1, 'its failure is still told on the job');
    } finally {
      await server.close();
    }
  });

  for (const listable of [true, false]) test(`a bad image: every pod's failure is told on the job, once${listable ? '' : ' — without the right to list Events, as the status counts them'}`, async () => {
    // Review: told by how much \`failed\` grew, the latest first, a container that cannot start
    // (no time) always won, so three failed pods left one Warning. The observation now lists
    // the Warnings told (one LIST, only while some pod shows a failure).
    const { server, deps } = await worldWith({ objects: fixture('test/fixtures/stories/story1-state.yaml'), crd });
    if (!listable) server.faults.add({ method: 'GET', pathIncludes: '/events', status: 403, reason: 'Forbidden', message: 'cannot list resource "events"', times: Infinity });
    // A LIST that fails for a moment fails no reconcile: that look tells as the status newly
    // counts, the next lists them again (reviews: taken for a refusal, it could lose a failure
    // for good in the look that writes the verdict; thrown, an outage of Events stopped the job).
    else server.faults.add({ method: 'GET', pathIncludes: '/events', status: 503, times: 1 });
    const badImage = (name: string): void => setEphemeralState(server, name, CANNOT_START);
    const told = (): string[] => failuresTold(server);
    try {
      await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), deps());
      const failed: string[] = [];
      // inFlight() counts a container waiting for any reason: the next pod is one not yet failed here.
      const next = (): string | undefined => inFlight(server).find((p) => !failed.includes(p));
      for (let pod = next(); pod !== undefined && failed.length < 10; pod = next()) {
        badImage(pod);
        failed.push(pod);
        await handle(envelopeFor('Pod', 'default', pod), deps());
        await handle(envelopeFor('EphemeralJob', 'default', JOB), deps()); // a look more: nothing told twice
      }
      assert.equal(jobStatus(server, JOB).phase, 'Failed');
      assert.deepEqual(told(), failed.map((p) => `pod ${p}`).sort());
      const lists = server.requests.entries.filter((r) => r.method === 'GET' && r.path.endsWith('/events'));
      assert.ok(lists.length > 0 && lists.every((r) => r.query.fieldSelector?.startsWith('involvedObject.uid=')), 'the Warnings told are listed by the job\'s uid');
    } finally {
      await server.close();
    }
  });

  for (const { when, listable } of [{ when: 'after', listable: true }, { when: 'before', listable: true }, { when: 'before', listable: false }]) test(`the look that writes a Failed verdict and dies right ${when} its status write: every failure told on the job, none twice${listable ? '' : ', without the right to list Events'}`, async () => {
    // Left as best effort before: the failures were told after the verdict's status write,
    // and a finished job's looks plan nothing, so a crash between the two lost them for good.
    const { server, deps } = await worldWith({ objects: fixture('test/fixtures/stories/story1-state.yaml'), crd });
    if (!listable) server.faults.add({ method: 'GET', pathIncludes: '/events', status: 403, reason: 'Forbidden', message: 'cannot list resource "events"', times: Infinity });
    const verdictWrite = (action: Action): boolean => {
      const phase = (action.body as { status?: { phase?: string } } | undefined)?.status?.phase;
      return action.subresource === 'status' && (phase === 'Failed' || phase === 'Succeeded');
    };
    const dies = (kube: Kube): Kube => withWrites(kube, async (action: Action, options) => {
      if (when === 'before' && verdictWrite(action)) throw new Error('killed at the verdict\'s status write');
      const res = await kube.perform(action, options);
      if (when === 'after' && verdictWrite(action)) throw new Error('killed at the verdict\'s status write');
      return res;
    });
    const told = (): string[] => failuresTold(server, true);
    try {
      await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), deps());
      const failed: string[] = [];
      let killed = 0;
      for (let pod = inFlight(server)[0]; pod !== undefined; pod = inFlight(server)[0]) {
        finish(server, pod, 1);
        failed.push(pod);
        const d = deps();
        await handle(envelopeFor('Pod', 'default', pod), { ...d, kube: dies(d.kube) }).catch((err: unknown) => {
          assert.match(String(err), /killed at the verdict/);
          killed++;
        });
      }
      assert.equal(killed, 1, 'the look that wrote the verdict died');
      // Redelivered: the verdict is written if it was not; a finished job's look plans nothing.
      await handle(envelopeFor('Pod', 'default', failed.at(-1) ?? ''), deps());
      assert.equal(jobStatus(server, JOB).phase, 'Failed');
      assert.deepEqual(told(), failed.map((p) => `pod ${p} x1`).sort());
      const again = server.requests.entries.filter((r) => r.method === 'POST' && r.path.endsWith('/events') && r.status === 409).length;
      assert.equal(again, listable || when === 'after' ? 0 : 1, 'a telling sent twice, only when the Warnings cannot be listed, is a 409 that means done');
    } finally {
      await server.close();
    }
  });

  for (const methods of [['POST'], ['POST', 'GET']]) test(`an outage of Events (${methods.join(' and ')}) does not hold back a job or its verdict: the failures' Warnings before its status write are dropped, the status is written`, async () => {
    // Reviews: with the Warnings before the status write, one failing past its retries failed
    // the reconcile, and every redelivery the same way: the job stayed Running; and the LIST of
    // the Warnings told, failing, stopped every plan of a job with a recent failure.
    await inWorld({ objects: fixture('test/fixtures/stories/story1-state.yaml'), crd }, async ({ server, deps }) => {
      await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), deps());
      for (const method of methods) server.faults.add({ method, pathIncludes: '/events', status: 503, times: Number.POSITIVE_INFINITY });
      let failed = 0;
      for (let pod = inFlight(server)[0]; pod !== undefined; pod = inFlight(server)[0]) {
        finish(server, pod, 1);
        // The Events after a status write still fail the reconcile (retried by the queue).
        await handle(envelopeFor('Pod', 'default', pod), { ...deps(), retry: { minTimeoutMs: 1 } }).catch((err: unknown) => {
          assert.match(String(err), /Unavailable|503/);
          failed++;
        });
      }
      assert.ok(failed > 0, 'some reconcile failed on its Events (else the check above never ran)');
      assert.equal(jobStatus(server, JOB).phase, 'Failed', 'the verdict is written while Events fail');
    });
  });

  test('the look that writes the verdict while the Warnings cannot be listed tells every recent failure (a bad image: no time to pick the latest by)', async () => {
    const { server, deps } = await worldWith({ objects: fixture('test/fixtures/stories/story1-state.yaml'), crd });
    const told = (): string[] => failuresTold(server);
    try {
      await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), deps());
      const failed: string[] = [];
      const next = (): string | undefined => inFlight(server).find((p) => !failed.includes(p));
      for (let pod = next(); pod !== undefined; pod = next()) {
        setEphemeralState(server, pod, CANNOT_START);
        failed.push(pod);
        if (next() === undefined) server.faults.add({ method: 'GET', pathIncludes: '/events', status: 503, times: 1 });
        await handle(envelopeFor('Pod', 'default', pod), deps());
      }
      assert.equal(jobStatus(server, JOB).phase, 'Failed');
      assert.deepEqual(told(), failed.map((p) => `pod ${p}`).sort());
    } finally {
      await server.close();
    }
  });

  test('a failure the count never showed is still told by the verdict look when the Warnings cannot be listed (review)', async () => {
    // p1 fails and is told; then p1 is deleted and p2 cannot start in the same look while the
    // LIST fails, so the failed count does not move and p2 has no time: only the verdict look,
    // taking none as told, tells it (as the status newly counts, it never would).
    const { server, deps } = await worldWith({ objects: fixture('test/fixtures/stories/story1-state.yaml'), crd });
    const told = (): string[] => failuresTold(server);
    const bad = (name: string): void => setEphemeralState(server, name, CANNOT_START);
    const look = (): Promise<unknown> => handle(envelopeFor('EphemeralJob', 'default', JOB), deps());
    const listFailsOnce = (): void => void server.faults.add({ method: 'GET', pathIncludes: '/events', status: 503, times: 1 });
    try {
      await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), deps());
      const p1 = inFlight(server)[0] ?? '';
      bad(p1);
      await look();
      const p2 = inFlight(server).find((x) => x !== p1) ?? '';
      server.store.delete({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: p1 } as never);
      bad(p2);
      listFailsOnce();
      await look();
      await look();
      assert.ok(!told().includes(`pod ${p2}`), 'not told yet: the count did not move');
      const done = new Set([p1, p2]);
      const next = (): string | undefined => inFlight(server).find((x) => !done.has(x));
      for (let p = next(); p !== undefined; p = next()) {
        bad(p);
        done.add(p);
        if (next() === undefined) listFailsOnce();
        await look();
      }
      assert.equal(jobStatus(server, JOB).phase, 'Failed');
      assert.ok(told().includes(`pod ${p2}`), told().join(', '));
    } finally {
      await server.close();
    }
  });

  test('while the Warnings cannot be listed, a look that writes no verdict tells nothing again (review: each re-sent up to 50)', async () => {
    await inWorld({ objects: fixture('test/fixtures/stories/story1-state.yaml'), crd }, async ({ server, deps }) => {
      await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), deps());
      for (let i = 0; i < 2; i++) {
        const pod = inFlight(server)[0] ?? '';
        // Ended just now (a failure with a time, told while recent: the looks below list the Warnings).
        setEphemeralState(server, pod, { terminated: { exitCode: 1, reason: 'Error', finishedAt: new Date().toISOString() } });
        await handle(envelopeFor('Pod', 'default', pod), deps());
      }
      assert.notEqual(jobStatus(server, JOB).phase, 'Failed', 'pods are left: no verdict yet');
      server.faults.add({ method: 'GET', pathIncludes: '/events', status: 429, times: Number.POSITIVE_INFINITY });
      server.requests.clear();
      for (let i = 0; i < 5; i++) await handle(envelopeFor('EphemeralJob', 'default', JOB), deps());
      assert.equal(server.requests.entries.filter((r) => r.method === 'POST' && r.path.endsWith('/events')).length, 0);
      assert.ok(server.requests.entries.some((r) => r.method === 'GET' && r.path.endsWith('/events')), 'the Warnings were asked for');
    });
  });

  test('a failure told long ago costs no Events LIST: the Warnings are listed only while a plan could tell one', async () => {
    // Review: with one early failure, every later look listed them, to tell nothing.
    const objects = fixture('test/fixtures/stories/story1-state.yaml');
    Object.assign((objects.find((o) => o.kind === 'EphemeralJob') as { spec: object }).spec, { parallelism: 2 });
    let now = Date.parse('2026-01-01T00:21:00Z');
    const { server, deps } = await worldWith({ objects, crd, now: () => new Date(now), serverClock: () => new Date(now) });
    const lists = (): number => server.requests.entries.filter((r) => r.method === 'GET' && r.path.endsWith('/events')).length;
    try {
      await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), deps());
      const [first, second] = inFlight(server);
      assert.ok(first && second);
      const pod = server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: first }) as unknown as { spec: { ephemeralContainers: { name: string }[] }; status: object };
      server.store.put({ ...pod, status: { ...pod.status, ephemeralContainerStatuses: pod.spec.ephemeralContainers.map((c) => ({ name: c.name, state: { terminated: { exitCode: 1, reason: 'Error', finishedAt: new Date(now).toISOString() } } })) } } as never);
      await handle(envelopeFor('Pod', 'default', first), deps());
      assert.equal(lists(), 1, 'listed while the failure is new');
      now += 2 * 3_600_000; // two hours on; the other pod still runs
      for (let i = 0; i < 5; i++) await handle(envelopeFor('EphemeralJob', 'default', JOB), deps());
      assert.equal(lists(), 1, 'not listed again: no plan could tell anything');
    } finally {
      await server.close();
    }
  });

  test('a pod the containers cannot go into, replaced by another such pod: both are told on the job, though the count of failures never moved', async () => {
    // Review: such a pod shows no failed container, so the Warnings told were not listed, and
    // the replacement (failed 1 → 1) was never told. The status counting failures now lists them too.
    const objects = fixture('test/fixtures/stories/story1-state.yaml');
    delete (objects.find((o) => o.kind === 'EphemeralJob') as { spec: { replicas?: number } }).spec.replicas; // unfit pods come after the others
    const unfit = (name: string, uid: string, created: string): unknown => {
      const base = objects.find((o) => o.kind === 'Pod') as { metadata: object; spec: { containers: object[] } };
      return { ...base, metadata: { ...base.metadata, name, uid, creationTimestamp: created }, spec: { ...base.spec, containers: [{ name: 'other', image: 'nginx' }] } };
    };
    const story = (): Date => new Date('2026-01-01T00:21:00Z'); // the server's clock too: what is recent is judged by it
    const { server, deps } = await worldWith({ objects: [...objects, unfit('unfit-0', 'u-0', '2025-12-31T23:59:00Z')], crd, now: story, serverClock: story });
    const told = (): string[] => failuresTold(server);
    try {
      await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), deps());
      assert.deepEqual(told(), ['pod unfit-0']);
      server.store.delete({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'unfit-0' });
      server.store.put(unfit('unfit-1', 'u-1', '2026-01-01T00:20:50Z') as never); // created by the rollout, just now
      await handle(envelopeFor('Pod', 'default', 'unfit-1', 'ADDED'), deps());
      assert.equal(jobStatus(server, JOB).failed, 1);
      assert.deepEqual(told(), ['pod unfit-0', 'pod unfit-1']);
    } finally {
      await server.close();
    }
  });

  test('a pod deleted and created again under its name while its injection is on the way does not get it: the injection names the claimed uid', async () => {
    // Instance a claims the oldest pod and sends its injection (held 300 ms at the server).
    // Meanwhile the pod is replaced under its name (a StatefulSet's); instance b finds a's
    // claim on a pod that is gone (another uid) and claims the next pod. Without the uid in
    // a's patch, it lands on the new pod: 2 pods in flight at parallelism 1.
    const objects = fixture('test/fixtures/stories/story1-state.yaml');
    await inWorld({ objects, crd }, async ({ server, deps }) => {
      const { held, a } = await injectionOnItsWay(server, deps);
      const pod = server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: OLDEST }) as unknown as { metadata: Record<string, unknown> };
      server.store.delete({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: OLDEST });
      const { uid: _uid, creationTimestamp: _created, resourceVersion: _rv, ...meta } = pod.metadata;
      server.store.put({ ...pod, metadata: meta } as never);
      await handle(envelopeFor('Pod', 'default', OLDEST, 'ADDED'), deps('b'));
      const r = await a;
      assert.equal(held.hits, 1);
      assert.equal(r.keys[0]?.outcome, 'done');
      const withContainers = Object.entries(injected(server)).filter(([, c]) => c.length > 0).map(([p]) => p);
      assert.equal(withContainers.length, 1, `one pod in flight at parallelism 1: ${withContainers.join(', ')}`);
      assert.notEqual(withContainers[0], OLDEST, 'the new pod under the claimed name got nothing');
    });
  });

  test('a claimed pod relabelled out of the selector and back while its injection is on the way: no second pod is claimed meanwhile (chaos seed 14048)', async () => {
    // Instance a claims the oldest pod and sends its injection (held 300 ms). Meanwhile the
    // pod leaves the selector; instance b, which no longer lists it, took its claim for no
    // slot and claimed the next pod; the pod came back and a's injection landed: 2 pods in
    // flight at parallelism 1. A claimed pod the LIST does not show is now looked up: the same
    // pod, relabelled out and not injected, keeps its slot for the claim's retention.
    await inWorld({ objects: fixture('test/fixtures/stories/story1-state.yaml'), crd }, async ({ server, deps }) => {
      const { a } = await injectionOnItsWay(server, deps);
      relabel(server, 'elsewhere');
      const b = await handle(envelopeFor('EphemeralJob', 'default', JOB), deps('b'));
      assert.equal(b.keys[0]?.outcome, 'done');
      assert.ok((b.keys[0]?.requeueAfterSeconds ?? 0) > 0, 'looked at again once the claim\'s retention ends');
      relabel(server, 'helloworld');
      await a;
      onlyOldestInjected(server);
    });
  });

  test('an injection the API server holds past its claim\'s margin is never carried out: once another instance dropped the claim and injected another pod, one pod is in flight at parallelism 1 (review87 F1)', async () => {
    // Production's ratio: the client's timeout (5 s in the test worlds) more than twice the
    // skew (2 s), lease 1 s. Instance a claims the oldest pod; the server holds its injection
    // (APF queueing, a slow etcd) while b looks after the claim's retention (1 + 2 × 2 s),
    // drops it and injects the next pod; then the server lets a's injection go. It used to be
    // carried out then, the client still waiting: two pods at parallelism 1. Each attempt now
    // carries its deadline (?timeout=): past it, the server answers 504 and makes no write.
    // Clocks that move only when the test moves them (the server's, the instances' elapsed).
    let offsetMs = 0;
    const base = Math.floor(Date.now() / 1000) * 1000 + 500;
    await inWorld({ objects: fixture('test/fixtures/stories/story1-state.yaml'), crd, leaseSeconds: 1, skewSeconds: 2, serverClock: () => new Date(base + offsetMs), monotonic: () => offsetMs }, async ({ server, deps }) => {
      let release = (): void => undefined;
      server.faults.add({ method: 'PATCH', pathIncludes: `/pods/${OLDEST}/ephemeralcontainers`, hold: new Promise<void>((r) => (release = r)) });
      const a = handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), deps('a'));
      while (!server.requests.entries.some((r) => r.path.endsWith(`/pods/${OLDEST}/ephemeralcontainers`))) await new Promise((r) => setTimeout(r, 5));
      offsetMs = 6_000;
      await handle(envelopeFor('EphemeralJob', 'default', JOB), deps('b'));
      const [other, ...more] = inFlight(server);
      assert.ok(other !== undefined && other !== OLDEST && more.length === 0, `b injected another pod: ${inFlight(server).join(', ')}`);
      release();
      const r = await a;
      assert.deepEqual(inFlight(server), [other], 'one pod in flight at parallelism 1');
      assert.ok(!(r.keys[0]?.actions ?? []).some((x) => x.subresource === 'ephemeralcontainers'), 'a\'s injection took no effect');
    });
  });

  test('the GET of a claimed pod the LIST missed finds it back in the selector with the injection landed: it holds its slot (review of the seed 14048 fix)', async () => {
    // As above, but instance b's GET of the pod is slow: it answers after the pod is back and
    // a's injection has landed. The LIST did not count that pod, and the GET took "injected"
    // for "no target": b claimed a second pod at parallelism 1.
    await inWorld({ objects: fixture('test/fixtures/stories/story1-state.yaml'), crd }, async ({ server, deps }) => {
      const { a } = await injectionOnItsWay(server, deps);
      relabel(server, 'elsewhere');
      server.faults.add({ method: 'GET', pathIncludes: `/pods/${OLDEST}`, delayMs: 800 });
      const b = handle(envelopeFor('EphemeralJob', 'default', JOB), deps('b'));
      while (!server.requests.entries.some((r) => r.method === 'GET' && r.path.endsWith(`/pods/${OLDEST}`))) await new Promise((r) => setTimeout(r, 5));
      relabel(server, 'helloworld');
      await a;
      await b;
      onlyOldestInjected(server);
    });
  });

  test('another job\'s container of the same name landing before our injection: no "injected" Event, and the slot goes to the next pod at once', async () => {
    // Instance a claims the oldest pod and sends its injection (held 300 ms). Meanwhile
    // another job puts its container of the same name into that pod: a's injection is
    // answered "may not be changed". It used to count as injected (an Event saying so) and
    // the claim held the only slot until its retention ended (25 s).
    await inWorld({ objects: fixture('test/fixtures/stories/story1-state.yaml'), crd }, async ({ server, deps }) => {
      const { a } = await injectionOnItsWay(server, deps);
      const pod = server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: OLDEST }) as unknown as { spec: Record<string, unknown> };
      const theirs = { name: 'helloworld-ec', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', env: [{ name: 'KRUISE_EJOB_ID', value: 'another-job' }] };
      server.store.put({ ...pod, spec: { ...pod.spec, ephemeralContainers: [theirs] } } as never);
      const r = await a;
      assert.equal(r.keys[0]?.outcome, 'done', 'not a refusal to report');
      assert.equal(r.keys[0]?.requeueAfterSeconds, 1, 'looked at again in a second: the relay may hold the pod change that shows whose they are');
      const events = server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: 'default' }) as unknown as { reason: string; involvedObject: { name: string } }[];
      assert.deepEqual(events.filter((e) => e.reason === 'EphemeralContainersInjected').map((e) => e.involvedObject.name), [], 'nothing of ours went in');
      // The pod's change reaches the job: its claim on that pod holds no slot any more.
      await handle(envelopeFor('Pod', 'default', OLDEST), deps('b'));
      const ours = Object.entries(injected(server)).filter(([p, c]) => p !== OLDEST && c.length > 0).map(([p]) => p);
      assert.deepEqual(ours, [SECOND], 'the next pod, without waiting for the claim to expire');
      assert.equal(jobStatus(server, JOB).match, 3, 'the pod with their container is no target');
    });
  });

  test('a claim write planned from an older record never overwrites a newer claim: the loser of the Lease race re-plans, it does not re-send (parallelism 1, review97 F1)', async () => {
    // Instance a's pod is done. Instance b plans a claim of the 3rd pod while the 2nd is out
    // of the selector; the server holds b's Lease update. The 2nd pod comes back; instance c
    // claims and injects it (the Lease's next version). Then b's update goes: it must meet a
    // 409 and b re-plan from c's record, claiming nothing. A "retry on conflict" that re-sends
    // b's record at the fresh version, or a 409 taken as done, overwrote c's claim or injected
    // anyway: two pods in flight (README step 2, "Claim writes are totally ordered").
    await inWorld({ objects: fixture('test/fixtures/stories/story1-state.yaml'), crd }, async ({ server, deps }) => {
      await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), deps('a'));
      assert.deepEqual(inFlight(server), [OLDEST]);
      finish(server, OLDEST, 0);
      relabel(server, 'elsewhere', SECOND);
      let release = (): void => undefined;
      const held = server.faults.add({ method: 'PUT', pathIncludes: '/leases/', hold: new Promise<void>((r) => (release = r)), times: 1 });
      const b = handle(envelopeFor('EphemeralJob', 'default', JOB), deps('b'));
      while (held.hits === 0) await new Promise((r) => setTimeout(r, 5));
      relabel(server, 'helloworld', SECOND);
      await handle(envelopeFor('Pod', 'default', SECOND), deps('c'));
      assert.deepEqual(inFlight(server), [SECOND], 'c claimed and injected the pod back in the selector (the older one)');
      release();
      await b;
      assert.deepEqual(inFlight(server), [SECOND], `one pod in flight at parallelism 1: ${inFlight(server).join(', ')}`);
    });
  });
});

test('an instance paused past its claim window injects nothing when it resumes (parallelism lowered meanwhile)', async () => {
  // Instance 0 claims two pods at parallelism 2 and stops; parallelism becomes 1; the claims
  // expire and instance 1 claims one pod. Without the window, instance 0 would then inject
  // both of its pods: 2 in flight at parallelism 1.
  await runSchedule({ pods: 3, parallelism: 2, replicas: undefined, badImage: false, instances: 4, crd: 0 }, [
    { op: 'stall', who: 0, target: -1 },
    { op: 'parallelism', value: 1 },
    { op: 'time', seconds: 25 },
    { op: 'deliver', who: [1], target: -1 },
    { op: 'resume' },
  ]);
});

test('the same, resumed within the window: its claims are honoured, and nothing beyond them', async () => {
  await runSchedule({ pods: 3, parallelism: 2, replicas: undefined, badImage: false, instances: 4, crd: 1 }, [
    { op: 'stall', who: 0, target: -1 },
    { op: 'parallelism', value: 1 },
    { op: 'time', seconds: 10 },
    { op: 'deliver', who: [1, 2, 3], target: -1 },
    { op: 'resume' },
  ]);
});

test('an observation slower than the claim window (a LIST that hangs after the Lease read) sends no injection: the window counts from before the observation', async () => {
  let offsetMs = 0;
  const objects = fixture('test/fixtures/stories/story1-state.yaml');
  const { server, deps } = await worldWith({
    objects,
    serverClock: () => new Date(Date.now() + offsetMs),
    monotonic: () => performance.now() + offsetMs,
  });
  try {
    const d = deps('slow');
    const slowList: Kube = { ...d.kube, get: (r) => d.kube.get(r), serverNow: () => d.kube.serverNow(), perform: (a, o) => d.kube.perform(a, o), list: async (...a) => {
      const res = await d.kube.list(...a);
      offsetMs += 30_000; // the process was stuck 30 s while the pods came in
      return res;
    } };
    const r = await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), { ...d, kube: slowList });
    assert.deepEqual(Object.values(injected(server)).flat(), [], 'its claim was already stale in server time: no injection');
    assert.equal(r.requeueAfterSeconds, 1, 'it asks to look again soon');
    await handle(envelopeFor('EphemeralJob', 'default', JOB), deps('next'));
    assert.equal(inFlight(server).length, 1, 'the next reconcile drops the stale claim and injects');
  } finally {
    await server.close();
  }
});

/** The job's failure Warnings told so far, as the pods they name (`pod NAME`), sorted; with `counted`, each followed by ` xCOUNT`. */
function failuresTold(server: Parameters<typeof inFlight>[0], counted = false): string[] {
  return (server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: 'default' }) as unknown as { involvedObject: { kind: string }; reason: string; message: string; count?: number }[])
    .filter((e) => e.involvedObject.kind === 'EphemeralJob' && e.reason === 'EphemeralContainerFailed')
    .map((e) => `${e.message.split(':')[0] ?? ''}${counted ? ` x${e.count ?? 1}` : ''}`).sort();
}

/** Every ephemeral container of the pod in this state, as the kubelet would report it. */
function setEphemeralState(server: Parameters<typeof inFlight>[0], name: string, state: Record<string, unknown>): void {
  const pod = server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name }) as unknown as { spec: { ephemeralContainers: { name: string }[] }; status: object };
  const statuses = pod.spec.ephemeralContainers.map((c) => ({ name: c.name, state }));
  server.store.put({ ...pod, status: { ...pod.status, ephemeralContainerStatuses: statuses } } as never);
}

/** A container that cannot start: no time to tell its failure by. */
const CANNOT_START = { waiting: { reason: 'InvalidImageName' } };

/** The Lease record's claims, as stored. */
function claimsOnLease(server: Parameters<typeof inFlight>[0]): { pod: string; at: string; renewed?: boolean }[] {
  const lease = server.store.list({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' }).find((l) => l.metadata.name.startsWith('ejob-'));
  const text = (lease?.metadata.annotations as Record<string, string> | undefined)?.['ephemera.io/ejob-claims'];
  return text === undefined ? [] : (JSON.parse(text) as { claims: { pod: string; at: string; renewed?: boolean }[] }).claims;
}

for (const why of ['a 409 on the injection', 'killed between the claim and the injection'] as const) {
  test(`a claim whose injection never came (${why}) is made again 5 s later and injected, not left holding its slot for its 25 s retention`, async () => {
    let offsetMs = 0;
    // Clocks that move only when the test moves them, half a second into a whole second: with
    // real time the claim (at a whole second) and the re-plan could fall on either side of a
    // second's boundary, and the look again came 4 s on instead of 5 (seen once under load).
    const base = Math.floor(Date.now() / 1000) * 1000 + 500;
    await inWorld({ objects: fixture('test/fixtures/stories/story1-state.yaml'), serverClock: () => new Date(base + offsetMs), monotonic: () => offsetMs }, async ({ server, deps }) => {
      const d = deps('a');
      if (why === 'a 409 on the injection') {
        server.faults.add({ method: 'PATCH', pathIncludes: '/ephemeralcontainers', status: 409, times: 1 });
        const r = await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), d);
        assert.equal(r.requeueAfterSeconds, 5, 'the re-plan finds its own claim pending: look again when it may be renewed');
      } else {
        const dies = withWrites(d.kube, async (action: Action, options) => {
          if (action.subresource === 'ephemeralcontainers') throw new Error('killed before the injection');
          return d.kube.perform(action, options);
        });
        await assert.rejects(handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), { ...d, kube: dies }), /killed/);
      }
      const [claim] = claimsOnLease(server);
      assert.ok(claim !== undefined && claim.renewed === undefined, 'claimed');
      assert.deepEqual(inFlight(server), [], 'not injected');
      offsetMs = 4_000;
      const early = await handle(envelopeFor('EphemeralJob', 'default', JOB), deps('b'));
      assert.deepEqual(inFlight(server), [], '4 s on: still the claimer\'s to send');
      // Look again when it may be renewed, 1 s on: instance b knows the server's time from a
      // Date header (whole seconds, kube.serverNow), so up to a second less than the claimer did.
      assert.ok([1, 2].includes(early.requeueAfterSeconds ?? 0), `requeue after ${early.requeueAfterSeconds} s`);
      // 5 s on by the server's clock as a fresh instance knows it: a whole-second Date header
      // (kube.serverNow) may tell it up to a second less, so the renewal may wait that long.
      offsetMs = 6_000;
      await handle(envelopeFor('EphemeralJob', 'default', JOB), deps('c'));
      assert.deepEqual(inFlight(server), [claim.pod], 'the claimed pod, injected under the renewed claim');
      const [renewed, ...others] = claimsOnLease(server);
      assert.deepEqual([renewed?.pod, renewed?.renewed, others.length], [claim.pod, true, 0], 'the same claim, renewed, no other');
      assert.ok(Date.parse(renewed?.at ?? '') >= Date.parse(claim.at) + 5_000, 'with the server time of the renewal');
    });
  });
}

/** The pod story 1 claims first. */
const OLDEST = 'helloworld-865cd8865b-nl8lq';
/** The pod story 1 claims next. */
const SECOND = 'helloworld-865cd8865b-xmtrv';

/**
 * Instance a claims the oldest pod and sends its injection, which the server holds 300 ms:
 * resolves once that injection is on its way, with a's handling still running (`a`).
 */
async function injectionOnItsWay(server: ApiServer, deps: (holder?: string) => EngineDeps): Promise<{ held: Fault; a: Promise<HandleResult> }> {
  const held = server.faults.add({ method: 'PATCH', pathIncludes: `/pods/${OLDEST}/ephemeralcontainers`, delayMs: 300 });
  const a = handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), deps('a'));
  while (!server.requests.entries.some((r) => r.path.endsWith(`/pods/${OLDEST}/ephemeralcontainers`))) await new Promise((r) => setTimeout(r, 5));
  return { held, a };
}

/** Story 1's pod `name` (the oldest unless named) labelled `app=<app>`: out of the job's selector, or back in it (`helloworld`). */
function relabel(server: ApiServer, app: string, name = OLDEST): void {
  const pod = server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name }) as unknown as { metadata: { labels: Record<string, string> } };
  server.store.put({ ...pod, metadata: { ...pod.metadata, labels: { ...pod.metadata.labels, app } } } as never);
}

/** Only the claimed pod got the job's containers: one pod in flight at parallelism 1. */
function onlyOldestInjected(server: ApiServer): void {
  const withContainers = Object.entries(injected(server)).filter(([, c]) => c.length > 0).map(([p]) => p);
  assert.deepEqual(withContainers, [OLDEST], `one pod in flight at parallelism 1: ${withContainers.join(', ')}`);
}
