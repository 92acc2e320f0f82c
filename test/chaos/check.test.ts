// The chaos checker on synthetic histories: a clean run passes, and each invariant fires,
// with a message naming what broke, when its history is broken in that one way.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeObject } from '../../functions/cluster/index.ts';
import { check } from './check.ts';
import { appPod, claim, ecStatus, finishJob, History, inject, job, JOB, meta, seal, state, tick } from './synthetic-history.ts';
import type { Invariant, RunRecord } from './record.ts';

type Obj = Record<string, unknown>;

const SIDECAR_ENV = [{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' }];

function sidecarPod(restartPolicy = 'Never'): KubeObject {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: meta('batch'),
    spec: { restartPolicy, containers: [{ name: 'main', image: 'job:1' }, { name: 'shipper', image: 'fluent:3', env: SIDECAR_ENV }] },
    status: { phase: 'Running', containerStatuses: [{ name: 'main', state: state('running') }, { name: 'shipper', state: state('running') }] },
  };
}

function setMain(h: History, pod: KubeObject, main: Obj, end?: { sidecar: Obj; phase: string }): void {
  pod.status = { phase: end?.phase ?? 'Running', containerStatuses: [{ name: 'main', state: main }, { name: 'shipper', state: end?.sidecar ?? state('running') }] };
  h.put(pod, { subresource: 'status' });
}

function crr(h: History): void {
  h.put({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ContainerRecreateRequest', metadata: meta('sidecar-termination-uid-batch'), spec: { podName: 'batch', containers: [{ name: 'shipper' }] } }, { actor: 'proc-2', verb: 'create' });
}

/** A clean run: a job over two pods one at a time, and a Job pod whose sidecar is stopped by a CRR after main exits. */
function cleanStory(): { h: History; j: KubeObject; a: KubeObject; b: KubeObject; s: KubeObject } {
  const h = new History();
  const j = h.put(job());
  const a = h.put(appPod('a'));
  const b = h.put(appPod('b'));
  const s = h.put(sidecarPod());
  inject(h, a, ['probe']);
  ecStatus(h, a, { probe: state('running') });
  ecStatus(h, a, { probe: state('terminated') });
  inject(h, b, ['probe']);
  ecStatus(h, b, { probe: state('terminated', 1) });
  finishJob(h, j, { phase: 'Failed', succeeded: 1, failed: 1, match: 2 });
  setMain(h, s, state('terminated'));
  crr(h);
  setMain(h, s, state('terminated'), { sidecar: state('terminated'), phase: 'Succeeded' });
  return { h, j, a, b, s };
}

function fires(run: RunRecord, invariant: Invariant, message: RegExp): void {
  const v = check(run);
  assert.deepEqual(v.map((x) => x.invariant), [invariant], `expected only ${invariant}, got ${JSON.stringify(v, null, 2)}`);
  assert.match(v[0]!.message, message);
}

describe('chaos checker', () => {
  test('a clean history passes', () => {
    assert.deepEqual(check(cleanStory().h.run()), []);
  });

  test('converged: a run that hit its time limit', () => {
    fires(cleanStory().h.run({ converged: false, pending: ['job ns/j Running'] }), 'converged', /did not converge.*job ns\/j Running/);
  });

  test('injected-once: a second write adding the job\'s containers to the same pod', () => {
    const { h, a } = cleanStory();
    inject(h, a, ['probe-2']);
    ecStatus(h, a, { probe: state('terminated'), 'probe-2': state('terminated') });
    fires(h.run(), 'injected-once', /pod ns\/a got job ns\/j \(uid job-uid-1\)'s containers a second time \(probe-2 after probe\) in write #\d+ patch\/ephemeralcontainers by proc-1/);
  });

  test('another job\'s containers in the same pod are no double injection', () => {
    const { h, a } = cleanStory();
    inject(h, a, ['other'], { job: 'another-job' });
    ecStatus(h, a, { probe: state('terminated'), other: state('terminated') });
    // Only the other job's Lease, left by a job this story never makes, is out of place.
    assert.deepEqual(check(h.run()).map((v) => v.invariant), ['no-stale-job-lease']);
  });

  test('sealed-final: a claim written after the job\'s verdict was sealed on its Lease', () => {
    const sealed = (sealNow = true): { h: History; c: KubeObject } => {
      const { h } = cleanStory();
      const c = h.put(appPod('c'));
      if (sealNow) seal(h);
      return { h, c };
    };
    const { h, c } = sealed();
    claim(h, c);
    fires(h.run(), 'sealed-final', /Lease ephemera-locks\/lease-job-uid-1 got a claim of job ns\/j \(uid job-uid-1\) \(pods ns\/c\) in write #\d+ update by proc-1 .*after its verdict was sealed \(write #\d+ update by proc-1/);
    // The sealed record written again, its claims dropped as their retention ends: nothing new is claimed.
    const again = sealed().h;
    seal(again, JOB, []);
    assert.deepEqual(check(again.run()), []);
    // The sealing write itself claims the late pod (review).
    const inSeal = sealed(false);
    seal(inSeal.h, JOB, [{ pod: 'a', uid: 'uid-a' }, { pod: 'b', uid: 'uid-b' }, { pod: 'c', uid: 'uid-c' }]);
    fires(inSeal.h.run(), 'sealed-final', /got a claim of job ns\/j \(uid job-uid-1\) \(pods ns\/c\) in write #\d+ update by proc-1 .*in the write that sealed its verdict/);
    // A claim made again (a new `at`) after the seal (review).
    const renewed = sealed().h;
    seal(renewed, JOB, [{ pod: 'a', uid: 'uid-a', at: renewed.now() }, { pod: 'b', uid: 'uid-b' }]);
    fires(renewed.run(), 'sealed-final', /\(pods ns\/a \(made again\)\)/);
    // A job being deleted: a plan that read it just before may write its Lease again from the
    // pods, within the grace (judged by no-injection-after-delete, not here).
    const deleted = sealed();
    const j = deleted.h.writes.find((w) => w.object.kind === 'EphemeralJob')!.object;
    deleted.h.put(j, { verb: 'delete', type: 'DELETED' });
    claim(deleted.h, deleted.c);
    assert.deepEqual(check(deleted.h.run()).map((v) => v.invariant), ['no-stale-job-lease']);
  });

  test('claimed-first: a pod injected that no Lease write claimed for the job before', () => {
    const { h, j } = cleanStory();
    const c = h.put(appPod('c'));
    inject(h, c, ['probe'], { claimed: false });
    ecStatus(h, c, { probe: state('terminated') });
    finishJob(h, j, { phase: 'Failed', succeeded: 2, failed: 1, match: 3 });
    fires(h.run(), 'claimed-first', /pod ns\/c got job ns\/j \(uid job-uid-1\)'s containers \(probe\) in write #\d+ patch\/ephemeralcontainers by proc-1 .*though no Lease write before it claimed the pod for that job/);
    // Claimed by another job's record, or by this job's record after the injection: still unclaimed.
    const { h: h2, j: j2 } = cleanStory();
    const d = h2.put(appPod('d'));
    claim(h2, d, 'another-job');
    inject(h2, d, ['probe'], { claimed: false });
    claim(h2, d);
    ecStatus(h2, d, { probe: state('terminated') });
    finishJob(h2, j2, { phase: 'Failed', succeeded: 2, failed: 1, match: 3 });
    assert.deepEqual(check(h2.run()).map((v) => v.invariant), ['claimed-first', 'no-stale-job-lease']);
    // Claimed once, the claim dropped from the record before the injection landed: claimed first
    // all the same (step 1 asks no more; a late landing is the parallelism invariant's to judge).
    const { h: h3, j: j3 } = cleanStory();
    const e = h3.put(appPod('e'));
    claim(h3, e);
    seal(h3, JOB, []);
    inject(h3, e, ['probe']);
    ecStatus(h3, e, { probe: state('terminated') });
    finishJob(h3, j3, { phase: 'Failed', succeeded: 2, failed: 1, match: 3 });
    assert.deepEqual(check(h3.run()).filter((v) => v.invariant === 'claimed-first'), []);
  });

  test('parallelism: a second pod injected while the first still runs', () => {
    const h = new History();
    const j = h.put(job());
    const a = h.put(appPod('a'));
    const b = h.put(appPod('b'));
    inject(h, a, ['probe']);
    inject(h, b, ['probe']);
    ecStatus(h, a, { probe: state('terminated') });
    ecStatus(h, b, { probe: state('terminated') });
    finishJob(h, j, { phase: 'Succeeded', succeeded: 2, failed: 0, match: 2 });
    fires(h.run(), 'parallelism', /job ns\/j \(uid job-uid-1\): 2 target pods with a non-terminal container of the job \(ns\/a \[probe: no status\], ns\/b \[probe: no status\]\), more than parallelism=1/);
  });

  test('parallelism: a pod whose first container failed still holds its slot while the second runs', () => {
    const h = new History();
    const j = h.put(job());
    const a = h.put(appPod('a'));
    const b = h.put(appPod('b'));
    inject(h, a, ['bad', 'good']);
    ecStatus(h, a, { bad: state('InvalidImageName'), good: state('running') });
    inject(h, b, ['bad', 'good']);
    ecStatus(h, a, { bad: state('InvalidImageName'), good: state('terminated') });
    ecStatus(h, b, { bad: state('InvalidImageName'), good: state('terminated') });
    finishJob(h, j, { phase: 'Failed', succeeded: 0, failed: 2, match: 2 });
    fires(h.run(), 'parallelism', /ns\/a \[bad: InvalidImageName, good: running\], ns\/b \[bad: no status, good: no status\]\), more than parallelism=1/);
  });

  test('parallelism follows the spec: raising it allows more', () => {
    const h = new History();
    const j = h.put(job({ parallelism: 0 }));
    (j.spec as Obj).parallelism = 2;
    h.put(j);
    const a = h.put(appPod('a'));
    const b = h.put(appPod('b'));
    inject(h, a, ['probe']);
    inject(h, b, ['probe']);
    ecStatus(h, a, { probe: state('terminated') });
    ecStatus(h, b, { probe: state('terminated') });
    finishJob(h, j, { phase: 'Succeeded', succeeded: 2, failed: 0, match: 2 });
    assert.deepEqual(check(h.run()), []);
  });

  test('replicas: more pods injected than replicas', () => {
    const h = new History();
    const j = h.put(job({ replicas: 1, parallelism: 5 }));
    const a = h.put(appPod('a'));
    const b = h.put(appPod('b'));
    inject(h, a, ['probe']);
    ecStatus(h, a, { probe: state('terminated') });
    inject(h, b, ['probe']);
    ecStatus(h, b, { probe: state('terminated') });
    finishJob(h, j, { phase: 'Succeeded', succeeded: 2, failed: 0, match: 2 });
    const v = check(h.run());
    assert.deepEqual(v.map((x) => x.invariant), ['replicas', 'job-finished']);
    assert.match(v[0]!.message, /job ns\/j \(uid job-uid-1\) has containers in 2 pods, more than replicas=1/);
    assert.match(v[1]!.message, /status.match=2 is more than replicas=1/);
  });

  test('job-finished: a job left Running, and counters that do not match the pods', () => {
    const running = cleanStory();
    finishJob(running.h, running.j, { phase: 'Running', succeeded: 1, failed: 1, match: 2 });
    fires(running.h.run(), 'job-finished', /job ns\/j: phase is Running/);
    const miscounted = cleanStory();
    finishJob(miscounted.h, miscounted.j, { phase: 'Failed', succeeded: 2, failed: 1, match: 3 });
    fires(miscounted.h.run(), 'job-finished', /status.succeeded=2 but the pods say 1; status.match=3 but the pods say 2/);
    const wrongPhase = cleanStory();
    finishJob(wrongPhase.h, wrongPhase.j, { phase: 'Succeeded', succeeded: 1, failed: 1, match: 2 });
    fires(wrongPhase.h.run(), 'job-finished', /phase Succeeded although 1 pod\(s\) failed/);
  });

  test('job-finished: counters are judged against the pods at the verdict — a pod deleted after it changes nothing, one miscounted then still fires', () => {
    const story = cleanStory();
    finishJob(story.h, story.j, { phase: 'Failed', succeeded: 1, failed: 1, match: 2, completionTime: '2026-01-01T01:00:00Z' });
    story.h.put(story.b, { verb: 'delete', type: 'DELETED' });
    assert.deepEqual(check(story.h.run()).filter((v) => v.invariant === 'job-finished'), []);
    const wrong = cleanStory();
    finishJob(wrong.h, wrong.j, { phase: 'Failed', succeeded: 1, failed: 1, match: 3, completionTime: '2026-01-01T01:00:00Z' });
    wrong.h.put(wrong.b, { verb: 'delete', type: 'DELETED' });
    fires(wrong.h.run(), 'job-finished', /status.match=3 but the pods say 2/);
  });

  test('job-finished: a pod deleted after the job was last written, before its verdict, may still be counted (the plan may have LISTed it); one deleted before may not', () => {
    const late = cleanStory();
    late.h.put(late.b, { verb: 'delete', type: 'DELETED' });
    finishJob(late.h, late.j, { phase: 'Failed', succeeded: 1, failed: 1, match: 2, completionTime: '2026-01-01T01:00:00Z' });
    assert.deepEqual(check(late.h.run()).filter((v) => v.invariant === 'job-finished'), []);
    const early = cleanStory();
    early.h.put(early.b, { verb: 'delete', type: 'DELETED' });
    finishJob(early.h, early.j, { phase: 'Failed', succeeded: 1, failed: 1, match: 2 }); // the job read after the delete
    finishJob(early.h, early.j, { phase: 'Failed', succeeded: 1, failed: 1, match: 2, completionTime: '2026-01-01T01:00:00Z' });
    fires(early.h.run(), 'job-finished', /status.match=2 but the pods say 1/);
  });

  test('job-finished: a verdict re-made from the seal after its status write was lost is judged against the pods its seal\'s plan may have read', () => {
    const sealLease = (h: History, finished: boolean): void => {
      const record = { v: 1, job: 'job-uid-1', total: 2, claims: [], ...(finished ? { finished: true } : {}) };
      h.put({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'ejob-ns-j', namespace: 'ephemera-locks', uid: 'lease-1', annotations: { 'ephemera.io/ejob-claims': JSON.stringify(record) } }, spec: {} }, { actor: 'proc-1', verb: 'update' });
    };
    // Claimed (Lease write), a done, b failed, the job written; sealed Failed; b deleted; the job
    // written again (another instance, a status not final); then the verdict, as sealed.
    const story = (deleteEarly: boolean): History => {
      const h = new History();
      const j = h.put(job());
      const a = h.put(appPod('a'));
      const b = h.put(appPod('b'));
      if (deleteEarly) h.put(b, { verb: 'delete', type: 'DELETED' });
      sealLease(h, false);
      inject(h, a, ['probe']);
      ecStatus(h, a, { probe: state('terminated') });
      if (!deleteEarly) {
        inject(h, b, ['probe']);
        ecStatus(h, b, { probe: state('terminated', 1) });
      }
      finishJob(h, j, { phase: 'Running', succeeded: 1, failed: 1, match: 2 });
      sealLease(h, true);
      if (!deleteEarly) h.put(b, { verb: 'delete', type: 'DELETED' });
      finishJob(h, j, { phase: 'Running', succeeded: 1, failed: 1, match: 2 });
      finishJob(h, j, { phase: 'Failed', succeeded: 1, failed: 1, match: 2, completionTime: '2026-01-01T01:00:00Z' });
      return h;
    };
    assert.deepEqual(check(story(false).run({ leaseSkewMs: 0 })).filter((v) => v.invariant === 'job-finished'), []);
    // b never had the job's containers while the seal's plan could have looked: the verdict is wrong.
    fires(story(true).run({ leaseSkewMs: 0 }), 'job-finished', /status.failed=1 but the pods say 0/);
  });

  test('job-finished: a selected pod the containers cannot go into counts as a failed target; a failure no pod accounts for still fires', () => {
    const story = (withUnfit: boolean): History => {
      const h = new History();
      const j = h.put(job({ template: { ephemeralContainers: [{ name: 'probe', image: 'busybox', targetContainerName: 'app' }] } }));
      const a = h.put(appPod('a'));
      if (withUnfit) h.put({ ...appPod('u'), metadata: { ...meta('u'), labels: { app: 'a' } }, spec: { containers: [{ name: 'web' }] } });
      inject(h, a, ['probe']);
      ecStatus(h, a, { probe: state('terminated') });
      finishJob(h, j, { phase: 'Failed', succeeded: 1, failed: 1, match: 2, completionTime: '2026-01-01T01:00:00Z' });
      return h;
    };
    assert.deepEqual(check(story(true).run()).filter((v) => v.invariant === 'job-finished'), []);
    fires(story(false).run(), 'job-finished', /status.failed=1 but the pods say 0; status.match=2 but the pods say 1/);
  });

  test('job-finished: PodsGone (every replica went to pods that are gone) passes with no pod of the job left, and fires while one is there', () => {
    const podsGone = { type: 'JobFailed', status: 'True', reason: 'PodsGone' };
    const h = new History();
    const j = h.put(job({ replicas: 1 }));
    const a = h.put(appPod('a'));
    inject(h, a, ['probe']);
    h.put(a, { verb: 'delete', type: 'DELETED' });
    finishJob(h, j, { phase: 'Failed', succeeded: 0, failed: 0, match: 0, conditions: [podsGone] });
    assert.deepEqual(check(h.run()).filter((v) => v.invariant === 'job-finished'), []);
    // A plain Failed with nothing failed still fires; so does PodsGone while a pod of the job is here.
    const plain = new History();
    const pj = plain.put(job({ replicas: 1 }));
    finishJob(plain, pj, { phase: 'Failed', succeeded: 0, failed: 0, match: 0 });
    fires(plain.run(), 'job-finished', /phase Failed although no pod failed/);
    const story = cleanStory();
    finishJob(story.h, story.j, { phase: 'Failed', succeeded: 1, failed: 1, match: 2, conditions: [podsGone] });
    fires(story.h.run(), 'job-finished', /reason PodsGone although 2 pod\(s\) with its containers are here/);
  });

  test('sidecar-pod-ended: a Job pod whose sidecar still runs at the end', () => {
    const h = new History();
    const s = h.put(sidecarPod());
    setMain(h, s, state('terminated'));
    fires(h.run(), 'sidecar-pod-ended', /Job pod ns\/batch with sidecars did not end: phase Running, not terminated: shipper/);
  });

  test('sidecar-stopped-after-main: a CRR while main runs', () => {
    const h = new History();
    const s = h.put(sidecarPod());
    crr(h);
    setMain(h, s, state('terminated'), { sidecar: state('terminated'), phase: 'Succeeded' });
    fires(h.run(), 'sidecar-stopped-after-main', /ContainerRecreateRequest sidecar-termination-uid-batch for pod ns\/batch created while a main container had not finished, in write #2 create by proc-2/);
  });

  test('sidecar-stopped-after-main: a signal container, an image swap, a phase write while main runs', () => {
    const signal = new History();
    const s1 = signal.put(sidecarPod());
    (s1.spec as Obj).ephemeralContainers = [{ name: 'ephemera-stop-shipper', env: [{ name: 'EPHEMERA_SIGNAL_TARGET', value: 'shipper' }] }];
    signal.put(s1, { actor: 'proc-3', verb: 'patch', subresource: 'ephemeralcontainers' });
    setMain(signal, s1, state('terminated'), { sidecar: state('terminated'), phase: 'Succeeded' });
    fires(signal.run(), 'sidecar-stopped-after-main', /pod ns\/batch: signal container ephemera-stop-shipper injected while a main container had not finished/);

    const swap = new History();
    const s2 = swap.put(sidecarPod());
    ((s2.spec as Obj).containers as Obj[])[1]!.image = 'exit-now:1';
    swap.put(s2, { actor: 'proc-1', verb: 'patch' });
    setMain(swap, s2, state('terminated'), { sidecar: state('terminated'), phase: 'Succeeded' });
    fires(swap.run(), 'sidecar-stopped-after-main', /sidecar shipper's image swapped to exit-now:1/);

    const phase = new History();
    const s3 = phase.put(sidecarPod('OnFailure'));
    setMain(phase, s3, state('terminated', 1));
    (s3.status as Obj).phase = 'Succeeded';
    phase.put(s3, { actor: 'proc-1', verb: 'patch', subresource: 'status' });
    fires(phase.run(), 'sidecar-stopped-after-main', /phase set to Succeeded while a main container had not finished/);
  });

  test('no-unexpected-exit: a process that ended without being killed', () => {
    const run = cleanStory().h.run({ exits: [
      { name: 'proc-1#1', code: null, signal: 'SIGKILL', killed: true, tail: [] },
      { name: 'proc-2#1', code: 1, signal: null, killed: false, tail: ['TypeError: boom'] },
    ] });
    fires(run, 'no-unexpected-exit', /process proc-2#1 exited by itself \(code 1, signal null\)[\s\S]*TypeError: boom/);
  });

  test('no-422-storm: more than 3 refused writes to one pod', () => {
    const rejected = Array.from({ length: 4 }, (_, i) => ({ time: '', verb: 'patch', path: `/api/v1/namespaces/ns/pods/a${i % 2 ? '/ephemeralcontainers' : ''}`, status: 422, actor: 'proc-1' }));
    fires(cleanStory().h.run({ rejected }), 'no-422-storm', /4 writes to \/api\/v1\/namespaces\/ns\/pods\/a refused with 422/);
    assert.deepEqual(check(cleanStory().h.run({ rejected: rejected.slice(1) })), []);
    // A JSON patch's failed test op is a fence doing its job (the engine observes again): not a storm.
    const fenced = Array.from({ length: 6 }, () => ({ time: '', verb: 'patch', path: '/apis/apps.kruise.io/v1alpha1/namespaces/ns/ephemeraljobs/j', status: 422, actor: 'proc-1', message: 'testing value /metadata/uid failed: test failed' }));
    assert.deepEqual(check(cleanStory().h.run({ rejected: fenced })), []);
    fires(cleanStory().h.run({ rejected: fenced.map((r) => ({ ...r, message: 'metadata.finalizers: Invalid value' })) }), 'no-422-storm', /6 writes to .*ephemeraljobs\/j refused with 422/);
    // Containers already there, answered "may not be changed": the product's "already done" (review97 F5, seed 97012).
    const taken = Array.from({ length: 6 }, () => ({ time: '', verb: 'patch', path: '/api/v1/namespaces/ns/pods/job-2/ephemeralcontainers', status: 422, actor: 'proc-1', message: 'Pod "job-2" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers "ephemera-stop-sidecar-0" may not be changed' }));
    assert.deepEqual(check(cleanStory().h.run({ rejected: taken })), []);
    fires(cleanStory().h.run({ rejected: taken.map((r) => ({ ...r, path: '/api/v1/namespaces/ns/pods/job-2' })) }), 'no-422-storm', /6 writes to .*pods\/job-2 refused with 422/);
  });

  describe('pods relabelled out of and into the selector (target pods, README "Injection")', () => {
    const relabel = (h: History, pod: KubeObject, app: string): void => {
      pod.metadata.labels = { app };
      h.put(pod);
    };
    /** The job's record claims these pods, each `at` this write's time (writes are a second apart). */
    const claim = (h: History, pods: string[]): void => {
      const at = new Date(Date.UTC(2026, 0, 1, 0, 0, h.writes.length)).toISOString();
      h.put({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'ejob-lease', namespace: 'ephemera-locks', uid: 'lease-uid', annotations: { 'ephemera.io/ejob-claims': JSON.stringify({ v: 1, job: JOB, claims: pods.map((pod) => ({ pod, at })) }) } }, spec: {} }, { actor: 'proc-1', verb: 'update' });
    };
    const end = (h: History, j: KubeObject, pods: KubeObject[], status: Obj): void => {
      for (const p of pods) ecStatus(h, p, { probe: state('terminated') });
      finishJob(h, j, status);
    };

    test('targets-only: the pod must have been a target when its claim was planned (skewSeconds before the claim)', () => {
      const story = (o: { claimFirst: boolean; gap: number }): History => {
        const h = new History();
        const j = h.put(job());
        const a = h.put(appPod('a'));
        if (o.claimFirst) claim(h, ['a']);
        relabel(h, a, 'z');
        tick(h, o.gap);
        if (!o.claimFirst) claim(h, ['a']);
        inject(h, a, ['probe']);
        end(h, j, [a], { phase: 'Succeeded', succeeded: 0, failed: 0, match: 0 });
        return h;
      };
      // Claimed, then relabelled out while its injection was on its way: however late it lands.
      assert.deepEqual(check(story({ claimFirst: true, gap: 4 }).run()), []);
      // Relabelled out a second before the claim: the plan's LIST may have been taken just before.
      assert.deepEqual(check(story({ claimFirst: false, gap: 0 }).run()), []);
      fires(story({ claimFirst: false, gap: 1 }).run(), 'targets-only', /pod ns\/a \(labels \{"app":"z"\}\) got job ns\/j \(uid job-uid-1\)'s containers in write #6 .* did not match it when its claim was planned/);
      const never = new History();
      never.put(job());
      const other = never.put({ ...appPod('o'), metadata: { ...meta('o'), labels: { app: 'b' } } });
      inject(never, other, ['probe']);
      assert.deepEqual(check(never.run({ final: [] })).map((x) => x.invariant), ['targets-only']);
    });

    test('parallelism counts target pods: one relabelled out frees its slot; back in, it overshoots only for a claim planned before it came back', () => {
      const story = (o: { bClaimedBeforeAIsBack: boolean; cLater?: boolean }): History => {
        const h = new History();
        const j = h.put(job());
        const a = h.put(appPod('a'));
        const b = h.put(appPod('b'));
        const c = h.put(appPod('c'));
        claim(h, ['a']);
        inject(h, a, ['probe']);
        ecStatus(h, a, { probe: state('running') });
        relabel(h, a, 'z');
        if (o.bClaimedBeforeAIsBack) claim(h, ['a', 'b']);
        relabel(h, a, 'a');
        if (!o.bClaimedBeforeAIsBack) {
          tick(h, 2);
          claim(h, ['a', 'b']);
        }
        inject(h, b, ['probe']);
        ecStatus(h, b, { probe: state('terminated') });
        if (o.cLater) {
          tick(h, 2);
          claim(h, ['a', 'b', 'c']);
          inject(h, c, ['probe']);
        }
        end(h, j, o.cLater ? [a, c] : [a], { phase: 'Succeeded', succeeded: o.cLater ? 3 : 2, failed: 0, match: o.cLater ? 3 : 2 });
        return h;
      };
      // b's plan did not see a (out of the selector): the documented overshoot.
      assert.deepEqual(check(story({ bClaimedBeforeAIsBack: true }).run()), []);
      // b planned two seconds after a came back, while a ran: a counted.
      const late = check(story({ bClaimedBeforeAIsBack: false }).run());
      assert.deepEqual(late.map((x) => x.invariant), ['parallelism']);
      assert.match(late[0]!.message, /2 target pods with a non-terminal container of the job \(ns\/a \[probe: running\], ns\/b \[probe: no status\]\)/);
      // And once a is back, a later claim counts it.
      assert.deepEqual(check(story({ bClaimedBeforeAIsBack: true, cLater: true }).run()).map((x) => x.invariant), ['parallelism']);
    });

    test('parallelism: a pod that came back into the selector empty and is then claimed counts, at once (review)', () => {
      const h = new History();
      const j = h.put(job());
      const x = h.put(appPod('x'));
      const p = h.put(appPod('p'));
      claim(h, ['x']);
      inject(h, x, ['probe']);
      ecStatus(h, x, { probe: state('running') });
      relabel(h, p, 'z');
      relabel(h, p, 'a');
      claim(h, ['x', 'p']);
      inject(h, p, ['probe']);
      end(h, j, [x, p], { phase: 'Succeeded', succeeded: 2, failed: 0, match: 2 });
      fires(h.run(), 'parallelism', /2 target pods .*ns\/p \[probe: no status\], ns\/x \[probe: running\]/);
    });

    test('job-finished: a verdict re-made from its seal is judged against the pods that carried the containers at the seal, not at the status write after (review)', () => {
      // q is claimed, relabelled out (its claim then holds no slot), the seal is written, and
      // the claimer's injection lands after it; q comes back and runs; the verdict's status
      // write was lost, and the recorded verdict is written once nothing holds a slot.
      const h = new History();
      const j = h.put(job({ parallelism: 2 }));
      const b = h.put(appPod('b'));
      const q = h.put(appPod('q'));
      claim(h, ['b']);
      inject(h, b, ['probe']);
      ecStatus(h, b, { probe: state('terminated') });
      const claimedAt = new Date(Date.UTC(2026, 0, 1, 0, 0, h.writes.length)).toISOString();
      claim(h, ['b', 'q']);
      relabel(h, q, 'z');
      // The seal keeps the claims as they were (the product makes none again once sealed).
      h.put({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'ejob-lease', namespace: 'ephemera-locks', uid: 'lease-uid', annotations: { 'ephemera.io/ejob-claims': JSON.stringify({ v: 1, job: JOB, finished: true, claims: [{ pod: 'b', at: claimedAt }, { pod: 'q', at: claimedAt }] }) } }, spec: {} }, { actor: 'proc-2', verb: 'update' });
      inject(h, q, ['probe']);
      relabel(h, q, 'a');
      ecStatus(h, q, { probe: state('running') });
      finishJob(h, j, { phase: 'Running', succeeded: 1, failed: 0, match: 2 });
      ecStatus(h, q, { probe: state('terminated') });
      finishJob(h, j, { phase: 'Succeeded', succeeded: 1, failed: 0, match: 1, completionTime: '2026-01-01T00:01:00Z' });
      assert.deepEqual(check(h.run()), []);
    });

    test('paused: an injection from a claim planned while the job was paused fires; one claimed just before the pause lands after it', () => {
      const story = (claimAfterPause: number): History => {
        const h = new History();
        const j = h.put(job());
        const a = h.put(appPod('a'));
        if (claimAfterPause < 0) claim(h, ['a']);
        (j.spec as Obj).paused = true;
        h.put(j);
        tick(h, Math.max(0, claimAfterPause));
        if (claimAfterPause >= 0) claim(h, ['a']);
        inject(h, a, ['probe']);
        (j.spec as Obj).paused = false;
        h.put(j);
        end(h, j, [a], { phase: 'Succeeded', succeeded: 1, failed: 0, match: 1 });
        return h;
      };
      assert.deepEqual(check(story(-1).run()), []);
      // Within the claim window (3 s) of the pause, a plan may have read the job before it.
      assert.deepEqual(check(story(1).run()), []);
      fires(story(4).run(), 'paused', /pod ns\/a got job ns\/j \(uid job-uid-1\)'s containers in write #\d+ .* from a claim planned while the job was paused/);
    });

    test('parallelism lowered: what was claimed before drains; a claim planned after the claim window counts against the new value', () => {
      const story = (claimAfterLowering: number): History => {
        const h = new History();
        const j = h.put(job({ parallelism: 2 }));
        const a = h.put(appPod('a'));
        const b = h.put(appPod('b'));
        claim(h, ['a']);
        inject(h, a, ['probe']);
        ecStatus(h, a, { probe: state('running') });
        if (claimAfterLowering < 0) claim(h, ['a', 'b']);
        (j.spec as Obj).parallelism = 1;
        h.put(j);
        tick(h, Math.max(0, claimAfterLowering));
        if (claimAfterLowering >= 0) claim(h, ['a', 'b']);
        inject(h, b, ['probe']);
        end(h, j, [a, b], { phase: 'Succeeded', succeeded: 2, failed: 0, match: 2 });
        return h;
      };
      assert.deepEqual(check(story(-1).run()), []);
      fires(story(4).run(), 'parallelism', /2 target pods with a non-terminal container of the job .* more than parallelism=1/);
    });

    test('a relabelled-out pod is neither a slot nor counted in the verdict', () => {
      const h = new History();
      const j = h.put(job());
      const a = h.put(appPod('a'));
      const b = h.put(appPod('b'));
      claim(h, ['a']);
      inject(h, a, ['probe']);
      ecStatus(h, a, { probe: state('running') });
      relabel(h, a, 'z');
      claim(h, ['a', 'b']);
      inject(h, b, ['probe']);
      end(h, j, [a, b], { phase: 'Succeeded', succeeded: 1, failed: 0, match: 1 });
      assert.deepEqual(check(h.run()), []);
    });
  });

  describe('verdicts the checker used to let through (review)', () => {
    test('job-finished: a verdict written while a pod of it is open fires, though the pod ends later', () => {
      const h = new History();
      const j = h.put(job({ parallelism: 2 }));
      const a = h.put(appPod('a'));
      const b = h.put(appPod('b'));
      inject(h, a, ['probe']);
      inject(h, b, ['probe']);
      ecStatus(h, a, { probe: state('terminated') });
      ecStatus(h, b, { probe: state('running') });
      finishJob(h, j, { phase: 'Succeeded', succeeded: 1, failed: 0, match: 2, completionTime: '2026-01-01T00:00:08Z' });
      ecStatus(h, b, { probe: state('terminated', 1) });
      fires(h.run(), 'job-finished', /a verdict while 1 pod\(s\) of it were open/);
    });

    test('job-finished: a verdict matching the pods before any injection fires when pods carried its containers at the verdict write', () => {
      const h = new History();
      const j = h.put(job({ parallelism: 2 }));
      const a = h.put(appPod('a'));
      const b = h.put(appPod('b'));
      inject(h, a, ['probe']);
      inject(h, b, ['probe']);
      ecStatus(h, a, { probe: state('terminated', 1) });
      ecStatus(h, b, { probe: state('terminated', 1) });
      finishJob(h, j, { phase: 'Succeeded', succeeded: 0, failed: 0, match: 0, completionTime: '2026-01-01T00:00:08Z' });
      // The view before any injection (the job's last write before the verdict is its creation)
      // agreed with 0/0/0; it is refused now, so every view in the window disagrees.
      fires(h.run(), 'job-finished', /status.match=0 but the pods say 2/);
    });

    test('a job deleted with its late injections is judged by its last spec: replicas and parallelism still hold', () => {
      const h = new History();
      const j = h.put(job({ replicas: 1 }));
      const a = h.put(appPod('a'));
      const b = h.put(appPod('b'));
      inject(h, a, ['probe']);
      const l = claim(h, b);
      h.put(j, { type: 'DELETED' });
      inject(h, b, ['probe']);
      h.put(l!, { type: 'DELETED' });
      for (const p of [a, b]) ecStatus(h, p, { probe: state('terminated') });
      assert.deepEqual(check(h.run()).map((x) => x.invariant), ['replicas', 'parallelism']);
    });
  });

  test('processes-started: a process that never watched', () => {
    fires(cleanStory().h.run({ notStarted: ['proc-3.1'] }), 'processes-started', /process proc-3.1 was not watching when the schedule started \(after 15\.0 s\)/);
    // On a loaded machine the bound grows with the first process's start (runner.ts STARTUP): the message says which was used.
    fires(cleanStory().h.run({ notStarted: ['proc-3.1'], startupBoundMs: 48_000 }), 'processes-started', /\(after 48\.0 s\)/);
  });

  describe('deleted and re-created jobs', () => {
    const DELETED_AT = '2026-01-01T00:00:30Z';
    const markDeleted = (h: History, j: KubeObject): void => {
      j.metadata.deletionTimestamp = DELETED_AT;
      h.put(j, { verb: 'delete' });
    };
    const removeFinalizer = (h: History, j: KubeObject): void => {
      h.put(j, { actor: 'proc-1', verb: 'patch', type: 'DELETED' });
    };
    function withRecord(l: KubeObject, jobUid: string, pods: string[]): KubeObject {
      l.metadata.annotations = { 'ephemera.io/ejob-claims': JSON.stringify({ v: 1, job: jobUid, total: pods.length, claims: pods.map((pod) => ({ pod, at: '2026-01-01T00:00:00Z' })) }) };
      return l;
    }
    const lease = (jobUid: string, pods: string[], uid = 'lease-1'): KubeObject =>
      withRecord({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'ejob-ephemeraljob-ns-j-1234abcd', namespace: 'ephemera-locks', uid }, spec: {} }, jobUid, pods);
    /** A job with the finalizer whose pod a is claimed and injected, then deleted: its Lease deleted, its finalizer removed. */
    function deletedStory(): { h: History; j: KubeObject; a: KubeObject; b: KubeObject; l: KubeObject } {
      const h = new History();
      const j = h.put({ ...job({ parallelism: 2 }), metadata: { ...job().metadata, finalizers: ['apps.kruise.io/ephemeralcontainers-cleanup'] } });
      const a = h.put(appPod('a'));
      const b = h.put(appPod('b'));
      const l = h.put(lease(JOB, ['a']), { actor: 'proc-1', verb: 'create' });
      inject(h, a, ['probe']);
      return { h, j, a, b, l };
    }
    const cleanUp = (h: History, j: KubeObject, l: KubeObject): void => {
      markDeleted(h, j);
      h.put(l, { actor: 'proc-1', verb: 'delete', type: 'DELETED' });
      removeFinalizer(h, j);
    };

    test('a job deleted mid-run, its Lease deleted and its finalizer removed, passes; so does a claim or injection planned before the delete that lands within the grace', () => {
      const { h, j, l } = deletedStory();
      cleanUp(h, j, l);
      assert.deepEqual(check(h.run()), []);
      // b claimed before the delete, injected after it (in flight, or stalled): allowed.
      const late = (claimed: string[]): History => {
        const s = deletedStory();
        s.h.put(withRecord(s.l, JOB, claimed), { actor: 'proc-1', verb: 'update' });
        markDeleted(s.h, s.j);
        // b not claimed before the delete: claimed in the same second as its injection.
        inject(s.h, s.b, ['probe']);
        s.h.put(s.l, { actor: 'proc-1', verb: 'delete', type: 'DELETED' });
        removeFinalizer(s.h, s.j);
        return s.h;
      };
      assert.deepEqual(check(late(['a', 'b']).run()), []);
      assert.deepEqual(check(late(['a']).run()), [], 'within the grace (lease + skew) of the delete');
      fires(late(['a', 'b']).run({ lateWriteGraceMs: 0 }), 'no-injection-after-delete', /pod ns\/b got job ns\/j \(uid job-uid-1\)'s containers \(probe\) in write #\d+ patch\/ephemeralcontainers by proc-1 .*more than 0 ms after the job was being deleted \(write #\d+ delete by in-process/);
      const both = check(late(['a']).run({ lateWriteGraceMs: 0 }));
      assert.deepEqual(both.map((v) => v.invariant), ['no-injection-after-delete', 'no-injection-after-delete'], 'its claim after the delete is late too');
    });

    test('no-injection-after-delete: a pod claimed, or injected, after the job is gone', () => {
      const claimed = deletedStory();
      markDeleted(claimed.h, claimed.j);
      claimed.h.put(withRecord(claimed.l, JOB, ['a', 'b']), { actor: 'proc-2', verb: 'update' });
      claimed.h.put(claimed.l, { actor: 'proc-1', verb: 'delete', type: 'DELETED' });
      removeFinalizer(claimed.h, claimed.j);
      assert.deepEqual(check(claimed.h.run()).filter((v) => v.invariant === 'no-injection-after-delete'), [], 'within the grace');
      fires(claimed.h.run({ lateWriteGraceMs: 0 }), 'no-injection-after-delete', /Lease ephemera-locks\/ejob-ephemeraljob-ns-j-1234abcd got a new claim of job ns\/j \(uid job-uid-1\) \(pods ns\/b\) in write #\d+ update by proc-2/);

      const gone = new History();
      const j = gone.put(job());
      const b = gone.put(appPod('b'));
      const l = claim(gone, b);
      gone.put(j, { verb: 'delete', type: 'DELETED' });
      inject(gone, b, ['probe']);
      gone.put(l!, { verb: 'delete', type: 'DELETED' });
      fires(gone.run({ lateWriteGraceMs: 0 }), 'no-injection-after-delete', /pod ns\/b got job ns\/j \(uid job-uid-1\)'s containers \(probe\) .*after the job was gone/);
    });

    test('deleted-job-gone: a job still held by its finalizer at the end', () => {
      const { h, j, l } = deletedStory();
      markDeleted(h, j);
      h.put(l, { actor: 'proc-1', verb: 'delete', type: 'DELETED' });
      fires(h.run(), 'deleted-job-gone', /job ns\/j \(uid job-uid-1\) is still there at the end, being deleted since 2026-01-01T00:00:30Z, finalizers \["apps.kruise.io\/ephemeralcontainers-cleanup"\]/);
    });

    test('no-stale-job-lease: the Lease of a job that is gone still holds its record; a re-created job\'s own record is kept', () => {
      const { h, j } = deletedStory();
      markDeleted(h, j);
      removeFinalizer(h, j);
      fires(h.run(), 'no-stale-job-lease', /Lease ephemera-locks\/ejob-ephemeraljob-ns-j-1234abcd still holds the claims record of job ns\/j \(uid job-uid-1\), which is gone; the job of that name now: none/);
      // Created again: the old record left on the Lease is still stale; the new job's own record is not.
      const again = deletedStory();
      markDeleted(again.h, again.j);
      removeFinalizer(again.h, again.j);
      const j2 = again.h.put({ ...job(), metadata: { ...job().metadata, uid: 'job-uid-2' } });
      finishJob(again.h, j2, { phase: 'Succeeded', succeeded: 0, failed: 0, match: 0 });
      fires(again.h.run(), 'no-stale-job-lease', /which is gone; the job of that name now: uid job-uid-2/);
      again.h.put(withRecord(again.l, 'job-uid-2', []), { actor: 'proc-1', verb: 'update' });
      assert.deepEqual(check(again.h.run()), []);
    });

    test('a re-created job is judged on its own: the old job\'s running pod takes none of its slots, and its status counts only its pods', () => {
      const story = (): { h: History; j2: KubeObject } => {
        const { h, j, a, b, l } = deletedStory();
        ecStatus(h, a, { probe: state('running') });
        cleanUp(h, j, l);
        const j2 = h.put({ ...job(), metadata: { ...job().metadata, uid: 'job-uid-2' } });
        h.put(lease('job-uid-2', ['b'], 'lease-2'), { actor: 'proc-1', verb: 'create' });
        inject(h, b, ['probe'], { job: 'job-uid-2' });
        ecStatus(h, b, { probe: state('running') });
        ecStatus(h, b, { probe: state('terminated') });
        return { h, j2 };
      };
      const own = story();
      finishJob(own.h, own.j2, { phase: 'Succeeded', succeeded: 1, failed: 0, match: 1 });
      assert.deepEqual(check(own.h.run()), []);
      const both = story();
      finishJob(both.h, both.j2, { phase: 'Succeeded', succeeded: 1, failed: 0, match: 2 });
      fires(both.h.run(), 'job-finished', /job ns\/j: status.match=2 but the pods say 1/);
    });
  });
});
