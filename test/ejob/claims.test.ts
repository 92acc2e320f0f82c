// The claim rules (ejob/claims.ts) and the Lease record (ejob/lease-record.ts): pure tables,
// a property over random pods, claims and clocks, and bad Lease contents.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { EphemeralJobSpec } from '../../functions/api/ephemeraljob.ts';
import type { Pod } from '../../functions/api/pod.ts';
import { decideClaims, MAX_RECORD_CLAIMS, MAX_RECORD_PASSED, standingLagMs, type ClaimInput } from '../../functions/ejob/claims.ts';
import { CLAIMS_ANNOTATION, KEY_ANNOTATION, LEASE_LABEL, readLeaseView, type LeaseRecord, type LeaseView } from '../../functions/ejob/lease-record.ts';
import { selectTargets } from '../../functions/ejob/targets.ts';

const UID = 'job-uid';
const NOW = new Date('2026-01-01T01:00:00Z');
const cfg = { namespace: 'ephemera-system', name: 'ejob-x', key: 'EphemeralJob/ns/x', holder: 'me', leaseSeconds: 15, skewSeconds: 5 };
const spec = (o: Partial<EphemeralJobSpec> = {}): EphemeralJobSpec => ({ selector: { matchLabels: { app: 'x' } }, template: { ephemeralContainers: [{ name: 'ec', image: 'busybox' }] }, parallelism: 1, ...o });

type Ec = 'none' | 'nostatus' | 'waiting' | 'running' | 'ok' | 'err' | 'badimage';
function pod(i: number, ...ecs: Ec[]): Pod {
  const owned = ecs.filter((e) => e !== 'none');
  const p: Pod = { metadata: { name: `p${i}`, namespace: 'ns', uid: `u${i}`, labels: { app: 'x' }, creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString() }, spec: { containers: [{ name: 'main' }] }, status: { phase: 'Running' } };
  if (owned.length === 0) return p;
  p.spec.ephemeralContainers = owned.map((_, j) => ({ name: `ec${j}`, env: [{ name: 'KRUISE_EJOB_ID', value: UID }] }));
  const state = (e: Ec): Record<string, unknown> | undefined =>
    e === 'waiting' ? { waiting: { reason: 'ContainerCreating' } } : e === 'running' ? { running: {} } : e === 'ok' ? { terminated: { exitCode: 0 } } : e === 'err' ? { terminated: { exitCode: 1 } } : e === 'badimage' ? { waiting: { reason: 'InvalidImageName' } } : undefined;
  p.status = { phase: 'Running', ephemeralContainerStatuses: owned.flatMap((e, j) => (state(e) ? [{ name: `ec${j}`, state: state(e) }] : [])) as never };
  return p;
}
/** A pending pod holding another job's container named like the template's. */
const theirs = (i: number): Pod => ({ ...pod(i), spec: { containers: [{ name: 'main' }], ephemeralContainers: [{ name: 'ec', env: [{ name: 'KRUISE_EJOB_ID', value: 'another-job' }] }] } });
const ours = (record: Partial<LeaseRecord>): LeaseView => ({ kind: 'ours', resourceVersion: '7', record: { v: 1, job: UID, total: 0, claims: [], ...record } });
const at = (secondsAgo: number): string => new Date(NOW.getTime() - secondsAgo * 1000).toISOString();

function decide(pods: Pod[], lease: LeaseView, s = spec(), serverNow = NOW): ReturnType<typeof decideClaims> {
  const input: ClaimInput = { spec: s, jobUid: UID, pods, targets: selectTargets(s, UID, pods).targets, lease, serverNow, cfg, mayClaim: true };
  return decideClaims(input);
}
const names = (d: ReturnType<typeof decideClaims>): string[] => d.inject.map((p) => p.metadata.name);
const written = (d: ReturnType<typeof decideClaims>): LeaseRecord | undefined => {
  const text = (d.write?.body as { metadata?: { annotations?: Record<string, string> } } | undefined)?.metadata?.annotations?.[CLAIMS_ANNOTATION];
  return text === undefined ? undefined : (JSON.parse(text) as LeaseRecord);
};

describe('claims: slots and replicas', () => {
  const cases: { name: string; pods: Pod[]; lease: LeaseView; spec?: Partial<EphemeralJobSpec>; inject: string[] }[] = [
    { name: 'fresh job: the oldest pod is claimed', pods: [pod(1), pod(0)], lease: { kind: 'absent' }, inject: ['p0'] },
    { name: 'a pod with a running job container holds the slot', pods: [pod(0, 'running'), pod(1)], lease: ours({ total: 1 }), inject: [] },
    { name: 'injected with no status yet holds the slot', pods: [pod(0, 'nostatus'), pod(1)], lease: ours({ total: 1 }), inject: [] },
    { name: 'a failed pod (bad image) with another container still waiting holds the slot', pods: [pod(0, 'badimage', 'waiting'), pod(1)], lease: ours({ total: 1 }), inject: [] },
    { name: 'a failed pod whose containers all ended frees the slot', pods: [pod(0, 'badimage', 'err'), pod(1)], lease: ours({ total: 1 }), inject: ['p1'] },
    { name: 'an unexpired claim not yet injected holds a slot, and is not claimed again', pods: [pod(0), pod(1)], lease: ours({ total: 1, claims: [{ pod: 'p0', uid: 'u0', at: at(3) }] }), spec: { parallelism: 2 }, inject: ['p1'] },
    { name: 'a claim never injected is dropped once its retention (window + skew) ends: the pod can be claimed again', pods: [pod(0)], lease: ours({ total: 1, claims: [{ pod: 'p0', uid: 'u0', at: at(26) }] }), inject: ['p0'] },
    { name: 'such a pod is passed over: the other pending pods are claimed before it, though it is older (review62 F5)', pods: [pod(0), pod(1)], lease: ours({ total: 1, claims: [{ pod: 'p0', uid: 'u0', at: at(26) }] }), inject: ['p1'] },
    { name: 'a pod the record passed over is claimed after the others, the longest passed first', pods: [pod(0), pod(1), pod(2), pod(3)], lease: ours({ total: 3, passed: [{ uid: 'u1', at: at(100) }, { uid: 'u0', at: at(50) }] }), spec: { parallelism: 3 }, inject: ['p2', 'p3', 'p1'] },
    { name: 'a pod passed over and since replaced (another uid) is not passed over', pods: [pod(0), pod(1)], lease: ours({ total: 1, passed: [{ uid: 'old', at: at(50) }] }), inject: ['p0'] },
    { name: 'a claim never injected (and renewed once already) still holds its slot after its window, for the retention\'s extra skew', pods: [pod(0), pod(1)], lease: ours({ total: 1, claims: [{ pod: 'p0', uid: 'u0', at: at(21), renewed: true }] }), inject: [] },
    { name: 'a claim whose pod shows the job\'s containers ended holds no slot, and its pod is not claimed again even if the pods lag', pods: [pod(0, 'ok'), pod(1)], lease: ours({ total: 1, claims: [{ pod: 'p0', uid: 'u0', at: at(3) }] }), inject: ['p1'] },
    { name: 'a claim whose pod the (earlier) LIST still shows pending holds a slot', pods: [pod(0), pod(1)], lease: ours({ total: 1, claims: [{ pod: 'p0', uid: 'u0', at: at(3) }] }), inject: [] },
    { name: 'a claim whose pod shows a running container of the job is one slot, not two', pods: [pod(0, 'running'), pod(1), pod(2)], lease: ours({ total: 1, claims: [{ pod: 'p0', uid: 'u0', at: at(3) }] }), spec: { parallelism: 2 }, inject: ['p1'] },
    { name: 'a claim whose pod the LIST does not show holds its slot until its retention ends: deleted or relabelled out, the LIST cannot tell, and a relabelled pod may come back before its injection lands (chaos seed 14048)', pods: [pod(1)], lease: ours({ total: 1, claims: [{ pod: 'p0', uid: 'u0', at: at(3) }] }), inject: [] },
    { name: 'once its retention has ended, a claim whose pod is not listed holds no slot', pods: [pod(1)], lease: ours({ total: 1, claims: [{ pod: 'p0', uid: 'u0', at: at(26) }] }), inject: ['p1'] },
    { name: 'a claim whose pod now holds another job\'s container of the template\'s name holds no slot (no injection of ours can land)', pods: [theirs(0), pod(1)], lease: ours({ total: 1, claims: [{ pod: 'p0', uid: 'u0', at: at(1) }] }), inject: ['p1'] },
    { name: 'such a claim gives its replica back at once: replicas 1, the next pod is claimed (review: was PodsGone)', pods: [theirs(0), pod(1)], lease: ours({ total: 1, claims: [{ pod: 'p0', uid: 'u0', at: at(1) }] }), spec: { replicas: 1 }, inject: ['p1'] },
    { name: 'a claim on a pod the containers cannot go into holds no slot', pods: [{ ...pod(0), spec: { containers: [{ name: 'ec' }] } }, pod(1)], lease: ours({ total: 1, claims: [{ pod: 'p0', uid: 'u0', at: at(1) }] }), inject: ['p1'] },
    { name: 'a claim whose pod was replaced (other uid) is released', pods: [pod(0), pod(1)], lease: ours({ total: 1, claims: [{ pod: 'p0', uid: 'old', at: at(1) }] }), inject: ['p0'] },
    { name: 'replicas counts every pod ever claimed, not only the ones still around', pods: [pod(2), pod(3)], lease: ours({ total: 2 }), spec: { replicas: 2, parallelism: 5 }, inject: [] },
    { name: 'replicas: what the pods show counts even when the record lags', pods: [pod(0, 'ok'), pod(1, 'ok'), pod(2)], lease: ours({ total: 0 }), spec: { replicas: 2, parallelism: 5 }, inject: [] },
    { name: 'replicas: a claim that ends its retention on a pod that ended without the injection no longer counts', pods: [{ ...pod(0), status: { phase: 'Succeeded' } }, pod(1, 'ok'), pod(2)], lease: ours({ total: 2, claims: [{ pod: 'p0', uid: 'u0', at: at(26) }] }), spec: { replicas: 2, parallelism: 2 }, inject: ['p2'] },
    { name: 'replicas: a claim that ends its retention on a pod that is gone still counts (the pod may have got the containers before it went)', pods: [pod(1, 'ok'), pod(2)], lease: ours({ total: 2, claims: [{ pod: 'p0', uid: 'u0', at: at(26) }] }), spec: { replicas: 2, parallelism: 2 }, inject: [] },
  ];
  for (const c of cases) {
    test(c.name, () => assert.deepEqual(names(decide(c.pods, c.lease, spec(c.spec))), c.inject));
  }

  test('a claimed pod the LIST does not show, as a GET after it found it: gone, replaced, ended or injected holds no slot; relabelled out and not injected holds it', () => {
    const lease = ours({ total: 1, claims: [{ pod: 'p0', uid: 'u0', at: at(3) }] });
    const s = spec();
    const withGet = (found: Pod | null): string[] => names(decideClaims({ spec: s, jobUid: UID, pods: [pod(1)], targets: selectTargets(s, UID, [pod(1)]).targets, lease, serverNow: NOW, cfg, mayClaim: true, unlisted: new Map([['p0', found]]) }));
    const elsewhere = { ...pod(0), metadata: { ...pod(0).metadata, labels: { app: 'elsewhere' } } };
    assert.deepEqual(withGet(null), ['p1'], 'gone: for good');
    assert.deepEqual(withGet({ ...elsewhere, metadata: { ...elsewhere.metadata, uid: 'other' } }), ['p1'], 'replaced: the injection names the claimed uid');
    assert.deepEqual(withGet({ ...elsewhere, status: { phase: 'Succeeded' } }), ['p1'], 'ended: no container starts in it');
    assert.deepEqual(withGet(pod(0, 'ok')), ['p1'], 'injected, its container ended: no slot');
    assert.deepEqual(withGet({ ...pod(0, 'running'), metadata: { ...pod(0).metadata, labels: { app: 'elsewhere' } } }), ['p1'], 'injected and running, still out of the selector: no target (README, "Injection")');
    assert.deepEqual(withGet(pod(0, 'running')), [], 'injected and running, back in the selector since the LIST (the GET is newer): it holds its slot (review: a second pod was claimed beside it)');
    assert.deepEqual(withGet(elsewhere), [], 'relabelled out before its injection: the injection may still land once it is back');
  });

  test('instances with different windows at once (a rollout changing EPHEMERA_LEASE_SECONDS): a claim is kept for its claimer\'s window when that is longer (review70)', () => {
    // A (lease 30 s, skew 5) claims p0 at T0 and may still send its injection until T0+30 s;
    // B (15 s, 5) looks at T0+26 s. By B's own retention (25 s) the claim had ended, and B
    // claimed p1: two pods in flight at parallelism 1.
    const long = { ...cfg, holder: 'A', leaseSeconds: 30 };
    const a = decideClaims({ spec: spec(), jobUid: UID, pods: [pod(0), pod(1)], targets: selectTargets(spec(), UID, [pod(0), pod(1)]).targets, lease: { kind: 'absent' }, serverNow: new Date(NOW.getTime() - 26_000), cfg: long, mayClaim: true });
    const record = written(a)!;
    assert.deepEqual(record.claims.map((c) => [c.pod, c.w]), [['p0', 35]], 'the claim carries its claimer\'s window');
    const b = decide([pod(0), pod(1)], ours(record));
    assert.deepEqual([names(b), b.renewed.map((p) => p.metadata.name)], [['p0'], ['p0']], 'B keeps A\'s claim (35 s + 5 s, not its own 25 s): it may renew it (the same pod), never claim p1');
    assert.deepEqual(names(decide([pod(0), pod(1)], ours(record), spec(), new Date(NOW.getTime() + 15_000))), ['p1'], 'after A\'s window and the skew (T0+41 s) the never-injected claim is passed over, p1 claimed');
    // A shorter window on the claim than the reader's own changes nothing: the reader's counts.
    assert.ok(!names(decide([pod(0), pod(1)], ours({ total: 1, claims: [{ pod: 'p0', uid: 'u0', at: at(22), w: 5 }] }))).includes('p1'), 'a claim is never kept less than the reader\'s own retention: p1 is not claimed');
    // A window no setting can give (a record edited by hand) is held to the longest one can (300 + 60 s).
    assert.deepEqual(names(decide([pod(0), pod(1)], ours({ total: 1, claims: [{ pod: 'p0', uid: 'u0', at: at(366), w: 1e9 }] }))), ['p1'], 'w = 1e9 holds the slot 360 s + skew, not 31 years');
    // Renewing keeps the longer window: the first claimer may still inject under the claim.
    const renewed = written(decide([pod(0), pod(1)], ours({ total: 1, keptSince: at(100), claims: [{ pod: 'p0', uid: 'u0', at: at(6), w: 35 }] })));
    assert.deepEqual(renewed?.claims.map((c) => [c.pod, c.renewed, c.w]), [['p0', true, 35]]);
  });

  test('instances with different skews: a LIST read before the Lease stands only within the smallest skew of the record\'s writers since keptSince (review76)', () => {
    // D (skew 2) drops a claim 2 s past its window; R (skew 10) trusted a LIST up to 10 s
    // older than the Lease, which could predate an injection whose claim D had dropped: R saw
    // that pod pending and claimed another, one more than parallelism.
    const short = { ...cfg, holder: 'D', skewSeconds: 2 };
    const byD = decideClaims({ spec: spec(), jobUid: UID, pods: [pod(0)], targets: selectTargets(spec(), UID, [pod(0)]).targets, lease: ours({ keptSince: at(100), s: 5 }), serverNow: NOW, cfg: short, mayClaim: true });
    assert.equal(written(byD)?.s, 2, 'a write lowers it to its own skew');
    assert.equal(standingLagMs(ours(written(byD)!), { skewSeconds: 10 }), 2000, 'R trusts a LIST at most 2 s older than the Lease, not 10 s');
    assert.equal(written(decide([pod(0)], ours({ keptSince: at(100), s: 2 })))?.s, 2, 'a larger skew never raises it while keptSince holds');
    assert.equal(written(decide([pod(0)], ours({})))?.s, 5, 'a keptSince set anew starts it anew');
    assert.equal(written(decide([pod(0)], ours({ keptSince: at(100) })))?.s, 5, 'a record from before it: the writer\'s own');
    assert.equal(standingLagMs(ours({ keptSince: at(100) }), { skewSeconds: 10 }), 10_000, 'absent: the reader\'s own skew, as before');
    assert.equal(standingLagMs({ kind: 'absent' }, { skewSeconds: 3 }), 3000);
  });

  test('claims are written first, with the server time, the new total, the claims within their retention kept, and keptSince carried', () => {
    const d = decide([pod(0), pod(1), pod(2), pod(3, 'ok')], ours({ total: 2, keptSince: at(100), claims: [{ pod: 'p0', uid: 'u0', at: at(3) }, { pod: 'p3', uid: 'u3', at: at(24) }, { pod: 'p4', uid: 'u4', at: at(26) }] }), spec({ parallelism: 3 }));
    assert.equal(d.write?.verb, 'update');
    assert.equal((d.write?.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion, '7', 'fenced by the version read');
    assert.deepEqual(written(d), { v: 1, job: UID, total: 4, keptSince: at(100), s: 5, claims: [{ pod: 'p0', uid: 'u0', at: at(3) }, { pod: 'p3', uid: 'u3', at: at(24) }, { pod: 'p1', uid: 'u1', at: NOW.toISOString(), w: 20 }, { pod: 'p2', uid: 'u2', at: NOW.toISOString(), w: 20 }] });
    // A record written where no Lease was has kept every claim from the start; one written by an older instance, from its first write on.
    assert.equal(written(decide([pod(0)], { kind: 'absent' }))?.keptSince, '1970-01-01T00:00:00.000Z');
    assert.equal(written(decide([pod(0)], ours({})))?.keptSince, NOW.toISOString());
  });

  test('every Lease write carries the sweep label and the job key, and keeps its preconditions (create: none; update: version and uid read)', () => {
    type Meta = { labels?: Record<string, string>; annotations?: Record<string, string>; resourceVersion?: string; uid?: string };
    const meta = (view: LeaseView): Meta => (decide([pod(0)], view).write?.body as { metadata: Meta }).metadata;
    // A qualified label key: DNS-subdomain prefix, name of at most 63 characters.
    assert.match(LEASE_LABEL, /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/);
    const created = meta({ kind: 'absent' });
    assert.deepEqual(created.labels, { [LEASE_LABEL]: 'true' });
    assert.equal(created.annotations?.[KEY_ANNOTATION], 'EphemeralJob/ns/x');
    assert.equal(created.resourceVersion, undefined);
    assert.equal(created.uid, undefined);
    const updated = meta({ kind: 'ours', resourceVersion: '7', uid: 'lease-uid', record: { v: 1, job: UID, total: 0, claims: [] } });
    assert.deepEqual(updated.labels, { [LEASE_LABEL]: 'true' });
    assert.equal(updated.annotations?.[KEY_ANNOTATION], 'EphemeralJob/ns/x');
    assert.deepEqual([updated.resourceVersion, updated.uid], ['7', 'lease-uid']);
  });

  test('the write records the pods passed over while they are pending targets, with when their claim ended; not once injected, gone or replaced', () => {
    const d = decide([pod(0), pod(1), pod(2), pod(3, 'running'), pod(5)], ours({ total: 2, claims: [{ pod: 'p0', uid: 'u0', at: at(30) }], passed: [{ uid: 'u1', at: at(100) }, { uid: 'u3', at: at(90) }, { uid: 'u4', at: at(80) }, { uid: 'other', at: at(70) }] }), spec({ parallelism: 2 }));
    assert.deepEqual(names(d), ['p2']);
    assert.deepEqual(written(d)?.passed, [{ uid: 'u1', at: at(100) }, { uid: 'u0', at: at(5) }]);
    assert.ok(d.notes.some((n) => n.includes('claimed after the other pods') && n.includes('p1, p0')), d.notes.join('\n'));
  });

  test(`at most ${MAX_RECORD_PASSED} pods passed over are recorded, the most recent`, () => {
    const pods = Array.from({ length: MAX_RECORD_PASSED + 5 }, (_, i) => pod(i));
    const passed = pods.map((p, i) => ({ uid: p.metadata.uid!, at: at(1000 - i) }));
    const d = decide([...pods, pod(99)], ours({ total: 0, passed }));
    assert.deepEqual(names(d), ['p0'], 'the five passed over longest ago are forgotten: p0, the oldest pod, comes first again');
    assert.deepEqual(written(d)?.passed, passed.slice(5));
  });

  test('sixty pods that refuse every injection, older than one that would take it, at parallelism 1: each is claimed once, then the healthy one (review: with 50 remembered it was never claimed)', () => {
    const pods = Array.from({ length: 61 }, (_, i) => pod(i));
    let lease: LeaseView = { kind: 'absent' };
    let now = NOW.getTime();
    const claimed: string[] = [];
    // A look every 10 s; no injection ever shows, so each claim lapses at its retention's end.
    for (let step = 0; step < 400 && !claimed.includes('p60'); step++) {
      const d = decide(pods, lease, spec(), new Date(now));
      for (const p of d.inject) if (!d.renewed.includes(p)) claimed.push(p.metadata.name);
      const record = written(d);
      if (record) lease = ours(record);
      now += 10_000;
    }
    assert.deepEqual(claimed, pods.map((p) => p.metadata.name), 'oldest first, each once, then the healthy one');
  });

  test('nothing to claim: no Lease write at all (releases wait for the next claim)', () => {
    const d = decide([pod(0, 'ok'), pod(1, 'running')], ours({ total: 2, claims: [{ pod: 'p1', uid: 'u1', at: at(1) }] }));
    assert.equal(d.write, undefined);
  });

  test('a claim not yet injected asks for a look when it may be renewed, and once renewed, when its retention ends (its slot frees then)', () => {
    assert.equal(decide([pod(0)], ours({ total: 1, claims: [{ pod: 'p0', uid: 'u0', at: at(2) }] })).requeueAfterSeconds, 3, 'renewable 5 s after the claim');
    const d = decide([pod(0)], ours({ total: 1, claims: [{ pod: 'p0', uid: 'u0', at: at(12), renewed: true }] }));
    assert.equal(d.requeueAfterSeconds, 13);
    assert.equal(decide([pod(0, 'running')], ours({ total: 1, claims: [{ pod: 'p0', uid: 'u0', at: at(12) }] })).requeueAfterSeconds, undefined, 'injected: the pod holds the slot, its end is an event');
  });

  test('a claim whose injection has not shown a third of a lease (5 s) after it is made again: same pod and slot, a new `at`, marked renewed, replicas unchanged', () => {
    const d = decide([pod(0), pod(1)], ours({ total: 1, keptSince: at(100), claims: [{ pod: 'p0', uid: 'u0', at: at(6) }] }), spec({ replicas: 1 }));
    assert.deepEqual([names(d), d.renewed.map((p) => p.metadata.name)], [['p0'], ['p0']]);
    assert.deepEqual(written(d), { v: 1, job: UID, total: 1, keptSince: at(100), s: 5, claims: [{ pod: 'p0', uid: 'u0', at: NOW.toISOString(), renewed: true, w: 20 }] });
    assert.equal(d.write?.verb, 'update', 'fenced like any claim');
    // With a free slot, a new claim and a renewal in one write.
    const both = decide([pod(0), pod(1)], ours({ total: 1, claims: [{ pod: 'p0', uid: 'u0', at: at(6) }] }), spec({ parallelism: 2 }));
    assert.deepEqual([names(both), both.renewed.map((p) => p.metadata.name), written(both)?.total], [['p1', 'p0'], ['p0'], 2]);
  });

  test('a claim is renewed only once, only while the slots held are within parallelism, only while claims may be made, and only for a pod still pending', () => {
    const stale = { pod: 'p1', uid: 'u1', at: at(6) };
    assert.deepEqual(names(decide([pod(0), pod(1)], ours({ total: 1, claims: [{ ...stale, renewed: true }] }))), [], 'renewed before: it holds the slot until its retention ends');
    assert.deepEqual(names(decide([pod(0, 'running'), pod(1)], ours({ total: 2, claims: [stale] }))), [], 'parallelism lowered to below the slots held: claims in flight are left to end');
    const paused = decideClaims({ spec: spec(), jobUid: UID, pods: [pod(1)], targets: selectTargets(spec(), UID, [pod(1)]).targets, lease: ours({ total: 1, claims: [stale] }), serverNow: NOW, cfg, mayClaim: false });
    assert.deepEqual([names(paused), paused.write], [[], undefined], 'paused or past the deadline');
    assert.deepEqual(names(decide([pod(0), { ...pod(1), status: { phase: 'Succeeded' } }], ours({ total: 1, claims: [stale] }))), ['p0'], 'an ended pod is not a target: its claim holds nothing, p0 is claimed');
  });

  test('a record holding the same claim twice (edited by hand: no planner writes one) renews the pod once, with one injection (review88 F4)', () => {
    const claim = { pod: 'p0', uid: 'u0', at: at(6) };
    const d = decide([pod(0)], ours({ total: 1, claims: [claim, { ...claim }] }));
    assert.deepEqual([names(d), d.renewed.map((p) => p.metadata.name)], [['p0'], ['p0']]);
  });
});

describe('the Lease record: absent, ours, or unreadable (bad input)', () => {
  const lease = (annotations: Record<string, string> | undefined, renewTime = at(2)): unknown => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'x', namespace: 'ephemera-system', resourceVersion: '9', ...(annotations ? { annotations } : {}) }, spec: { renewTime } });
  test('absent, ours, and each kind of unreadable are told apart, never thrown', () => {
    assert.equal(readLeaseView(null, UID).kind, 'absent');
    assert.equal(readLeaseView(lease({ [CLAIMS_ANNOTATION]: JSON.stringify({ v: 1, job: UID, total: 0, claims: [] }) }), UID).kind, 'ours');
    const why = (raw: unknown): string => {
      const v = readLeaseView(raw, UID);
      return v.kind === 'unreadable' ? v.why : v.kind;
    };
    assert.match(why(lease(undefined)), /no ephemera.io\/ejob-claims annotation/);
    assert.match(why(lease({ [CLAIMS_ANNOTATION]: '{oops' })), /not JSON/);
    assert.match(why(lease({ [CLAIMS_ANNOTATION]: JSON.stringify({ v: 2 }) })), /does not parse/);
    assert.match(why(lease({ [CLAIMS_ANNOTATION]: JSON.stringify({ v: 1, job: UID, total: 0, claims: [{ pod: 'p', at: 'yesterday' }] }) })), /does not parse/);
    assert.match(why(lease({ [CLAIMS_ANNOTATION]: JSON.stringify({ v: 1, job: 'other', total: 0, claims: [] }) })), /another job/);
    assert.match(why({ metadata: 'nope' }), /not a Lease/);
    // Not a Lease our schema reads, yet a write that repairs it is still fenced by its version and uid.
    const odd = readLeaseView({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'x', resourceVersion: '12', uid: 'lease-uid' }, spec: { leaseDurationSeconds: 'long' } }, UID);
    assert.deepEqual(odd.kind === 'unreadable' ? [odd.why, odd.resourceVersion, odd.uid] : odd.kind, ['not a Lease', '12', 'lease-uid']);
  });

  test('an unreadable, recently written record may hide live claims: no claims until its window passes, counted from its renewTime by every reader, and no write of its own', () => {
    const view = readLeaseView(lease({ [CLAIMS_ANNOTATION]: 'garbage' }, at(5)), UID);
    const d = decide([pod(0), pod(1)], view);
    assert.deepEqual(names(d), []);
    assert.equal(d.write, undefined, 'nothing decided, nothing written: the hold ends at renewTime + window for everyone');
    assert.equal(d.requeueAfterSeconds, 15);
    // A later reader of the same Lease holds until the same moment.
    const later = decide([pod(0), pod(1)], view, spec(), new Date(NOW.getTime() + 10_000));
    assert.deepEqual(names(later), []);
    assert.equal(later.requeueAfterSeconds, 5);
    // Once the window has passed, the claim's write repairs the record, at the version read.
    const after = decide([pod(0), pod(1)], view, spec(), new Date(NOW.getTime() + 16_000));
    assert.deepEqual(names(after), ['p0']);
    assert.equal(after.write?.verb, 'update');
    assert.equal((after.write?.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion, '9');
    assert.deepEqual(written(after), { v: 1, job: UID, total: 1, keptSince: new Date(NOW.getTime() + 16_000).toISOString(), s: 5, claims: [{ pod: 'p0', uid: 'u0', at: new Date(NOW.getTime() + 16_000).toISOString(), w: 20 }] });
    assert.match(after.write?.reason ?? '', /repair the Lease record/);
  });

  test('an unreadable record that says nothing of when it was written: the hold it causes is written down when it first stops a claim, and only then', () => {
    const undated = readLeaseView(lease({ [CLAIMS_ANNOTATION]: 'garbage' }, ''), UID);
    assert.ok(undated.kind === 'unreadable' && undated.renewedAt === undefined);
    assert.equal(decide([pod(0, 'running'), pod(1)], undated).write, undefined, 'the slot is full anyway: the hold stops nothing');
    const d = decide([pod(0), pod(1)], undated);
    assert.deepEqual(names(d), []);
    assert.deepEqual(written(d), { v: 1, job: UID, total: 0, claims: [], keptSince: NOW.toISOString(), s: 5, holdUntil: new Date(NOW.getTime() + 20_000).toISOString() });
    // The next reconcile reads the repaired record and waits for holdUntil too.
    const repaired = ours(written(d) ?? {});
    const soon = decide([pod(0), pod(1)], repaired, spec(), new Date(NOW.getTime() + 5_000));
    assert.deepEqual([names(soon), soon.write], [[], undefined]);
    assert.deepEqual(names(decide([pod(0), pod(1)], repaired, spec(), new Date(NOW.getTime() + 21_000))), ['p0']);
  });

  test('an unreadable record whose renewTime is ahead of the server holds one window from now, not until its renewTime (time review)', () => {
    const ahead = readLeaseView(lease({ [CLAIMS_ANNOTATION]: 'garbage' }, at(-86_400)), UID);
    const d = decide([pod(0), pod(1)], ahead);
    assert.deepEqual(names(d), []);
    assert.deepEqual(written(d), { v: 1, job: UID, total: 0, claims: [], keptSince: NOW.toISOString(), s: 5, holdUntil: new Date(NOW.getTime() + 20_000).toISOString() }, 'a window (15 + 5 s) from now, written down so it does not move with each reader');
    assert.deepEqual(names(decide([pod(0), pod(1)], ours(written(d) ?? {}), spec(), new Date(NOW.getTime() + 21_000))), ['p0']);
    // A second ahead (the reader's server time trails a fresh write's): held from that renewTime, as it says.
    const fresh = decide([pod(0), pod(1)], readLeaseView(lease({ [CLAIMS_ANNOTATION]: 'garbage' }, at(-1)), UID));
    assert.deepEqual([names(fresh), fresh.write, fresh.requeueAfterSeconds], [[], undefined, 21]);
  });

  test('an unreadable record is repaired by the verdict\'s seal too (holdUntil kept while it holds)', () => {
    const view = readLeaseView(lease({ [CLAIMS_ANNOTATION]: 'garbage' }, at(5)), UID);
    const input: ClaimInput = { spec: spec(), jobUid: UID, pods: [pod(0, 'ok')], targets: selectTargets(spec(), UID, [pod(0, 'ok')]).targets, lease: view, serverNow: NOW, cfg, mayClaim: false, seal: true };
    const d = decideClaims(input);
    assert.deepEqual(written(d), { v: 1, job: UID, total: 1, claims: [], keptSince: NOW.toISOString(), s: 5, holdUntil: new Date(NOW.getTime() + 15_000).toISOString(), finished: true });
  });

  test('an unreadable record older than a claim window, or one of an earlier job of the same name, is rebuilt from the pods at once', () => {
    assert.deepEqual(names(decide([pod(0, 'ok'), pod(1)], readLeaseView(lease({ [CLAIMS_ANNOTATION]: 'x' }, at(60)), UID))), ['p1']);
    const d = decide([pod(0, 'ok'), pod(1)], readLeaseView(lease({ [CLAIMS_ANNOTATION]: JSON.stringify({ v: 1, job: 'earlier', total: 9, claims: [{ pod: 'p1', at: at(1) }] }) }), UID));
    assert.deepEqual(names(d), ['p1']);
    assert.equal(written(d)?.total, 2, 'rebuilt: one pod already injected, plus this claim');
  });
});

describe('claims: property over random pods, Lease records and clocks', () => {
  const ec = fc.constantFrom<Ec>('none', 'nostatus', 'waiting', 'running', 'ok', 'err', 'badimage');
  test('never more than parallelism pods holding a slot after the claims; never a claimed or injected pod; never past replicas', () => {
    fc.assert(fc.property(
      fc.array(fc.array(ec, { minLength: 1, maxLength: 2 }), { minLength: 0, maxLength: 8 }),
      fc.array(fc.record({ pod: fc.integer({ min: 0, max: 9 }), ago: fc.integer({ min: 0, max: 40 }) }), { maxLength: 4 }),
      fc.record({ parallelism: fc.integer({ min: 0, max: 4 }), replicas: fc.option(fc.integer({ min: 0, max: 8 }), { nil: undefined }), total: fc.integer({ min: 0, max: 8 }) }),
      fc.array(fc.record({ pod: fc.integer({ min: 0, max: 9 }), ago: fc.integer({ min: 0, max: 400 }) }), { maxLength: 4 }),
      (podSpecs, claims, o, passed) => {
        const pods = podSpecs.map((ecs, i) => pod(i, ...ecs));
        const s = spec({ parallelism: o.parallelism, ...(o.replicas !== undefined ? { replicas: o.replicas } : {}) });
        const record = { total: o.total, claims: claims.map((c) => ({ pod: `p${c.pod}`, uid: `u${c.pod}`, at: at(c.ago) })), passed: passed.map((c) => ({ uid: `u${c.pod}`, at: at(c.ago) })) };
        const d = decide(pods, ours(record), s);
        const injected = new Set(pods.filter((p) => (p.spec.ephemeralContainers ?? []).length > 0).map((p) => p.metadata.name));
        const pending = new Set(record.claims.filter((c) => !injected.has(c.pod) && c.at > at(20)).map((c) => c.pod));
        const renewed = new Set(d.renewed.map((p) => p.metadata.name));
        const fresh = d.inject.filter((p) => !renewed.has(p.metadata.name));
        for (const p of fresh) {
          assert.ok(!injected.has(p.metadata.name), `${p.metadata.name} already injected`);
          assert.ok(!pending.has(p.metadata.name), `${p.metadata.name} already claimed`);
        }
        // A renewal is the same slot: a claim kept (within its retention), 5 s old or more, not shown injected.
        const renewable = new Set(record.claims.filter((c) => !injected.has(c.pod) && c.at > at(25) && c.at <= at(5)).map((c) => c.pod));
        for (const name of renewed) assert.ok(renewable.has(name), `${name} renewed without a stale claim`);
        if (renewed.size > 0) assert.ok(d.slotsUsed <= o.parallelism, `renewed with ${d.slotsUsed} slots held > ${o.parallelism}`);
        if (fresh.length > 0) assert.ok(d.slotsUsed + fresh.length <= o.parallelism, `${d.slotsUsed} + ${fresh.length} > ${o.parallelism}`);
        if (o.replicas !== undefined && fresh.length > 0) assert.ok((written(d)?.total ?? 0) <= o.replicas);
        // Passing over orders the claims, never adds one: as many as without the record's passed pods.
        const plain = decide(pods, ours({ ...record, passed: [] }), s);
        assert.equal(fresh.length, plain.inject.length - plain.renewed.length, 'the same number of claims');
      },
    ), { numRuns: 500, seed: 7 });
  });
});

describe('claims: the record is bounded', () => {
  const ended = (n: number): { pods: Pod[]; claims: LeaseRecord['claims'] } => ({
    pods: Array.from({ length: n }, (_, i) => pod(i, 'ok')),
    claims: Array.from({ length: n }, (_, i) => ({ pod: `p${i}`, uid: `u${i}`, at: at(1) })),
  });
  test(`at ${MAX_RECORD_CLAIMS} claims within their retention no new one is made until one leaves; one under, one is`, () => {
    for (const [held, expected] of [[MAX_RECORD_CLAIMS, 0], [MAX_RECORD_CLAIMS - 1, 1]] as const) {
      const { pods, claims } = ended(held);
      const waiting = [pod(held + 1), pod(held + 2)];
      const d = decide([...pods, ...waiting], ours({ total: held, claims, keptSince: '1970-01-01T00:00:00.000Z' }), spec({ parallelism: 10 }));
      assert.equal(d.inject.length, expected, `${held} claims held`);
      if (expected === 0) {
        assert.equal(d.write, undefined, 'no write: nothing was decided');
        assert.ok(d.notes.some((n) => n.includes(`at most ${MAX_RECORD_CLAIMS}`)), d.notes.join('; '));
        assert.ok((d.requeueAfterSeconds ?? Infinity) <= (15 + 2 * 5), 'looked at again when the oldest claim may leave');
      } else {
        assert.equal(written(d)?.claims.length, MAX_RECORD_CLAIMS);
      }
    }
  });
});

describe('claims: which waiting reasons free a slot', () => {
  const waitingFor = (reason: string): Pod => {
    const p = pod(0, 'waiting');
    p.status = { phase: 'Running', ephemeralContainerStatuses: [{ name: 'ec0', state: { waiting: { reason } } }] as never };
    return p;
  };
  // DESIGN's list: these never resolve by waiting, so the container is failed and its slot
  // free; the kubelet keeps retrying the others, which hold their slot (review: only
  // InvalidImageName was tested, and dropping any other went unnoticed).
  for (const reason of ['RunContainerError', 'CreateContainerError', 'InvalidImageName', 'ErrImageNeverPull']) {
    test(`${reason}: failed, its slot free: the next pod is claimed at parallelism 1`, () => {
      assert.deepEqual(names(decide([waitingFor(reason), pod(1)], ours({ total: 1, claims: [] }))), ['p1']);
    });
  }
  for (const reason of ['ImagePullBackOff', 'ErrImagePull', 'CreateContainerConfigError', 'ContainerCreating']) {
    test(`${reason}: still waiting, its slot held: nothing more is claimed at parallelism 1`, () => {
      assert.deepEqual(names(decide([waitingFor(reason), pod(1)], ours({ total: 1, claims: [] }))), []);
    });
  }
});
