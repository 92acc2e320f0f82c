import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { EphemeralJobObject, EphemeralJobSpec } from '../../functions/api/ephemeraljob.ts';
import type { Pod } from '../../functions/api/pod.ts';
import { planJobEvent, planPodEvent, slotsAfter, type PodEventObserved } from '../../functions/ejob/incremental.ts';
import { buildLedger, readLedger, storedLedger, type Ledger } from '../../functions/ejob/ledger.ts';
import { plan } from '../../functions/ejob/planner.ts';

const UID = 'job-uid';
const NOW = new Date('2026-01-01T01:00:00Z');
const spec: EphemeralJobSpec = {
  selector: { matchLabels: { app: 'x' } },
  parallelism: 1,
  template: { ephemeralContainers: [{ name: 'ec', image: 'busybox' }] },
};

function pod(name: string, ec?: 'waiting' | 'running' | 0 | 1): Pod {
  const p: Pod = {
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, labels: { app: 'x' }, creationTimestamp: `2026-01-01T00:00:0${name.at(-1)}Z` },
    spec: { containers: [{ name: 'main' }] },
    status: { phase: 'Running' },
  };
  if (ec === undefined) return p;
  p.spec.ephemeralContainers = [{ name: 'ec', env: [{ name: 'KRUISE_EJOB_ID', value: UID }] }];
  const state = ec === 'waiting' ? { waiting: { reason: 'ContainerCreating' } } : ec === 'running' ? { running: {} } : { terminated: { exitCode: ec } };
  p.status = { phase: 'Running', ephemeralContainerStatuses: [{ name: 'ec', state }] };
  return p;
}

function job(ledger: Ledger, counts: Partial<Record<'match' | 'succeeded' | 'failed' | 'running' | 'waiting', number>>, s = spec): EphemeralJobObject {
  return {
    metadata: { name: 'j', namespace: 'ns', uid: UID, generation: 1, resourceVersion: '10', creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: s,
    status: { phase: 'Running', match: 0, succeeded: 0, failed: 0, running: 0, waiting: 0, ...counts, startTime: '2026-01-01T00:00:00Z', ephemera: storedLedger(ledger) } as EphemeralJobObject['status'],
  };
}

const ledger = (inflight: Ledger['inflight'], queue: string[], complete = true): Ledger => ({ v: 1, generation: 1, inflight, queue, complete });

function observed(o: Partial<PodEventObserved> & { ledger: Ledger; counts?: Parameters<typeof job>[1] }): PodEventObserved {
  const s = o.spec ?? spec;
  return { job: o.job ?? job(o.ledger, o.counts ?? {}, s), spec: s, ledger: o.ledger, pod: o.pod === undefined ? null : o.pod, candidates: o.candidates ?? [] };
}

type StatusBody = { status: { match: number; succeeded: number; failed: number; running: number; waiting: number; phase: string; ephemera: Ledger } };
const statusOf = (p: ReturnType<typeof planPodEvent>): StatusBody['status'] | undefined => {
  const s = (p.actions.find((a) => a.subresource === 'status')?.body as StatusBody | undefined)?.status;
  return s && { ...s, ephemera: readLedger(s) as Ledger };
};

describe('pod events from the ledger (no LIST)', () => {
  test('a tracked pod whose state did not change: nothing to do', () => {
    const p = planPodEvent(observed({ ledger: ledger({ a: 'running' }, ['b']), pod: pod('a', 'running'), counts: { match: 2, running: 1 } }), NOW);
    assert.deepEqual(p.actions, []);
    assert.equal(p.reobserve, undefined);
  });

  test('waiting → running updates the counts and the ledger, and injects nothing', () => {
    const p = planPodEvent(observed({ ledger: ledger({ a: 'waiting' }, ['b']), pod: pod('a', 'running'), counts: { match: 2, waiting: 1 } }), NOW);
    const s = statusOf(p);
    assert.equal(s?.running, 1);
    assert.equal(s?.waiting, 0);
    assert.equal(s?.phase, 'Running');
    assert.deepEqual(s?.ephemera.inflight, { a: 'running' });
    assert.equal(p.actions.filter((a) => a.subresource === 'ephemeralcontainers').length, 0);
  });

  test('a tracked pod finishing frees its slot: the next queued pod is injected, in the same plan', () => {
    const p = planPodEvent(observed({ ledger: ledger({ a: 'running' }, ['b', 'c']), pod: pod('a', 0), counts: { match: 3, running: 1 }, candidates: [{ name: 'b', pod: pod('b') }] }), NOW);
    const injections = p.actions.filter((a) => a.subresource === 'ephemeralcontainers');
    assert.deepEqual(injections.map((a) => a.name), ['b']);
    const s = statusOf(p);
    assert.deepEqual({ succeeded: s?.succeeded, running: s?.running, waiting: s?.waiting, match: s?.match }, { succeeded: 1, running: 0, waiting: 1, match: 3 });
    assert.deepEqual(s?.ephemera.inflight, { b: 'waiting' });
    assert.deepEqual(s?.ephemera.queue, ['c']);
  });

  test('a queued pod that is gone is dropped from the queue and from match; the next one is used', () => {
    const p = planPodEvent(observed({ ledger: ledger({ a: 'running' }, ['b', 'c', 'd']), pod: pod('a', 1), counts: { match: 4, running: 1 }, candidates: [{ name: 'b', pod: null }, { name: 'c', pod: pod('c') }] }), NOW);
    assert.deepEqual(p.actions.filter((a) => a.subresource === 'ephemeralcontainers').map((a) => a.name), ['c']);
    const s = statusOf(p);
    assert.equal(s?.match, 3);
    assert.equal(s?.failed, 1);
    assert.deepEqual(s?.ephemera.queue, ['d']);
  });

  test('the last pod finishing asks for a full reconcile, so the verdict is taken over every pod', () => {
    const p = planPodEvent(observed({ ledger: ledger({ a: 'running' }, []), pod: pod('a', 0), counts: { match: 1, running: 1 } }), NOW);
    assert.match(p.reobserve ?? '', /final verdict/);
    assert.deepEqual(p.actions, []);
  });

  test('an exhausted, incomplete queue asks for a refill LIST', () => {
    const p = planPodEvent(observed({ ledger: ledger({ a: 'running' }, [], false), pod: pod('a', 0), counts: { match: 500, running: 1 } }), NOW);
    assert.match(p.reobserve ?? '', /refill/);
  });

  test('anything the ledger cannot vouch for goes to a full reconcile', () => {
    const cases: [string, PodEventObserved][] = [
      ['pod is gone', observed({ ledger: ledger({ a: 'running' }, []), pod: null })],
      ['no longer active', observed({ ledger: ledger({ a: 'running' }, []), pod: { ...pod('a', 'running'), status: { phase: 'Failed' } } })],
      ['does not track', observed({ ledger: ledger({}, []), pod: pod('a', 'running') })],
      ['no container of ours', observed({ ledger: ledger({ a: 'running' }, []), pod: pod('a') })],
      ['spec changed', observed({ ledger: { ...ledger({}, []), generation: 0 }, pod: pod('a') })],
      ['free slots', observed({ ledger: ledger({}, ['a']), pod: pod('a') })],
    ];
    for (const [why, o] of cases) assert.match(planPodEvent(o, NOW).reobserve ?? '(none)', new RegExp(why), why);
  });

  test('an untracked finished pod was already counted: duplicate events change nothing', () => {
    const p = planPodEvent(observed({ ledger: ledger({ b: 'running' }, []), pod: pod('a', 0), counts: { match: 2, succeeded: 1, running: 1 } }), NOW);
    assert.deepEqual(p.actions, []);
    assert.equal(p.reobserve, undefined);
  });

  test('a new pod while every slot is busy waits for the next full reconcile (no read of other pods)', () => {
    const p = planPodEvent(observed({ ledger: ledger({ a: 'running' }, ['b']), pod: pod('c'), counts: { match: 2, running: 1 } }), NOW);
    assert.deepEqual(p.actions, []);
    assert.equal(p.reobserve, undefined);
  });

  test('slotsAfter counts the slot the event frees, and none when paused', () => {
    assert.equal(slotsAfter({ ...spec, parallelism: 2 }, ledger({ a: 'running', b: 'waiting' }, ['c']), pod('a', 0), UID), 1);
    assert.equal(slotsAfter({ ...spec, parallelism: 2 }, ledger({ a: 'running', b: 'waiting' }, ['c']), pod('a', 'running'), UID), 0);
    assert.equal(slotsAfter({ ...spec, paused: true }, ledger({ a: 'running' }, ['c']), pod('a', 0), UID), 0);
  });

  test('the ledger a full reconcile writes agrees with what the pod path then reads', () => {
    const pods = [pod('a'), pod('b'), pod('c')];
    const full = plan({ job: { ...job(ledger({}, []), {}), status: undefined }, pods }, NOW);
    const s = statusOf(full as ReturnType<typeof planPodEvent>);
    assert.deepEqual(s?.ephemera, buildLedger(1, [{ pod: pods[0] as Pod, state: 'waiting' }, { pod: pods[1] as Pod, state: 'pending' }, { pod: pods[2] as Pod, state: 'pending' }]));
    assert.deepEqual(s?.ephemera.queue, ['b', 'c']);
  });

  test('a job update outside its spec (our own status write) needs no look at the pods', () => {
    const l = ledger({ a: 'running' }, ['b']);
    const p = planJobEvent({ job: job(l, { match: 2, running: 1 }), spec, ledger: l }, NOW);
    assert.deepEqual(p.actions, []);
    assert.equal(p.reobserve, undefined);
  });

  test('a job update that changed the spec, or passed the deadline, gets a full reconcile', () => {
    const stale = { ...ledger({}, []), generation: 0 };
    assert.match(planJobEvent({ job: job(stale, {}), spec, ledger: stale }, NOW).reobserve ?? '', /spec changed/);
    const l = ledger({ a: 'running' }, []);
    const withDeadline = { ...spec, activeDeadlineSeconds: 60 };
    assert.match(planJobEvent({ job: job(l, {}, withDeadline), spec: withDeadline, ledger: l }, NOW).reobserve ?? '', /activeDeadlineSeconds/);
  });

  test('the deadline counts from creation when the status has no startTime yet, as in a full reconcile', () => {
    const l = ledger({ a: 'running' }, []);
    const withDeadline = { ...spec, activeDeadlineSeconds: 60 };
    const j = job(l, {}, withDeadline);
    const noStart = { ...j, status: { ...j.status, startTime: undefined } } as EphemeralJobObject;
    assert.match(planJobEvent({ job: noStart, spec: withDeadline, ledger: l }, NOW).reobserve ?? '', /activeDeadlineSeconds/);
  });
});
