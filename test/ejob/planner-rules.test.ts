// Golden tables for the EphemeralJob planner (pure: no server, no mocks). Default objects
// overridden with spread; each row names the DESIGN.md rule it pins down.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { EphemeralJobObject } from '../../functions/api/ephemeraljob.ts';
import type { Pod } from '../../functions/api/pod.ts';
import type { Action } from '../../functions/engine/plan.ts';
import { DEFAULT_LEASE, plan } from '../../functions/ejob/planner.ts';

const UID = 'job-uid';
const NOW = new Date('2026-01-01T01:00:00Z');
const template = { ephemeralContainers: [{ name: 'ec', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'main' }] };

function job(spec: Record<string, unknown> = {}, extra: Partial<EphemeralJobObject> = {}): EphemeralJobObject {
  return {
    metadata: { name: 'j', namespace: 'ns', uid: UID, generation: 1, resourceVersion: '5', creationTimestamp: '2026-01-01T00:30:00Z' },
    spec: { selector: { matchLabels: { app: 'x' } }, template, ...spec },
    ...extra,
  };
}

type EcState = 'none' | 'waiting' | 'running' | number | { waiting: string };
function pod(name: string, created: number, ec: EcState = 'none', extra: Partial<Pod> & { owner?: string } = {}): Pod {
  const { owner = UID, ...rest } = extra;
  const p: Pod = {
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, labels: { app: 'x' }, creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, created)).toISOString() },
    spec: { containers: [{ name: 'main' }] },
    status: { phase: 'Running' },
    ...rest,
  };
  if (ec !== 'none') {
    p.spec = { ...p.spec, ephemeralContainers: [{ name: 'ec', env: [{ name: 'KRUISE_EJOB_ID', value: owner }] }] };
    const state = ec === 'waiting' ? { waiting: { reason: 'ContainerCreating' } } : ec === 'running' ? { running: {} } : typeof ec === 'number' ? { terminated: { exitCode: ec } } : { waiting: { reason: ec.waiting } };
    p.status = { ...p.status, ephemeralContainerStatuses: [{ name: 'ec', state }] };
  }
  return p;
}

/** A pod whose container of the job exited with `code` at `finishedAt` (hh:mm:ss on 2026-01-01). */
function ended(name: string, created: number, code: number, finishedAt: string): Pod {
  const p = pod(name, created, code);
  return { ...p, status: { phase: 'Running', ephemeralContainerStatuses: [{ name: 'ec', state: { terminated: { exitCode: code, finishedAt: `2026-01-01T${finishedAt}Z` } } }] } };
}

const injections = (actions: Action[]): string[] => actions.filter((a) => a.subresource === 'ephemeralcontainers').map((a) => a.name);
type Cond = { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string };
type Status = { phase?: string; match?: number; succeeded?: number; failed?: number; running?: number; waiting?: number; completionTime?: string; conditions: Cond[] };
const statusOf = (actions: Action[]): Status | undefined => (actions.find((a) => a.subresource === 'status')?.body as { status?: Status } | undefined)?.status;
const cond = (s: Status | undefined, type: string): Cond | undefined => s?.conditions.find((x) => x.type === type);

describe('EphemeralJob planner: targets and injection', () => {
  const cases: { name: string; spec?: Record<string, unknown>; pods: Pod[]; inject: string[]; match?: number }[] = [
    { name: 'oldest first by creationTimestamp, parallelism defaults to 1', pods: [pod('b', 2), pod('a', 3), pod('c', 1)], inject: ['c'], match: 3 },
    { name: 'same creation time: by name', spec: { parallelism: 2 }, pods: [pod('b', 1), pod('a', 1), pod('c', 1)], inject: ['a', 'b'] },
    { name: 'replicas picks the first N targets; match never above replicas', spec: { replicas: 2, parallelism: 10 }, pods: [pod('a', 1), pod('b', 2), pod('c', 3)], inject: ['a', 'b'], match: 2 },
    { name: 'inactive pods (Succeeded, Failed, deleting) are not targets', spec: { parallelism: 10 }, pods: [pod('a', 1, 'none', { status: { phase: 'Succeeded' } }), pod('b', 2, 'none', { status: { phase: 'Failed' } }), pod('c', 3, 'none', { metadata: { name: 'c', namespace: 'ns', labels: { app: 'x' }, deletionTimestamp: '2026-01-01T00:59:00Z' } }), pod('d', 4)], inject: ['d'], match: 1 },
    { name: 'a pod holding a same-name container of another job is skipped', spec: { parallelism: 10 }, pods: [pod('a', 1, 'running', { owner: 'other-uid' }), pod('b', 2)], inject: ['b'], match: 1 },
    { name: 'a pod not matching the selector is ignored', spec: { parallelism: 10 }, pods: [pod('a', 1, 'none', { metadata: { name: 'a', namespace: 'ns', labels: { app: 'y' } } }), pod('b', 2)], inject: ['b'], match: 1 },
    { name: 'waiting counts against parallelism, not only running', spec: { parallelism: 2 }, pods: [pod('a', 1, 'waiting'), pod('b', 2, 'running'), pod('c', 3)], inject: [] },
    { name: 'injected with no status yet counts as waiting', spec: { parallelism: 1 }, pods: [{ ...pod('a', 1, 'running'), status: { phase: 'Running' } }, pod('b', 2)], inject: [] },
    { name: 'a finished pod frees its slot; never injected twice', spec: { parallelism: 1 }, pods: [pod('a', 1, 0), pod('b', 2)], inject: ['b'] },
    { name: 'parallelism 0 pauses creation', spec: { parallelism: 0 }, pods: [pod('a', 1)], inject: [] },
    { name: 'paused: nothing injected', spec: { paused: true }, pods: [pod('a', 1)], inject: [] },
    { name: 'matchExpressions select too', spec: { selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['x'] }] } }, pods: [pod('a', 1)], inject: ['a'] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const p = plan({ job: job(c.spec), pods: c.pods }, NOW);
      assert.deepEqual(injections(p.actions), c.inject);
      if (c.match !== undefined) assert.equal(statusOf(p.actions)?.match, c.match);
    });
  }

  test('replicas: an injected pod keeps its place while it runs; a pod that looks older, selected after it, is no target (review64 TG1)', () => {
    // targets.ts selectTargets: injected pods come before untried ones, so a pod created
    // earlier but selected later (a label added) never pushes a running injection out of the
    // count. This was pinned only by one chaos seed.
    const p = plan({ job: job({ replicas: 1 }), pods: [pod('p1', 2, 'running'), pod('p0', 1)] }, NOW);
    assert.deepEqual(injections(p.actions), []);
    const s = statusOf(p.actions);
    assert.deepEqual({ phase: s?.phase, match: s?.match, running: s?.running, waiting: s?.waiting }, { phase: 'Running', match: 1, running: 1, waiting: 0 });
  });

  test('all template containers in one strategic patch, each with KRUISE_EJOB_ID=uid, other env kept', () => {
    const t = { ephemeralContainers: [{ name: 'one', image: 'busybox', env: [{ name: 'A', value: '1' }, { name: 'KRUISE_EJOB_ID', value: 'forged' }] }, { name: 'two', image: 'busybox' }] };
    const p = plan({ job: job({ template: t }), pods: [pod('a', 1)] }, NOW);
    const inj = p.actions.filter((a) => a.subresource === 'ephemeralcontainers');
    assert.equal(inj.length, 1);
    assert.equal(inj[0]?.patchType, 'strategic');
    const containers = (inj[0]?.body as { spec: { ephemeralContainers: { name: string; env: { name: string; value: string }[] }[] } }).spec.ephemeralContainers;
    assert.deepEqual(containers.map((c) => c.name), ['one', 'two']);
    assert.deepEqual(containers[0]?.env, [{ name: 'A', value: '1' }, { name: 'KRUISE_EJOB_ID', value: UID }]);
    assert.deepEqual(containers[1]?.env, [{ name: 'KRUISE_EJOB_ID', value: UID }]);
  });

  test('replicas 0 targets no pod: the job waits, and MatchedEmpty says why rather than that no pod matched', () => {
    const p = plan({ job: job({ replicas: 0 }), pods: [pod('a', 1, 'running'), pod('b', 2)] }, NOW);
    assert.deepEqual(injections(p.actions), []);
    const s = statusOf(p.actions);
    assert.equal(s?.phase, 'Waiting');
    assert.equal(cond(s, 'MatchedEmpty')?.message, 'replicas is 0: no pod is targeted');
    assert.equal(cond(statusOf(plan({ job: job(), pods: [] }, NOW).actions), 'MatchedEmpty')?.message, 'no active pod matches the selector');
  });
});

describe('EphemeralJob planner: MatchedEmpty says why', () => {
  test('selected pods holding a same-named container of another job (a job of this name deleted and applied again): MatchedEmpty says so, not that no pod matched (review)', () => {
    const taken = [pod('a', 1, 0, { owner: 'uid-of-the-deleted-job' }), pod('b', 2, 'running', { owner: 'uid-of-the-deleted-job' })];
    const s = statusOf(plan({ job: job(), pods: taken }, NOW).actions);
    assert.equal(s?.phase, 'Waiting');
    assert.equal(s?.match, 0);
    assert.match(cond(s, 'MatchedEmpty')?.message ?? '', /^no active pod can be targeted: 2 matching pods hold an ephemeral container of the same name from another job/);
    assert.match(cond(s, 'MatchedEmpty')?.message ?? '', /rename the template's containers/);
    const one = statusOf(plan({ job: job(), pods: [taken[0]!] }, NOW).actions);
    assert.match(cond(one, 'MatchedEmpty')?.message ?? '', /1 matching pod holds/);
  });
});

describe('EphemeralJob planner: per-pod state, counts and phase', () => {
  const cases: { name: string; spec?: Record<string, unknown>; pods: Pod[]; phase: string; counts: [number, number, number, number, number] }[] = [
    { name: 'nothing matched: Waiting', pods: [], phase: 'Waiting', counts: [0, 0, 0, 0, 0] },
    { name: 'injected, nothing started: Waiting', pods: [pod('a', 1, 'waiting')], phase: 'Waiting', counts: [1, 0, 0, 0, 1] },
    { name: 'something running: Running', pods: [pod('a', 1, 'running'), pod('b', 2)], phase: 'Running', counts: [2, 0, 0, 1, 0] },
    { name: 'some done, others still to inject: Running', pods: [pod('a', 1, 0), pod('b', 2)], phase: 'Running', counts: [2, 1, 0, 0, 1] },
    { name: 'every target succeeded: Succeeded', pods: [pod('a', 1, 0), pod('b', 2, 0)], phase: 'Succeeded', counts: [2, 2, 0, 0, 0] },
    { name: 'mixed results: Failed (not stuck in Unknown, kruise#2514)', pods: [pod('a', 1, 0), pod('b', 2, 1)], phase: 'Failed', counts: [2, 1, 1, 0, 0] },
    { name: 'a terminal waiting reason is failed', pods: [pod('a', 1, { waiting: 'RunContainerError' })], phase: 'Failed', counts: [1, 0, 1, 0, 0] },
    { name: 'ImagePullBackOff is still waiting (the kubelet retries)', pods: [pod('a', 1, { waiting: 'ImagePullBackOff' })], phase: 'Waiting', counts: [1, 0, 0, 0, 1] },
    { name: 'CreateContainerConfigError is still waiting (it starts once its Secret exists)', pods: [pod('a', 1, { waiting: 'CreateContainerConfigError' })], phase: 'Waiting', counts: [1, 0, 0, 0, 1] },
    { name: 'paused: Paused, counts still reported', spec: { paused: true }, pods: [pod('a', 1, 'running')], phase: 'Paused', counts: [1, 0, 0, 1, 0] },
    { name: 'paused with every target ended: still Paused (held, not judged: DESIGN puts Paused first)', spec: { paused: true }, pods: [pod('a', 1, 0), pod('b', 2, 1)], phase: 'Paused', counts: [2, 1, 1, 0, 0] },
    { name: 'paused past activeDeadlineSeconds: still Paused (the timer stops, as a suspended Job\'s)', spec: { paused: true, activeDeadlineSeconds: 60 }, pods: [pod('a', 1, 'running')], phase: 'Paused', counts: [1, 0, 0, 1, 0] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const s = statusOf(plan({ job: job(c.spec), pods: c.pods }, NOW).actions);
      assert.equal(s?.phase, c.phase);
      assert.deepEqual([s?.match, s?.succeeded, s?.failed, s?.running, s?.waiting], c.counts);
    });
  }

  test('Failed says how many failed, and sets completionTime once', () => {
    const s = statusOf(plan({ job: job(), pods: [pod('a', 1, 0), pod('b', 2, 1), pod('c', 3, 2)] }, NOW).actions);
    assert.equal(s?.completionTime, '2026-01-01T01:00:00Z');
    assert.match(cond(s, 'JobFailed')?.message ?? '', /2 of 3 pods failed/);
  });

  test('past activeDeadlineSeconds: Failed/DeadlineExceeded, nothing more injected', () => {
    const p = plan({ job: job({ activeDeadlineSeconds: 60, parallelism: 5 }), pods: [pod('a', 1)] }, NOW);
    assert.deepEqual(injections(p.actions), []);
    const s = statusOf(p.actions);
    assert.equal(s?.phase, 'Failed');
    assert.equal(cond(s, 'JobFailed')?.reason, 'DeadlineExceeded');
  });

  test('the deadline is judged by the server\'s clock when the planner\'s is behind it: nothing is claimed past the server\'s deadline', () => {
    // Created 00:30:00 with a 60 s deadline; the planner's clock says 00:30:50, the server (Lease read) 00:31:10.
    const local = new Date('2026-01-01T00:30:50Z');
    const lease = { view: { kind: 'absent' as const }, serverNow: new Date('2026-01-01T00:31:10Z'), cfg: { ...DEFAULT_LEASE, name: 'ejob-ns-j', key: 'EphemeralJob/ns/j' } };
    const p = plan({ job: job({ activeDeadlineSeconds: 60 }), pods: [pod('a', 1)], lease }, local);
    assert.deepEqual(injections(p.actions), [], 'claims are made by server time: none past its deadline');
    assert.equal(statusOf(p.actions)?.phase, 'Failed');
    // With both clocks before the deadline, the pod is claimed.
    assert.equal(injections(plan({ job: job({ activeDeadlineSeconds: 60 }), pods: [pod('a', 1)], lease: { ...lease, serverNow: local } }, local).actions).length, 1);
  });

  test('paused past the deadline: no verdict, nothing sealed, no Event, and no look again for the deadline', () => {
    const p = plan({ job: job({ paused: true, activeDeadlineSeconds: 60 }), pods: [pod('a', 1, 0), pod('b', 2)] }, NOW);
    assert.equal(statusOf(p.actions)?.phase, 'Paused');
    assert.equal(statusOf(p.actions)?.completionTime, undefined);
    assert.deepEqual(p.actions.filter((a) => a.kind === 'Lease' || a.kind === 'Event').map((a) => `${a.verb} ${a.kind}`), []);
    assert.equal(p.requeueAfterSeconds, undefined, 'nothing is due while paused');
  });

  test('resumed: the deadline runs again from the resume, and startTime says when (as a resumed Kubernetes Job\'s)', () => {
    // Created 00:30:00 with a 60 s deadline, paused until now (01:00:00): the status still says Paused.
    const paused = { phase: 'Paused', startTime: '2026-01-01T00:30:00Z' } as EphemeralJobObject['status'];
    const p = plan({ job: job({ activeDeadlineSeconds: 60 }, { status: paused }), pods: [pod('a', 1)] }, NOW);
    assert.deepEqual(injections(p.actions), ['a'], 'not failed at the resume: the pod is claimed');
    const s = statusOf(p.actions) as Status & { startTime?: string };
    assert.equal(s.phase, 'Waiting');
    assert.equal(s.startTime, '2026-01-01T01:00:00Z');
    assert.equal(p.requeueAfterSeconds, 60, 'the deadline is due 60 s after the resume');
    // The next look, with that status written: 61 s on, the deadline has passed.
    const later = plan({ job: job({ activeDeadlineSeconds: 60 }, { status: { ...paused, phase: 'Waiting', startTime: s.startTime } as EphemeralJobObject['status'] }), pods: [pod('a', 1, 'running')] }, new Date(NOW.getTime() + 61_000));
    assert.equal(cond(statusOf(later.actions), 'JobFailed')?.reason, 'DeadlineExceeded');
    // Resumed with every pod ended: the verdict, and startTime still says when the job started.
    const done = statusOf(plan({ job: job({}, { status: paused }), pods: [pod('a', 1, 0)] }, NOW).actions) as Status & { startTime?: string };
    assert.deepEqual([done.phase, done.startTime], ['Succeeded', '2026-01-01T00:30:00Z']);
  });

  test('resumed with the planner\'s clock behind the API server\'s: startTime is the moment the deadline is judged by (the later clock), so the deadline runs its whole length from the resume (review88 F2)', () => {
    const paused = { phase: 'Paused', startTime: '2026-01-01T00:30:00Z' } as EphemeralJobObject['status'];
    const lease = (serverNow: Date) => ({ view: { kind: 'absent' as const }, serverNow, cfg: { ...DEFAULT_LEASE, name: 'ejob-ns-j', key: 'EphemeralJob/ns/j' } });
    const serverAt = new Date(NOW.getTime() + 3000);
    const s = statusOf(plan({ job: job({ activeDeadlineSeconds: 10 }, { status: paused }), pods: [pod('a', 1)], lease: lease(serverAt) }, NOW).actions) as Status & { startTime?: string };
    assert.equal(s.startTime, '2026-01-01T01:00:03Z', 'the server\'s time, 3 s ahead of the planner\'s');
    // 9 s later by the server (and the planner, still 3 s behind): within the 10 s since the resume.
    const later = plan({ job: job({ activeDeadlineSeconds: 10 }, { status: { ...paused, phase: 'Waiting', startTime: s.startTime } as EphemeralJobObject['status'] }), pods: [pod('a', 1, 'running')], lease: lease(new Date(serverAt.getTime() + 9000)) }, new Date(NOW.getTime() + 9000));
    assert.equal(statusOf(later.actions)?.phase, 'Running');
    assert.equal(later.requeueAfterSeconds, 1, 'due 10 s after the resume by the server\'s clock');
  });

  test('a verdict is stamped by the later of the planner\'s clock and the server\'s, and completionTime is never before startTime (review95 F4)', () => {
    const lease = (serverNow: Date) => ({ view: { kind: 'absent' as const }, serverNow, cfg: { ...DEFAULT_LEASE, name: 'ejob-ns-j', key: 'EphemeralJob/ns/j' } });
    // The planner 5 minutes behind the server: the server's time, not 00:55:00.
    const behind = statusOf(plan({ job: job(), pods: [pod('a', 1, 0)], lease: lease(NOW) }, new Date(NOW.getTime() - 300_000)).actions) as Status & { startTime?: string; completionTime?: string };
    assert.deepEqual([behind.phase, behind.completionTime, cond(behind, 'JobSucceeded')?.lastTransitionTime], ['Succeeded', '2026-01-01T01:00:00Z', '2026-01-01T01:00:00Z']);
    // The planner ahead: its own (a TTL from it is late, not early).
    const ahead = statusOf(plan({ job: job(), pods: [pod('a', 1, 0)], lease: lease(NOW) }, new Date(NOW.getTime() + 60_000)).actions) as Status & { completionTime?: string };
    assert.equal(ahead.completionTime, '2026-01-01T01:01:00Z');
    // Both clocks before the job's creationTimestamp (a server clock stepped back since): startTime.
    const early = new Date('2026-01-01T00:29:00Z');
    const stepped = statusOf(plan({ job: job(), pods: [pod('a', 1, 0)], lease: lease(early) }, early).actions) as Status & { startTime?: string; completionTime?: string };
    assert.deepEqual([stepped.startTime, stepped.completionTime], ['2026-01-01T00:30:00Z', '2026-01-01T00:30:00Z']);
  });

  test('past the deadline with every pod succeeded after it: the reason is DeadlineExceeded, never "0 of 2 pods failed"', () => {
    // Created 00:30:00 with a 60 s deadline; the second pod exited at 00:31:30.
    const s = statusOf(plan({ job: job({ activeDeadlineSeconds: 60 }), pods: [ended('a', 1, 0, '00:30:40'), ended('b', 2, 0, '00:31:30')] }, NOW).actions);
    assert.equal(s?.phase, 'Failed');
    assert.equal(cond(s, 'JobFailed')?.reason, 'DeadlineExceeded');
    assert.match(cond(s, 'JobFailed')?.message ?? '', /activeDeadlineSeconds \(60s\)/);
  });

  test('past the deadline, seen only after it: targets that all had their result by the deadline are judged by it (finishedAt); one known to come later, or one still to come, is DeadlineExceeded (review88 F3)', () => {
    // Created 00:30:00 with a 60 s deadline (00:31:00), looked at 01:00:00.
    const verdict = (pods: Pod[]): string => {
      const s = statusOf(plan({ job: job({ activeDeadlineSeconds: 60, parallelism: 2 }), pods }, NOW).actions);
      return `${s?.phase}/${cond(s, 'JobFailed')?.status === 'True' ? cond(s, 'JobFailed')?.reason : '-'}`;
    };
    assert.equal(verdict([ended('a', 1, 0, '00:30:40'), ended('b', 2, 0, '00:31:00')]), 'Succeeded/-', 'the last exit at the deadline');
    assert.equal(verdict([ended('a', 1, 1, '00:30:40'), ended('b', 2, 0, '00:30:50')]), 'Failed/PodsFailed');
    assert.equal(verdict([ended('a', 1, 0, '00:30:40'), ended('b', 2, 0, '00:31:01')]), 'Failed/DeadlineExceeded', 'one exit a second late');
    assert.equal(verdict([ended('a', 1, 0, '00:30:40'), pod('b', 2, 'running')]), 'Failed/DeadlineExceeded', 'a pod still running');
    assert.equal(verdict([ended('a', 1, 0, '00:30:40'), pod('b', 2)]), 'Failed/DeadlineExceeded', 'a pod never injected');
    // With no time to go by, the result stands, as OpenKruise lets a result win over its deadline.
    assert.equal(verdict([pod('a', 1, 0), pod('b', 2, 0)]), 'Succeeded/-', 'exits without finishedAt');
    assert.equal(verdict([ended('a', 1, 0, '00:30:40'), pod('b', 2, { waiting: 'InvalidImageName' })]), 'Failed/PodsFailed', 'a container that cannot start');
    // A failed pod failed at its first failure, whatever its other container did after.
    const twice = (b: string, exitB: number): Pod => ({ ...ended('a', 1, 1, '00:30:30'), spec: { containers: [{ name: 'main' }], ephemeralContainers: ['ec', 'ec2'].map((name) => ({ name, env: [{ name: 'KRUISE_EJOB_ID', value: UID }] })) }, status: { phase: 'Running', ephemeralContainerStatuses: [{ name: 'ec', state: { terminated: { exitCode: 1, finishedAt: '2026-01-01T00:30:30Z' } } }, { name: 'ec2', state: { terminated: { exitCode: exitB, finishedAt: `2026-01-01T${b}Z` } } }] } });
    const two = (pods: Pod[]): string => {
      const s = statusOf(plan({ job: job({ activeDeadlineSeconds: 60, template: { ephemeralContainers: [...template.ephemeralContainers, { ...template.ephemeralContainers[0], name: 'ec2' }] } }), pods }, NOW).actions);
      return `${s?.phase}/${cond(s, 'JobFailed')?.reason}`;
    };
    assert.equal(two([twice('00:45:00', 0)]), 'Failed/PodsFailed', 'failed at 00:30:30, its other container exited later');
    assert.equal(verdict([ended('a', 1, 0, '00:30:40'), ended('b', 2, 1, '00:31:30')]), 'Failed/DeadlineExceeded', 'a failure after the deadline');
    // Each ephemeral container as its state says (review92 G2): a pod succeeded at its last exit,
    // failed at its first failure (one that cannot start has no time: not late), and only this
    // job's containers count.
    type Held = { name: string; owner?: string; exit?: number; at?: string; waiting?: string };
    const held = (cs: Held[]): Pod => ({
      ...ended('a', 1, 0, '00:30:00'),
      spec: { containers: [{ name: 'main' }], ephemeralContainers: cs.map((c) => ({ name: c.name, env: [{ name: 'KRUISE_EJOB_ID', value: c.owner ?? UID }] })) },
      status: { phase: 'Running', ephemeralContainerStatuses: cs.map((c) => ({ name: c.name, state: c.waiting ? { waiting: { reason: c.waiting } } : { terminated: { exitCode: c.exit ?? 0, finishedAt: `2026-01-01T${c.at}Z` } } })) },
    });
    assert.equal(two([held([{ name: 'ec', at: '00:30:40' }, { name: 'ec2', at: '00:31:30' }])]), 'Failed/DeadlineExceeded', 'both exit 0, the last after the deadline');
    assert.equal(verdict([held([{ name: 'ec', at: '00:30:40' }, { name: 'theirs', owner: 'other-job', at: '00:45:00' }])]), 'Succeeded/-', 'another job\'s container exits after the deadline');
    assert.equal(two([held([{ name: 'ec', exit: 1, at: '00:30:30' }, { name: 'ec2', exit: 1, at: '00:45:00' }])]), 'Failed/PodsFailed', 'two failures, the first by the deadline');
    assert.equal(two([held([{ name: 'ec', waiting: 'InvalidImageName' }, { name: 'ec2', exit: 1, at: '00:45:00' }])]), 'Failed/PodsFailed', 'one cannot start, the other fails after the deadline');
    // A claim on a pod the LIST does not show may still land: DeadlineExceeded, as ever.
    const record = { v: 1 as const, job: UID, total: 2, claims: [{ pod: 'c', uid: 'uid-c', at: new Date(NOW.getTime() - 3000).toISOString() }] };
    const lease = { view: { kind: 'ours' as const, resourceVersion: '9', record }, serverNow: NOW, cfg: { ...DEFAULT_LEASE, name: 'ejob-ns-j', key: 'EphemeralJob/ns/j' } };
    const inFlight = statusOf(plan({ job: job({ activeDeadlineSeconds: 60, parallelism: 2 }), pods: [ended('a', 1, 0, '00:30:40')], lease }, NOW).actions);
    assert.equal(cond(inFlight, 'JobFailed')?.reason, 'DeadlineExceeded', 'a claim in flight');
    // Paused since: the deadline stopped, so a late look after the resume judges by the results too.
    assert.equal(statusOf(plan({ job: job({ activeDeadlineSeconds: 60 }, { status: { phase: 'Running', startTime: '2026-01-01T00:59:00Z' } as EphemeralJobObject['status'] }), pods: [ended('a', 1, 0, '00:59:30')] }, NOW).actions)?.phase, 'Succeeded', 'within the minute since startTime');
  });

  test('a JobFailed=True left by OpenKruise on a running job (reason CreateFailed, at its first failed pod) is set False, and a later Failed verdict dates its own transition', () => {
    // OpenKruise's `if job.Status.Failed > 0 { addConditions(..., EJobFailed, "CreateFailed", ...) }`,
    // whatever the phase, never cleared: kept as it was, a job taken over said JobFailed beside
    // Running, then beside JobSucceeded (review of the takeover).
    const kruise = { phase: 'Running', match: 2, failed: 1, running: 1, startTime: '2026-01-01T00:30:00Z', conditions: [{ type: 'JobFailed', status: 'True', reason: 'CreateFailed', message: 'EphemeralJob ns/j failed to create ephemeral container', lastTransitionTime: '2026-01-01T00:40:00Z' }] } as EphemeralJobObject['status'];
    const running = statusOf(plan({ job: job({ parallelism: 2 }, { status: kruise }), pods: [pod('a', 1, 1), pod('b', 2, 'running')] }, NOW).actions);
    assert.equal(running?.phase, 'Running');
    assert.deepEqual([cond(running, 'JobFailed')?.status, cond(running, 'JobFailed')?.reason], ['False', 'NoFailedVerdict']);
    const succeeded = statusOf(plan({ job: job({ parallelism: 2 }, { status: kruise }), pods: [pod('b', 2, 0)] }, NOW).actions);
    assert.equal(succeeded?.phase, 'Succeeded');
    assert.equal(cond(succeeded, 'JobSucceeded')?.status, 'True');
    assert.equal(cond(succeeded, 'JobFailed')?.status, 'False', 'never Succeeded and JobFailed at once');
    const failed = statusOf(plan({ job: job({ parallelism: 2 }, { status: running as EphemeralJobObject['status'] }), pods: [pod('a', 1, 1), pod('b', 2, 0)] }, NOW).actions);
    assert.equal(failed?.phase, 'Failed');
    assert.deepEqual([cond(failed, 'JobFailed')?.status, cond(failed, 'JobFailed')?.reason, cond(failed, 'JobFailed')?.lastTransitionTime], ['True', 'PodsFailed', NOW.toISOString().replace('.000Z', 'Z')]);
  });

  test('status is written only when it changed; lastTransitionTime moves only when a condition flips', () => {
    const pods = [pod('a', 1, 'running'), pod('b', 2)];
    const first = plan({ job: job(), pods }, NOW);
    const written = statusOf(first.actions);
    const later = new Date(NOW.getTime() + 60_000);
    const again = plan({ job: job({}, { status: written as EphemeralJobObject['status'] }), pods }, later);
    assert.equal(statusOf(again.actions), undefined, 'same world, no status write');
    const done = plan({ job: job({}, { status: written as EphemeralJobObject['status'] }), pods: [pod('a', 1, 0), pod('b', 2, 'running')] }, later);
    const next = statusOf(done.actions);
    assert.ok(next, 'the status changed');
    assert.equal(cond(next, 'Initialized')?.lastTransitionTime, cond(written, 'Initialized')?.lastTransitionTime);
  });
});

describe('EphemeralJob planner: TTLs, deletion and bad specs', () => {
  const finished = { phase: 'Succeeded', completionTime: '2026-01-01T00:50:00Z', match: 1, succeeded: 1 };
  test('finished: deleted ttlSecondsAfterFinished after completion (default 1800), with a uid precondition', () => {
    const early = plan({ job: job({}, { status: finished }), pods: [] }, NOW);
    assert.deepEqual(early.actions, []);
    assert.equal(early.requeueAfterSeconds, 1800 - 600);
    const due = plan({ job: job({ ttlSecondsAfterFinished: 60 }, { status: finished }), pods: [] }, NOW);
    assert.equal(due.actions[0]?.verb, 'delete');
    assert.deepEqual((due.actions[0]?.body as { preconditions: unknown }).preconditions, { uid: UID });
  });

  test('a job OpenKruise finished while paused (phase Paused, completionTime set) is finished: kept as it is, then deleted at its TTL', () => {
    // OpenKruise sets Paused over a Succeeded verdict when the job is paused, and sends every
    // job with a completionTime to its TTL alone; such a job, migrated, was planned as paused
    // and never deleted (review).
    const paused = { ...finished, phase: 'Paused' };
    const early = plan({ job: job({ paused: true }, { status: paused }), pods: [pod('a', 1, 0)] }, NOW);
    assert.deepEqual(early.actions, []);
    assert.equal(early.requeueAfterSeconds, 1800 - 600);
    const due = plan({ job: job({ paused: true, ttlSecondsAfterFinished: 60 }, { status: paused }), pods: [] }, NOW);
    assert.deepEqual(due.actions.map((a) => `${a.verb} ${a.kind}`), ['delete EphemeralJob']);
  });

  test('a TTL deletion deletes the job only and looks again in 1 s: the look that finds it gone deletes its Lease, fenced', () => {
    // Not in the same plan, unfenced: between the two deletions a job of the same name could
    // be created and claim on the Lease (functions/ejob/README.md, "When a job goes").
    for (const due of [plan({ job: job({ ttlSecondsAfterFinished: 60 }, { status: finished }), pods: [] }, NOW), plan({ job: job({ ttlSecondsAfterCreated: 600 }), pods: [pod('a', 1, 'running')] }, NOW)]) {
      assert.deepEqual(due.actions.map((a) => `${a.verb} ${a.kind} ${a.namespace}/${a.name}`), ['delete EphemeralJob ns/j']);
      assert.equal(due.requeueAfterSeconds, 1);
    }
  });

  test('a TTL is judged by the earlier of the planner\'s clock and the server\'s: a planner clock ahead deletes nothing early (time review)', () => {
    // Created 00:30:00 with ttlSecondsAfterCreated 600; the planner's clock says 00:41:00, the server (Lease read) 00:35:00.
    const local = new Date('2026-01-01T00:41:00Z');
    const lease = { view: { kind: 'absent' as const }, serverNow: new Date('2026-01-01T00:35:00Z'), cfg: { ...DEFAULT_LEASE, name: 'ejob-ns-j', key: 'EphemeralJob/ns/j' } };
    const early = plan({ job: job({ ttlSecondsAfterCreated: 600 }), pods: [pod('a', 1, 'running')], lease }, local);
    assert.deepEqual(early.actions.filter((a) => a.verb === 'delete'), []);
    assert.equal(early.requeueAfterSeconds, 300, 'looked at again when the server\'s clock reaches the TTL');
    // Finished at 00:34:00 (server time) with ttlSecondsAfterFinished 120: not yet by the server's clock either.
    const finished = { phase: 'Succeeded', completionTime: '2026-01-01T00:34:00Z' } as EphemeralJobObject['status'];
    assert.deepEqual(plan({ job: job({ ttlSecondsAfterFinished: 120 }, { status: finished }), pods: [], lease }, local).actions, []);
    assert.equal(plan({ job: job({ ttlSecondsAfterFinished: 120 }, { status: finished }), pods: [], lease: { ...lease, serverNow: new Date('2026-01-01T00:36:00Z') } }, local).actions[0]?.verb, 'delete');
  });

  test('ttlSecondsAfterCreated deletes whatever the state; requeues until then', () => {
    assert.equal(plan({ job: job({ ttlSecondsAfterCreated: 600 }), pods: [pod('a', 1, 'running')] }, NOW).actions[0]?.verb, 'delete');
    assert.equal(plan({ job: job({ ttlSecondsAfterCreated: 3600 }), pods: [pod('a', 1, 'running')] }, NOW).requeueAfterSeconds, 1800);
  });

  test("a deleting job with OpenKruise's finalizer: only that finalizer is removed, fenced by test ops on its uid and its finalizers", () => {
    const meta = { ...job().metadata, deletionTimestamp: '2026-01-01T00:59:00Z', finalizers: ['keep.me/too', 'apps.kruise.io/ephemeralcontainers-cleanup'] };
    const p = plan({ job: { ...job(), metadata: meta }, pods: [pod('a', 1)] }, NOW);
    assert.equal(p.actions.length, 1);
    assert.ok(meta.uid);
    assert.deepEqual(p.actions[0]?.body, [
      { op: 'test', path: '/metadata/uid', value: meta.uid },
      { op: 'test', path: '/metadata/finalizers', value: ['keep.me/too', 'apps.kruise.io/ephemeralcontainers-cleanup'] },
      { op: 'replace', path: '/metadata/finalizers', value: ['keep.me/too'] },
    ]);
    assert.deepEqual(plan({ job: { ...job(), metadata: { ...meta, finalizers: ['keep.me/too'] } }, pods: [] }, NOW).actions, []);
  });

  const bad: [string, Record<string, unknown>, RegExp][] = [
    ['no containers', { template: { ephemeralContainers: [] } }, /spec\.template\.ephemeralContainers/],
    ['a selector value the API server cannot parse', { selector: { matchLabels: { app: 'not a value!' } } }, /spec\.selector\.matchLabels\.app/],
    ['missing image', { template: { ephemeralContainers: [{ name: 'x' }] } }, /spec\.template\.ephemeralContainers\[0\]\.image/],
    // What kube-apiserver would refuse in every injection (functions/api/container-rules.ts).
    ['an env var reading all the labels', { template: { ephemeralContainers: [{ name: 'x', image: 'busybox', env: [{ name: 'L', valueFrom: { fieldRef: { fieldPath: 'metadata.labels' } } }] }] } }, /spec\.template\.ephemeralContainers\[0\]\.env\[0\]\.valueFrom\.fieldRef\.fieldPath: "metadata\.labels" is not one of metadata\.name, /],
    ['an env var from a Secret no Secret can be', { template: { ephemeralContainers: [{ name: 'x', image: 'busybox', env: [{ name: 'P', valueFrom: { secretKeyRef: { name: 'MySecret', key: 'password' } } }] }] } }, /spec\.template\.ephemeralContainers\[0\]\.env\[0\]\.valueFrom\.secretKeyRef\.name: a lowercase RFC 1123 subdomain must consist of /],
  ];
  for (const [name, spec, field] of bad) {
    test(`invalid spec (${name}): phase Error, JobError names the field, nothing injected`, () => {
      const p = plan({ job: job(spec), pods: [pod('a', 1)] }, NOW);
      assert.deepEqual(injections(p.actions), []);
      const s = statusOf(p.actions);
      assert.equal(s?.phase, 'Error');
      assert.match(cond(s, 'JobError')?.message ?? '', field);
    });

    test(`a finished job whose spec is edited into an invalid one (${name}) keeps its verdict and its TTL`, () => {
      // Before, it was written Error (completionTime kept, so no longer "finished"), and once
      // the edit was undone it ran again and injected the pods that had appeared since.
      const p = plan({ job: job(spec, { status: finished }), pods: [pod('a', 1)] }, NOW);
      assert.deepEqual(p.actions, []);
      assert.equal(p.requeueAfterSeconds, 1800 - 600);
      const due = plan({ job: job({ ...spec, ttlSecondsAfterFinished: 60 }, { status: finished }), pods: [] }, NOW);
      assert.deepEqual(due.actions.map((a) => a.verb), ['delete']);
    });
  }

  test('phase Error writes the counters `kubectl get ejob` shows: 0 where none were counted, as OpenKruise writes them, and then nothing more (review78)', () => {
    const invalid = { template: { ephemeralContainers: [] } };
    const first = plan({ job: job(invalid), pods: [pod('a', 1)] }, NOW);
    const s = statusOf(first.actions);
    assert.deepEqual([s?.phase, s?.match, s?.succeeded, s?.failed, s?.running, s?.waiting], ['Error', 0, 0, 0, 0, 0]);
    const again = plan({ job: job(invalid, { status: s as EphemeralJobObject['status'] }), pods: [pod('a', 1)] }, new Date(NOW.getTime() + 5000));
    assert.deepEqual(again.actions, [], 'status is written only when it changed');
    // Written by an earlier version, without counters: filled in once.
    const old = { phase: 'Error', conditions: s?.conditions } as EphemeralJobObject['status'];
    const filled = statusOf(plan({ job: job(invalid, { status: old }), pods: [] }, NOW).actions);
    assert.deepEqual([filled?.match, filled?.waiting], [0, 0]);
    assert.equal(plan({ job: job(invalid, { status: old }), pods: [] }, NOW).actions.filter((a) => a.kind === 'Event').length, 0, 'no Warning told again');
  });

  test('a job whose spec went bad mid-flight keeps the counts its last look made (no pod is looked at in Error)', () => {
    const running = { phase: 'Running', match: 3, succeeded: 1, failed: 1, running: 1, waiting: 0, conditions: [] } as EphemeralJobObject['status'];
    const s = statusOf(plan({ job: job({ template: { ephemeralContainers: [] } }, { status: running }), pods: [] }, NOW).actions);
    assert.deepEqual([s?.phase, s?.match, s?.succeeded, s?.failed, s?.running, s?.waiting], ['Error', 3, 1, 1, 1, 0]);
  });

  test('a spec that does not parse: ttlSecondsAfterCreated still deletes the job, and a TTL that is not an integer deletes nothing', () => {
    const unparsable = { template: { ephemeralContainers: [] } };
    assert.deepEqual(plan({ job: job({ ...unparsable, ttlSecondsAfterCreated: 600 }), pods: [] }, NOW).actions.map((a) => a.verb), ['delete']);
    assert.equal(plan({ job: job({ ...unparsable, ttlSecondsAfterCreated: 3600 }), pods: [] }, NOW).requeueAfterSeconds, 1800);
    const odd = plan({ job: job({ ...unparsable, ttlSecondsAfterFinished: 1.5 }, { status: finished }), pods: [] }, NOW);
    assert.deepEqual(odd.actions, []);
    assert.equal(odd.requeueAfterSeconds, undefined);
  });

  test('events: one per injected pod, on the pod, named stably across re-plans; none on the job for an injection', () => {
    const a = plan({ job: job(), pods: [pod('a', 1)] }, NOW).actions.filter((x) => x.kind === 'Event');
    const b = plan({ job: job(), pods: [pod('a', 1)] }, new Date(NOW.getTime() + 5000)).actions.filter((x) => x.kind === 'Event');
    assert.deepEqual(a.map((e) => (e.body as { involvedObject: { kind: string; name: string } }).involvedObject), [{ apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'a', uid: 'uid-a' }]);
    assert.deepEqual(a.map((e) => e.name), b.map((e) => e.name));
  });

  test('a failure\'s Warning quotes the kubelet\'s message; that message changing at every retry makes no status write and no other Warning (review78)', () => {
    const stuck = (message: string): Pod => {
      const p = pod('a', 1, 'waiting');
      return { ...p, status: { ...p.status, ephemeralContainerStatuses: [{ name: 'ec', state: { waiting: { reason: 'CreateContainerError', message } } }] } };
    };
    const other = pod('b', 2, 'running');
    const first = plan({ job: job({ parallelism: 2 }), pods: [stuck('failed to create task (attempt 1): exec: "pidof": executable file not found in $PATH'), other] }, NOW);
    const warnings = first.actions.filter((a) => a.kind === 'Event' && (a.body as { type: string }).type === 'Warning');
    assert.deepEqual(warnings.map((a) => (a.body as { message: string }).message), ['pod a: container ec cannot start: CreateContainerError: failed to create task (attempt 1): exec: "pidof": executable file not found in $PATH']);
    const status = statusOf(first.actions) as EphemeralJobObject['status'];
    assert.deepEqual([status?.phase, status?.failed], ['Running', 1]);
    assert.ok(!JSON.stringify(status).includes('pidof'), 'no status field holds the message');
    for (const told of [undefined, new Set(warnings.map((w) => w.name))]) {
      const retried = plan({ job: job({ parallelism: 2 }, { status }), pods: [stuck('failed to create task (attempt 2): exec: "pidof": executable file not found in $PATH'), other], ...(told ? { told } : {}) }, new Date(NOW.getTime() + 5000));
      assert.deepEqual(retried.actions, [], 'named by the job and the pod alone: told once, whatever the message says now');
    }
  });

  test('a failure is told on the job when the status first counts it: the latest to fail, one Warning per pod, after the status write', () => {
    const ended = (p: Pod, at: string): Pod => ({ ...p, status: { ...p.status, ephemeralContainerStatuses: [{ name: 'ec', state: { terminated: { exitCode: 1, reason: 'Error', finishedAt: at } } }] } });
    const pods = [ended(pod('a', 1, 1), '2026-01-01T00:50:00Z'), ended(pod('b', 2, 1), '2026-01-01T00:55:00Z'), pod('c', 3, 'running'), pod('d', 4)];
    const warnings = (actions: Action[]): { on: string; message: string; name: string; requires: unknown }[] => actions.filter((a) => a.kind === 'Event' && (a.body as { type: string }).type === 'Warning').map((a) => {
      const body = a.body as { involvedObject: { kind: string; name: string }; message: string };
      return { on: `${body.involvedObject.kind}/${body.involvedObject.name}`, message: body.message, name: a.name, requires: a.requires };
    });
    // The status said one failed (a's): b's failure is the one it counts first.
    const p = plan({ job: job({ parallelism: 2 }, { status: { phase: 'Running', failed: 1, match: 4, conditions: [] } as EphemeralJobObject['status'] }), pods }, NOW);
    const told = warnings(p.actions);
    assert.deepEqual(told.map((w) => [w.on, w.message, w.requires]), [['EphemeralJob/j', 'pod b: container ec exited with code 1 (Error)', 'status']]);
    // Counted from nothing: both, the latest first; named by the job and the pod, so a repeat is the same Event (a 409, done).
    const both = warnings(plan({ job: job({ parallelism: 2 }), pods }, NOW).actions);
    assert.deepEqual(both.map((w) => w.message), ['pod b: container ec exited with code 1 (Error)', 'pod a: container ec exited with code 1 (Error)']);
    assert.equal(both[0]?.name, told[0]?.name);
    assert.notEqual(both[0]?.name, both[1]?.name);
    // Nothing new counted (the status already says 2 failed): no Warning.
    const counted = job({ parallelism: 2 }, { status: statusOf(p.actions) as EphemeralJobObject['status'] });
    assert.deepEqual(warnings(plan({ job: counted, pods }, NOW).actions), []);
    // With the Warnings told listed (the observation's `told`), each failure not told is told,
    // whatever the counts say — here with no status write to wait for (a telling lost before).
    const all = new Set(both.map((w) => w.name));
    assert.deepEqual(warnings(plan({ job: counted, pods, told: all }, NOW).actions), []);
    const late = warnings(plan({ job: counted, pods, told: new Set([told[0]?.name ?? '']) }, NOW).actions);
    assert.deepEqual(late.map((w) => [w.message, w.requires]), [['pod a: container ec exited with code 1 (Error)', undefined]]);
    // An hour on, the API server has let the Warnings expire (--event-ttl): old failures are not told again.
    const hourOn = new Date(NOW.getTime() + 3_600_000);
    assert.deepEqual(warnings(plan({ job: counted, pods, told: new Set() }, hourOn).actions), []);
    // But a failure the status counts anew is told whatever its age (review: an old pod the
    // containers cannot go into, labelled in an hour on, was counted and never told).
    const unfitOld = { ...pod('u', 0), spec: { containers: [{ name: 'other' }] } } as Pod;
    const anew = warnings(plan({ job: counted, pods: [...pods, unfitOld], told: all }, hourOn).actions);
    assert.deepEqual(anew.map((w) => w.message), ['pod u: the pod has no container main (targetContainerName of ec)']);
  });

  test('order: the Lease claim first, then the injection (sent only within the claim window), status, Events last', () => {
    const p = plan({ job: job(), pods: [pod('a', 1)] }, NOW);
    // Two versions of the status: counting the claimed pod if the claim took effect, else not (review).
    assert.deepEqual(p.actions.map((x) => `${x.verb} ${x.kind}${x.subresource ? `/${x.subresource}` : ''}`), ['create Lease', 'patch Pod/ephemeralcontainers', 'patch EphemeralJob/status', 'patch EphemeralJob/status', 'create Event']);
    assert.equal(p.actions[1]?.withinSeconds, 15);
    const [claimed, unclaimed] = p.actions.filter((a) => a.subresource === 'status');
    assert.deepEqual([claimed?.requires, claimed?.unless, unclaimed?.requires, unclaimed?.unless], [['lease', 'inject:a'], undefined, undefined, ['lease', 'inject:a']]);
    const waiting = (a: Action | undefined): unknown => (a?.body as { status: { waiting: number } }).status.waiting;
    assert.deepEqual([waiting(claimed), waiting(unclaimed)], [1, 0]);
  });
});

describe("EphemeralJob planner: stored values outside the webhook's limits run as OpenKruise runs them (review72)", () => {
  // OpenKruise's CRD, webhook and controller bound none of these, so a cluster that ran it
  // holds such jobs; they used to go to phase Error mid-flight (api/spec-limits.ts).
  const outsideCond = (s: Status | undefined): Cond | undefined => (cond(s, 'JobError')?.reason === 'SpecOutsideLimits' ? cond(s, 'JobError') : undefined);
  const warnings = (actions: Action[]): Action[] => actions.filter((a) => a.kind === 'Event' && (a.body as { reason?: string }).reason === 'SpecOutsideLimits');
  const pods = (n: number, labels: Record<string, string> = { app: 'x' }): Pod[] =>
    Array.from({ length: n }, (_, i) => pod(`p${String(i).padStart(2, '0')}`, i, 'none', { metadata: { name: `p${String(i).padStart(2, '0')}`, namespace: 'ns', uid: `uid-p${i}`, labels, creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString() } }));

  test('parallelism 20: up to 20 pods at once; JobError False says so, and a Warning once the status says it', () => {
    const p = plan({ job: job({ parallelism: 20 }), pods: pods(25) }, NOW);
    assert.equal(injections(p.actions).length, 20);
    const s = statusOf(p.actions);
    assert.equal(s?.phase, 'Waiting');
    assert.equal(cond(s, 'JobError')?.status, 'False');
    assert.match(outsideCond(s)?.message ?? '', /spec\.parallelism 20 is above 10: up to 20 pods at once/);
    const [w] = warnings(p.actions);
    assert.equal((w?.body as { type?: string }).type, 'Warning');
    assert.equal(w?.requires, 'status', 'told once the status write that says it took effect');
  });

  test('told once: a look whose status already says it sends no Warning and writes no status', () => {
    const first = plan({ job: job({ parallelism: 20 }), pods: pods(3) }, NOW);
    const status = statusOf(first.actions) as EphemeralJobObject['status'];
    const injected = pods(3).map((x) => pod(x.metadata.name, Number(x.metadata.name.slice(1)), 'waiting'));
    const again = plan({ job: job({ parallelism: 20 }, { status }), pods: injected }, new Date(NOW.getTime() + 5000));
    assert.deepEqual(warnings(again.actions), []);
    assert.equal(statusOf(again.actions), undefined);
  });

  test('parallelism lowered into the limits: JobError says SpecValid, no Warning', () => {
    const first = plan({ job: job({ parallelism: 20 }), pods: [] }, NOW);
    const status = statusOf(first.actions) as EphemeralJobObject['status'];
    const p = plan({ job: job({ parallelism: 5 }, { status }), pods: [] }, new Date(NOW.getTime() + 5000));
    const c = cond(statusOf(p.actions), 'JobError');
    assert.deepEqual({ status: c?.status, reason: c?.reason }, { status: 'False', reason: 'SpecValid' });
    assert.deepEqual(warnings(p.actions), []);
  });

  test('an empty selector: every pod of the namespace is a target, whatever its labels (util.ValidatedLabelSelectorAsSelector: labels.Everything())', () => {
    const mixed = [...pods(2, { app: 'x' }), ...pods(4, { team: 'other' }).slice(2)];
    const p = plan({ job: job({ selector: {}, parallelism: 10 }), pods: mixed }, NOW);
    assert.deepEqual(injections(p.actions), ['p00', 'p01', 'p02', 'p03']);
    const s = statusOf(p.actions);
    assert.equal(s?.match, 4);
    assert.match(outsideCond(s)?.message ?? '', /spec\.selector is empty: every pod of the namespace is a target/);
    // matchLabels: {} is as empty.
    assert.equal(injections(plan({ job: job({ selector: { matchLabels: {} } }), pods: mixed }, NOW).actions).length, 1);
  });

  test('replicas below 0: no pod is targeted, the job waits (as with 0)', () => {
    const p = plan({ job: job({ replicas: -1 }), pods: pods(2) }, NOW);
    assert.deepEqual(injections(p.actions), []);
    const s = statusOf(p.actions);
    assert.deepEqual({ phase: s?.phase, match: s?.match }, { phase: 'Waiting', match: 0 });
    assert.equal(cond(s, 'MatchedEmpty')?.message, 'replicas is -1: no pod is targeted');
    assert.match(outsideCond(s)?.message ?? '', /spec\.replicas -1 is below 0/);
  });

  test('parallelism below 0: nothing is injected (as with 0)', () => {
    const p = plan({ job: job({ parallelism: -2 }), pods: pods(2) }, NOW);
    assert.deepEqual(injections(p.actions), []);
    assert.match(outsideCond(statusOf(p.actions))?.message ?? '', /spec\.parallelism -2 is below 0/);
  });

  for (const deadline of [0, -30]) {
    test(`activeDeadlineSeconds ${deadline}: the deadline is past at once, Failed DeadlineExceeded, nothing injected`, () => {
      const p = plan({ job: job({ activeDeadlineSeconds: deadline }), pods: pods(2) }, NOW);
      assert.deepEqual(injections(p.actions), []);
      const s = statusOf(p.actions);
      assert.equal(s?.phase, 'Failed');
      assert.equal(cond(s, 'JobFailed')?.reason, 'DeadlineExceeded');
      assert.match(outsideCond(s)?.message ?? '', /spec\.activeDeadlineSeconds -?\d+ is not above 0/);
    });
  }

  test('ttlSecondsAfterFinished below 0: a finished job is deleted at once (its time left is negative); running, it runs and says so', () => {
    const done = { phase: 'Succeeded', completionTime: '2026-01-01T00:59:59Z', match: 1, succeeded: 1 } as EphemeralJobObject['status'];
    assert.deepEqual(plan({ job: job({ ttlSecondsAfterFinished: -1 }, { status: done }), pods: [] }, NOW).actions.map((a) => a.verb), ['delete']);
    const running = plan({ job: job({ ttlSecondsAfterFinished: -1 }), pods: pods(1) }, NOW);
    assert.deepEqual(injections(running.actions), ['p00']);
    assert.match(outsideCond(statusOf(running.actions))?.message ?? '', /spec\.ttlSecondsAfterFinished -1 is below 0: deleted as soon as it finishes/);
  });

  test('ttlSecondsAfterCreated below 0 (ephemera\'s own field): deleted at once, read as 0', () => {
    assert.deepEqual(plan({ job: job({ ttlSecondsAfterCreated: -5 }), pods: pods(1) }, NOW).actions.map((a) => a.verb), ['delete']);
  });

  test('several at once: one condition, one Warning, every value named', () => {
    const p = plan({ job: job({ parallelism: 11, replicas: -1, selector: {} }), pods: pods(1) }, NOW);
    const message = outsideCond(statusOf(p.actions))?.message ?? '';
    for (const f of ['parallelism 11', 'selector is empty', 'replicas -1']) assert.ok(message.includes(f), `${f}: ${message}`);
    assert.equal(warnings(p.actions).length, 1);
  });
});

describe('EphemeralJob planner: a job being deleted, or gone, and its Lease (README, "When a job goes")', () => {
  const FINALIZER = 'apps.kruise.io/ephemeralcontainers-cleanup';
  const left = (recordJob: string) => ({ namespace: 'ephemera-locks', name: 'ejob-x', owner: { job: recordJob, resourceVersion: '41', uid: 'lease-uid' } });
  const deleting = (finalizers: string[] = []): EphemeralJobObject => ({ ...job(), metadata: { ...job().metadata, deletionTimestamp: '2026-01-01T00:59:00Z', finalizers } });
  const summary = (p: ReturnType<typeof plan>): string[] => p.actions.map((a) => `${a.verb} ${a.kind} ${a.name}`);
  const leaseDelete = (p: ReturnType<typeof plan>): Action | undefined => p.actions.find((a) => a.kind === 'Lease');

  test('gone: the Lease is deleted whatever job its record is for, fenced by the resourceVersion and uid it was read at', () => {
    const p = plan({ departed: true, job: null, lease: left('some-old-uid') }, NOW);
    assert.deepEqual(summary(p), ['delete Lease ejob-x']);
    assert.deepEqual(leaseDelete(p)?.body, { preconditions: { resourceVersion: '41', uid: 'lease-uid' } });
    assert.equal(leaseDelete(p)?.namespace, 'ephemera-locks');
  });

  test("being deleted with OpenKruise's finalizer: the Lease first, then the finalizer", () => {
    assert.deepEqual(summary(plan({ departed: true, job: deleting([FINALIZER]), lease: left(UID) }, NOW)), ['delete Lease ejob-x', 'patch EphemeralJob j']);
    assert.deepEqual(summary(plan({ departed: true, job: deleting([FINALIZER]) }, NOW)), ['patch EphemeralJob j'], 'no record: the finalizer only');
    assert.deepEqual(summary(plan({ departed: true, job: deleting(), lease: left(UID) }, NOW)), ['delete Lease ejob-x'], 'no finalizer: the Lease only');
  });

  test('being deleted: a record of an earlier job of the name goes too (this job holds the name, so that one is gone)', () => {
    assert.deepEqual(summary(plan({ departed: true, job: deleting(), lease: left('earlier-uid') }, NOW)), ['delete Lease ejob-x']);
  });

  test('a job created again under the name, read after the Lease: its own record is kept, an older one deleted (fenced: its claim write races it)', () => {
    const kept = plan({ departed: true, job: job(), lease: left(UID) }, NOW);
    assert.deepEqual(kept.actions, []);
    assert.match(kept.notes?.join('\n') ?? '', /Lease kept: its record is for job uid job-uid, the live job/);
    assert.deepEqual(summary(plan({ departed: true, job: job(), lease: left('earlier-uid') }, NOW)), ['delete Lease ejob-x']);
  });
});

describe('EphemeralJob planner: the failures told with a verdict', () => {
  const reasonOf = (a: Action): string | undefined => (a.body as { reason?: string } | undefined)?.reason;
  const order = (actions: Action[]): string[] => actions.map((a) => (a.subresource === 'status' ? 'status' : a.kind === 'Lease' ? 'lease' : `${reasonOf(a)}@${a.group}${a.bestEffort ? '!' : ''}`));
  for (const c of [{ why: 'the phase becomes Failed', status: undefined }, { why: 'a status Failed without its completionTime (hand-edited, an older version) gets it', status: { phase: 'Failed', failed: 0 } }]) {
    test(`the plan whose status write finishes the job tells its failures before it, best effort (${c.why})`, () => {
      const p = plan({ job: job({ parallelism: 2 }, c.status ? { status: c.status } : {}), pods: [pod('a', 1, 1), pod('b', 2, 0)] }, NOW);
      const o = order(p.actions);
      assert.deepEqual(o.filter((x) => x.startsWith('EphemeralContainerFailed@') || x === 'status').slice(0, 2), ['EphemeralContainerFailed@told!', 'status'], o.join(' '));
      assert.equal(statusOf(p.actions)?.phase, 'Failed');
      // Within seconds of the look's start, or not at all: Event writes that hang do not hold the verdict back.
      assert.ok(p.actions.filter((a) => a.group === 'told').every((a) => a.withinSeconds !== undefined && a.withinSeconds <= 30), o.join(' '));
      // The verdict's own Events still follow the status that says it.
      assert.ok(p.actions.filter((a) => reasonOf(a) === 'JobFailed').every((a) => a.requires === 'status' || (Array.isArray(a.requires) && a.requires.includes('status'))), o.join(' '));
    });
  }

  test('a failure counted while the job runs is told after the status write that counts it', () => {
    const p = plan({ job: job({ parallelism: 2 }), pods: [pod('a', 1, 1), pod('b', 2, 'running')] }, NOW);
    const told = p.actions.filter((a) => reasonOf(a) === 'EphemeralContainerFailed');
    assert.equal(told.length, 1);
    assert.equal(told[0]?.requires, 'status');
    assert.equal(told[0]?.bestEffort, undefined);
  });
});

test("an injection says where kube-apiserver will find each template container in the pod's list (review91 F5): after the pod's own", () => {
  const two = { ephemeralContainers: [...template.ephemeralContainers, { ...template.ephemeralContainers[0], name: 'ec2' }] };
  const debugged = pod('a', 1, 'none', { spec: { containers: [{ name: 'main' }], ephemeralContainers: [{ name: 'debugger-1' }, { name: 'debugger-2' }] } });
  const p = plan({ job: job({ template: two }), pods: [debugged] }, NOW);
  const inject = p.actions.find((a: Action) => a.subresource === 'ephemeralcontainers');
  assert.deepEqual(inject?.refusalPaths, {
    'spec.ephemeralContainers[2]': 'spec.template.ephemeralContainers[0](ec)',
    'spec.ephemeralContainers[3]': 'spec.template.ephemeralContainers[1](ec2)',
  });
});
