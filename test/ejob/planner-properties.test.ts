// Properties of one EphemeralJob plan (functions/ejob/planner.ts plan()) over generated jobs,
// pods (every ephemeral container state, deleting, not matching, other jobs', replaced under
// their name) and Lease views as the planner takes them, each over two arbitraries: `mixed`
// (anything) and `busy` (running jobs that claim). From review88; its F1 (counts that swung
// with a replica budget) and F2 (a resume's startTime by the planner's clock) were found here
// and are fixed, so E10 and E14 hold with no exception.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { Pod } from '../../functions/api/pod.ts';
import type { Action } from '../../functions/engine/plan.ts';
import type { LeaseView } from '../../functions/ejob/lease-record.ts';
import { plan, type EjobObserved } from '../../functions/ejob/planner.ts';
import {
  BASE, cfg, failedReason, foreignNamesakeO, holdsSlotO, injectInto, isActiveO, isInjection, isLease, isStatus, isWrite, jobArb, leaseAfter,
  mainStatus, makeJob, makePod, matchesO, ownedNames, podArb, podStateO, resultAtO, shuffle, templateNames, unfitO, viewArb,
  withStatus, writtenRecord, type JobSpec, type PodSpec, type PState, type ViewGen, type WrittenStatus,
} from '../support/ejob-props.ts';
import { checkEach, propsRuns, reportedSeen, withFrozenWorld } from '../support/props.ts';

interface Scenario {
  j: JobSpec;
  podSpecs: PodSpec[];
  view: ViewGen;
  nowOffset: number;
  skew: number;
  unlistedGone: boolean;
  order: number[];
  /** How long ago the containers that exited did (at least the 3 s since a start). */
  endedAgo: number;
}

const mixedArb: fc.Arbitrary<Scenario> = fc.record({
  j: jobArb,
  podSpecs: fc.array(podArb, { maxLength: 8 }),
  view: viewArb,
  nowOffset: fc.integer({ min: 0, max: 7200 }),
  skew: fc.integer({ min: -5, max: 5 }),
  unlistedGone: fc.boolean(),
  order: fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 8, maxLength: 8 }),
  endedAgo: fc.oneof(fc.constant(3), fc.integer({ min: 3, max: 7200 })),
});

/** Busy jobs: not paused, no near deadline, mostly fresh and injected pods, claims of the last half minute. */
const busyPod: fc.Arbitrary<PodSpec> = fc.record({
  owner: fc.constantFrom<PodSpec['owner']>('fresh', 'fresh', 'fresh', 'ours', 'ours', 'ours', 'unfit', 'other-same-name'),
  states: fc.array(fc.constantFrom<PodSpec['states'][number]>('nostatus', 'creating', 'running', 'running', 'ok', 'ok', 'err', 'badimage', 'backoff'), { minLength: 1, maxLength: 2 }),
  phase: fc.constantFrom<PodSpec['phase']>('Running', 'Running', 'Running', 'Running', 'Running', 'Pending', 'Succeeded'),
  deleting: fc.integer({ min: 0, max: 12 }).map((n) => n === 0),
  matches: fc.integer({ min: 0, max: 12 }).map((n) => n > 0),
  created: fc.integer({ min: 0, max: 4 }),
  replaced: fc.integer({ min: 0, max: 8 }).map((n) => n === 0),
});
const busyArb: fc.Arbitrary<Scenario> = fc.record({
  j: fc.record({
    parallelism: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
    replicas: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
    paused: fc.constant(false),
    deadline: fc.option(fc.constant(86_400), { nil: undefined }),
    twoContainers: fc.boolean(),
    status: fc.constant(undefined),
  }),
  podSpecs: fc.array(busyPod, { minLength: 1, maxLength: 9 }),
  view: viewArb,
  nowOffset: fc.integer({ min: 0, max: 600 }),
  skew: fc.integer({ min: -2, max: 2 }),
  unlistedGone: fc.boolean(),
  order: fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 9, maxLength: 9 }),
  endedAgo: fc.constant(3),
});

const ARBS = [['mixed', mixedArb], ['busy', busyArb]] as const;

interface Built {
  obs: EjobObserved;
  now: Date;
  serverNow: Date;
  pods: Pod[];
  view: LeaseView;
  names: string[];
}

function build(s: Scenario): Built {
  const now = BASE + s.nowOffset * 1000;
  const serverNow = new Date(now + s.skew * 1000);
  const names = templateNames(s.j);
  const job = makeJob(s.j, now);
  const pods = s.podSpecs.map((p, i) => makePod(i, p, names, { now, endedAt: now - s.endedAgo * 1000 }));
  const view = s.view(serverNow.getTime(), s.podSpecs);
  // As controller.ts unlistedClaims: claimed pods the LIST does not show, looked up by GET (here: gone), or not looked up (they hold).
  const listed = new Set(pods.map((p) => p.metadata.name));
  const unlisted = new Map<string, Pod | null>();
  if (s.unlistedGone && view.kind === 'ours') for (const c of view.record.claims) if (!listed.has(c.pod)) unlisted.set(c.pod, null);
  const obs: EjobObserved = { job, pods, lease: { view, serverNow, cfg, ...(unlisted.size ? { unlisted } : {}) } };
  return { obs, now: new Date(now), serverNow, pods, view, names };
}

const podNamed = (b: Built, name: string): Pod | undefined => b.pods.find((p) => p.metadata.name === name);
const claimRetentionEnd = (c: { at: string; w?: number }): number => Date.parse(c.at) + (Math.max(Math.min(c.w ?? 0, 360), 20) + 5) * 1000;
/** A time the API types as a string or a Date, in ms. */
const ms = (t: string | Date | undefined): number => (t === undefined ? Number.NaN : new Date(t).getTime());
const byAge = (a: Pod, b: Pod): number => ms(a.metadata.creationTimestamp) - ms(b.metadata.creationTimestamp) || (a.metadata.name < b.metadata.name ? -1 : 1);
const sealedWithVerdict = (b: Built): boolean => b.view.kind === 'ours' && b.view.record.finished === true && b.view.record.verdict !== undefined;
/** A claim within its retention on a pod the LIST does not show, not found gone: its injection may still land. */
const unlistedInFlight = (b: Built): boolean => b.view.kind === 'ours' && b.view.record.claims.some((c) => !podNamed(b, c.pod) && claimRetentionEnd(c) > b.serverNow.getTime() && !b.obs.lease?.unlisted?.has(c.pod));

/** When the deadline runs out (ms), undefined when none runs: unset, paused, or resumed by this look (it runs from now). */
function deadlineAtO(b: Built, j: JobSpec): number | undefined {
  if (j.paused || j.deadline === undefined) return undefined;
  const st = b.obs.job.status;
  if (st?.phase === 'Paused') return undefined;
  return ms(st?.startTime ?? b.obs.job.metadata.creationTimestamp) + j.deadline * 1000;
}
/** Past activeDeadlineSeconds, judged by the later of the planner's clock and the server's. */
function deadlineExceededO(b: Built, j: JobSpec): boolean {
  const at = deadlineAtO(b, j);
  return at !== undefined && at - Math.max(b.now.getTime(), b.serverNow.getTime()) <= 0;
}

/** Split the plan's injections into fresh claims and renewals of a claim kept on the record. */
function injections(b: Built, p: ReturnType<typeof plan>): { fresh: string[]; renewed: string[] } {
  const all = p.actions.filter(isInjection);
  const claimed = new Set(b.view.kind === 'ours' ? b.view.record.claims.filter((c) => claimRetentionEnd(c) > b.serverNow.getTime() && podNamed(b, c.pod)?.metadata.uid === c.uid).map((c) => c.pod) : []);
  return { fresh: all.filter((a) => !claimed.has(a.name)).map((a) => a.name), renewed: all.filter((a) => claimed.has(a.name)).map((a) => a.name) };
}

/** DESIGN: slots held before the plan — pods with a non-terminal container of the job (matching the selector), and claims the pods do not show cannot be one. */
function slotsO(b: Built): Set<string> {
  const held = new Set(b.pods.filter((p) => matchesO(p) && holdsSlotO(p)).map((p) => p.metadata.name));
  if (b.view.kind !== 'ours') return held;
  for (const c of b.view.record.claims) {
    if (claimRetentionEnd(c) <= b.serverNow.getTime()) continue;
    const p = podNamed(b, c.pod);
    if (!p) {
      if (!b.obs.lease?.unlisted?.has(c.pod)) held.add(c.pod); // not looked up: may still be injected
      continue;
    }
    if (p.metadata.uid !== c.uid) continue; // replaced: the injection names the old uid
    if (isActiveO(p) && ownedNames(p).length === 0 && !unfitO(p) && !foreignNamesakeO(p, b.names)) held.add(c.pod);
  }
  return held;
}

/** Pods claimed on the record and not shown injected: listed under the claimed uid, within the claim's retention, able to take the containers. */
function claimedO(b: Built): Set<string> {
  if (b.view.kind !== 'ours') return new Set();
  return new Set(b.view.record.claims.filter((c) => {
    const p = podNamed(b, c.pod);
    return p !== undefined && p.metadata.uid === c.uid && claimRetentionEnd(c) > b.serverNow.getTime() && ownedNames(p).length === 0 && !unfitO(p) && !foreignNamesakeO(p, b.names);
  }).map((c) => c.pod));
}

/** README: replicas counts every pod the job ever claimed: pods showing its containers, claims kept, and the record's count less claims given back. */
function everClaimedO(b: Built): number {
  const seen = new Set(b.pods.filter((p) => ownedNames(p).length > 0).map((p) => p.metadata.uid ?? p.metadata.name));
  if (b.view.kind !== 'ours') return seen.size;
  let dropped = 0;
  for (const c of b.view.record.claims) {
    const p = podNamed(b, c.pod);
    const same = p && p.metadata.uid === c.uid ? p : undefined;
    if (claimRetentionEnd(c) <= b.serverNow.getTime()) {
      if (same && ownedNames(same).length === 0) dropped++;
      continue;
    }
    if (same && ownedNames(same).length === 0 && (unfitO(same) || foreignNamesakeO(same, b.names))) {
      dropped++;
      continue;
    }
    seen.add(c.uid ?? c.pod);
  }
  return Math.max(b.view.record.total - dropped, seen.size);
}

/**
 * The targets the status counts before a verdict (README "Targets"): active matching pods
 * not holding another job's namesake, those injected first, then (once the Lease was read
 * with no slot held and replicas set) those claimed, then the others the containers can go
 * into, then those they cannot; the first `replicas`.
 */
function countedO(b: Built, j: JobSpec): Pod[] {
  const act = b.pods.filter((x) => isActiveO(x) && matchesO(x)).sort(byAge);
  const injected = act.filter((x) => ownedNames(x).length > 0);
  const untried = act.filter((x) => ownedNames(x).length === 0 && !foreignNamesakeO(x, b.names));
  const claimed = j.replicas !== undefined && !b.pods.some(holdsSlotO) ? claimedO(b) : new Set<string>();
  const ordered = [...untried.filter((x) => !unfitO(x)), ...untried.filter(unfitO)];
  return [...injected, ...ordered.filter((x) => claimed.has(x.metadata.name)), ...ordered.filter((x) => !claimed.has(x.metadata.name))].slice(0, j.replicas === undefined ? Infinity : Math.max(0, j.replicas));
}

/** Run `check` over both arbitraries, `runs` times each. */
const property = (runs: number, check: (s: Scenario) => void): void => checkEach(ARBS, runs, check);

const RUNS = 1500;
const seen = reportedSeen();

describe('EphemeralJob planner: properties of one plan (review88)', () => {
  test('E1 injections only into listed, active, selector-matching pods with no container of the job, no same-named container of another job, and a target container; fenced by the pod uid', () => {
    property(RUNS, (s) => {
      const b = build(s);
      for (const a of plan(b.obs, b.now).actions.filter(isInjection)) {
        const pod = podNamed(b, a.name);
        assert.ok(pod, `injects ${a.name}, not listed`);
        assert.ok(isActiveO(pod), `injects ${a.name}: phase ${pod.status?.phase}, deleting ${pod.metadata.deletionTimestamp !== undefined}`);
        assert.ok(matchesO(pod), `injects ${a.name}: does not match the selector`);
        assert.equal(ownedNames(pod).length, 0, `injects ${a.name} a second time`);
        assert.ok(!foreignNamesakeO(pod, b.names), `injects ${a.name}: holds another job's same-named container`);
        assert.ok(!unfitO(pod), `injects ${a.name}: no container 'main' to target`);
        assert.equal((a.body as { metadata?: { uid?: string } }).metadata?.uid, pod.metadata.uid, 'fenced by the pod uid');
        seen.add('E1 injected');
      }
    });
    assert.ok(seen.get('E1 injected') >= 50, `E1: only ${seen.get('E1 injected')} injections`);
  });

  test('E2 never an injection while paused or past activeDeadlineSeconds (judged by the later clock); a finished job writes nothing', () => {
    property(RUNS, (s) => {
      const b = build(s);
      const n = plan(b.obs, b.now).actions.filter(isInjection).length;
      if (s.j.paused) assert.equal(n, 0, 'paused');
      if (deadlineExceededO(b, s.j)) {
        assert.equal(n, 0, 'past deadline');
        seen.add('E2 past deadline');
      }
      const fin = plan({ ...b.obs, job: { ...b.obs.job, status: { ...(b.obs.job.status ?? {}), phase: 'Succeeded', completionTime: '2026-01-01T00:59:00Z' } } }, b.now);
      assert.equal(fin.actions.filter(isWrite).length, 0, 'finished job writes');
    });
    assert.ok(seen.get('E2 past deadline') >= 30);
  });

  test('E3 parallelism: fresh claims + slots held ≤ parallelism; renewals only within parallelism; no fresh claim on a pod holding a slot', () => {
    property(RUNS, (s) => {
      const b = build(s);
      const { fresh, renewed } = injections(b, plan(b.obs, b.now));
      const par = s.j.parallelism ?? 1;
      const held = slotsO(b);
      if (fresh.length > 0) {
        assert.ok(held.size + fresh.length <= par, `held ${[...held]} + fresh ${fresh} > parallelism ${par}`);
        seen.add('E3 fresh');
      }
      if (renewed.length > 0) {
        assert.ok(held.size <= par, `renewed ${renewed} with held ${[...held]} > ${par}`);
        seen.add('E3 renewed');
      }
      for (const n of fresh) assert.ok(!held.has(n), `fresh claim on ${n}, already holding a slot`);
    });
    assert.ok(seen.get('E3 fresh') >= 50);
  });

  test('E4 replicas: fresh claims never take the job past replicas (pods ever claimed), and the written record never undercounts them', () => {
    property(RUNS, (s) => {
      const b = build(s);
      const p = plan(b.obs, b.now);
      const { fresh } = injections(b, p);
      if (s.j.replicas === undefined || fresh.length === 0) return;
      const ever = everClaimedO(b);
      assert.ok(ever + fresh.length <= s.j.replicas, `ever ${ever} + fresh ${fresh.length} > replicas ${s.j.replicas}`);
      const rec = writtenRecord(p.actions.find(isLease));
      assert.ok(rec && rec.total >= ever + fresh.length, `record total ${rec?.total} < ${ever} + ${fresh.length}`);
      seen.add('E4 fresh with replicas');
    });
    assert.ok(seen.get('E4 fresh with replicas') >= 30);
  });

  test('E5 a plan injects each pod at most once, every injection after (and requiring) the Lease write', () => {
    property(RUNS, (s) => {
      const b = build(s);
      const p = plan(b.obs, b.now);
      const inj = p.actions.filter(isInjection);
      assert.equal(new Set(inj.map((a) => a.name)).size, inj.length);
      const li = p.actions.findIndex(isLease);
      for (const a of inj) {
        assert.ok(li >= 0 && p.actions.indexOf(a) > li, 'after the Lease write');
        assert.ok([a.requires ?? []].flat().includes('lease'), 'requires the Lease write');
      }
    });
  });

  test('E6 the counters add up, never exceed replicas, and are the per-pod states (DESIGN) of the targets the status counts, with or without a slot held; only a verdict narrows them to the replicas left', () => {
    property(RUNS, (s) => {
      const b = build(s);
      const p = plan(b.obs, b.now);
      const st = mainStatus(p.actions);
      if (!st) return;
      const sealed = b.view.kind === 'ours' && b.view.record.finished === true;
      assert.ok(st.succeeded + st.failed + st.running + st.waiting <= st.match, `sum > match: ${JSON.stringify(st)}`);
      if (s.j.replicas !== undefined && !sealedWithVerdict(b)) assert.ok(st.match <= Math.max(0, s.j.replicas), `match ${st.match} > replicas ${s.j.replicas}`);
      if (sealed) return;
      const targets = countedO(b, s.j);
      const claimedNow = new Set(p.actions.filter(isInjection).map((a) => a.name));
      const state = (x: Pod): PState => (ownedNames(x).length > 0 ? podStateO(x) : unfitO(x) ? 'failed' : claimedNow.has(x.metadata.name) ? 'waiting' : 'pending');
      const c: Record<string, number> = { succeeded: 0, failed: 0, running: 0, waiting: 0 };
      for (const t of targets) {
        const k = state(t);
        if (k !== 'pending') c[k] = (c[k] ?? 0) + 1;
      }
      const final = st.phase === 'Succeeded' || st.phase === 'Failed';
      // A verdict the counted targets would give: held back while the targets within the
      // replicas left have none (a claim still in flight), and counted as those then.
      const verdictDue = targets.length > 0 && targets.every((t) => ['succeeded', 'failed'].includes(state(t)));
      if ((final || verdictDue) && s.j.replicas !== undefined && !b.pods.some(holdsSlotO)) {
        // The verdict, from the targets within the replicas left: the injected ones all are.
        const injected = targets.filter((x) => ownedNames(x).length > 0);
        for (const k of ['succeeded', 'running'] as const) assert.equal(st[k], injected.filter((x) => podStateO(x) === k).length, k);
        assert.ok(st.match <= targets.length, `match ${st.match} > counted ${targets.length}`);
        seen.add('E6 a verdict under a budget');
        return;
      }
      const got = { match: st.match, succeeded: st.succeeded, failed: st.failed, running: st.running, waiting: st.waiting };
      assert.deepEqual(got, { match: targets.length, ...c }, `counters vs pods (targets ${targets.map((t) => t.metadata.name)})`);
      seen.add(s.j.replicas !== undefined && !b.pods.some(holdsSlotO) ? 'E6 exact, a budget known' : 'E6 exact');
    });
    assert.ok(seen.get('E6 exact') >= 200 && seen.get('E6 exact, a budget known') >= 100 && seen.get('E6 a verdict under a budget') >= 20, JSON.stringify(seen.n));
  });

  test('E7 the phase agrees with the counters it is written with (DESIGN phase rules); past the deadline, Failed (DeadlineExceeded) unless every target had its result by then (review88 F3); a final phase always carries completionTime, never before startTime, stamped by the later clock (review95 F4)', () => {
    property(RUNS, (s) => {
      const b = build(s);
      const st = mainStatus(plan(b.obs, b.now).actions);
      if (!st) return;
      const done = st.succeeded + st.failed;
      const final = st.phase === 'Succeeded' || st.phase === 'Failed';
      if (final) checkCompletionTime(b, st);
      else assert.equal(st.completionTime, undefined, 'completionTime on a non-final phase');
      if (s.j.paused) {
        if (!sealedWithVerdict(b)) assert.equal(st.phase, 'Paused');
        return;
      }
      // A verdict sealed before (on the Lease) is final: written again as it was decided, past the deadline too.
      if (sealedWithVerdict(b)) return;
      if (deadlineExceededO(b, s.j)) {
        checkPastDeadline(b, s.j, st);
        return;
      }
      checkPhase(b, st, done);
      seen.add(`E7 phase ${st.phase}`);
    });
    for (const phase of ['Waiting', 'Running', 'Failed', 'Succeeded']) assert.ok(seen.get(`E7 phase ${phase}`) >= 20, JSON.stringify(seen.n));
    for (const clock of ['server\'s', 'planner\'s']) assert.ok(seen.get(`E7 completionTime by the ${clock} clock`) >= 20, JSON.stringify(seen.n));
    assert.ok(seen.get('E7 past the deadline, by the results') >= 10 && seen.get('E7 past the deadline, DeadlineExceeded') >= 30, JSON.stringify(seen.n));
  });

  test('E8 a plan is a function of its inputs: no hidden clock (Date.now, new Date()) or randomness', () => {
    property(Math.round(RUNS / 3), (s) => {
      const b = build(s);
      const runWith = (at: number, rnd: number): string => withFrozenWorld(at, rnd, () => JSON.stringify(plan(b.obs, b.now)));
      assert.equal(runWith(0, 0), runWith(4e12, 0.999));
    });
  });

  test('E9 the order of the pods in the LIST changes nothing in the plan', () => {
    property(RUNS, (s) => {
      const b = build(s);
      const p1 = plan(b.obs, b.now);
      const p2 = plan({ ...b.obs, pods: shuffle(b.pods, s.order) }, b.now);
      assert.deepEqual(p2.actions, p1.actions);
      assert.equal(p2.requeueAfterSeconds, p1.requeueAfterSeconds);
    });
  });

  test('E10 idempotence: the plan applied (Lease write, injections, status), planning again at the same instant writes nothing (review88 F1, F2: no exception left)', () => {
    property(RUNS, (s) => {
      const b = build(s);
      const p1 = plan(b.obs, b.now);
      if (p1.actions.some((a) => a.verb === 'delete')) return;
      const after = applied({ job: b.obs.job, pods: b.pods, view: b.view }, p1, '10');
      const p2 = plan({ ...b.obs, job: after.job, pods: after.pods, lease: { ...b.obs.lease!, view: after.view } }, b.now);
      assert.deepEqual(p2.actions.filter(isWrite).map(describeWrite), [], 'second plan writes');
      if (p1.actions.some(isWrite)) seen.add('E10 first plan wrote');
    });
    assert.ok(seen.get('E10 first plan wrote') >= 300);
  });

  test('E11 the order of the Lease record\'s claims changes nothing in what is injected or counted', () => {
    property(RUNS, (s) => {
      const b = build(s);
      if (b.view.kind !== 'ours' || b.view.record.claims.length < 2) return;
      const p1 = plan(b.obs, b.now);
      const claims = shuffle(b.view.record.claims, s.order);
      const p2 = plan({ ...b.obs, lease: { ...b.obs.lease!, view: { ...b.view, record: { ...b.view.record, claims } } } }, b.now);
      assert.deepEqual(p2.actions.filter(isInjection).map((a) => a.name).sort(), p1.actions.filter(isInjection).map((a) => a.name).sort());
      assert.deepEqual(mainStatus(p2.actions), mainStatus(p1.actions));
      seen.add('E11 compared');
    });
    assert.ok(seen.get('E11 compared') >= 50);
  });

  test('E12 the Lease is written only to decide: a claim (with its injections), the verdict\'s seal (a final phase), or the hold an undated unreadable record pins', () => {
    property(RUNS, (s) => {
      const b = build(s);
      const p = plan(b.obs, b.now);
      const w = p.actions.find(isLease);
      if (!w) return;
      const rec = writtenRecord(w);
      assert.ok(rec);
      const inj = p.actions.filter(isInjection).length;
      const phase = mainStatus(p.actions)?.phase ?? b.obs.job.status?.phase;
      const sealedNow = rec.finished === true && !(b.view.kind === 'ours' && b.view.record.finished === true);
      const pin = b.view.kind === 'unreadable' && rec.holdUntil !== undefined;
      assert.ok(inj > 0 || sealedNow || pin, `Lease write with no claim, seal or hold: ${w.reason}`);
      if (sealedNow) {
        assert.ok(phase === 'Succeeded' || phase === 'Failed', `sealed with phase ${phase}`);
        assert.equal(inj, 0, 'sealed and claimed at once');
        seen.add('E12 seal');
      }
      if (pin) seen.add('E12 hold pinned');
    });
    assert.ok(seen.get('E12 seal') >= 50 && seen.get('E12 hold pinned') >= 3, JSON.stringify(seen.n));
  });

  test('E13 a status that counts the pods claimed here as waiting goes only if the claim and every injection took effect; its alternative only if one did not', () => {
    property(RUNS, (s) => {
      const b = build(s);
      const p = plan(b.obs, b.now);
      const inj = p.actions.filter(isInjection);
      const sts = p.actions.filter(isStatus);
      if (inj.length === 0) {
        assert.ok(sts.length <= 1);
        return;
      }
      const main = sts.find((a) => a.unless === undefined);
      const alt = sts.find((a) => a.unless !== undefined);
      const ids = ['lease', ...inj.map((a) => a.id ?? '')];
      if (main) for (const id of ids) assert.ok([main.requires ?? []].flat().includes(id), `main status does not require ${id}`);
      if (alt) for (const id of ids) assert.ok([alt.unless ?? []].flat().includes(id), `alternative not sent unless ${id}`);
      if (main && alt) {
        const m = (main.body as { status: WrittenStatus }).status;
        const a = (alt.body as { status: WrittenStatus }).status;
        assert.ok(m.waiting >= a.waiting && m.waiting - a.waiting <= inj.length, `waiting ${m.waiting} vs ${a.waiting} for ${inj.length} injections`);
        seen.add('E13 both versions');
      }
    });
    assert.ok(seen.get('E13 both versions') >= 50);
  });

  test('E14 no write storm: the plan applied and nothing changing but the clock (1 s … 10 min later), a look writes only to make progress or at a claim\'s boundary; right after each, a look at the same instant writes nothing', () => {
    property(Math.round(RUNS / 2), (s) => {
      const b = build(s);
      let world = { job: b.obs.job, pods: b.pods, view: b.view };
      let prevDt = 0;
      let rv = 10;
      for (const dt of [0, 1, 5, 6, 20, 21, 25, 26, 60, 600]) {
        if (world.job.status?.completionTime) return;
        const now = new Date(b.now.getTime() + dt * 1000);
        const serverNow = new Date(b.serverNow.getTime() + dt * 1000);
        const observe = (): EjobObserved => ({ ...b.obs, job: world.job, pods: world.pods, lease: { ...b.obs.lease!, view: world.view, serverNow } });
        const p = plan(observe(), now);
        if (p.actions.some((a) => a.verb === 'delete')) return;
        const writes = p.actions.filter(isWrite);
        const progress = writes.some(isInjection) || ['Succeeded', 'Failed'].includes(mainStatus(p.actions)?.phase ?? '') || writes.some((a) => isLease(a) && writtenRecord(a)?.finished);
        // A claim's retention ending (or its renewal point, or a hold lifting) changes what the pods are to the job: one write may follow.
        const view = world.view;
        const boundary = view.kind === 'ours' && [...view.record.claims.flatMap((c) => [claimRetentionEnd(c), Date.parse(c.at) + 5000]), ...(view.record.holdUntil ? [Date.parse(view.record.holdUntil)] : [])]
          .some((x) => x > b.serverNow.getTime() + prevDt * 1000 && x <= serverNow.getTime());
        if (dt > 0 && writes.length && !progress && !boundary) assert.deepEqual(writes.map((a) => `+${dt}s ${a.reason}`), [], 'a write that makes no progress');
        world = applied(world, p, String(rv++));
        prevDt = dt;
        if (world.job.status?.completionTime) return;
        const again = plan(observe(), now).actions.filter(isWrite);
        assert.deepEqual(again.map((a) => `+${dt}s again: ${a.reason}`), [], 'writes again at the same instant');
      }
      seen.add('E14 quiet');
    });
    assert.ok(seen.get('E14 quiet') >= 150);
  });

  test('E15 a resumed job\'s deadline, judged by the later clock, runs its whole length from the look that resumed it (review88 F2)', () => {
    const resumed = fc.record({ deadline: fc.integer({ min: 1, max: 600 }), skew: fc.integer({ min: -5, max: 5 }), podSpecs: fc.array(busyPod, { minLength: 1, maxLength: 4 }), pausedAgo: fc.integer({ min: 0, max: 7200 }) });
    fc.assert(fc.property(resumed, (r) => {
      const j: JobSpec = { parallelism: 1, replicas: undefined, paused: false, deadline: r.deadline, twoContainers: false, status: { phase: 'Paused', match: 0, succeeded: 0, failed: 0, running: 0, waiting: 0, startedAgo: r.pausedAgo } };
      const b = build({ j, podSpecs: r.podSpecs, view: () => ({ kind: 'absent' }), nowOffset: 0, skew: r.skew, unlistedGone: false, order: [], endedAgo: 3 });
      const p = plan(b.obs, b.now);
      const st = mainStatus(p.actions);
      if (!st || st.phase === 'Succeeded' || st.phase === 'Failed') return;
      const judged = Math.max(b.now.getTime(), b.serverNow.getTime());
      assert.equal(Date.parse(st.startTime ?? ''), judged, 'startTime: the later of the two clocks');
      // Every later look, by either clock up to a second before the deadline, is within it.
      const after = applied({ job: b.obs.job, pods: b.pods, view: b.view }, p, '10');
      const later = (by: number): WrittenStatus | undefined => mainStatus(plan({ ...b.obs, job: after.job, pods: after.pods, lease: { ...b.obs.lease!, view: after.view, serverNow: new Date(b.serverNow.getTime() + by) } }, new Date(b.now.getTime() + by)).actions);
      assert.notEqual(failedReason(later((r.deadline - 1) * 1000)), 'DeadlineExceeded', 'a second before the deadline');
      seen.add('E15 resumed');
    }), propsRuns(RUNS));
    assert.ok(seen.get('E15 resumed') >= 100);
  });
});

/** A verdict's completionTime: there, not before startTime, and (written now) by the later of the planner's clock and the server's (review95 F4). */
function checkCompletionTime(b: Built, st: WrittenStatus): void {
  assert.ok(st.completionTime, 'final without completionTime');
  assert.ok(st.startTime !== undefined && Date.parse(st.completionTime) >= Date.parse(st.startTime), `completionTime ${st.completionTime} before startTime ${String(st.startTime)}`);
  if (b.obs.job.status?.completionTime !== undefined) return;
  const later = Math.floor(Math.max(b.now.getTime(), b.serverNow.getTime()) / 1000) * 1000;
  assert.equal(Date.parse(st.completionTime), later, 'stamped by the later of the planner\'s clock and the server\'s');
  seen.add(b.serverNow > b.now ? 'E7 completionTime by the server\'s clock' : 'E7 completionTime by the planner\'s clock');
}

/** Past the deadline (not sealed before): Failed/DeadlineExceeded, unless every target had its result by the deadline, and then by those results. */
function checkPastDeadline(b: Built, j: JobSpec, st: WrittenStatus): void {
  const at = deadlineAtO(b, j) ?? 0;
  const reason = failedReason(st);
  if (reason === 'DeadlineExceeded') {
    assert.equal(st.phase, 'Failed');
    // Not when every target (the status counts them) had its result in time, with no claim in flight.
    const targets = countedO(b, j);
    const inTime = targets.length > 0 && !unlistedInFlight(b) && targets.every((t) => (unfitO(t) && ownedNames(t).length === 0) || (['succeeded', 'failed'].includes(podStateO(t)) && !((resultAtO(t) ?? -Infinity) > at)));
    // The targets the verdict is judged on are these when no budget narrows them and no seal leaves only the injected pods.
    const sealed = b.view.kind === 'ours' && b.view.record.finished === true;
    if ((j.replicas === undefined || b.pods.some(holdsSlotO)) && !sealed) assert.ok(!inTime, `DeadlineExceeded though every target had its result by ${new Date(at).toISOString()}`);
    seen.add('E7 past the deadline, DeadlineExceeded');
    return;
  }
  assert.ok(st.phase === 'Succeeded' || st.phase === 'Failed', `past the deadline: ${st.phase}`);
  assert.equal(st.succeeded + st.failed, st.match, `a verdict by the results with a target still open: ${JSON.stringify(st)}`);
  assert.ok(!unlistedInFlight(b), 'by the results with a claim in flight');
  const injected = b.pods.filter((x) => isActiveO(x) && matchesO(x) && ownedNames(x).length > 0).sort(byAge);
  for (const p of injected.slice(0, j.replicas === undefined ? Infinity : Math.max(0, j.replicas))) {
    const t = resultAtO(p);
    assert.ok(t === undefined || t <= at, `${p.metadata.name} got its result at ${t === undefined ? '?' : new Date(t).toISOString()}, after the deadline`);
  }
  assert.equal(st.phase === 'Succeeded', st.failed === 0);
  seen.add('E7 past the deadline, by the results');
}

/** The DESIGN phase rules, within the deadline. */
function checkPhase(b: Built, st: WrittenStatus, done: number): void {
  if (st.phase === 'Succeeded') assert.ok(st.failed === 0 && st.succeeded === st.match && st.match > 0, `Succeeded with ${JSON.stringify(st)}`);
  if (st.phase === 'Failed') {
    const why = failedReason(st);
    if (why === 'PodsFailed') assert.ok(st.failed > 0 && done === st.match, `PodsFailed with ${JSON.stringify(st)}`);
    else assert.ok(why === 'PodsGone', `Failed for ${why}`);
  }
  const sealed = b.view.kind === 'ours' && b.view.record.finished === true;
  if ((st.phase === 'Running' || st.phase === 'Waiting') && !sealed && !unlistedInFlight(b)) assert.ok(!(st.match > 0 && done === st.match), `${st.phase} with every target done: ${JSON.stringify(st)}`);
  if (st.phase === 'Waiting') assert.ok(st.running === 0, `Waiting with running ${st.running}`);
}

interface World {
  job: EjobObserved['job'];
  pods: Pod[];
  view: LeaseView;
}

/** The world after a plan's writes took effect: the Lease read back, the injections, the status that requires them. */
function applied(w: World, p: ReturnType<typeof plan>, rv: string): World {
  let { pods, view } = w;
  for (const a of p.actions) {
    if (isLease(a)) view = leaseAfter(a, rv).view;
    if (isInjection(a)) pods = pods.map((x) => (x.metadata.name === a.name ? injectInto(x, a) : x));
  }
  const st = mainStatus(p.actions);
  return { job: st ? withStatus(w.job, st, rv) : w.job, pods, view };
}

function describeWrite(a: Action): string {
  return `${a.verb} ${a.kind}/${a.name}${a.subresource ? '/' + a.subresource : ''}: ${a.reason}`;
}
