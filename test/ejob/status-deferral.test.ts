// The status write that waits for the kubelet's first report on an injected pod
// (ejob/status-deferral.ts), through the planner: when it waits, when it must not.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { EphemeralJobObject } from '../../functions/api/ephemeraljob.ts';
import type { Pod } from '../../functions/api/pod.ts';
import type { Action } from '../../functions/engine/plan.ts';
import type { LeaseRecord } from '../../functions/ejob/lease-record.ts';
import { DEFAULT_LEASE, plan, type ObservedLease } from '../../functions/ejob/planner.ts';

const UID = 'job-uid';
const NOW = new Date('2026-01-01T01:00:00Z');
const template = { ephemeralContainers: [{ name: 'ec', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'main' }] };
const cfg = { ...DEFAULT_LEASE, name: 'ejob-ns-j' };

function job(status?: Record<string, unknown>, spec: Record<string, unknown> = {}): EphemeralJobObject {
  return {
    metadata: { name: 'j', namespace: 'ns', uid: UID, generation: 1, resourceVersion: '5', creationTimestamp: '2026-01-01T00:30:00Z' },
    spec: { selector: { matchLabels: { app: 'x' } }, template, ...spec },
    ...(status ? { status: status as never } : {}),
  };
}

/** ec: 'none' not injected; 'unreported' injected, no container status yet; else the container's state. */
function pod(name: string, created: number, ec: 'none' | 'unreported' | 'running' | 'ok'): Pod {
  const p: Pod = {
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, labels: { app: 'x' }, creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, created)).toISOString() },
    spec: { containers: [{ name: 'main' }] },
    status: { phase: 'Running' },
  };
  if (ec === 'none') return p;
  p.spec = { ...p.spec, ephemeralContainers: [{ name: 'ec', env: [{ name: 'KRUISE_EJOB_ID', value: UID }] }] };
  if (ec !== 'unreported') p.status = { ...p.status, ephemeralContainerStatuses: [{ name: 'ec', state: ec === 'running' ? { running: {} } : { terminated: { exitCode: 0 } } }] };
  return p;
}

function lease(claims: { pod: string; secondsAgo: number }[], total: number): ObservedLease {
  const record: LeaseRecord = { v: 1, job: UID, total, claims: claims.map((c) => ({ pod: c.pod, uid: `uid-${c.pod}`, at: new Date(NOW.getTime() - c.secondsAgo * 1000).toISOString() })) };
  return { view: { kind: 'ours', resourceVersion: '9', record }, serverNow: NOW, cfg };
}

const running = { phase: 'Running', match: 2, succeeded: 0, failed: 0, running: 1, waiting: 0, startTime: '2026-01-01T00:30:00Z', conditions: [] };
const statusWrite = (actions: Action[]): Action | undefined => actions.find((a) => a.subresource === 'status');
const injections = (actions: Action[]): string[] => actions.filter((a) => a.subresource === 'ephemeralcontainers').map((a) => a.name);

describe('EphemeralJob status deferral', () => {
  test('a reconcile that injects (phase unchanged) defers the status write, and requeues within the claim window', () => {
    // a finished, so b is injected; the status would say succeeded 1, waiting 1.
    const p = plan({ job: job(running), pods: [pod('a', 1, 'ok'), pod('b', 2, 'none')], lease: lease([{ pod: 'a', secondsAgo: 60 }], 1) }, NOW);
    assert.deepEqual(injections(p.actions), ['b']);
    assert.equal(statusWrite(p.actions), undefined);
    assert.ok(p.requeueAfterSeconds !== undefined && p.requeueAfterSeconds <= cfg.leaseSeconds + cfg.skewSeconds, `requeue ${p.requeueAfterSeconds}`);
  });

  test('the pod event of the injection itself (containers shown, no report yet, claim in the window) writes nothing', () => {
    const p = plan({ job: job(running), pods: [pod('a', 1, 'ok'), pod('b', 2, 'unreported')], lease: lease([{ pod: 'b', secondsAgo: 2 }], 2) }, NOW);
    assert.deepEqual(p.actions, []);
    assert.equal(p.requeueAfterSeconds, cfg.leaseSeconds + cfg.skewSeconds - 2);
  });

  test('the kubelet report writes the status, with everything deferred folded in', () => {
    const p = plan({ job: job(running), pods: [pod('a', 1, 'ok'), pod('b', 2, 'running')], lease: lease([{ pod: 'b', secondsAgo: 3 }], 2) }, NOW);
    const s = (statusWrite(p.actions)?.body as { status: Record<string, unknown> }).status;
    assert.deepEqual([s.succeeded, s.running, s.waiting], [1, 1, 0]);
  });

  test('no report by the end of the claim window: the status is written as it is (waiting)', () => {
    const p = plan({ job: job(running), pods: [pod('a', 1, 'ok'), pod('b', 2, 'unreported')], lease: lease([{ pod: 'b', secondsAgo: 21 }], 2) }, NOW);
    const s = (statusWrite(p.actions)?.body as { status: Record<string, unknown> }).status;
    assert.deepEqual([s.succeeded, s.running, s.waiting], [1, 0, 1]);
  });

  test('an injected pod with no claim left in the record (released by a later claim write) does not defer', () => {
    const p = plan({ job: job(running), pods: [pod('a', 1, 'ok'), pod('b', 2, 'unreported')], lease: lease([], 2) }, NOW);
    assert.ok(statusWrite(p.actions));
  });

  test("the job's first status write is never deferred (a user sees the job picked up at once)", () => {
    const p = plan({ job: job(), pods: [pod('a', 1, 'none')], lease: lease([], 0) }, NOW);
    assert.deepEqual(injections(p.actions), ['a']);
    assert.equal((statusWrite(p.actions)?.body as { status: Record<string, unknown> }).status.waiting, 1);
  });

  test('a phase change is never deferred (a verdict, or Waiting → Running)', () => {
    const waitingJob = job({ ...running, phase: 'Waiting', running: 0, waiting: 1, match: 2 }, { parallelism: 2 });
    const p = plan({ job: waitingJob, pods: [pod('a', 1, 'running'), pod('b', 2, 'none')], lease: lease([], 1) }, NOW);
    assert.deepEqual(injections(p.actions), ['b']);
    assert.equal((statusWrite(p.actions)?.body as { status: Record<string, unknown> }).status.phase, 'Running');
  });
});
