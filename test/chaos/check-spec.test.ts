// The chaos checker's paused and lowered-parallelism rules on synthetic histories: a renewal
// is a plan of its own, judged by the spec it may have read (found by review: judging by the
// claim's first `at` let a renewal made while paused, or long after a lowering, through), and
// another job's injection is no claim of a job that drains.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { check } from './check.ts';
import { appPod, ecStatus, finishJob, History, inject, job, JOB, state, tick } from './synthetic-history.ts';

type Obj = Record<string, unknown>;

/** The record: each claim { pod, at } (at given, or this write's time), renewed flag optional. */
function record(h: History, claims: { pod: string; at?: string; renewed?: boolean }[], jobUid = JOB): void {
  const at = h.now();
  h.put({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: `lease-${jobUid}`, namespace: 'ephemera-locks', uid: `lease-${jobUid}`, annotations: { 'ephemera.io/ejob-claims': JSON.stringify({ v: 1, job: jobUid, claims: claims.map((c) => ({ pod: c.pod, uid: `uid-${c.pod}`, at: c.at ?? at, ...(c.renewed ? { renewed: true } : {}) })) }) } }, spec: {} }, { actor: 'proc-1', verb: 'update' });
}
const inv = (h: History): string[] => check(h.run()).map((v) => `${v.invariant}: ${v.message.slice(0, 160)}`);

test('paused: a claim renewed while paused fires, as a fresh claim does', () => {
  const story = (renew: boolean): History => {
    const h = new History();
    const j = h.put(job());
    const a = h.put(appPod('a'));
    record(h, [{ pod: 'a' }]);                          // t0, not paused
    (j.spec as Obj).paused = true; h.put(j);          // t0+1
    tick(h, 4);
    record(h, renew ? [{ pod: 'a', renewed: true }] : [{ pod: 'b' }, { pod: 'a' }]); // t0+6: renewal (same uid, new at) or a fresh claim after drop
    inject(h, a, ['probe']);
    (j.spec as Obj).paused = false; h.put(j);
    ecStatus(h, a, { probe: state('terminated') });
    finishJob(h, j, { phase: 'Succeeded', succeeded: 1, failed: 0, match: 1 });
    return h;
  };
  assert.ok(inv(story(true)).some((v) => v.startsWith('paused:')), 'renewed while paused');
  // control: the claim dropped then made afresh while paused
  const h = new History();
  const j = h.put(job()); const a = h.put(appPod('a'));
  record(h, [{ pod: 'a' }]); (j.spec as Obj).paused = true; h.put(j); tick(h, 4);
  record(h, []); record(h, [{ pod: 'a' }]); inject(h, a, ['probe']);
  (j.spec as Obj).paused = false; h.put(j); ecStatus(h, a, { probe: state('terminated') });
  finishJob(h, j, { phase: 'Succeeded', succeeded: 1, failed: 0, match: 1 });
  assert.ok(inv(h).some((v) => v.startsWith('paused:')), 'a fresh claim while paused');
});

test('parallelism: a claim renewed long after parallelism was lowered is judged by the lowered value, as a fresh claim is', () => {
  const story = (renew: boolean): History => {
    const h = new History();
    const j = h.put(job({ parallelism: 2 }));
    const a = h.put(appPod('a')); const b = h.put(appPod('b'));
    record(h, [{ pod: 'a' }, { pod: 'b' }]);           // both claimed at t0 under parallelism 2
    inject(h, a, ['probe']); ecStatus(h, a, { probe: state('running') }); // b's injection failed
    (j.spec as Obj).parallelism = 1; h.put(j);          // lowered
    tick(h, 4);
    const t0 = h.writes.find((w) => w.object.kind === 'Lease')!.object.metadata.annotations as Obj;
    const at0 = (JSON.parse(t0['ephemera.io/ejob-claims'] as string) as { claims: { at: string }[] }).claims[0]!.at;
    if (renew) record(h, [{ pod: 'a', at: at0 }, { pod: 'b', renewed: true }]);
    else { record(h, [{ pod: 'a', at: at0 }]); record(h, [{ pod: 'a', at: at0 }, { pod: 'b' }]); }
    inject(h, b, ['probe']);
    ecStatus(h, a, { probe: state('terminated') }); ecStatus(h, b, { probe: state('terminated') });
    finishJob(h, j, { phase: 'Succeeded', succeeded: 2, failed: 0, match: 2 });
    return h;
  };
  assert.ok(inv(story(true)).some((v) => v.startsWith('parallelism:')), 'renewal 6 s after lowering');
  assert.ok(inv(story(false)).some((v) => v.startsWith('parallelism:')), 'a fresh claim 6 s after lowering');
});

test('parallelism: another job\'s injection into a pod of a job draining after a lowering is not judged against the first job', () => {
  const h = new History();
  const j = h.put(job({ parallelism: 2 }));
  const j2 = h.put(job({ parallelism: 1 }, 'job-uid-2', 'j2'));
  const a = h.put(appPod('a')); const b = h.put(appPod('b'));
  record(h, [{ pod: 'a' }, { pod: 'b' }]);
  inject(h, a, ['probe']); inject(h, b, ['probe']);
  ecStatus(h, a, { probe: state('running') }); ecStatus(h, b, { probe: state('running') });
  (j.spec as Obj).parallelism = 1; h.put(j);            // lowered while both run: they drain
  tick(h, 4);
  record(h, []);                                        // J's record dropped a's and b's claims (retention over; e.g. a deadline seal)
  record(h, [{ pod: 'a' }], 'job-uid-2');               // J2 claims a
  inject(h, a, ['other'], { job: 'job-uid-2' });                 // J2's container into a: J's counters untouched
  ecStatus(h, a, { probe: state('terminated'), other: state('terminated') }); ecStatus(h, b, { probe: state('terminated') });
  finishJob(h, j, { phase: 'Succeeded', succeeded: 2, failed: 0, match: 2 });
  finishJob(h, j2, { phase: 'Succeeded', succeeded: 1, failed: 0, match: 1 });
  assert.deepEqual(inv(h).filter((v) => v.startsWith('parallelism:')), [], 'another job injects a pod of a draining job');
});

test('paused: a claim written just after the resume, whose at (from a whole-second Date header) is from before it, is no violation', () => {
  // Found by chaos (seed 5789): `at` is the instance's reading of the server's clock, up to a
  // second early; the plan that wrote it ran until its Lease write.
  const h = new History();
  const j = h.put(job());
  const a = h.put(appPod('a'));
  (j.spec as Obj).paused = true;
  h.put(j);
  tick(h, 4);
  const at = h.now();
  tick(h, 1);
  (j.spec as Obj).paused = false;
  h.put(j);
  record(h, [{ pod: 'a', at }]);
  inject(h, a, ['probe']);
  ecStatus(h, a, { probe: state('terminated') });
  finishJob(h, j, { phase: 'Succeeded', succeeded: 1, failed: 0, match: 1 });
  assert.deepEqual(inv(h).filter((v) => v.startsWith('paused:')), []);
});
