import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ContainerStatus, Pod } from '../../functions/api/pod.ts';
import type { Action, Plan } from '../../functions/engine/plan.ts';
import { crrName, signalContainerName } from '../../functions/sidecar/actions.ts';
import { DEFAULT_SIDECAR_OPTIONS } from '../../functions/sidecar/config.ts';
import { plan, type CrrView } from '../../functions/sidecar/planner.ts';
import { basePod, env, exited, NOW, observed, podWith, running, SIDECAR_ENV, UID } from './support.ts';

const IGNORE_ENV = env('KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE', 'true');
const WITH_IMAGE = (image: string) => env('KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE', image);
const VK = { name: 'vk-1', kind: 'virtual-kubelet' } as const;

const kinds = (actions: Action[]): string[] => actions.map((a) => `${a.verb} ${a.kind}${a.subresource ? `/${a.subresource}` : ''}`);
const only = (actions: Action[], kind: string, subresource?: string): Action[] => actions.filter((a) => a.kind === kind && a.subresource === subresource);
const events = (actions: Action[]): { type: string; reason: string; message: string }[] => actions.filter((a) => a.kind === 'Event').map((a) => a.body as { type: string; reason: string; message: string });
type CrrBody = { metadata: { name: string; ownerReferences: { kind: string; uid: string; controller: boolean }[]; labels: Record<string, string> }; spec: { podName: string; containers: { name: string }[]; strategy: { forceRecreate: boolean; failurePolicy: string } } };
type StatusBody = { metadata: { resourceVersion: string }; status: { phase: string; conditions: { type: string; status: string; reason: string }[] } };
const existingCrr = (name: string, containers: string[], createdAt = '2026-01-01T00:01:05Z'): CrrView => ({ name, containers, createdAt: new Date(createdAt) });

/** main + two sidecars (a, b) + one ignore-exit-code sidecar (c). */
function fourContainers(states: { main: number | 'running'; a?: number; b?: number; c?: number }, policy = 'Never') {
  const st = (name: string, v: number | 'running' | undefined) => (v === undefined || v === 'running' ? running(name) : exited(name, v));
  return podWith({
    containers: [{ name: 'main' }, { name: 'a', env: [SIDECAR_ENV] }, { name: 'b', env: [env('KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', 'TRUE')] }, { name: 'c', env: [SIDECAR_ENV, IGNORE_ENV] }],
    spec: { restartPolicy: policy },
    statuses: [st('main', states.main), st('a', states.a), st('b', states.b), st('c', states.c)],
  });
}

describe('not due or not plannable: no actions, a note saying why', () => {
  test('main still running', () => {
    const p = plan(observed(podWith({ statuses: [running('main'), running('log-shipper')] })), NOW);
    assert.deepEqual(p.actions, []);
    assert.match(p.notes?.join('\n') ?? '', /not due: main container main has not terminated/);
  });
  test('unreadable pod', () => {
    const p = plan({ ...observed(basePod()), pod: null, unreadable: 'pod batch/x unreadable (spec.containers: expected array)' }, NOW);
    assert.deepEqual(p.actions, []);
    assert.match(p.notes?.join('\n') ?? '', /unreadable \(spec\.containers/);
  });
  test('node no longer exists: skipped (the pod is orphaned)', () => {
    const p = plan(observed(basePod(), { node: { name: 'node-a', kind: 'missing' } }), NOW);
    assert.deepEqual(p.actions, []);
    assert.match(p.notes?.join('\n') ?? '', /node node-a no longer exists/);
  });
  test('what leaves a due pod\'s sidecars running and shows nowhere else is a warning (logged at warn), not only a debug note (review86)', () => {
    const unreadable = plan({ ...observed(basePod()), pod: null, unreadable: 'pod batch/x unreadable (spec.containers: expected array)' }, NOW);
    assert.deepEqual(unreadable.warnings, ['pod batch/x unreadable (spec.containers: expected array): skipped, its sidecars are not stopped']);
    const orphan = plan(observed(basePod(), { node: { name: 'node-a', kind: 'missing' } }), NOW);
    assert.deepEqual(orphan.warnings, ['pod batch/job-abc12 skipped: node node-a no longer exists (the pod is orphaned; PodGC deletes it), its sidecars are not stopped']);
    assert.equal(plan(observed(podWith({ statuses: [running('main'), running('log-shipper')] })), NOW).warnings, undefined, 'not due: routine, a debug note');
    assert.equal(plan(observed(basePod()), NOW).warnings, undefined);
  });
  test('a node that cannot be read (no right to get nodes): warned with the stop it decided, once per pod, not at every later look (review86)', () => {
    const node = { name: 'node-a', kind: 'unknown', detail: 'unreadable (403 nodes "node-a" is forbidden; grant get on nodes to detect virtual-kubelet)' } as const;
    const first = plan(observed(basePod(), { node }), NOW);
    assert.deepEqual(kinds(first.actions), ['create ContainerRecreateRequest', 'create Event']);
    assert.deepEqual(first.warnings, ['pod batch/job-abc12: virtual-kubelet detection skipped, node node-a unreadable (403 nodes "node-a" is forbidden; grant get on nodes to detect virtual-kubelet): stopping its sidecars as on a normal node']);
    const name = crrName(UID, 'sidecars');
    const later = plan(observed(basePod(), { node, crrs: { [name]: existingCrr(name, ['log-shipper']) } }), NOW);
    assert.equal(later.warnings, undefined);
  });
  test('pod without uid: cannot name or own a CRR', () => {
    const p = plan(observed(podWith({ metadata: { uid: undefined } })), NOW);
    assert.deepEqual(p.actions, []);
  });
  test('a main container that exited with a code its RestartAllContainers rule names: the pod restarts in place, so no phase is written and nothing is stopped (review71)', () => {
    const rules = [{ action: 'RestartAllContainers', exitCodes: { operator: 'In', values: [42] } }];
    for (const sidecar of [[SIDECAR_ENV], [SIDECAR_ENV, IGNORE_ENV]]) {
      const pod = podWith({ containers: [{ name: 'main', restartPolicyRules: rules } as Pod['spec']['containers'][number], { name: 'log-shipper', env: sidecar }], statuses: [exited('main', 42), running('log-shipper')] });
      const p = plan(observed(pod), NOW);
      assert.deepEqual(p.actions, []);
      assert.match(p.notes?.join('\n') ?? '', /not due: main container main exited 42 under a RestartAllContainers rule/);
    }
  });
  test('native sidecars only: nothing to do', () => {
    const pod = podWith({ containers: [{ name: 'main' }], spec: { initContainers: [{ name: 'proxy', restartPolicy: 'Always', env: [SIDECAR_ENV] }] }, statuses: [exited('main', 0)] });
    assert.deepEqual(plan(observed(pod), NOW).actions, []);
  });
});

describe('crr strategy (OpenKruise-compatible)', () => {
  test('creates sidecar-termination-<uid> for the unterminated sidecars, owned by the pod, plus an Event', () => {
    const p = plan(observed(fourContainers({ main: 0, a: 0 })), NOW);
    assert.deepEqual(kinds(p.actions), ['create ContainerRecreateRequest', 'create Event']);
    const crr = p.actions[0]!;
    assert.equal(crr.name, `sidecar-termination-${UID}`);
    assert.equal(crr.apiVersion, 'apps.kruise.io/v1alpha1');
    assert.equal(crr.alreadyExists, 'done');
    const body = crr.body as CrrBody;
    assert.deepEqual(body.spec.containers, [{ name: 'b' }], 'a has terminated; c waits for the second stage; main is never listed');
    assert.deepEqual(body.spec.strategy, { forceRecreate: true, failurePolicy: 'Ignore' });
    assert.equal(body.spec.podName, 'job-abc12');
    assert.deepEqual(body.metadata.ownerReferences.map((o) => [o.kind, o.uid, o.controller]), [['Pod', UID, true]]);
    assert.equal(body.metadata.labels['crr.apps.kruise.io/node-name'], 'node-a');
    assert.equal(events(p.actions)[0]?.reason, 'SidecarTerminator');
    assert.match(events(p.actions)[0]?.message ?? '', /\[b\] using crr/);
    assert.equal(p.requeueAfterSeconds, 120, 'if nobody executes it the pod never changes again: look again after stuckAfterSeconds');
  });

  test('a node name longer than a label value (63): no CRR (it would be refused for good), a Warning naming ephemeral-signal', () => {
    const pod = fourContainers({ main: 0, a: 0 });
    const p = plan(observed({ ...pod, spec: { ...pod.spec, nodeName: `ip-10-123-45-67.${'x'.repeat(40)}.compute.internal` } }), NOW);
    assert.deepEqual(kinds(p.actions), ['create Event']);
    assert.equal(events(p.actions)[0]?.reason, 'SidecarTerminationUnsupported');
    assert.match(events(p.actions)[0]?.message ?? '', /longer than a label value may be \(63\).*ephemeral-signal/);
  });

  test('an existing CRR means nothing more to do', () => {
    const name = crrName(UID, 'sidecars');
    const p = plan(observed(basePod(), { crrs: { [name]: existingCrr(name, ['log-shipper']) } }), NOW);
    assert.deepEqual(p.actions, []);
  });

  test('the Event and CRR names are deterministic (a retried plan meets AlreadyExists)', () => {
    const a = plan(observed(basePod()), NOW).actions.map((x) => x.name);
    const b = plan(observed(basePod()), new Date(NOW.getTime() + 60_000)).actions.map((x) => x.name);
    assert.deepEqual(a, b);
  });

  test('Never with a failed main container: sidecars are still stopped', () => {
    const p = plan(observed(podWith({ statuses: [exited('main', 1), running('log-shipper')] })), NOW);
    assert.deepEqual(kinds(p.actions), ['create ContainerRecreateRequest', 'create Event']);
  });

  test('a CRR still not done after stuckAfterSeconds: one Warning naming kruise-daemon; before that, a requeue', () => {
    const name = crrName(UID, 'sidecars');
    const crrs = { [name]: existingCrr(name, ['log-shipper'], '2026-01-01T00:01:30Z') };
    const early = plan(observed(basePod(), { crrs }), NOW); // 30 s after creation
    assert.deepEqual(early.actions, []);
    assert.equal(early.requeueAfterSeconds, 90);
    const late = plan(observed(basePod(), { crrs }), new Date('2026-01-01T00:03:30Z'));
    assert.deepEqual(events(late.actions).map((e) => [e.type, e.reason]), [['Warning', 'SidecarTerminationStuck']]);
    assert.match(events(late.actions)[0]?.message ?? '', /kruise-daemon/);
    assert.equal(late.requeueAfterSeconds, undefined);
  });

  describe('the stuck Warning waits out the pod\'s grace period (review86: it blamed kruise-daemon while it stopped a sidecar with 300 s)', () => {
    const name = crrName(UID, 'sidecars');
    const graced = (seconds: number, statuses?: ContainerStatus[]) => podWith({ spec: { terminationGracePeriodSeconds: seconds }, ...(statuses ? { statuses } : {}) });
    test('terminationGracePeriodSeconds 600: no Warning 125 s after the CRR, a look again once the grace and a margin have passed; then the Warning says why it waited', () => {
      const crrs = { [name]: existingCrr(name, ['log-shipper'], '2026-01-01T00:00:00Z') };
      const early = plan(observed(graced(600), { crrs }), new Date('2026-01-01T00:02:05Z'));
      assert.deepEqual(early.actions, []);
      assert.equal(early.requeueAfterSeconds, 630 - 125);
      const late = plan(observed(graced(600), { crrs }), new Date('2026-01-01T00:10:30Z'));
      assert.deepEqual(events(late.actions).map((e) => [e.type, e.reason]), [['Warning', 'SidecarTerminationStuck']]);
      assert.match(events(late.actions)[0]?.message ?? '', /still running 630s after ephemera asked it to stop \(crr, terminationGracePeriodSeconds 600\)/);
    });
    test('kruise-daemon kills a CRR\'s containers one after the other: two sidecars at 90 s wait 2 × 90 s and the margin', () => {
      const pod = podWith({ spec: { terminationGracePeriodSeconds: 90 }, containers: [{ name: 'main' }, { name: 'a', env: [SIDECAR_ENV] }, { name: 'b', env: [SIDECAR_ENV] }], statuses: [exited('main', 0), running('a'), running('b')] });
      const crrs = { [name]: existingCrr(name, ['a', 'b'], '2026-01-01T00:00:00Z') };
      assert.deepEqual(plan(observed(pod, { crrs }), new Date('2026-01-01T00:03:29Z')).actions, []);
      assert.equal(events(plan(observed(pod, { crrs }), new Date('2026-01-01T00:03:30Z')).actions).length, 1);
    });
    test('the look after a CRR is created comes when its Warning would be due', () => {
      assert.equal(plan(observed(graced(600)), NOW).requeueAfterSeconds, 630);
      assert.equal(plan(observed(graced(10)), NOW).requeueAfterSeconds, 120, 'never before stuckAfterSeconds');
    });
    test('the CRR\'s phase says whether kruise-daemon took it: Recreating names its state and log, not "is it running?"; Pending says another request is ahead', () => {
      const at = new Date('2026-01-01T00:05:00Z');
      const said = (phase?: string): string => events(plan(observed(basePod(), { crrs: { [name]: { ...existingCrr(name, ['log-shipper'], '2026-01-01T00:00:00Z'), ...(phase ? { phase } : {}) } } }), at).actions)[0]?.message ?? '';
      assert.match(said('Recreating'), /kruise-daemon on node node-a has taken ContainerRecreateRequest sidecar-termination-.* \(Recreating\), yet the sidecar runs on: see its status\.containerRecreateStates/);
      assert.doesNotMatch(said('Recreating'), /is it running/);
      assert.match(said('Pending'), /is Pending: kruise-daemon on node node-a runs one request of a pod at a time/);
      assert.match(said(), /is it running on node node-a\?/);
    });
    test('a CRR kruise-manager completed because no kruise-daemon answered (Completed, no containerRecreateStates) asks whether kruise-daemon runs, not for its log (review89)', () => {
      const at = new Date('2026-01-01T00:05:00Z');
      const said = (status: Partial<CrrView>): string => events(plan(observed(basePod(), { crrs: { [name]: { ...existingCrr(name, ['log-shipper'], '2026-01-01T00:00:00Z'), ...status } } }), at).actions)[0]?.message ?? '';
      const unanswered = said({ phase: 'Completed', message: 'daemon has not responded for a long time', daemonActed: false });
      assert.match(unanswered, /was completed without kruise-daemon acting on it \("daemon has not responded for a long time"\): is kruise-daemon running on node node-a\? The request will not be taken any more/);
      assert.doesNotMatch(unanswered, /has taken/);
      const acted = said({ phase: 'Completed', message: 'recreated', daemonActed: true });
      assert.match(acted, /kruise-daemon on node node-a has taken ContainerRecreateRequest sidecar-termination-.* \(Completed: "recreated"\), yet the sidecar runs on/);
    });
    test('ephemeral-signal: a sidecar still draining within its grace period is not stuck', () => {
      const signal = signalContainerName('log-shipper');
      const pod = podWith({
        spec: { terminationGracePeriodSeconds: 600, ephemeralContainers: [{ name: signal, targetContainerName: 'log-shipper' }] },
        status: { ephemeralContainerStatuses: [{ name: signal, state: { terminated: { exitCode: 0, startedAt: '2026-01-01T00:00:00Z' } } }] },
      });
      const p = plan(observed(pod, { options: { ...DEFAULT_SIDECAR_OPTIONS, defaultStrategy: 'ephemeral-signal' } }), new Date('2026-01-01T00:02:05Z'));
      assert.deepEqual(p.actions, []);
      assert.equal(p.requeueAfterSeconds, 630 - 125);
    });
    test('virtual-kubelet: the kubelet stops the old container first, so a swap not acted on within the grace period is not yet "not supported"', () => {
      const pod = podWith({
        spec: { terminationGracePeriodSeconds: 300 },
        metadata: { annotations: { 'ephemera.io/sidecar-swapped-at': '2026-01-01T00:00:00Z' } },
        containers: [{ name: 'main' }, { name: 'a', image: 'example/exit:1', env: [WITH_IMAGE('example/exit:1')] }],
        statuses: [exited('main', 0), running('a', { image: 'docker.io/example/envoy:1' })],
      });
      const p = plan(observed(pod, { node: VK }), new Date('2026-01-01T00:02:05Z'));
      assert.deepEqual(p.actions, []);
      assert.equal(p.requeueAfterSeconds, 330 - 125);
      assert.equal(events(plan(observed(pod, { node: VK }), new Date('2026-01-01T00:05:30Z')).actions).length, 1);
    });
    test('virtual-kubelet: once the new image runs, the old container\'s grace is behind it: the swapped image still running gets its Warning after stuckAfterSeconds, whatever the grace period (review92 G7)', () => {
      const pod = podWith({
        spec: { terminationGracePeriodSeconds: 300 },
        containers: [{ name: 'main' }, { name: 'a', image: 'exit:1', env: [WITH_IMAGE('exit:1')] }],
        statuses: [exited('main', 0), running('a', { image: 'exit:1', state: { running: { startedAt: '2026-01-01T00:01:30Z' } } })],
      });
      const early = plan(observed(pod, { node: VK }), NOW);
      assert.equal(early.requeueAfterSeconds, 90, 'started 30 s before NOW: stuckAfterSeconds from its start, not 300 s more');
      assert.deepEqual(events(plan(observed(pod, { node: VK }), new Date(NOW.getTime() + 91_000)).actions).map((e) => e.reason), ['SidecarTerminationStuck']);
    });
  });

  test('ContainerRecreateRequests not served (no OpenKruise): no create, one Warning naming the ways out, a look again in 10 minutes', () => {
    const p = plan(observed(basePod(), { crrUnserved: true }), NOW);
    assert.equal(only(p.actions, 'ContainerRecreateRequest').length, 0, 'its create could only be refused with 404, on every look');
    assert.deepEqual(events(p.actions).map((e) => [e.type, e.reason]), [['Warning', 'SidecarTerminationUnsupported']]);
    const message = events(p.actions)[0]?.message ?? '';
    assert.match(message, /ContainerRecreateRequest \(apps\.kruise\.io\/v1alpha1\) is not served in this cluster/);
    assert.match(message, /\[log-shipper\]/);
    assert.match(message, /Install OpenKruise with kruise-daemon/);
    assert.match(message, /EPHEMERA_SIDECAR_STRATEGY=ephemeral-signal/);
    assert.match(message, /annotate the pod ephemera\.io\/sidecar-termination=ephemeral-signal/);
    assert.equal(p.requeueAfterSeconds, 600, 'so that an install of OpenKruise is picked up');
    const later = plan(observed(basePod(), { crrUnserved: true }), new Date(NOW.getTime() + 600_000));
    assert.deepEqual(later.actions.map((a) => a.name), p.actions.map((a) => a.name), 'one Event per pod: its name is fixed');
  });

  test('ContainerRecreateRequests not served for a pod whose annotation asks for crr: the Warning names the annotation, which wins over the installation (review)', () => {
    const pod = podWith({ metadata: { annotations: { 'ephemera.io/sidecar-termination': 'crr' } } });
    const message = events(plan(observed(pod, { crrUnserved: true }), NOW).actions)[0]?.message ?? '';
    assert.match(message, /set the pod's annotation ephemera\.io\/sidecar-termination=ephemeral-signal \(it asks for crr\)/);
    assert.doesNotMatch(message, /EPHEMERA_SIDECAR_STRATEGY/);
  });

  test('ContainerRecreateRequests not served, second stage: the phase is still set, no CRR for c', () => {
    const p = plan(observed(fourContainers({ main: 0, a: 0, b: 0 }), { crrUnserved: true }), NOW);
    assert.deepEqual(kinds(p.actions), ['patch Pod/status', 'create Event', 'create Event']);
    assert.deepEqual(events(p.actions).map((e) => e.reason), ['SidecarTerminator', 'SidecarTerminationUnsupported']);
  });
});

describe('ignore-exit-code sidecars: phase first, then a CRR of their own', () => {
  test('waits for the other sidecars', () => {
    const p = plan(observed(fourContainers({ main: 0 })), NOW);
    assert.equal(only(p.actions, 'Pod', 'status').length, 0);
    assert.deepEqual((p.actions[0]?.body as CrrBody).spec.containers, [{ name: 'a' }, { name: 'b' }]);
  });

  test('main succeeded: phase Succeeded with SidecarTerminated, then a distinct CRR for c', () => {
    const p = plan(observed(fourContainers({ main: 0, a: 143, b: 0 })), NOW);
    assert.deepEqual(kinds(p.actions), ['patch Pod/status', 'create Event', 'create ContainerRecreateRequest', 'create Event']);
    const status = p.actions[0]!;
    assert.equal(status.patchType, 'strategic');
    const body = status.body as StatusBody;
    assert.equal(body.status.phase, 'Succeeded');
    assert.deepEqual(body.status.conditions.map((c) => [c.type, c.status]), [['SidecarTerminated', 'True']]);
    assert.equal(body.metadata.resourceVersion, '4711', 'fenced: the verdict was read from this version');
    assert.ok(status.id !== undefined && p.actions.slice(1).every((a) => [a.requires].flat().includes(status.id)), 'the Event saying the phase was set, and the CRR for c with its Event, are sent only if that write took effect');
    const crr = p.actions[2]!;
    assert.equal(crr.name, `sidecar-termination-${UID}-ignore-exit-code`);
    assert.notEqual(crr.name, crrName(UID, 'sidecars'));
    assert.deepEqual((crr.body as CrrBody).spec.containers, [{ name: 'c' }]);
  });

  test('where the strategy cannot reach c (a node name over 63 characters, a hostPID pod), the phase write alone ends it: no Warning', () => {
    const pod = fourContainers({ main: 0, a: 143, b: 0 });
    const longNode = plan(observed({ ...pod, spec: { ...pod.spec, nodeName: 'n'.repeat(70) } }), NOW);
    assert.deepEqual(kinds(longNode.actions), ['patch Pod/status', 'create Event']);
    const hostPid = plan(observed({ ...pod, spec: { ...pod.spec, hostPID: true } }, { options: { ...DEFAULT_SIDECAR_OPTIONS, defaultStrategy: 'ephemeral-signal' } }), NOW);
    assert.deepEqual(kinds(hostPid.actions), ['patch Pod/status', 'create Event']);
    assert.match(hostPid.notes?.join('\n') ?? '', /the kubelet stops its sidecars/);
  });

  test('main failed: phase Failed', () => {
    const p = plan(observed(fourContainers({ main: 1, a: 0, b: 0 })), NOW);
    assert.equal((only(p.actions, 'Pod', 'status')[0]?.body as StatusBody).status.phase, 'Failed');
  });

  test('an earlier first-stage CRR does not block the second stage', () => {
    const first = crrName(UID, 'sidecars');
    const second = crrName(UID, 'ignore-exit-code');
    const p = plan(observed(fourContainers({ main: 0, a: 137, b: 137 }), { crrs: { [first]: existingCrr(first, ['a', 'b']), [second]: null } }), NOW);
    assert.ok(p.actions.some((a) => a.kind === 'ContainerRecreateRequest' && a.name === second));
  });

  test('phase already terminal: no status patch, the second-stage CRR still goes out until it exists', () => {
    const pod = { ...fourContainers({ main: 0, a: 0, b: 0 }), status: { ...fourContainers({ main: 0, a: 0, b: 0 }).status, phase: 'Succeeded' } };
    const p = plan(observed(pod), NOW);
    assert.deepEqual(kinds(p.actions), ['create ContainerRecreateRequest', 'create Event']);
    const second = crrName(UID, 'ignore-exit-code');
    assert.deepEqual(plan(observed(pod, { crrs: { [second]: existingCrr(second, ['c']) } }), NOW).actions, []);
  });
});

describe('virtual-kubelet nodes: swap images', () => {
  test('swaps each unterminated WITH_IMAGE sidecar by name, fenced by resourceVersion', () => {
    const pod = podWith({
      containers: [{ name: 'main' }, { name: 'a', image: 'envoy:1', env: [WITH_IMAGE('exit:1')] }, { name: 'b', image: 'agent:1', env: [SIDECAR_ENV, WITH_IMAGE('exit:2')] }, { name: 'done', image: 'x', env: [WITH_IMAGE('exit:1')] }],
      statuses: [exited('main', 0), running('a'), running('b'), exited('done', 0)],
    });
    const p = plan(observed(pod, { node: VK }), NOW);
    assert.deepEqual(kinds(p.actions), ['patch Pod', 'create Event']);
    const swap = p.actions[0]!;
    assert.equal(swap.patchType, 'strategic');
    assert.equal(swap.subresource, undefined);
    assert.deepEqual(swap.body, { metadata: { resourceVersion: '4711', annotations: { 'ephemera.io/sidecar-swapped-at': NOW.toISOString().replace(/\.\d+Z$/, 'Z') } }, spec: { containers: [{ name: 'a', image: 'exit:1' }, { name: 'b', image: 'exit:2' }] } });
    assert.match(events(p.actions)[0]?.message ?? '', /in-place update/);
    assert.equal(p.requeueAfterSeconds, 120);
  });

  test('the Event saying it is trying is sent only if the swap took effect (review78: said next to the swap\'s ActionRefused)', () => {
    const pod = podWith({ containers: [{ name: 'main' }, { name: 'a', image: 'envoy:1', env: [WITH_IMAGE('exit:1')] }], statuses: [exited('main', 0), running('a')] });
    const [swap, event] = plan(observed(pod, { node: VK }), NOW).actions;
    assert.equal(swap?.kind, 'Pod');
    assert.equal(event?.kind, 'Event');
    assert.ok(swap.id !== undefined && [event.requires].flat().includes(swap.id));
  });

  test('a later swap (another sidecar) keeps the time of the first: its Warning is not put off (review)', () => {
    const pod = podWith({
      metadata: { annotations: { 'ephemera.io/sidecar-swapped-at': '2026-01-01T00:00:10Z' } },
      containers: [{ name: 'main' }, { name: 'a', image: 'exit:1', env: [WITH_IMAGE('exit:1')] }, { name: 'b', image: 'agent:1', env: [WITH_IMAGE('exit:2')] }],
      statuses: [exited('main', 0), running('a', { image: 'docker.io/library/exit:1' }), running('b')],
    });
    const swap = plan(observed(pod, { node: VK }), NOW).actions.find((a) => a.kind === 'Pod');
    assert.deepEqual((swap?.body as { metadata: { annotations: Record<string, string> } }).metadata.annotations, { 'ephemera.io/sidecar-swapped-at': '2026-01-01T00:00:10Z' });
  });

  test('already swapped: nothing more', () => {
    const pod = podWith({ containers: [{ name: 'main' }, { name: 'a', image: 'exit:1', env: [WITH_IMAGE('exit:1')] }], statuses: [exited('main', 0), running('a')] });
    assert.deepEqual(plan(observed(pod, { node: VK }), NOW).actions, []);
  });

  test('the swapped image keeps running: a requeue, then after stuckAfterSeconds one Warning naming the image', () => {
    const pod = podWith({
      containers: [{ name: 'main' }, { name: 'a', image: 'exit:1', env: [WITH_IMAGE('exit:1')] }],
      statuses: [exited('main', 0), running('a', { image: 'exit:1', state: { running: { startedAt: '2026-01-01T00:01:30Z' } } })],
    });
    const early = plan(observed(pod, { node: VK }), NOW);
    assert.deepEqual(early.actions, []);
    assert.equal(early.requeueAfterSeconds, 90, 'started 30 s before NOW');
    const late = plan(observed(pod, { node: VK }), new Date(NOW.getTime() + 91_000));
    assert.deepEqual(events(late.actions).map((e) => [e.type, e.reason]), [['Warning', 'SidecarTerminationStuck']]);
    assert.match(events(late.actions)[0]?.message ?? '', /KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE must exit at once/);
  });

  test('a pod whose phase is already terminal (a virtual-kubelet froze its status with the phase ephemera set): no stuck Warning, no look again', () => {
    const pod = podWith({
      containers: [{ name: 'main' }, { name: 'a', image: 'exit:1', env: [WITH_IMAGE('exit:1')] }],
      statuses: [exited('main', 0), running('a', { image: 'exit:1', state: { running: { startedAt: '2026-01-01T00:01:30Z' } } })],
    });
    const ended = { ...pod, status: { ...pod.status, phase: 'Succeeded' } };
    const late = plan(observed(ended, { node: VK }), new Date(NOW.getTime() + 600_000));
    assert.deepEqual(events(late.actions), []);
    assert.equal(late.requeueAfterSeconds, undefined);
    assert.match(late.notes?.join('\n') ?? '', /phase is Succeeded: .* nothing is stuck/);
  });

  test('a terminal pod whose node still reports the old image: no Warning that the swap was not acted on, no look again (review71)', () => {
    const pod = podWith({
      metadata: { annotations: { 'ephemera.io/sidecar-swapped-at': '2026-01-01T00:01:00Z' } },
      containers: [{ name: 'main' }, { name: 'a', image: 'example/exit:1', env: [WITH_IMAGE('example/exit:1')] }],
      statuses: [exited('main', 0), running('a', { image: 'docker.io/example/envoy:1' })],
      status: { phase: 'Failed' },
    });
    const p = plan(observed(pod, { node: VK }), new Date('2026-01-01T00:10:00Z'));
    assert.deepEqual(p.actions, []);
    assert.equal(p.requeueAfterSeconds, undefined);
    assert.match(p.notes?.join('\n') ?? '', /phase is Failed: nothing is stuck/);
  });

  const reportedAs: [string, string][] = [['example/exit:1', 'docker.io/example/exit:1'], ['busybox', 'docker.io/library/busybox:latest']];
  for (const [spec, reported] of reportedAs) {
    test(`the kubelet reports ${spec} as ${reported}: the swap is recognised as done (a requeue, then the Warning)`, () => {
      const pod = podWith({
        containers: [{ name: 'main' }, { name: 'a', image: spec, env: [WITH_IMAGE(spec)] }],
        statuses: [exited('main', 0), running('a', { image: reported, state: { running: { startedAt: '2026-01-01T00:01:30Z' } } })],
      });
      const early = plan(observed(pod, { node: VK }), NOW);
      assert.deepEqual(early.actions, []);
      assert.equal(early.requeueAfterSeconds, 90, 'started 30 s before NOW');
      const late = plan(observed(pod, { node: VK }), new Date(NOW.getTime() + 91_000));
      assert.deepEqual(events(late.actions).map((e) => [e.type, e.reason]), [['Warning', 'SidecarTerminationStuck']]);
    });
  }

  test('swap written, the kubelet still runs the old image: not done yet, looked at again', () => {
    const pod = podWith({
      containers: [{ name: 'main' }, { name: 'a', image: 'example/exit:1', env: [WITH_IMAGE('example/exit:1')] }],
      statuses: [exited('main', 0), running('a', { image: 'docker.io/example/envoy:1' })],
    });
    const p = plan(observed(pod, { node: VK }), NOW);
    assert.deepEqual(p.actions, []);
    assert.equal(p.requeueAfterSeconds, 120);
    assert.match(p.notes?.join('\n') ?? '', /the kubelet still reports docker\.io\/example\/envoy:1/);
  });

  test('a node that never acts on the swap: looked at again until stuckAfterSeconds after the swap was written, then one Warning (review)', () => {
    const at = (secondsAgo: number): string => new Date(NOW.getTime() - secondsAgo * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
    const pod = (secondsAgo: number) => podWith({
      metadata: { annotations: { 'ephemera.io/sidecar-swapped-at': at(secondsAgo) } },
      containers: [{ name: 'main' }, { name: 'a', image: 'example/exit:1', env: [WITH_IMAGE('example/exit:1')] }],
      statuses: [exited('main', 0), running('a', { image: 'docker.io/example/envoy:1' })],
    });
    const early = plan(observed(pod(30), { node: VK }), NOW);
    assert.deepEqual(early.actions, []);
    assert.equal(early.requeueAfterSeconds, 90);
    const late = plan(observed(pod(121), { node: VK }), NOW);
    assert.deepEqual(events(late.actions).map((e) => [e.type, e.reason]), [['Warning', 'SidecarTerminationStuck']]);
    assert.match(events(late.actions)[0]?.message ?? '', /has not acted on the image swap of sidecar a to example\/exit:1 120s after ephemera wrote it \(it reports the image docker\.io\/example\/envoy:1\)/);
    assert.equal(late.requeueAfterSeconds, undefined, 'said once; a change of the pod brings it back');
  });

  test('OnFailure: the swapped image exits non-zero and the kubelet restarts it: the pod is ended Succeeded', () => {
    const pod = podWith({
      containers: [{ name: 'main' }, { name: 'a', image: 'example/exit:1', env: [WITH_IMAGE('example/exit:1')] }],
      spec: { restartPolicy: 'OnFailure' },
      statuses: [exited('main', 0), { name: 'a', image: 'docker.io/example/exit:1', restartCount: 2, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 1, startedAt: '2026-01-01T00:01:40Z', finishedAt: '2026-01-01T00:01:41Z' } } }],
    });
    const p = plan(observed(pod, { node: VK }), NOW);
    assert.equal((only(p.actions, 'Pod', 'status')[0]?.body as StatusBody | undefined)?.status.phase, 'Succeeded');
  });

  test('the swapped image cannot be pulled: a Warning naming the reason, and a look again', () => {
    const pod = podWith({
      containers: [{ name: 'main' }, { name: 'a', image: 'example/exit:1', env: [WITH_IMAGE('example/exit:1')] }],
      statuses: [exited('main', 0), { name: 'a', image: 'docker.io/example/envoy:1', state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "example/exit:1"' } } }],
    });
    const p = plan(observed(pod, { node: VK }), NOW);
    assert.deepEqual(events(p.actions).map((e) => [e.type, e.reason]), [['Warning', 'SidecarTerminationStuck']]);
    assert.match(events(p.actions)[0]?.message ?? '', /cannot start the image example\/exit:1 .*ImagePullBackOff: Back-off pulling/);
    assert.equal(p.requeueAfterSeconds, 120);
  });

  test('the kubelet\'s message is quoted on one line and bounded: a runtime\'s error can run to kilobytes (review78)', () => {
    const pod = podWith({
      containers: [{ name: 'main' }, { name: 'a', image: 'example/exit:1', env: [WITH_IMAGE('example/exit:1')] }],
      statuses: [exited('main', 0), { name: 'a', image: 'docker.io/example/envoy:1', state: { waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image\n${'x'.repeat(20_000)}\nend` } } }],
    });
    const message = events(plan(observed(pod, { node: VK }), NOW).actions)[0]?.message ?? '';
    assert.ok(message.length < 1024, `${message.length} characters`);
    assert.doesNotMatch(message, /\n/);
    assert.match(message, /ImagePullBackOff: Back-off pulling image x+ … x+ end/);
  });

  test('a sidecar without WITH_IMAGE cannot be stopped there: a Warning, no action on it', () => {
    const p = plan(observed(basePod(), { node: VK }), NOW);
    assert.deepEqual(events(p.actions).map((e) => [e.type, e.reason]), [['Warning', 'SidecarTerminationUnsupported']]);
    assert.equal(p.actions.length, 1);
  });

  test('an unreadable node is assumed normal (noted)', () => {
    const p = plan(observed(basePod(), { node: { name: 'node-a', kind: 'unknown', detail: 'unreadable (403)' } }), NOW);
    assert.deepEqual(kinds(p.actions), ['create ContainerRecreateRequest', 'create Event']);
    assert.match(p.notes?.join('\n') ?? '', /assuming a normal node/);
  });
});

describe('ephemeral-signal strategy (no daemon)', () => {
  const signalOptions = { ...DEFAULT_SIDECAR_OPTIONS, defaultStrategy: 'ephemeral-signal' as const };

  test('chosen by config: one ephemeral container per sidecar, targeting it, with its securityContext', () => {
    const p = plan(observed(basePod(), { options: signalOptions }), NOW);
    assert.deepEqual(kinds(p.actions), ['patch Pod/ephemeralcontainers', 'create Event']);
    const inject = p.actions[0]!;
    assert.equal(inject.patchType, 'strategic');
    assert.equal(inject.alreadyExists, 'done');
    assert.deepEqual((inject.body as { metadata?: unknown }).metadata, { uid: UID }, 'a pod created again under its name is not the pod planned on (review86)');
    const ec = (inject.body as { spec: { ephemeralContainers: Record<string, unknown>[] } }).spec.ephemeralContainers;
    assert.equal(ec.length, 1);
    assert.deepEqual(
      { name: ec[0]?.name, target: ec[0]?.targetContainerName, image: ec[0]?.image, command: ec[0]?.command, sc: ec[0]?.securityContext },
      { name: 'ephemera-stop-log-shipper', target: 'log-shipper', image: 'busybox:1.36', command: ['kill', '-TERM', '1'], sc: { runAsUser: 1000 } },
    );
    assert.equal(p.requeueAfterSeconds, 120, 'a sidecar deaf to SIGTERM changes nothing: look again after stuckAfterSeconds');
  });

  describe('only a running sidecar is signalled (review71): one signalled before its process handles SIGTERM never stops', () => {
    // The main container finished at 00:01:00 (exited()); NOW is 60 s later.
    const waiting = (reason: string, extra: Partial<ContainerStatus> = {}): ContainerStatus => ({ name: 'log-shipper', state: { waiting: { reason } }, ...extra });
    for (const reason of ['ContainerCreating', 'ImagePullBackOff']) {
      test(`${reason}: no signal container yet, a look again in 10 s`, () => {
        const p = plan(observed(podWith({ statuses: [exited('main', 0), waiting(reason)] }), { options: signalOptions }), NOW);
        assert.deepEqual(p.actions, []);
        assert.equal(p.requeueAfterSeconds, 10);
        assert.match(p.notes?.join('\n') ?? '', new RegExp(`sidecar \\[log-shipper \\(${reason}\\)\\] not running: signalled once it runs`));
      });
    }

    test('still not running stuckAfterSeconds after the main containers finished: one Warning saying so, no signal, no look again (its start is a pod event)', () => {
      const pod = podWith({ statuses: [exited('main', 0), waiting('ImagePullBackOff')] });
      const p = plan(observed(pod, { options: signalOptions }), new Date('2026-01-01T00:03:01Z'));
      assert.equal(only(p.actions, 'Pod', 'ephemeralcontainers').length, 0);
      assert.deepEqual(events(p.actions).map((e) => [e.type, e.reason]), [['Warning', 'SidecarTerminationStuck']]);
      assert.match(events(p.actions)[0]?.message ?? '', /sidecar \[log-shipper \(ImagePullBackOff\)\] is still not running 120s after the main containers finished: ephemeral-signal signals only a running sidecar/);
      assert.equal(p.requeueAfterSeconds, undefined);
    });

    test('of two sidecars only the running one is signalled now', () => {
      const pod = podWith({ containers: [{ name: 'main' }, { name: 'a', env: [SIDECAR_ENV] }, { name: 'b', env: [SIDECAR_ENV] }], statuses: [exited('main', 0), running('a'), { name: 'b', state: { waiting: { reason: 'ContainerCreating' } } }] });
      const p = plan(observed(pod, { options: signalOptions }), NOW);
      const injected = only(p.actions, 'Pod', 'ephemeralcontainers').map((a) => (a.body as { spec: { ephemeralContainers: { targetContainerName: string }[] } }).spec.ephemeralContainers[0]?.targetContainerName);
      assert.deepEqual(injected, ['a']);
      assert.equal(p.requeueAfterSeconds, 10);
    });

    test('OnFailure, the sidecar in CrashLoopBackOff: the phase write ends the pod, no signal and no look again (the kubelet starts nothing in a terminal pod)', () => {
      const pod = podWith({ spec: { restartPolicy: 'OnFailure' }, statuses: [exited('main', 0), waiting('CrashLoopBackOff', { restartCount: 3, lastState: { terminated: { exitCode: 1 } } })] });
      const p = plan(observed(pod, { options: signalOptions }), NOW);
      assert.deepEqual(kinds(p.actions), ['patch Pod/status', 'create Event']);
      assert.equal(p.requeueAfterSeconds, undefined);
    });
  });

  test('chosen per pod by annotation, over a crr default', () => {
    const pod = podWith({ metadata: { annotations: { 'ephemera.io/sidecar-termination': 'ephemeral-signal' } } });
    assert.deepEqual(kinds(plan(observed(pod), NOW).actions), ['patch Pod/ephemeralcontainers', 'create Event']);
  });

  test('surrounding whitespace in the annotation is forgiven (a YAML block scalar leaves a newline)', () => {
    const pod = podWith({ metadata: { annotations: { 'ephemera.io/sidecar-termination': 'ephemeral-signal\n' } } });
    assert.deepEqual(kinds(plan(observed(pod), NOW).actions), ['patch Pod/ephemeralcontainers', 'create Event']);
  });

  test('annotation crr over an ephemeral-signal default', () => {
    const pod = podWith({ metadata: { annotations: { 'ephemera.io/sidecar-termination': 'crr' } } });
    assert.deepEqual(kinds(plan(observed(pod, { options: signalOptions }), NOW).actions), ['create ContainerRecreateRequest', 'create Event']);
  });

  test('an unknown annotation value is refused with a Warning, not guessed', () => {
    const pod = podWith({ metadata: { annotations: { 'ephemera.io/sidecar-termination': 'sigterm' } } });
    const p = plan(observed(pod), NOW);
    assert.deepEqual(events(p.actions).map((e) => [e.type, e.reason]), [['Warning', 'SidecarTerminationRefused']]);
    assert.equal(p.actions.length, 1);
  });

  describe('a sidecar still running past its grace period after its signal: the pod is ended, as crr ends it (review86: it ran, and its Job, for ever)', () => {
    const name = signalContainerName('log-shipper');
    const signalled = (o: Parameters<typeof podWith>[0] = {}) => {
      const p = podWith(o);
      return { ...p, spec: { ...p.spec, ephemeralContainers: [{ name, targetContainerName: 'log-shipper' }] }, status: { ...p.status, ephemeralContainerStatuses: [{ name, state: { terminated: { exitCode: 0, startedAt: '2026-01-01T00:01:10Z' } } }] } };
    };
    const LATE = new Date('2026-01-01T00:05:00Z');
    test('before stuckAfterSeconds: nothing, a look again then', () => {
      const p = plan(observed(signalled(), { options: signalOptions }), NOW);
      assert.deepEqual(p.actions, []);
      assert.equal(p.requeueAfterSeconds, 70);
    });
    test('after it: the phase write Failed (the sidecar killed, 137, fails a Never pod), its Event, and a Warning saying what was done; another for if the write does not take effect', () => {
      const p = plan(observed(signalled(), { options: signalOptions }), LATE);
      assert.deepEqual(kinds(p.actions), ['patch Pod/status', 'create Event', 'create Event', 'create Event']);
      const status = p.actions[0]!.body as StatusBody;
      assert.equal(status.status.phase, 'Failed');
      assert.deepEqual(status.status.conditions.map((c) => [c.type, c.status, c.reason]), [['SidecarTerminated', 'True', 'StuckAfterSignal']]);
      assert.equal(status.metadata.resourceVersion, '4711', 'fenced: a sidecar that exited since is read again, not overwritten');
      const [normal, done, notDone] = p.actions.slice(1);
      assert.match((normal?.body as { message: string }).message, /set the pod's phase to Failed: sidecar \[log-shipper\] still running 120s after its signal container sent it SIGTERM/);
      assert.deepEqual([done?.requires, done?.unless], [['end-pod'], undefined]);
      assert.match((done?.body as { message: string }).message, /its main process did not exit on it .*ephemera set the pod's phase to Failed \(as crr ends it: the sidecar killed \(exit 137\) fails a restartPolicy Never pod\), so the kubelet stops the sidecar: SIGTERM, then SIGKILL after terminationGracePeriodSeconds/);
      assert.deepEqual([notDone?.requires, notDone?.unless], [undefined, 'end-pod']);
      assert.match((notDone?.body as { message: string }).message, /could not set the pod's phase to Failed .*kubectl patch pod job-abc12 -n batch --subresource=status --type=merge -p '\{"status":\{"phase":"Failed"\}\}', or delete it/);
      assert.equal(p.requeueAfterSeconds, undefined);
    });
    for (const [mainExit, phase] of [[0, 'Succeeded'], [3, 'Failed']] as const) {
      test(`sidecars marked IGNORE_EXIT_CODE remain (main exited ${mainExit}): the phase comes from the main containers, as their stage would set it: ${phase}`, () => {
        const pod = signalled({ containers: [{ name: 'main' }, { name: 'log-shipper', env: [SIDECAR_ENV] }, { name: 'c', env: [SIDECAR_ENV, IGNORE_ENV] }], statuses: [exited('main', mainExit), running('log-shipper'), running('c')] });
        const p = plan(observed(pod, { options: signalOptions }), LATE);
        assert.equal((only(p.actions, 'Pod', 'status')[0]?.body as StatusBody).status.phase, phase);
        assert.match(events(p.actions)[1]?.message ?? '', /from the main containers, as the stage of sidecars marked KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE \[c\] would/);
      });
    }
    test('a node clock behind ours does not shorten the limit: counted from the injection (EPHEMERA_SIGNAL_INJECTED_AT) when it is later than the start, the node\'s clock (review95 F3)', () => {
      // Injected at 00:03:10 by ours; the node, 2 minutes behind, says it started at 00:01:10.
      const behind = (o: Parameters<typeof podWith>[0] = {}) => {
        const p = signalled(o);
        return { ...p, spec: { ...p.spec, ephemeralContainers: [{ name, targetContainerName: 'log-shipper', env: [env('EPHEMERA_SIGNAL_TARGET', 'log-shipper'), env('EPHEMERA_SIGNAL_INJECTED_AT', '2026-01-01T00:03:10Z')] }] } };
      };
      const early = plan(observed(behind(), { options: signalOptions }), LATE);
      assert.deepEqual(early.actions, [], 'at 00:05:00, 110 s after the injection: not yet (the start says 230 s)');
      assert.equal(early.requeueAfterSeconds, 10, 'a look again when 120 s have passed since the injection');
      assert.equal(only(plan(observed(behind(), { options: signalOptions }), new Date('2026-01-01T00:05:10Z')).actions, 'Pod', 'status').length, 1, 'stuck 120 s after the injection');
      // A grace of 300 s: the limit is 330 s from the injection, whatever the node's clock says.
      const long = behind({ spec: { terminationGracePeriodSeconds: 300 } });
      assert.deepEqual(plan(observed(long, { options: signalOptions }), new Date('2026-01-01T00:08:39Z')).actions, [], '329 s after the injection: still within grace + 30 s');
      assert.equal(only(plan(observed(long, { options: signalOptions }), new Date('2026-01-01T00:08:40Z')).actions, 'Pod', 'status').length, 1);
      // A node clock ahead: its start, the later, counts (it only delays the limit).
      const ahead = (o: Parameters<typeof podWith>[0] = {}) => {
        const p = behind(o);
        return { ...p, status: { ...p.status, ephemeralContainerStatuses: [{ name, state: { terminated: { exitCode: 0, startedAt: '2026-01-01T00:03:30Z' } } }] } };
      };
      assert.deepEqual(plan(observed(ahead(), { options: signalOptions }), new Date('2026-01-01T00:05:20Z')).actions, [], '130 s after the injection, 110 s after the start');
    });
    test('a pod whose phase is already terminal: nothing is stuck, nothing written', () => {
      const pod = signalled({ status: { phase: 'Failed' } });
      assert.deepEqual(plan(observed(pod, { options: signalOptions }), LATE).actions, []);
    });
    test('crr does not end the pod: kruise-daemon kills the sidecar itself, so a Warning only', () => {
      const crr = crrName(UID, 'sidecars');
      const p = plan(observed(basePod(), { crrs: { [crr]: existingCrr(crr, ['log-shipper'], '2026-01-01T00:00:00Z') } }), LATE);
      assert.deepEqual(kinds(p.actions), ['create Event']);
    });
  });

  /** The base pod with the signal container injected, and this status for it (undefined: none yet). */
  const injected = (state?: { waiting: { reason?: string; message?: string } }) => {
    const name = signalContainerName('log-shipper');
    return podWith({
      spec: { ephemeralContainers: [{ name, image: 'busybox:1.36', targetContainerName: 'log-shipper' }] },
      status: { ephemeralContainerStatuses: state ? [{ name, state }] : [] },
    });
  };
  const RUNS_AS_ROOT = 'container has runAsNonRoot and image will run as root (pod: "job-abc12_batch(0f1e2d3c)", container: ephemera-stop-log-shipper)';

  test('a signal container the kubelet will not start: a Warning naming it, the kubelet\'s reason and message and what to do; a look again', () => {
    const p = plan(observed(injected({ waiting: { reason: 'CreateContainerConfigError', message: RUNS_AS_ROOT } }), { options: signalOptions }), NOW);
    assert.equal(only(p.actions, 'Pod', 'ephemeralcontainers').length, 0, 'never injected twice');
    assert.deepEqual(events(p.actions).map((e) => [e.type, e.reason]), [['Warning', 'SidecarTerminationStuck']]);
    const message = events(p.actions)[0]?.message ?? '';
    assert.match(message, /signal container ephemera-stop-log-shipper \(image busybox:1\.36\) for sidecar log-shipper cannot start/);
    assert.ok(message.includes(`CreateContainerConfigError: ${RUNS_AS_ROOT}`), message);
    assert.match(message, /cannot be changed or removed/);
    assert.match(message, /runAsNonRoot/);
    assert.match(message, /ephemera\.io\/sidecar-termination=crr/);
    assert.match(message, /end the pod/);
    assert.equal(p.requeueAfterSeconds, 120, 'the pod may never change again: do not forget it');
  });

  for (const reason of ['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'CreateContainerError', 'ErrImageNeverPull']) {
    test(`a signal container waiting with ${reason}: the same Warning`, () => {
      const p = plan(observed(injected({ waiting: { reason, message: 'from the kubelet' } }), { options: signalOptions }), NOW);
      assert.deepEqual(events(p.actions).map((e) => [e.type, e.reason]), [['Warning', 'SidecarTerminationStuck']]);
      assert.ok(events(p.actions)[0]?.message.includes(`${reason}: from the kubelet`));
      assert.equal(p.requeueAfterSeconds, 120);
      // The kubelet's own reading (review of its source): CreateContainerError is mostly a target that is not running, retried.
      if (reason === 'CreateContainerError') assert.match(events(p.actions)[0]?.message ?? '', /most often the sidecar is not running \(restarting\), and the kubelet tries again while it is up/);
    });
  }

  for (const startedAt of ['1970-01-01T00:00:00Z', undefined]) {
    test(`a signal container that failed to start (StartError, the command missing from the image; startedAt ${startedAt ?? 'absent'}): a Warning about the image, not about SIGTERM, and no look again (review)`, () => {
      const name = signalContainerName('log-shipper');
      const pod = podWith({
        spec: { ephemeralContainers: [{ name, image: 'gcr.io/distroless/static', targetContainerName: 'log-shipper' }] },
        status: { ephemeralContainerStatuses: [{ name, state: { terminated: { exitCode: 128, reason: 'StartError', message: 'exec: "kill": executable file not found in $PATH', ...(startedAt ? { startedAt } : {}), finishedAt: '2026-01-01T00:01:50Z' } } }] },
      });
      const p = plan(observed(pod, { options: signalOptions }), NOW);
      assert.deepEqual(events(p.actions).map((e) => [e.type, e.reason]), [['Warning', 'SidecarTerminationStuck']]);
      const message = events(p.actions)[0]?.message ?? '';
      assert.match(message, /failed to start: StartError: exec: "kill": executable file not found/);
      assert.match(message, /must provide the signal command \(kill -TERM 1\)/);
      assert.doesNotMatch(message, /SIGTERM/);
      assert.equal(p.requeueAfterSeconds, undefined, 'an ephemeral container never restarts: looking again cannot help');
      assert.equal(only(p.actions, 'Pod', 'status').length, 0);
    });
  }

  test('under OnFailure the kubelet shows the same failure as waiting RunContainerError, the StartError in lastState: the same Warning, no look again (review)', () => {
    const name = signalContainerName('log-shipper');
    const pod = podWith({
      spec: { restartPolicy: 'OnFailure', ephemeralContainers: [{ name, image: 'gcr.io/distroless/static', targetContainerName: 'log-shipper' }] },
      status: { ephemeralContainerStatuses: [{ name, state: { waiting: { reason: 'RunContainerError', message: 'context deadline exceeded' } }, lastState: { terminated: { exitCode: 128, reason: 'StartError', message: 'exec: "kill": executable file not found in $PATH', startedAt: '1970-01-01T00:00:00Z', finishedAt: '2026-01-01T00:01:50Z' } } }] },
    });
    const p = plan(observed(pod, { options: signalOptions }), NOW);
    // The phase is written first under OnFailure (review71): the Warning still says what is wrong with the image.
    const warnings = events(p.actions).filter((e) => e.type === 'Warning');
    assert.deepEqual(warnings.map((e) => e.reason), ['SidecarTerminationStuck']);
    assert.match(warnings[0]?.message ?? '', /failed to start: StartError: exec: "kill"/);
    assert.equal(p.requeueAfterSeconds, undefined);
  });

  describe('a signal container killed (137) because its sidecar stopped first signalled it (review71)', () => {
    const ec = signalContainerName('log-shipper');
    const killed = { name: ec, state: { terminated: { exitCode: 137, reason: 'Error', startedAt: '2026-01-01T00:01:10Z', finishedAt: '2026-01-01T00:01:10Z' } } };
    const pod = (phase: string, sidecar: ContainerStatus) => podWith({
      spec: { restartPolicy: 'OnFailure', ephemeralContainers: [{ name: ec, image: 'busybox:1.36', targetContainerName: 'log-shipper' }] },
      statuses: [exited('main', 0), sidecar],
      status: { phase, ephemeralContainerStatuses: [killed] },
    });
    // Restarted by a kubelet that had not yet seen the phase ephemera wrote.
    const restarted: ContainerStatus = { name: 'log-shipper', restartCount: 1, state: { running: { startedAt: '2026-01-01T00:01:11Z' } }, lastState: { terminated: { exitCode: 143, finishedAt: '2026-01-01T00:01:10Z' } } };

    for (const phase of ['Running', 'Succeeded']) {
      test(`the sidecar stopped after it started (pod ${phase}): delivered, no Warning that it could not signal`, () => {
        const p = plan(observed(pod(phase, restarted), { options: signalOptions }), NOW);
        assert.deepEqual(events(p.actions).filter((e) => e.type === 'Warning'), []);
        assert.match(p.notes?.join('\n') ?? '', /exited 137, but the sidecar stopped after it started: signal delivered/);
      });
    }

    test('the sidecar kept running: its kill failed, and the Warning says so', () => {
      const p = plan(observed(pod('Running', { ...running('log-shipper'), lastState: { terminated: { exitCode: 1, finishedAt: '2026-01-01T00:00:04Z' } } }), { options: signalOptions }), NOW);
      assert.deepEqual(events(p.actions).filter((e) => e.type === 'Warning').map((e) => e.reason), ['SidecarTerminationStuck']);
      assert.match(events(p.actions).find((e) => e.type === 'Warning')?.message ?? '', /ran but could not signal it: exit code 137/);
    });
  });

  test('the pull failing then backing off is one Event (its name is fixed: a later look meets it)', () => {
    const a = plan(observed(injected({ waiting: { reason: 'ErrImagePull' } }), { options: signalOptions }), NOW);
    const b = plan(observed(injected({ waiting: { reason: 'ImagePullBackOff' } }), { options: signalOptions }), new Date(NOW.getTime() + 300_000));
    assert.equal(a.actions.length, 1);
    assert.deepEqual(b.actions.map((x) => x.name), a.actions.map((x) => x.name));
  });

  test('injected, not started yet (ContainerCreating, or no status at all): no Warning, but a look again', () => {
    for (const pod of [injected({ waiting: { reason: 'ContainerCreating' } }), injected()]) {
      const p = plan(observed(pod, { options: signalOptions }), NOW);
      assert.deepEqual(p.actions, []);
      assert.equal(p.requeueAfterSeconds, 120);
      assert.match(p.notes?.join('\n') ?? '', /injected, not started yet/);
    }
  });

  describe('a signal container the kubelet never starts (it ignores ephemeral containers, or stopped reporting) is said on the pod, as a CRR nobody takes (review86)', () => {
    const name = signalContainerName('log-shipper');
    const at = (secondsAgo: number): string => new Date(NOW.getTime() - secondsAgo * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
    const unstarted = (secondsAgo: number, state?: { waiting: { reason: string } }, o: Parameters<typeof podWith>[0] = {}) => {
      const p = podWith(o);
      const env = [{ name: 'EPHEMERA_SIGNAL_TARGET', value: 'log-shipper' }, { name: 'EPHEMERA_SIGNAL_INJECTED_AT', value: at(secondsAgo) }];
      return { ...p, spec: { ...p.spec, ephemeralContainers: [{ name, image: 'busybox:1.36', targetContainerName: 'log-shipper', env }] }, status: { ...p.status, ephemeralContainerStatuses: state ? [{ name, state }] : [] } };
    };
    test('the injection carries its time', () => {
      const env = (plan(observed(basePod(), { options: signalOptions }), NOW).actions[0]?.body as { spec: { ephemeralContainers: { env: { name: string; value: string }[] }[] } }).spec.ephemeralContainers[0]?.env;
      assert.deepEqual(env, [{ name: 'EPHEMERA_SIGNAL_TARGET', value: 'log-shipper' }, { name: 'EPHEMERA_SIGNAL_INJECTED_AT', value: '2026-01-01T00:02:00Z' }]);
    });
    test('before stuckAfterSeconds since the injection: a look again then, no Warning', () => {
      const p = plan(observed(unstarted(30), { options: signalOptions }), NOW);
      assert.deepEqual(p.actions, []);
      assert.equal(p.requeueAfterSeconds, 90);
    });
    for (const state of [undefined, { waiting: { reason: 'ContainerCreating' } }]) {
      test(`after it (${state ? 'waiting ContainerCreating' : 'no status at all'}): one Warning naming the container and what to check, no look again`, () => {
        const p = plan(observed(unstarted(121, state), { options: signalOptions }), NOW);
        assert.deepEqual(events(p.actions).map((e) => [e.type, e.reason]), [['Warning', 'SidecarTerminationStuck']]);
        assert.match(events(p.actions)[0]?.message ?? '', new RegExp(`the kubelet has not started signal container ephemera-stop-log-shipper for sidecar log-shipper 120s after ephemera injected it \\(${state ? 'it waits with ContainerCreating' : 'it reports no status for it'}\\): ephemeral containers need a kubelet of Kubernetes 1\\.25\\+ .* node node-a`));
        assert.equal(p.requeueAfterSeconds, undefined, 'its start would be a pod event');
      });
    }
    test('in a pod whose phase is terminal the kubelet starts nothing, and stops the sidecar itself: no Warning, no look again', () => {
      const p = plan(observed(unstarted(121, undefined, { status: { phase: 'Succeeded' } }), { options: signalOptions }), NOW);
      assert.deepEqual(p.actions, []);
      assert.equal(p.requeueAfterSeconds, undefined);
    });
  });

  test('shareProcessNamespace: PID 1 is not the sidecar, so no signal; a Warning', () => {
    const p = plan(observed(podWith({ spec: { shareProcessNamespace: true } }), { options: signalOptions }), NOW);
    assert.equal(only(p.actions, 'Pod', 'ephemeralcontainers').length, 0);
    assert.deepEqual(events(p.actions).map((e) => e.reason), ['SidecarTerminationUnsupported']);
  });

  test('hostPID: the signal container would be in the node\'s process namespace (kill -TERM 1 would hit the node\'s init), so no signal; a Warning', () => {
    const p = plan(observed(podWith({ spec: { hostPID: true } }), { options: signalOptions }), NOW);
    assert.equal(only(p.actions, 'Pod', 'ephemeralcontainers').length, 0);
    assert.deepEqual(events(p.actions).map((e) => [e.reason, /hostPID/.test(e.message)]), [['SidecarTerminationUnsupported', true]]);
  });

  test('never signals the wrong container: a same-named ephemeral container with another target blocks it', () => {
    const pod = podWith({ spec: { ephemeralContainers: [{ name: signalContainerName('log-shipper'), targetContainerName: 'main' }] } });
    const p = plan(observed(pod, { options: signalOptions }), NOW);
    assert.deepEqual(p.actions, []);
    assert.match(p.notes?.join('\n') ?? '', /targets main/);
  });

  test('long sidecar names get a hashed, valid container name', () => {
    const long = 'x'.repeat(60);
    const n = signalContainerName(long);
    assert.ok(n.length <= 63);
    assert.match(n, /^ephemera-stop-[0-9a-f]{8}$/);
    assert.equal(n, signalContainerName(long));
  });
});

describe('OnFailure pods: the phase first, then the sidecars (openkruise/kruise#1366, review71)', () => {
  const name = crrName(UID, 'sidecars');
  const onFailure = (sidecar: ContainerStatus, main = exited('main', 0)) => podWith({ spec: { restartPolicy: 'OnFailure' }, statuses: [main, sidecar] });
  const statusOf = (p: Plan): StatusBody | undefined => only(p.actions, 'Pod', 'status')[0]?.body as StatusBody | undefined;
  /** Every action but the status write is sent only if that write took effect. */
  const afterThePhase = (p: Plan): boolean => {
    const end = only(p.actions, 'Pod', 'status')[0];
    return end?.id !== undefined && p.actions.filter((a) => a !== end).every((a) => [a.requires].flat().includes(end.id));
  };

  for (const [strategy, stop] of [['crr', 'create ContainerRecreateRequest'], ['ephemeral-signal', 'patch Pod/ephemeralcontainers']] as const) {
    test(`${strategy}: phase Succeeded with SidecarTerminated is written before the sidecar is stopped`, () => {
      const p = plan(observed(onFailure(running('log-shipper')), { options: { ...DEFAULT_SIDECAR_OPTIONS, defaultStrategy: strategy } }), NOW);
      assert.deepEqual(kinds(p.actions), ['patch Pod/status', 'create Event', stop, 'create Event']);
      assert.equal(statusOf(p)?.status.phase, 'Succeeded');
      assert.deepEqual(statusOf(p)?.status.conditions.map((c) => [c.type, c.status, c.reason]), [['SidecarTerminated', 'True', 'RestartPolicyOnFailure']]);
      assert.ok(afterThePhase(p), 'the stop, and what it says, only once the pod is no longer active');
      assert.match(events(p.actions)[0]?.message ?? '', /set the pod's phase to Succeeded: .*backoffLimit/);
    });
  }

  test('virtual-kubelet: the phase first, then the image swap (an in-place image change is a restart the Job controller counts too)', () => {
    const pod = podWith({ containers: [{ name: 'main' }, { name: 'a', image: 'envoy:1', env: [WITH_IMAGE('exit:1')] }], spec: { restartPolicy: 'OnFailure' }, statuses: [exited('main', 0), running('a')] });
    const p = plan(observed(pod, { node: VK }), NOW);
    assert.deepEqual(kinds(p.actions), ['patch Pod/status', 'create Event', 'patch Pod', 'create Event']);
    assert.equal(statusOf(p)?.status.phase, 'Succeeded');
    assert.ok(afterThePhase(p));
  });

  test('a main container whose own restartPolicy Never made its exit 1 final (Kubernetes 1.35\'s container restart rules): Failed, as the kubelet would say', () => {
    const main = basePod().spec.containers[0]!;
    const pod = podWith({ containers: [{ ...main, restartPolicy: 'Never' }, ...basePod().spec.containers.slice(1)], spec: { restartPolicy: 'OnFailure' }, statuses: [exited(main.name, 1), running('log-shipper')] });
    assert.equal(statusOf(plan(observed(pod), NOW))?.status.phase, 'Failed');
  });

  test('the phase already terminal: no status write, the stop still goes out until it exists', () => {
    const pod = onFailure(running('log-shipper'));
    const ended = { ...pod, status: { ...pod.status, phase: 'Succeeded' } };
    assert.deepEqual(kinds(plan(observed(ended), NOW).actions), ['create ContainerRecreateRequest', 'create Event']);
    assert.deepEqual(plan(observed(ended, { crrs: { [name]: existingCrr(name, ['log-shipper']) } }), NOW).actions, []);
  });

  test('a CRR that does not list a running sidecar (another controller made it) needs no Warning: the phase write ends the pod', () => {
    const two = podWith({ containers: fourContainers({ main: 0 }).spec.containers.slice(0, 3), spec: { restartPolicy: 'OnFailure' }, statuses: [exited('main', 0), running('a'), running('b')] });
    const p = plan(observed(two, { crrs: { [name]: existingCrr(name, ['a']) } }), NOW);
    assert.deepEqual(kinds(p.actions), ['patch Pod/status', 'create Event']);
    assert.equal(only(p.actions, 'ContainerRecreateRequest').length, 0, 'its name is taken: no second CRR');
    assert.match(p.notes?.join('\n') ?? '', /does not list sidecar \[b\]/);
  });

  test('under Never no phase is forced', () => {
    const p = plan(observed(basePod()), NOW);
    assert.equal(only(p.actions, 'Pod', 'status').length, 0);
  });

  test('under Never, a terminal pod with a sidecar missing from the CRR still shown running: no Warning, no look again (review71)', () => {
    const two = podWith({ containers: fourContainers({ main: 0 }).spec.containers.slice(0, 3), statuses: [exited('main', 0), exited('a', 0), running('b')], status: { phase: 'Succeeded' } });
    const p = plan(observed(two, { crrs: { [name]: existingCrr(name, ['a']) } }), NOW);
    assert.deepEqual(p.actions, []);
    assert.equal(p.requeueAfterSeconds, undefined);
  });

  test('under Never a sidecar missing from the CRR (made by OpenKruise, which lists only ..._WHEN_JOB_EXIT=true sidecars) gets a Warning saying how to get one that lists it, and a look again (review)', () => {
    const two = podWith({ containers: fourContainers({ main: 0 }).spec.containers.slice(0, 3), statuses: [exited('main', 0), running('a'), running('b')] });
    const p = plan(observed(two, { crrs: { [name]: existingCrr(name, ['a']) } }), NOW);
    assert.equal(only(p.actions, 'Pod', 'status').length, 0, 'the pod is not ended: its sidecar still runs');
    assert.equal(only(p.actions, 'ContainerRecreateRequest').length, 0);
    assert.deepEqual(events(p.actions).map((e) => [e.type, e.reason]), [['Warning', 'SidecarTerminationStuck']]);
    assert.match(events(p.actions)[0]?.message ?? '', new RegExp(`ContainerRecreateRequest ${name} does not list sidecar \\[b\\].*delete that ContainerRecreateRequest`));
    assert.ok(p.requeueAfterSeconds !== undefined && p.requeueAfterSeconds <= 120, String(p.requeueAfterSeconds));
  });
});

/**
 * kubernetes pkg/controller/job/job_controller.go pastBackoffLimitOnFailure: the restarts of
 * an OnFailure Job's active pods (Running or Pending) count against its backoffLimit.
 */
function pastBackoffLimitOnFailure(backoffLimit: number, pods: Pod[]): boolean {
  let restarts = 0;
  for (const p of pods) {
    if (p.status?.phase !== 'Running' && p.status?.phase !== 'Pending') continue;
    for (const s of [...(p.status.initContainerStatuses ?? []), ...(p.status.containerStatuses ?? [])]) restarts += s.restartCount ?? 0;
  }
  return backoffLimit === 0 ? restarts > 0 : restarts >= backoffLimit;
}

describe('story: an OnFailure Job whose sidecar exits 143 when stopped is not failed by the Job controller (review71)', () => {
  for (const [backoffLimit, mainRestarts] of [[0, 0], [6, 5]] as const) {
    test(`backoffLimit ${backoffLimit}, main restarted ${mainRestarts} times before it exited 0`, () => {
      let pod = podWith({ spec: { restartPolicy: 'OnFailure' }, statuses: [exited('main', 0, { restartCount: mainRestarts }), running('log-shipper', { restartCount: 0 })] });
      assert.equal(pastBackoffLimitOnFailure(backoffLimit, [pod]), false, 'a Job with these retries is still within its limit');
      // 1. due: the phase is written first, and only then is the sidecar stopped.
      const first = plan(observed(pod), NOW);
      assert.equal(first.actions[0]?.subresource, 'status', 'the first write ends the pod');
      pod = { ...pod, status: { ...pod.status, phase: (first.actions[0]!.body as StatusBody).status.phase } };
      // 2. the CRR runs before the kubelet has seen the phase: the sidecar exits 143 and is restarted, counted.
      pod = { ...pod, status: { ...pod.status, containerStatuses: [exited('main', 0, { restartCount: mainRestarts }), { name: 'log-shipper', restartCount: 1, state: { running: { startedAt: '2026-01-01T00:02:02Z' } }, lastState: { terminated: { exitCode: 143, finishedAt: '2026-01-01T00:02:01Z' } } }] } };
      assert.equal(pod.status?.phase, 'Succeeded');
      assert.equal(pastBackoffLimitOnFailure(backoffLimit, [pod]), false, 'the pod is no longer active: its restart is not counted');
      // 3. the kubelet stops what runs in the terminal pod; ephemera writes nothing more.
      pod = { ...pod, status: { ...pod.status, containerStatuses: [exited('main', 0, { restartCount: mainRestarts }), exited('log-shipper', 143, { restartCount: 1 })] } };
      const crr = first.actions.find((a) => a.kind === 'ContainerRecreateRequest')!;
      assert.deepEqual(plan(observed(pod, { crrs: { [crr.name]: existingCrr(crr.name, ['log-shipper']) } }), new Date('2026-01-01T00:02:30Z')).actions, []);
    });
  }
});
