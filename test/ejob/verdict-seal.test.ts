// The verdict is sealed on the job's Lease before the status says it (claims.ts, planner.ts):
// chaos seed 443 found a verdict written from one view of the pods while another instance,
// from an older view, claimed and injected a pod that appeared late, so the finished job's
// counters no longer matched its pods. Sealing first makes the two writes race on one Lease.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { EphemeralJobObject } from '../../functions/api/ephemeraljob.ts';
import type { Pod } from '../../functions/api/pod.ts';
import type { Action } from '../../functions/engine/plan.ts';
import { CLAIMS_ANNOTATION, type LeaseRecord } from '../../functions/ejob/lease-record.ts';
import { DEFAULT_LEASE, plan, type ObservedLease } from '../../functions/ejob/planner.ts';

const UID = 'job-uid';
const NOW = new Date('2026-01-01T01:00:00Z');
const template = { ephemeralContainers: [{ name: 'ec', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'main' }] };
const cfg = { ...DEFAULT_LEASE, name: 'ejob-ns-j', key: 'EphemeralJob/ns/j' };

const job = (status?: Record<string, unknown>): EphemeralJobObject => ({
  metadata: { name: 'j', namespace: 'ns', uid: UID, generation: 1, resourceVersion: '5', creationTimestamp: '2026-01-01T00:30:00Z' },
  spec: { selector: { matchLabels: { app: 'x' } }, parallelism: 2, template },
  ...(status ? { status: status as never } : {}),
});

/** A matching pod; done: it holds the job's container, exited 0. */
function pod(name: string, created: number, done: boolean): Pod {
  const p: Pod = {
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, labels: { app: 'x' }, creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, created)).toISOString() },
    spec: { containers: [{ name: 'main' }] },
    status: { phase: 'Running' },
  };
  if (!done) return p;
  p.spec = { ...p.spec, ephemeralContainers: [{ name: 'ec', env: [{ name: 'KRUISE_EJOB_ID', value: UID }] }] };
  p.status = { ...p.status, ephemeralContainerStatuses: [{ name: 'ec', state: { terminated: { exitCode: 0 } } }] };
  return p;
}

/** A pod the job injected two containers into: one could not start (the pod failed), the other still `second`. */
function failedPod(name: string, created: number, second: 'running' | 'exited'): Pod {
  const p = pod(name, created, false);
  const env = [{ name: 'KRUISE_EJOB_ID', value: UID }];
  p.spec = { ...p.spec, ephemeralContainers: [{ name: 'ec', env }, { name: 'broken', env }] };
  const state = second === 'running' ? { running: {} } : { terminated: { exitCode: 0 } };
  p.status = { ...p.status, ephemeralContainerStatuses: [{ name: 'ec', state }, { name: 'broken', state: { waiting: { reason: 'InvalidImageName' } } }] };
  return p;
}

/** A pod whose job container runs. */
function runningPod(name: string, created: number): Pod {
  const p = pod(name, created, true);
  p.status = { ...p.status, ephemeralContainerStatuses: [{ name: 'ec', state: { running: {} } }] };
  return p;
}

const lease = (record: Partial<LeaseRecord> = {}): ObservedLease => ({ view: { kind: 'ours', resourceVersion: '9', record: { v: 1, job: UID, total: 2, claims: [], ...record } }, serverNow: NOW, cfg });
const running = { phase: 'Running', match: 2, succeeded: 1, failed: 0, running: 1, waiting: 0, startTime: '2026-01-01T00:30:01Z' };
const statusOf = (actions: Action[]): Record<string, unknown> | undefined => (actions.find((a) => a.subresource === 'status')?.body as { status: Record<string, unknown> } | undefined)?.status;
const recordOf = (a: Action | undefined): LeaseRecord => JSON.parse((a?.body as { metadata: { annotations: Record<string, string> } }).metadata.annotations[CLAIMS_ANNOTATION] ?? 'null') as LeaseRecord;

describe('EphemeralJob verdict sealed on the Lease', () => {
  test('the verdict is recorded on the Lease, at the resourceVersion read, before the status says it', () => {
    const p = plan({ job: job(running), pods: [pod('a', 1, true), pod('b', 2, true)], lease: lease() }, NOW);
    const [first] = p.actions;
    assert.equal(first?.kind, 'Lease');
    assert.equal(first?.verb, 'update');
    assert.equal((first?.body as { metadata: { resourceVersion?: string } }).metadata.resourceVersion, '9', 'fenced like a claim');
    assert.equal(recordOf(first).finished, true);
    assert.deepEqual(recordOf(first).claims, []);
    assert.equal(statusOf(p.actions)?.phase, 'Succeeded');
    assert.ok(p.actions.findIndex((a) => a.kind === 'Lease') < p.actions.findIndex((a) => a.subresource === 'status'));
  });

  test('no verdict while a claimed pod out of the selector may still get its injection: Running until the claim\'s retention ends, then the verdict', () => {
    // c was claimed 3 s ago and relabelled out before its injection landed; a and b are done.
    const claimedAt = new Date(NOW.getTime() - 3_000).toISOString();
    const away = { ...pod('c', 3, false), metadata: { ...pod('c', 3, false).metadata, labels: { app: 'elsewhere' } } };
    const withC = (unlisted: Pod | null): ObservedLease => ({ ...lease({ total: 3, claims: [{ pod: 'c', uid: 'uid-c', at: claimedAt }] }), unlisted: new Map([['c', unlisted]]) });
    const waiting = plan({ job: job(running), pods: [pod('a', 1, true), pod('b', 2, true)], lease: withC(away) }, NOW);
    assert.deepEqual(waiting.actions.filter((a) => a.kind === 'Lease'), [], 'no seal: the injection may land once c is back');
    assert.equal(statusOf(waiting.actions)?.phase ?? running.phase, 'Running');
    assert.ok((waiting.requeueAfterSeconds ?? 0) > 0 && (waiting.requeueAfterSeconds ?? 0) <= 25 - 3, `looked at again when the claim ends: ${waiting.requeueAfterSeconds}`);
    const gone = plan({ job: job(running), pods: [pod('a', 1, true), pod('b', 2, true)], lease: withC(null) }, NOW);
    assert.equal(recordOf(gone.actions.find((a) => a.kind === 'Lease')).finished, true, 'c is gone for good: the verdict is sealed');
    assert.equal(statusOf(gone.actions)?.phase, 'Succeeded');
  });

  test('a verdict the counted targets give and the narrowed ones do not waits: the one replica claimed on a pod relabelled out, a matching pod the containers cannot go into — no seal, no Failed, until the claim\'s retention ends (review92 G1)', () => {
    // replicas 1, spent on c (claimed 3 s ago, its injection not landed, then relabelled out of
    // the selector); u matches but has no container 'main'. Counted, u is a failed target and the
    // job Failed; narrowed to the replicas left (none) there is no target, and c may still land.
    const j = { ...job({ phase: 'Waiting', match: 0, succeeded: 0, failed: 0, running: 0, waiting: 0, startTime: '2026-01-01T00:30:01Z' }), spec: { ...(job().spec as object), replicas: 1, parallelism: 1 } } as EphemeralJobObject;
    const unfit: Pod = { ...pod('u', 1, false), spec: { containers: [{ name: 'other' }] } };
    const away: Pod = { ...pod('c', 2, false), metadata: { ...pod('c', 2, false).metadata, labels: { app: 'elsewhere' } } };
    const claimedAgo = (s: number): ObservedLease => lease({ total: 1, claims: [{ pod: 'c', uid: 'uid-c', at: new Date(NOW.getTime() - s * 1000).toISOString() }] });
    const waiting = plan({ job: j, pods: [unfit, away], lease: claimedAgo(3) }, NOW);
    assert.deepEqual(waiting.actions.filter((a) => a.kind === 'Lease'), [], 'no seal while c\'s injection may land');
    assert.deepEqual(waiting.actions.filter((a) => a.kind === 'Event'), [], 'no Event: no JobFailed, no failed pod told');
    const st = statusOf(waiting.actions);
    assert.ok(st === undefined || !['Succeeded', 'Failed'].includes(st.phase as string), `not final: ${JSON.stringify(st)}`);
    assert.deepEqual({ match: st?.match ?? 0, failed: st?.failed ?? 0 }, { match: 0, failed: 0 }, 'counted as the narrowed targets');
    assert.ok((waiting.requeueAfterSeconds ?? 0) > 0, 'looked at again');
    // Past the claim's retention c can no longer land: the verdict, u counted failed.
    const after = plan({ job: j, pods: [unfit, away], lease: claimedAgo(30) }, NOW);
    assert.equal(recordOf(after.actions.find((a) => a.kind === 'Lease')).finished, true);
    const verdict = statusOf(after.actions);
    assert.deepEqual({ phase: verdict?.phase, match: verdict?.match, failed: verdict?.failed }, { phase: 'Failed', match: 1, failed: 1 });
    assert.ok(after.actions.some((a) => a.kind === 'Event' && (a.body as { reason?: string }).reason === 'JobFailed'), 'JobFailed Event');
  });

  test('after the seal, a pod that appears late is neither claimed nor injected, and the counts stay the verdict\'s', () => {
    const pods = [pod('a', 1, true), pod('b', 2, true), pod('late', 3, false)];
    const p = plan({ job: job(running), pods, lease: lease({ finished: true }) }, NOW);
    assert.equal(p.actions.filter((a) => a.kind === 'Lease' || a.subresource === 'ephemeralcontainers').length, 0);
    const status = statusOf(p.actions);
    assert.equal(status?.phase, 'Succeeded');
    assert.equal(status?.match, 2);
    assert.equal(status?.succeeded, 2);
  });

  test('before the seal, the same late pod is a target: it is claimed first, and no verdict is written', () => {
    const pods = [pod('a', 1, true), pod('b', 2, true), pod('late', 3, false)];
    const p = plan({ job: job(running), pods, lease: lease() }, NOW);
    assert.equal(recordOf(p.actions[0]).claims.map((c) => c.pod).join(), 'late');
    assert.equal(recordOf(p.actions[0]).finished, undefined);
    assert.notEqual(statusOf(p.actions)?.phase, 'Succeeded');
  });

  test('after the seal, while a pod still holds a slot, a late pod is counted like any other but never claimed; once no pod holds a slot the verdict\'s counts return', () => {
    // The verdict (Failed: a done, b failed) was sealed while b's first container still ran; its status write was lost.
    const sealed = lease({ finished: true });
    const held = plan({ job: job(running), pods: [pod('a', 1, true), failedPod('b', 2, 'running'), pod('late', 3, false)], lease: sealed }, NOW);
    assert.equal(held.actions.filter((a) => a.kind === 'Lease' || a.subresource === 'ephemeralcontainers').length, 0, 'sealed: nothing claimed, nothing injected');
    assert.deepEqual([statusOf(held.actions)?.phase, statusOf(held.actions)?.match], ['Running', 3]);
    const freed = plan({ job: job(running), pods: [pod('a', 1, true), failedPod('b', 2, 'exited'), pod('late', 3, false)], lease: sealed }, NOW);
    assert.equal(freed.actions.filter((a) => a.kind === 'Lease' || a.subresource === 'ephemeralcontainers').length, 0);
    const s = statusOf(freed.actions);
    assert.deepEqual([s?.phase, s?.match, s?.succeeded, s?.failed], ['Failed', 2, 1, 1]);
  });

  test('a job whose replicas went to a pod claimed and then deleted finishes with the pods it injected, once no pod holds a slot', () => {
    // replicas 2: a pod claimed earlier went before it showed the containers (it stays
    // counted: it may have got them), a is done, `late` is pending but can never be claimed.
    const limited = (status: Record<string, unknown>): EphemeralJobObject => ({ ...job(status), spec: { ...(job().spec as object), replicas: 2 } } as EphemeralJobObject);
    const used = lease({ total: 2 });
    const p = plan({ job: limited(running), pods: [pod('a', 1, true), pod('late', 3, false)], lease: used }, NOW);
    assert.equal(p.actions.filter((a) => a.subresource === 'ephemeralcontainers').length, 0);
    assert.equal(recordOf(p.actions[0]).finished, true, 'sealed');
    const s = statusOf(p.actions);
    assert.deepEqual([s?.phase, s?.match, s?.succeeded], ['Succeeded', 1, 1]);
    // While a pod holds a slot the pods alone say which are targets (as the observation
    // that skips the Lease sees them): `late` counts, is not claimed, and the job runs on.
    const runningPod = { ...pod('a', 1, false), spec: { ...pod('a', 1, true).spec }, status: { phase: 'Running', ephemeralContainerStatuses: [{ name: 'ec', state: { running: {} } }] } } as Pod;
    const held = plan({ job: limited(running), pods: [runningPod, pod('late', 3, false)], lease: used }, NOW);
    assert.equal(held.actions.filter((a) => a.kind === 'Lease' || a.subresource === 'ephemeralcontainers').length, 0);
    const st = statusOf(held.actions) ?? running;
    assert.deepEqual([st.phase, st.match], ['Running', 2]);
  });

  test('replicas partly spent on a pod that is gone: the status counts the same targets whether a slot is held or not, one write per pod, until the verdict narrows them (review88 F1)', () => {
    // replicas 3, one went to a pod since deleted (total 1), four pods pending, parallelism 1.
    // Each look applied as the API server would; then a look at the same instant, then the pod exits.
    let j = { ...job(), spec: { ...(job().spec as object), replicas: 3, parallelism: 1 } } as EphemeralJobObject;
    let pods = ['p1', 'p2', 'p3', 'p4'].map((n, i) => pod(n, i, false));
    let record: LeaseRecord = { v: 1, job: UID, total: 1, claims: [] };
    const writes: string[] = [];
    let at = NOW.getTime();
    const look = (): void => {
      const p = plan({ job: j, pods, lease: { ...lease(record), serverNow: new Date(at) } }, new Date(at));
      for (const a of p.actions) {
        if (a.kind === 'Lease') record = recordOf(a);
        if (a.subresource === 'ephemeralcontainers') pods = pods.map((x) => (x.metadata.name === a.name ? { ...runningPod(x.metadata.name, 0), metadata: x.metadata, status: { phase: 'Running', ephemeralContainerStatuses: [] } } : x));
        if (a.subresource === 'status' && a.unless === undefined) {
          const st = (a.body as { status: Record<string, unknown> }).status;
          j = { ...j, status: { ...(j.status ?? {}), ...st } as never };
          writes.push(`${st.phase} ${st.match}/${st.succeeded}/${st.waiting}`);
        }
      }
    };
    const exit = (name: string): void => { pods = pods.map((x) => (x.metadata.name === name ? { ...x, status: { phase: 'Running', ephemeralContainerStatuses: [{ name: 'ec', state: { terminated: { exitCode: 0 } } }] } } : x)); };
    for (const name of ['p1', 'p2']) {
      look();
      look();
      at += 30_000;
      exit(name);
    }
    look();
    // Before: Waiting 2/0/1, Waiting 3/0/1, Running 2/1/1, Running 3/1/1, Succeeded 2/2/0: match swung with every claim.
    assert.deepEqual(writes, ['Waiting 3/0/1', 'Running 3/1/1', 'Succeeded 2/2/0']);
  });

  test('a pod claimed and not shown injected counts right after the injected ones, before an older pending pod: the status the claim\'s injection writes is the one its landing shows (review92 G6)', () => {
    // replicas 1: a is older and pending, b newer and claimed 8 s ago (past renewal, a third of
    // leaseSeconds), so this plan injects b again. Counted oldest first instead, a took the one
    // place: waiting 0 now, waiting 1 once b shows its container, a status write more.
    const j = { ...job({ phase: 'Waiting', match: 1, succeeded: 0, failed: 0, running: 0, waiting: 1, startTime: '2026-01-01T00:30:01Z' }), spec: { ...(job().spec as object), replicas: 1, parallelism: 1 } } as EphemeralJobObject;
    const claimed = lease({ total: 1, claims: [{ pod: 'b', uid: 'uid-b', at: new Date(NOW.getTime() - 8_000).toISOString() }] });
    const counts = (st: Record<string, unknown> | undefined): string => `${st?.phase} ${st?.match}/${st?.waiting}`;
    const renewing = plan({ job: j, pods: [pod('a', 1, false), pod('b', 2, false)], lease: claimed }, NOW);
    assert.deepEqual(renewing.actions.filter((a) => a.subresource === 'ephemeralcontainers').map((a) => a.name), ['b']);
    const withInjection = renewing.actions.find((a) => a.subresource === 'status' && a.unless === undefined);
    const landedPod = { ...runningPod('b', 2), status: { phase: 'Running' } } as Pod;
    const landed = plan({ job: j, pods: [pod('a', 1, false), landedPod], lease: claimed }, NOW);
    assert.equal(counts((withInjection?.body as { status: Record<string, unknown> }).status), 'Waiting 1/1');
    assert.equal(counts(statusOf(landed.actions)), 'Waiting 1/1', 'b injected: the same counts');
  });

  test('a job whose every replica went to pods that are gone, with nothing left to claim, fails (PodsGone) instead of waiting for good', () => {
    // replicas 1: the one pod it injected was deleted and created again under its name
    // before it gave a result; the new pod may not be claimed (replicas spent), nothing
    // holds a slot. Before: match 0, Waiting, for good.
    const one = { ...job(running), spec: { ...(job().spec as object), replicas: 1 } } as EphemeralJobObject;
    const p = plan({ job: one, pods: [pod('again', 9, false)], lease: lease({ total: 1 }) }, NOW);
    assert.equal(p.actions.filter((a) => a.subresource === 'ephemeralcontainers').length, 0);
    assert.deepEqual(recordOf(p.actions[0]).verdict, { phase: 'Failed', match: 0, succeeded: 0, failed: 0, failedBy: 'gone' });
    const s = statusOf(p.actions);
    assert.equal(s?.phase, 'Failed');
    const conditions = (s?.conditions ?? []) as { type: string; reason?: string; message?: string }[];
    assert.equal(conditions.find((c) => c.type === 'JobFailed')?.reason, 'PodsGone');
    // A pod relabelled out is no target either, though it may still run: the message does not say "deleted" alone (review).
    assert.match(conditions.find((c) => c.type === 'JobFailed')?.message ?? '', /deleted, ended or left the selector/);
    // Not while paused: held, not judged (review: sealed Failed while paused, before the user could raise replicas).
    const paused = { ...one, spec: { ...(one.spec as object), paused: true } } as EphemeralJobObject;
    const held = plan({ job: paused, pods: [pod('again', 9, false)], lease: lease({ total: 1 }) }, NOW);
    assert.deepEqual([statusOf(held.actions)?.phase, held.actions.filter((a) => a.kind === 'Lease').length], ['Paused', 0]);
    // Not while a claim is in flight (it may still land), and not with replicas left.
    const inFlight = lease({ total: 1, claims: [{ pod: 'again', uid: 'uid-again', at: new Date(NOW.getTime() - 2000).toISOString() }] });
    assert.notEqual(statusOf(plan({ job: one, pods: [pod('again', 9, false)], lease: inFlight }, NOW).actions)?.phase, 'Failed');
    // A verdict sealed before (its status write lost) is written as it was, not PodsGone.
    const sealedBefore = lease({ total: 1, finished: true, verdict: { phase: 'Succeeded', match: 1, succeeded: 1, failed: 0 } });
    assert.equal(statusOf(plan({ job: one, pods: [pod('again', 9, false)], lease: sealedBefore }, NOW).actions)?.phase, 'Succeeded');
    const two = { ...one, spec: { ...(one.spec as object), replicas: 2 } } as EphemeralJobObject;
    assert.equal(recordOf(plan({ job: two, pods: [pod('again', 9, false)], lease: lease({ total: 1 }) }, NOW).actions[0]).claims.map((c) => c.pod).join(), 'again', 'a replica left: the new pod is claimed');
  });

  test('the seal records the verdict, and a deadline verdict says so', () => {
    const sealed = recordOf(plan({ job: job(running), pods: [pod('a', 1, true), pod('b', 2, true)], lease: lease() }, NOW).actions[0]);
    assert.deepEqual(sealed.verdict, { phase: 'Succeeded', match: 2, succeeded: 2, failed: 0 });
    const late = { ...job(running), spec: { ...(job().spec as object), activeDeadlineSeconds: 60 } } as EphemeralJobObject;
    const byDeadline = recordOf(plan({ job: late, pods: [pod('a', 1, true), pod('b', 2, false)], lease: lease() }, NOW).actions[0]);
    assert.deepEqual(byDeadline.verdict, { phase: 'Failed', match: 2, succeeded: 1, failed: 0, failedBy: 'deadline' });
  });

  test('a verdict whose status write was lost is still written when the pods that decided it are gone or ended before the next plan', () => {
    // Sealed Succeeded (a and b done); the status write was lost; then a was deleted and b's
    // pod completed (no longer a target), and a new pod appeared. From the pods alone the job
    // matches nothing it injected: Waiting — and a sealed record claims nothing, so it would
    // wait for good. The recorded verdict is written instead, with its counts.
    const verdict = { phase: 'Succeeded' as const, match: 2, succeeded: 2, failed: 0 };
    const ended = { ...pod('b', 2, true), status: { ...pod('b', 2, true).status, phase: 'Succeeded' } };
    const p = plan({ job: job(running), pods: [ended, pod('new', 9, false)], lease: lease({ finished: true, verdict }) }, NOW);
    assert.equal(p.actions.filter((a) => a.kind === 'Lease' || a.subresource === 'ephemeralcontainers').length, 0, 'nothing claimed, the seal not written again');
    const s = statusOf(p.actions);
    assert.deepEqual([s?.phase, s?.match, s?.succeeded, s?.failed, s?.running, s?.waiting], ['Succeeded', 2, 2, 0, 0, 0]);
    assert.ok(s?.completionTime, 'finished: the next plan leaves it alone');
    // A Failed verdict by deadline keeps its reason.
    const failed = plan({ job: job(running), pods: [], lease: lease({ finished: true, verdict: { phase: 'Failed', match: 2, succeeded: 1, failed: 0, failedBy: 'deadline' } }) }, NOW);
    const conditions = (statusOf(failed.actions)?.conditions ?? []) as { type: string; reason?: string }[];
    assert.equal(conditions.find((c) => c.type === 'JobFailed')?.reason, 'DeadlineExceeded');
    // A record sealed before verdicts were recorded plans as before (from the pods).
    assert.equal(statusOf(plan({ job: job(running), pods: [], lease: lease({ finished: true }) }, NOW).actions)?.phase, 'Waiting');
  });

  test('a deadline verdict, decided while pods ran, is written again as it was decided (review: its counts added up to nothing)', () => {
    const started = { ...running, startTime: '2026-01-01T00:30:01Z' };
    const past = { ...job(started), spec: { ...(job(started).spec as object), activeDeadlineSeconds: 60 } } as EphemeralJobObject;
    const sealing = plan({ job: past, pods: [runningPod('a', 1), runningPod('b', 2)], lease: lease() }, NOW);
    const verdict = recordOf(sealing.actions[0]).verdict;
    assert.deepEqual([verdict?.phase, verdict?.failedBy, verdict?.running], ['Failed', 'deadline', 2]);
    // Its status write was lost; both pods ended before the next plan.
    const again = plan({ job: past, pods: [pod('a', 1, true), pod('b', 2, true)], lease: lease({ finished: true, verdict }) }, NOW);
    assert.deepEqual(statusOf(again.actions), statusOf(sealing.actions));
  });

  test('a verdict whose status write was lost is written as sealed even when the pods now give another one (review)', () => {
    // Sealed Failed: a done, b failed. The status write was lost, then b was deleted: from the
    // pods alone the job would now be Succeeded (1 of 1).
    const sealing = plan({ job: job(running), pods: [pod('a', 1, true), failedPod('b', 2, 'exited')], lease: lease() }, NOW);
    const verdict = recordOf(sealing.actions[0]).verdict;
    assert.deepEqual([verdict?.phase, verdict?.failed], ['Failed', 1]);
    const again = plan({ job: job(running), pods: [pod('a', 1, true)], lease: lease({ finished: true, verdict }) }, NOW);
    assert.deepEqual(statusOf(again.actions), statusOf(sealing.actions));
  });
});
