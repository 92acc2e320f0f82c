// The status write that waits when its only change is pods starting to run
// (ejob/status-deferral.ts), through the planner: when it waits, and when it must not.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { EphemeralJobObject } from '../../functions/api/ephemeraljob.ts';
import type { Pod } from '../../functions/api/pod.ts';
import type { Action } from '../../functions/engine/plan.ts';
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

/** ec: 'none' not injected; 'waiting' injected, not started; 'running' started `startedAgo` seconds before NOW (null: not said); 'ok' exited 0. */
function pod(name: string, created: number, ec: 'none' | 'waiting' | 'running' | 'ok', startedAgo: number | null = 2): Pod {
  const p: Pod = {
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, labels: { app: 'x' }, creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, created)).toISOString() },
    spec: { containers: [{ name: 'main' }] },
    status: { phase: 'Running' },
  };
  if (ec === 'none') return p;
  p.spec = { ...p.spec, ephemeralContainers: [{ name: 'ec', env: [{ name: 'KRUISE_EJOB_ID', value: UID }] }] };
  const running = startedAgo === null ? {} : { startedAt: new Date(NOW.getTime() - startedAgo * 1000).toISOString() };
  const state = ec === 'waiting' ? { waiting: { reason: 'ContainerCreating' } } : ec === 'running' ? { running } : { terminated: { exitCode: 0 } };
  p.status = { ...p.status, ephemeralContainerStatuses: [{ name: 'ec', state }] };
  return p;
}

const lease: ObservedLease = { view: { kind: 'ours', resourceVersion: '9', record: { v: 1, job: UID, total: 1, claims: [] } }, serverNow: NOW, cfg };
const WINDOW = cfg.leaseSeconds + cfg.skewSeconds;
const statusWrite = (actions: Action[]): Record<string, unknown> | undefined => (actions.find((a) => a.subresource === 'status')?.body as { status: Record<string, unknown> } | undefined)?.status;
const injections = (actions: Action[]): string[] => actions.filter((a) => a.subresource === 'ephemeralcontainers').map((a) => a.name);
/** The job with the status the planner writes for these pods (a first write, never deferred). */
function settled(pods: Pod[], spec: Record<string, unknown> = {}): EphemeralJobObject {
  const status = statusWrite(plan({ job: job(undefined, spec), pods, lease }, NOW).actions);
  assert.ok(status, 'a first status write');
  return job(status, spec);
}
/** a finished, b injected and waiting, c next: phase Running. */
const bWaiting = (): EphemeralJobObject => settled([pod('a', 1, 'ok'), pod('b', 2, 'waiting'), pod('c', 3, 'none')]);

describe('EphemeralJob status deferral', () => {
  test('a pod that just started running (waiting → running, nothing else changed) writes nothing yet, and requeues for the end of the window', () => {
    const p = plan({ job: bWaiting(), pods: [pod('a', 1, 'ok'), pod('b', 2, 'running', 2), pod('c', 3, 'none')], lease }, NOW);
    assert.deepEqual(p.actions, []);
    assert.equal(p.requeueAfterSeconds, WINDOW - 2);
  });

  test('its exit is written at once, with the next pod waiting: one status write for the whole pod', () => {
    // The status still says b waiting (its start was deferred); b exits, c is injected.
    const p = plan({ job: bWaiting(), pods: [pod('a', 1, 'ok'), pod('b', 2, 'ok'), pod('c', 3, 'none')], lease }, NOW);
    assert.deepEqual(injections(p.actions), ['c']);
    const s = statusWrite(p.actions);
    assert.deepEqual([s?.succeeded, s?.running, s?.waiting], [2, 0, 1]);
  });

  test('a container still running at the end of the window is shown running', () => {
    const p = plan({ job: bWaiting(), pods: [pod('a', 1, 'ok'), pod('b', 2, 'running', WINDOW), pod('c', 3, 'none')], lease }, NOW);
    assert.deepEqual([statusWrite(p.actions)?.running, statusWrite(p.actions)?.waiting], [1, 0]);
  });

  test('a start that does not say when is shown at once', () => {
    const p = plan({ job: bWaiting(), pods: [pod('a', 1, 'ok'), pod('b', 2, 'running', null), pod('c', 3, 'none')], lease }, NOW);
    assert.equal(statusWrite(p.actions)?.running, 1);
  });

  test('a long runner among the running pods: the flip is shown at once (which pod just started cannot be told from counts)', () => {
    const before = settled([pod('a', 1, 'running', 600), pod('b', 2, 'waiting')], { parallelism: 2, replicas: 2 });
    const p = plan({ job: before, pods: [pod('a', 1, 'running', 600), pod('b', 2, 'running', 1)], lease }, NOW);
    assert.deepEqual([statusWrite(p.actions)?.running, statusWrite(p.actions)?.waiting], [2, 0]);
  });

  test("the job's first status write is never deferred (it sets startTime, which the deadline counts from)", () => {
    const first = plan({ job: job(), pods: [pod('a', 1, 'ok'), pod('b', 2, 'running', 1), pod('c', 3, 'none')], lease }, NOW);
    assert.equal(statusWrite(first.actions)?.running, 1);
    assert.ok(statusWrite(first.actions)?.startTime);
  });

  test('the first start (Waiting → Running, nothing else changed) waits too; its exit writes the whole change', () => {
    const waiting = settled([pod('a', 1, 'waiting'), pod('b', 2, 'none')]);
    assert.equal(waiting.status?.phase, 'Waiting');
    const start = plan({ job: waiting, pods: [pod('a', 1, 'running', 1), pod('b', 2, 'none')], lease }, NOW);
    assert.deepEqual(start.actions, [], 'no status write for the start, nothing else to do (a holds the slot)');
    assert.equal(start.requeueAfterSeconds, WINDOW - 1);
    assert.match(start.notes?.join('\n') ?? '', /Waiting → Running/);
    const exit = plan({ job: waiting, pods: [pod('a', 1, 'ok'), pod('b', 2, 'none')], lease }, NOW);
    assert.deepEqual(injections(exit.actions), ['b']);
    const s = statusWrite(exit.actions);
    assert.deepEqual([s?.phase, s?.succeeded, s?.running, s?.waiting], ['Running', 1, 0, 1]);
  });

  test('Waiting → Running is shown at once when the start is older than the window, or not dated', () => {
    const waiting = settled([pod('a', 1, 'waiting'), pod('b', 2, 'none')]);
    for (const startedAgo of [WINDOW, null]) {
      const p = plan({ job: waiting, pods: [pod('a', 1, 'running', startedAgo), pod('b', 2, 'none')], lease }, NOW);
      assert.deepEqual([statusWrite(p.actions)?.phase, statusWrite(p.actions)?.running, statusWrite(p.actions)?.waiting], ['Running', 1, 0], `started ${String(startedAgo)}s ago`);
    }
  });

  test('Waiting → Running with anything besides starts is written at once: a pod done, or a pod injected by another instance', () => {
    const two = { parallelism: 2, replicas: 2 };
    const waiting = settled([pod('a', 1, 'waiting'), pod('b', 2, 'waiting')], two);
    assert.equal(waiting.status?.phase, 'Waiting');
    const done = plan({ job: waiting, pods: [pod('a', 1, 'running', 1), pod('b', 2, 'ok')], lease }, NOW);
    assert.deepEqual([statusWrite(done.actions)?.phase, statusWrite(done.actions)?.succeeded, statusWrite(done.actions)?.running], ['Running', 1, 1]);
    // The status shows a waiting and b not yet injected; b was injected meanwhile (its injector's own status write not yet landed).
    const one = settled([pod('a', 1, 'waiting'), pod('b', 2, 'none')]);
    const seen = plan({ job: { ...one, spec: { ...(one.spec as Record<string, unknown>), parallelism: 2 } }, pods: [pod('a', 1, 'running', 1), pod('b', 2, 'waiting')], lease }, NOW);
    assert.deepEqual([statusWrite(seen.actions)?.phase, statusWrite(seen.actions)?.running, statusWrite(seen.actions)?.waiting], ['Running', 1, 1]);
  });

  test('other phase changes are never deferred: Paused → Running when the job is resumed', () => {
    const paused = settled([pod('a', 1, 'running', 1), pod('b', 2, 'none')], { paused: true });
    assert.equal(paused.status?.phase, 'Paused');
    const resumed = plan({ job: { ...paused, spec: { ...(paused.spec as Record<string, unknown>), paused: false } }, pods: [pod('a', 1, 'running', 1), pod('b', 2, 'none')], lease }, NOW);
    assert.equal(statusWrite(resumed.actions)?.phase, 'Running');
  });

  test('a plan that injects writes its status (the new pod counted as waiting)', () => {
    // parallelism raised from 1 to 2 while b waited: b starts and c is injected in one plan.
    const before = settled([pod('a', 1, 'ok'), pod('b', 2, 'waiting'), pod('c', 3, 'none')]);
    const p = plan({ job: { ...before, spec: { ...(before.spec as Record<string, unknown>), parallelism: 2 } }, pods: [pod('a', 1, 'ok'), pod('b', 2, 'running', 1), pod('c', 3, 'none')], lease }, NOW);
    assert.deepEqual(injections(p.actions), ['c']);
    assert.deepEqual([statusWrite(p.actions)?.running, statusWrite(p.actions)?.waiting], [1, 1]);
  });
});
