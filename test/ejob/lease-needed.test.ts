// The observation that skips the Lease (ejob/lease-needed.ts, controller.ts): whenever the
// pods alone say the Lease is not needed, the plan made without it is the plan made with any
// Lease at all — a property over random jobs, pods, Lease views and clocks. And the planner's
// defence: from a Lease it did not read, it never claims, seals or repairs anything.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { parseEjobSpec, type EphemeralJobObject } from '../../functions/api/ephemeraljob.ts';
import type { Pod } from '../../functions/api/pod.ts';
import type { Action } from '../../functions/engine/plan.ts';
import { leaseNeeded } from '../../functions/ejob/lease-needed.ts';
import type { LeaseRecord, LeaseView } from '../../functions/ejob/lease-record.ts';
import { plan, type EjobObserved, type ObservedLease } from '../../functions/ejob/planner.ts';
import { BASE, cfg, makeJob, UID, type JobSpec as PropsJobSpec } from '../support/ejob-props.ts';

const container = (name: string): Record<string, unknown> => ({ name, image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'main' });

/** A container of the job (or of another job) in a pod, and its state. */
type Ec = 'nostatus' | 'waiting' | 'backoff' | 'running' | 'undated' | 'ok' | 'err' | 'badimage';
const EC_STATES: readonly Ec[] = ['nostatus', 'waiting', 'backoff', 'running', 'undated', 'ok', 'err', 'badimage'];

interface PodSpec {
  /** fresh: nothing injected; unfit: nothing injected, and no container the template targets; ours: the job's containers; other: a container of another job (same name as ours, or not). */
  owner: 'fresh' | 'unfit' | 'ours' | 'other-same-name' | 'other-own-name';
  states: Ec[];
  startedAgo: number;
  inactive: 'no' | 'Succeeded' | 'Failed' | 'deleting';
  matches: boolean;
  created: number;
}

interface JobSpec extends PropsJobSpec {
  /** Replace that status by the one the planner wrote earlier for these pods, or for them before their containers started. */
  settled: 'no' | 'same pods' | 'before the starts';
}

function state(e: Ec, startedAgo: number, now: number): Record<string, unknown> | undefined {
  switch (e) {
    case 'nostatus': return undefined;
    case 'waiting': return { waiting: { reason: 'ContainerCreating' } };
    case 'backoff': return { waiting: { reason: 'ImagePullBackOff' } };
    case 'running': return { running: { startedAt: new Date(now - startedAgo * 1000).toISOString() } };
    case 'undated': return { running: {} };
    case 'ok': return { terminated: { exitCode: 0 } };
    case 'err': return { terminated: { exitCode: 1 } };
    case 'badimage': return { waiting: { reason: 'InvalidImageName' } };
  }
}

function makePod(i: number, s: PodSpec, names: readonly string[], now: number): Pod {
  const p: Pod = {
    metadata: { name: `p${i}`, namespace: 'ns', uid: `u${i}`, labels: { app: s.matches ? 'x' : 'y' }, creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, s.created)).toISOString(), ...(s.inactive === 'deleting' ? { deletionTimestamp: '2026-01-01T00:59:00Z' } : {}) },
    spec: { containers: [{ name: s.owner === 'unfit' ? 'other' : 'main' }] },
    status: { phase: s.inactive === 'Succeeded' || s.inactive === 'Failed' ? s.inactive : 'Running' },
  };
  if (s.owner === 'fresh' || s.owner === 'unfit') return p;
  const uid = s.owner === 'ours' ? UID : 'other-uid';
  const ecNames = s.owner === 'other-own-name' ? ['theirs'] : names;
  p.spec.ephemeralContainers = ecNames.map((name) => ({ name, env: [{ name: 'KRUISE_EJOB_ID', value: uid }] }));
  p.status = { ...p.status, ephemeralContainerStatuses: ecNames.flatMap((name, j) => {
    const st = state(s.states[j % s.states.length] ?? 'nostatus', s.startedAgo, now);
    return st ? [{ name, state: st }] : [];
  }) as never };
  return p;
}

const podArb: fc.Arbitrary<PodSpec> = fc.record({
  owner: fc.constantFrom<PodSpec['owner']>('fresh', 'fresh', 'unfit', 'ours', 'ours', 'ours', 'other-same-name', 'other-own-name'),
  states: fc.array(fc.constantFrom(...EC_STATES), { minLength: 1, maxLength: 2 }),
  startedAgo: fc.integer({ min: 0, max: 25 }),
  inactive: fc.constantFrom<PodSpec['inactive']>('no', 'no', 'no', 'no', 'Succeeded', 'Failed', 'deleting'),
  matches: fc.integer({ min: 0, max: 9 }).map((n) => n > 0),
  created: fc.integer({ min: 0, max: 5 }),
});

const jobArb: fc.Arbitrary<JobSpec> = fc.record({
  parallelism: fc.option(fc.integer({ min: 0, max: 10 }), { nil: undefined }),
  replicas: fc.option(fc.integer({ min: 0, max: 10 }), { nil: undefined }),
  paused: fc.boolean(),
  deadline: fc.option(fc.integer({ min: 1, max: 7200 }), { nil: undefined }),
  twoContainers: fc.boolean(),
  status: fc.option(fc.record({
    phase: fc.constantFrom('Waiting', 'Running', 'Paused', 'Succeeded', 'Failed'),
    match: fc.integer({ min: 0, max: 8 }),
    succeeded: fc.integer({ min: 0, max: 8 }),
    failed: fc.integer({ min: 0, max: 8 }),
    running: fc.integer({ min: 0, max: 8 }),
    waiting: fc.integer({ min: 0, max: 8 }),
    startedAgo: fc.integer({ min: 0, max: 7200 }),
  }), { nil: undefined }),
  settled: fc.constantFrom<JobSpec['settled']>('no', 'same pods', 'before the starts'),
});

/** The job with the status the planner wrote a second earlier, for these pods or for them before they started (so some plans write nothing). */
function withSettledStatus(job: EphemeralJobObject, j: JobSpec, pods: { specs: readonly PodSpec[]; names: readonly string[] }, now: number): EphemeralJobObject {
  if (j.settled === 'no') return job;
  const before = pods.specs.map((p) => (j.settled === 'same pods' ? p : { ...p, states: p.states.map((e): Ec => (e === 'running' || e === 'undated' ? 'waiting' : e)) }));
  const { status: _, ...bare } = job;
  const lease: ObservedLease = { view: { kind: 'absent' }, serverNow: new Date(now - 1000), cfg };
  const first = plan({ job: bare, pods: before.map((p, i) => makePod(i, p, pods.names, now)), lease }, new Date(now - 1000));
  const status = (first.actions.find((a) => a.subresource === 'status')?.body as { status?: EphemeralJobObject['status'] } | undefined)?.status;
  return status ? { ...bare, status } : bare;
}

/** Lease views: absent, ours (random claims — renewable by age, or renewed —, total, holdUntil, finished), unreadable (dated or not), another job's. */
const viewArb: fc.Arbitrary<(now: number) => LeaseView> = fc.oneof(
  fc.constant(() => ({ kind: 'absent' as const })),
  fc.record({
    total: fc.integer({ min: 0, max: 10 }),
    claims: fc.array(fc.record({ pod: fc.integer({ min: 0, max: 9 }), sameUid: fc.integer({ min: 0, max: 4 }).map((n) => n > 0), ago: fc.integer({ min: -5, max: 40 }), renewed: fc.boolean() }), { maxLength: 4 }),
    holdFor: fc.option(fc.integer({ min: -30, max: 30 }), { nil: undefined }),
    finished: fc.boolean(),
  }).map((r) => (now: number): LeaseView => {
    const record: LeaseRecord = {
      v: 1, job: UID, total: r.total,
      claims: r.claims.map((c) => ({ pod: `p${c.pod}`, uid: c.sameUid ? `u${c.pod}` : 'replaced', at: new Date(now - c.ago * 1000).toISOString(), ...(c.renewed ? { renewed: true as const } : {}) })),
      ...(r.holdFor !== undefined ? { holdUntil: new Date(now + r.holdFor * 1000).toISOString() } : {}),
      ...(r.finished ? { finished: true } : {}),
    };
    return { kind: 'ours', resourceVersion: '9', record };
  }),
  fc.record({ renewedAgo: fc.option(fc.integer({ min: 0, max: 60 }), { nil: undefined }), otherJob: fc.boolean() }).map((r) => (now: number): LeaseView => ({
    kind: 'unreadable', resourceVersion: '9', why: r.otherJob ? 'record of another job' : 'does not parse', otherJob: r.otherJob,
    renewedAt: r.renewedAgo === undefined ? undefined : new Date(now - r.renewedAgo * 1000),
  })),
);

const isLeaseOrInjection = (a: Action): boolean => a.kind === 'Lease' || a.subresource === 'ephemeralcontainers';

describe('the observation that skips the Lease', () => {
  test('property: whenever the pods say the Lease is not needed, the plan without it has exactly the actions of the plan with any Lease view', () => {
    const seen = { skipped: 0, withStatusWrite: 0, noStatusWrite: 0, sealedView: 0, unreadableView: 0, pendingClaims: 0, deadline: 0, unfitPod: 0 };
    fc.assert(fc.property(
      jobArb, fc.array(podArb, { maxLength: 8 }), viewArb,
      fc.record({ nowOffset: fc.integer({ min: 0, max: 7200 }), skewRead: fc.integer({ min: -5, max: 5 }), skewNotRead: fc.integer({ min: -5, max: 5 }) }),
      (j, podSpecs, viewAt, { nowOffset, skewRead, skewNotRead }) => {
        const now = BASE + nowOffset * 1000;
        const names = j.twoContainers ? ['ec', 'ec2'] : ['ec'];
        const job = withSettledStatus(makeJob(j, now), j, { specs: podSpecs, names }, now);
        const parsed = parseEjobSpec(job.spec);
        assert.ok(parsed.ok, parsed.ok ? '' : parsed.message);
        const pods = podSpecs.map((s, i) => makePod(i, s, names, now));
        const view = viewAt(now + skewRead * 1000);
        const withLease: EjobObserved = { job, pods, lease: { view, serverNow: new Date(now + skewRead * 1000), cfg } };
        const notRead: ObservedLease = { view: { kind: 'not-read' }, serverNow: new Date(now + skewNotRead * 1000), cfg };
        const without = plan({ job, pods, lease: notRead }, new Date(now));
        // Never, whatever the pods: no Lease write and no injection from a Lease not read.
        assert.equal(without.actions.filter(isLeaseOrInjection).length, 0);
        // As the controller asks it: at a moment no plan judges the deadline after (the later of
        // the planner's clock and the server's; controller.ts asks skewSeconds ahead of the server).
        const need = leaseNeeded(job, parsed.spec, pods, new Date(now + Math.max(0, skewRead, skewNotRead) * 1000));
        if (need.needed) return;
        seen.skipped++;
        const withIt = plan(withLease, new Date(now));
        assert.deepEqual(without.actions, withIt.actions, `${need.why}; view ${view.kind}`);
        assert.ok(!(without.notes ?? []).some((n) => /nothing planned/.test(n)), 'not the defensive plan');
        if (withIt.actions.some((a) => a.subresource === 'status')) seen.withStatusWrite++;
        else seen.noStatusWrite++;
        if (view.kind === 'ours' && view.record.finished === true) seen.sealedView++;
        if (view.kind === 'ours' && view.record.claims.length > 0) seen.pendingClaims++;
        if (view.kind === 'unreadable') seen.unreadableView++;
        if (j.deadline !== undefined) seen.deadline++;
        if (podSpecs.some((p) => p.owner === 'unfit' && p.matches && p.inactive === 'no')) seen.unfitPod++;
      },
    ), { numRuns: 5000, seed: 10 });
    // Not vacuous: the condition held often, over every kind of view, with writes to compare.
    if (process.env.EPHEMERA_DEBUG) console.log(seen);
    for (const [what, n] of Object.entries(seen)) assert.ok(n >= 15, `${what}: only ${n} runs`);
  });
});

describe('planning from a Lease that was not read (defensive)', () => {
  const job = (spec: Record<string, unknown> = {}, status?: Record<string, unknown>): EphemeralJobObject => ({
    metadata: { name: 'j', namespace: 'ns', uid: UID, generation: 1, resourceVersion: '5', creationTimestamp: '2026-01-01T00:30:00Z' },
    spec: { selector: { matchLabels: { app: 'x' } }, template: { ephemeralContainers: [container('ec')] }, ...spec },
    ...(status ? { status: status as never } : {}),
  });
  const now = new Date(BASE);
  const notRead: ObservedLease = { view: { kind: 'not-read' }, serverNow: now, cfg };
  const fresh = (i: number): Pod => makePod(i, { owner: 'fresh', states: ['nostatus'], startedAgo: 0, inactive: 'no', matches: true, created: i }, ['ec'], BASE);
  const done = (i: number, e: Ec = 'ok'): Pod => makePod(i, { owner: 'ours', states: [e], startedAgo: 0, inactive: 'no', matches: true, created: i }, ['ec'], BASE);
  const running = (i: number): Pod => makePod(i, { owner: 'ours', states: ['running'], startedAgo: 1, inactive: 'no', matches: true, created: i }, ['ec'], BASE);

  test('a claim it would make: nothing planned (no Lease write, no injection, no status counting it), a look again in 1 s', () => {
    const p = plan({ job: job(), pods: [done(0), fresh(1)], lease: notRead }, now);
    assert.deepEqual(p.actions, []);
    assert.equal(p.requeueAfterSeconds, 1);
    assert.match(p.notes?.join('\n') ?? '', /the Lease was not read, and this plan would claim p1 for injection: nothing planned/);
  });

  test('a verdict it would seal (here: past the deadline while a pod runs): nothing planned, no status saying the verdict', () => {
    const p = plan({ job: job({ activeDeadlineSeconds: 60 }, { phase: 'Running', startTime: '2026-01-01T00:30:00Z' }), pods: [running(0), fresh(1)], lease: notRead }, now);
    assert.deepEqual(p.actions, []);
    assert.equal(p.requeueAfterSeconds, 1);
    assert.match(p.notes?.join('\n') ?? '', /would record the verdict/);
    // The observation reads the Lease in that case: the pods alone show the verdict.
    const spec = parseEjobSpec(job({ activeDeadlineSeconds: 60 }).spec);
    assert.ok(spec.ok);
    assert.equal(leaseNeeded(job({ activeDeadlineSeconds: 60 }, { startTime: '2026-01-01T00:30:00Z' }), spec.spec, [running(0), fresh(1)], now).needed, true);
  });

  test('a planner clock 5 minutes ahead near the deadline: nothing planned, a look again when the server\'s clock is skewSeconds from the deadline, when the observation reads the Lease — not every second (review95 F6)', () => {
    // Created 00:30:00 with a 3600 s deadline (01:30:00); the server says 01:25:00, the planner 01:30:00.
    const server = new Date('2026-01-01T01:25:00Z');
    const ahead = new Date('2026-01-01T01:30:00Z');
    const j = job({ activeDeadlineSeconds: 3600 }, { phase: 'Running', startTime: '2026-01-01T00:30:00Z' });
    const p = plan({ job: j, pods: [running(0), fresh(1)], lease: { ...notRead, serverNow: server } }, ahead);
    assert.deepEqual(p.actions, []);
    assert.equal(p.requeueAfterSeconds, 295, '01:29:55 by the server\'s clock');
    assert.match(p.notes?.join('\n') ?? '', /would record the verdict: no claims after it: nothing planned, looking again in 295s/);
    // Then the observation reads the Lease (it asks skewSeconds ahead of the server's clock), and the planner decides.
    const spec = parseEjobSpec(j.spec);
    assert.ok(spec.ok);
    const at = (iso: string): boolean => leaseNeeded(j, spec.spec, [running(0), fresh(1)], new Date(Date.parse(iso) + cfg.skewSeconds * 1000)).needed;
    assert.deepEqual([at('2026-01-01T01:29:54Z'), at('2026-01-01T01:29:55Z')], [false, true]);
  });

  test('what the pods alone decide: the Lease is needed when no pod holds a slot, a slot is free for a target, or a verdict is due', () => {
    const need = (spec: Record<string, unknown>, pods: Pod[]): string => {
      const parsed = parseEjobSpec(job(spec).spec);
      assert.ok(parsed.ok);
      const r = leaseNeeded(job(spec), parsed.spec, pods, now);
      return `${r.needed ? 'read' : 'skip'}: ${r.why}`;
    };
    assert.match(need({}, [fresh(0)]), /^read: no pod holds a slot/);
    assert.match(need({}, [running(0), fresh(1)]), /^skip: .*1 of 1 slots held; phase Running/);
    assert.match(need({ parallelism: 2 }, [running(0), fresh(1)]), /^read: 1 of 2 slots held: a pod may be claimed/);
    assert.match(need({ parallelism: 2 }, [running(0), done(1)]), /^skip: .*no target pod left to inject/);
    assert.match(need({ parallelism: 2, paused: true }, [running(0), fresh(1)]), /^skip: .*paused; phase Paused/);
    assert.match(need({ parallelism: 0 }, [running(0), fresh(1)]), /^skip: .*1 of 0 slots held/);
    // A failed pod still holding a slot (its other container runs) can end the job: the seal needs the Lease.
    const failedHolding = makePod(0, { owner: 'ours', states: ['running', 'badimage'], startedAgo: 1, inactive: 'no', matches: true, created: 0 }, ['ec', 'ec2'], BASE);
    assert.match(need({ template: { ephemeralContainers: [container('ec'), container('ec2')] } }, [failedHolding]), /^read: phase Failed: the verdict is sealed on the Lease/);
  });

  test('a resume reads the Lease: its startTime is the later of the planner\'s clock and the server\'s read with it (review88 F2)', () => {
    const parsed = parseEjobSpec(job().spec);
    assert.ok(parsed.ok);
    assert.match(leaseNeeded(job({}, { phase: 'Paused' }), parsed.spec, [running(0), fresh(1)], now).why, /^resumed/);
    assert.equal(leaseNeeded(job({}, { phase: 'Running' }), parsed.spec, [running(0), fresh(1)], now).needed, false, 'the same pods, not a resume');
    // Still paused, its status Paused: no resume, no claim, so a slot held skips the Lease (review92 G7).
    const paused = parseEjobSpec(job({ parallelism: 2, paused: true }).spec);
    assert.ok(paused.ok);
    assert.match(leaseNeeded(job({ parallelism: 2, paused: true }, { phase: 'Paused' }), paused.spec, [running(0), fresh(1)], now).why, /^no claim, seal or repair is possible \(paused; phase Paused\)/);
  });
});
