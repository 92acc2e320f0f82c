// The chaos checker's view of the claims Lease's lineage (review97 F1): a lost update on the
// record — a "retry on conflict" that re-sends a plan at the fresh version, or a 409 taken as
// done — passed every other invariant, since the loser had mostly planned what the winner
// wrote. own-claim-first: an injection follows its own process's claim write; claims-carried:
// a Lease update keeps every live claim and the seal of the version it replaced. Synthetic
// histories, writes a second apart.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../../functions/cluster/index.ts';
import { check } from './check.ts';
import type { RunRecord } from './record.ts';
import { appPod, ec, History, job, JOB, tick } from './synthetic-history.ts';

type Obj = Record<string, unknown>;
type C = { pod: string; uid?: string; at: string; w?: number };

/** A job whose one container targets the pods' container "app" (as the chaos world's). */
const targeting = (): KubeObject => job({ template: { ephemeralContainers: [{ name: 'probe', image: 'busybox', targetContainerName: 'app' }] } });

/** `actor` writes the job's Lease with this record (claims as the product writes them: pod, uid, at, w). */
function record(h: History, actor: string, claims: C[], extra: Obj = {}): void {
  const annotations = { 'ephemera.io/ejob-claims': JSON.stringify({ v: 1, job: JOB, claims, ...extra }) };
  h.put({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'ejob-lease', namespace: 'ephemera-locks', uid: 'lease-uid', annotations }, spec: {} }, { actor, verb: 'update' });
}

/** `actor` injects the job's container into the pod. */
function inject(h: History, pod: KubeObject, actor: string): void {
  (pod.spec as Obj).ephemeralContainers = [ec('probe')];
  h.put(pod, { actor, verb: 'patch', subresource: 'ephemeralcontainers' });
}

const claimOf = (h: History, pod: KubeObject, w = 4): C => ({ pod: pod.metadata.name, uid: pod.metadata.uid!, at: h.now(), w });
const of = (run: RunRecord, invariant: string): string[] => check(run).filter((v) => v.invariant === invariant).map((v) => v.message);

test('own-claim-first: an injection by a process whose own claim write never took effect fires, though another process claimed the pod', () => {
  const story = (injector: string): History => {
    const h = new History();
    h.put(targeting());
    const a = h.put(appPod('a'));
    record(h, 'proc-1.1', [claimOf(h, a)]); // proc-1 won the race for the Lease
    inject(h, a, injector);                 // the loser's injection (a 409 taken as done) is no claimant's
    return h;
  };
  assert.deepEqual(of(story('proc-1.1').run(), 'own-claim-first'), [], 'the claimer injects: clean');
  const loser = story('proc-2.1').run();
  assert.deepEqual(of(loser, 'claimed-first'), [], 'someone claimed the pod: claimed-first is satisfied');
  assert.equal(of(loser, 'own-claim-first').length, 1);
  assert.match(of(loser, 'own-claim-first')[0]!, /pod ns\/a got job ns\/j \(uid job-uid-1\)'s containers \(probe\) in write #\d+ patch\/ephemeralcontainers by proc-2\.1 .*no Lease write by proc-2\.1 made or renewed its claim/);
  // A restarted process (its next incarnation) has no claim of its own either.
  assert.equal(of(story('proc-1.2').run(), 'own-claim-first').length, 1, 'another incarnation of the claimer');
});

test('own-claim-first: an injection past its claim\'s window, by the claimer, fires; one within it, or under a renewal, does not', () => {
  const story = (gap: number, renew: boolean): History => {
    const h = new History();
    h.put(targeting());
    const a = h.put(appPod('a'));
    const c = claimOf(h, a, 3);
    record(h, 'proc-1.1', [c]);
    tick(h, gap);
    if (renew) record(h, 'proc-1.1', [{ ...c, at: h.now() }]); // made again: a new `at`
    inject(h, a, 'proc-1.1');
    return h;
  };
  assert.deepEqual(of(story(1, false).run(), 'own-claim-first'), [], 'within w = 3 s');
  assert.equal(of(story(4, false).run(), 'own-claim-first').length, 1, 'past w = 3 s');
  assert.deepEqual(of(story(4, true).run(), 'own-claim-first'), [], 'under its renewal');
});

test('claims-carried: a Lease update that drops a live claim fires (a record planned from an older version, re-sent at the fresh one); a claim past its retention may go', () => {
  const story = (carry: boolean, gap = 0): History => {
    const h = new History();
    h.put(targeting());
    const a = h.put(appPod('a'));
    const b = h.put(appPod('b'));
    const ca = claimOf(h, a);
    record(h, 'proc-1.1', [ca]);            // proc-1 claims a (w 4: retained at least 4 + 2 s)
    tick(h, gap);
    record(h, 'proc-2.1', carry ? [ca, claimOf(h, b)] : [claimOf(h, b)]); // proc-2's plan from the record before a's claim
    return h;
  };
  assert.deepEqual(of(story(true).run(), 'claims-carried'), [], 'a carried: clean');
  const lost = of(story(false).run(), 'claims-carried');
  assert.equal(lost.length, 1);
  assert.match(lost[0]!, /Lease ephemera-locks\/ejob-lease dropped live claims of job ns\/j \(uid job-uid-1\) \(ns\/a \(at 2026-01-01T00:00:03\.000Z, w 4\)\) in write #\d+ update by proc-2\.1/);
  assert.deepEqual(of(story(false, 6).run(), 'claims-carried'), [], 'a\'s retention (4 + 2 s) ended: dropped as the product does');
});

test('claims-carried: a live claim of a pod that can never take the containers may be dropped at once; of a pod that can, it may not', () => {
  const story = (containerName: string): History => {
    const h = new History();
    h.put(targeting());
    const u = h.put({ ...appPod('u'), spec: { containers: [{ name: containerName }] } }); // "app" is the template's target
    const b = h.put(appPod('b'));
    record(h, 'proc-1.1', [claimOf(h, u)]);
    record(h, 'proc-1.1', [claimOf(h, b)]);
    return h;
  };
  assert.deepEqual(of(story('other').run(), 'claims-carried'), [], 'no container "app" to target');
  assert.equal(of(story('app').run(), 'claims-carried').length, 1);
});

test('claims-carried: a Lease update that loses the verdict\'s seal fires', () => {
  const story = (keep: boolean): History => {
    const h = new History();
    h.put(targeting());
    const a = h.put(appPod('a'));
    const ca = claimOf(h, a);
    record(h, 'proc-1.1', [ca]);
    record(h, 'proc-1.1', [ca], { finished: true });
    record(h, 'proc-2.1', [ca], keep ? { finished: true } : {}); // a renewal planned before the seal, sent at its version
    return h;
  };
  assert.deepEqual(of(story(true).run(), 'claims-carried'), []);
  assert.match(of(story(false).run(), 'claims-carried')[0] ?? '', /Lease ephemera-locks\/ejob-lease lost the seal of job ns\/j \(uid job-uid-1\)'s verdict \(finished\) in write #\d+ update by proc-2\.1/);
});
