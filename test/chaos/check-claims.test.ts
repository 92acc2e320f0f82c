// The chaos checker's rule for pods relabelled out of and back into a selector, and for pods
// replaced under their names, on synthetic histories: each case is a product bug (a second
// pod claimed while one the plan saw still held the slot, or a pod claimed while its selector
// did not match it) that an earlier version of the rule excused. Found by a review of the
// checker; claims are the product's (pod, uid, at), writes a second apart.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../../functions/cluster/index.ts';
import { check } from './check.ts';
import type { RunRecord } from './record.ts';
import { History } from './synthetic-history.ts';

type Obj = Record<string, unknown>;
const JOB = 'job-uid-1';
const job = (spec: Obj = {}): KubeObject => ({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', metadata: { name: 'j', namespace: 'ns', uid: JOB }, spec: { parallelism: 1, selector: { matchLabels: { app: 'a' } }, ...spec } });
const appPod = (name: string, uid = `uid-${name}`, app = 'a'): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns', uid, labels: { app } }, spec: { containers: [{ name: 'app' }] }, status: { phase: 'Running' } });
const ec = (name: string): Obj => ({ name, image: 'busybox', env: [{ name: 'KRUISE_EJOB_ID', value: JOB }] });
function inject(h: History, pod: KubeObject): void { (pod.spec as Obj).ephemeralContainers = [ec('probe')]; h.put(pod, { actor: 'proc-1', verb: 'patch', subresource: 'ephemeralcontainers' }); }
function running(h: History, pod: KubeObject): void { (pod.status as Obj).ephemeralContainerStatuses = [{ name: 'probe', state: { running: {} } }]; h.put(pod, { subresource: 'status' }); }
const relabel = (h: History, pod: KubeObject, app: string): void => { pod.metadata.labels = { app }; h.put(pod); };
const tick = (h: History, n: number): void => { for (let i = 0; i < n; i++) h.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `t${h.writes.length}`, namespace: 'ns', uid: `t${h.writes.length}` } }); };
type C = { pod: string; uid?: string; at: string; renewed?: boolean };
/** Writes the record with these claims (as the product writes them: pod, uid, at). */
const record = (h: History, claims: C[]): void => {
  h.put({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'ejob-lease', namespace: 'ephemera-locks', uid: 'lease-uid', annotations: { 'ephemera.io/ejob-claims': JSON.stringify({ v: 1, job: JOB, claims }) } }, spec: {} }, { actor: 'proc-1', verb: 'update' });
};
const of = (run: RunRecord, inv: string[]) => check(run).filter((v) => inv.includes(v.invariant)).map((v) => `${v.invariant}: ${v.message.slice(0, 140)}`);

test('parallelism: a pod replaced under its name is judged by its own claim\'s at, not the old pod\'s claim still on the record', () => {
  const story = (linger: boolean): History => {
    const h = new History();
    h.put(job());
    const y = h.put(appPod('y'));
    const x1 = h.put(appPod('x', 'x-1'));
    const c0 = { pod: 'x', uid: 'x-1', at: h.now() };
    record(h, [c0]);                         // old x claimed (never injected)
    h.put(x1, { type: 'DELETED' });          // replaced under its name
    const x2 = h.put(appPod('x', 'x-2', 'z')); // new x, out of the selector
    const cy = { pod: 'y', uid: 'uid-y', at: h.now() };
    record(h, linger ? [c0, cy] : [cy]);
    inject(h, y); running(h, y);              // y holds the one slot
    relabel(h, x2, 'a');                      // new x enters, after the old claim
    tick(h, 2);
    const c2 = { pod: 'x', uid: 'x-2', at: h.now() };
    record(h, linger ? [c0, cy, c2] : [cy, c2]); // the bug: claimed while y runs, two s after x entered
    inject(h, x2);
    return h;
  };
  assert.notDeepEqual(of(story(false).run(), ['parallelism']), [], 'S1 no linger:');
  assert.notDeepEqual(of(story(true).run(), ['parallelism']), [], 'S1 linger   :');
});

test('targets-only: a replaced pod out of the selector well before its own claim fires, whatever the old pod\'s claim says', () => {
  const story = (mode: 'gap' | 'swap' | 'linger'): History => {
    const h = new History();
    h.put(job());
    const x1 = h.put(appPod('x', 'x-1'));
    const c0 = { pod: 'x', uid: 'x-1', at: h.now() };
    record(h, [c0]);
    h.put(x1, { type: 'DELETED' });
    if (mode === 'gap') record(h, []);       // a write without x between
    const x2 = h.put(appPod('x', 'x-2'));
    relabel(h, x2, 'z');                      // out
    tick(h, 2);
    const c2 = { pod: 'x', uid: 'x-2', at: h.now() };
    record(h, mode === 'linger' ? [c0, c2] : [c2]); // claimed 3 s after it left: not a target
    inject(h, x2);
    return h;
  };
  for (const m of ['gap', 'swap', 'linger'] as const) assert.notDeepEqual(of(story(m).run(), ['targets-only']), [], `S2 ${m}:`);
});

test('parallelism: a replaced pod that came back empty counts; the old pod\'s claim does not make it held before', () => {
  const story = (linger: boolean): History => {
    const h = new History();
    h.put(job());
    const w = h.put(appPod('w'));
    const x1 = h.put(appPod('x', 'x-1'));
    const c0 = { pod: 'x', uid: 'x-1', at: h.now() };
    record(h, [c0]);
    h.put(x1, { type: 'DELETED' });
    const x2 = h.put(appPod('x', 'x-2'));
    const cw = { pod: 'w', uid: 'uid-w', at: h.now() };
    record(h, linger ? [c0, cw] : [cw]);      // any record write: with the linger, firstHeld(x-2) is set now
    inject(h, w);                              // w done quickly
    (w.status as Obj).ephemeralContainerStatuses = [{ name: 'probe', state: { terminated: { exitCode: 0 } } }]; h.put(w, { subresource: 'status' });
    relabel(h, x2, 'z');
    relabel(h, x2, 'a');                       // back, empty
    const cx = { pod: 'x', uid: 'x-2', at: h.now() };
    record(h, linger ? [c0, cw, cx] : [cw, cx]);
    inject(h, x2); running(h, x2);
    const q = h.put(appPod('q'));
    const cq = { pod: 'q', uid: 'uid-q', at: h.now() };
    record(h, linger ? [c0, cw, cx, cq] : [cw, cx, cq]); // the bug: x-2 runs under a claim on the record
    inject(h, q);
    return h;
  };
  for (const skew of [1000, 6000]) {
    assert.notDeepEqual(of(story(false).run({ leaseSkewMs: skew }), ['parallelism']), [], `S3 skew ${skew} no linger:`);
    assert.notDeepEqual(of(story(true).run({ leaseSkewMs: skew }), ['parallelism']), [], `S3 skew ${skew} linger   :`);
  }
});

test('parallelism: a pod back within skewSeconds of X\'s claim counts when its own claim is on the record X\'s plan read (that plan LISTs again)', () => {
  const h = new History();
  h.put(job());
  const u = h.put(appPod('u'));
  const x = h.put(appPod('x'));
  const cu = { pod: 'u', uid: 'uid-u', at: h.now() };
  record(h, [cu]);
  inject(h, u); running(h, u);
  relabel(h, u, 'z');
  relabel(h, u, 'a');                           // back at t
  tick(h, 0);
  const cx = { pod: 'x', uid: 'uid-x', at: h.now() }; // 1 s after u came back; u's claim still on the record
  record(h, [cu, cx]);
  inject(h, x);
  for (const skew of [1000, 1500]) assert.notDeepEqual(of(h.run({ leaseSkewMs: skew }), ['parallelism']), [], `S5 skew ${skew}:`);
});

test('parallelism: X back in the selector before another pod\'s claim counts at its own injection, whichever lands first', () => {
  const story = (xFirst: boolean): History => {
    const h = new History();
    h.put(job());
    const x = h.put(appPod('x'));
    const y = h.put(appPod('y'));
    const cx = { pod: 'x', uid: 'uid-x', at: h.now() };
    record(h, [cx]);                               // X claimed (a target)
    relabel(h, x, 'z');
    relabel(h, x, 'a');                            // X back, its claim holds again
    tick(h, 2);
    const cy = { pod: 'y', uid: 'uid-y', at: h.now() };
    record(h, [cx, cy]);                           // the bug: Y claimed 3 s after X is back, X's claim holding
    if (xFirst) { inject(h, x); running(h, x); inject(h, y); }
    else { inject(h, y); running(h, y); inject(h, x); }  // X's injection (sent within leaseSeconds of its plan) lands last
    return h;
  };
  assert.notDeepEqual(of(story(true).run(), ['parallelism']), [], 'S6 X injected first:');
  assert.notDeepEqual(of(story(false).run(), ['parallelism']), [], 'S6 Y injected first:');
});
