/* eslint-disable @typescript-eslint/no-explicit-any -- raw JSON from the wire and the store, read field by field */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SimKubelet, type ApiServer, type ContainerFate, type KubeObject } from '../../functions/cluster/index.ts';
import { harness, mergePatch, pod, rawWatch, rejects, strategicPatch, eventually } from './support.ts';

const get = (server: ApiServer, name = 'web'): any => server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name });
const state = (s: any): string => (s ? Object.keys(s.state)[0]! : 'none');
const ecState = (server: ApiServer, name: string, pod = 'web'): string => state(get(server, pod).status?.ephemeralContainerStatuses?.find((x: any) => x.name === name));
const cState = (server: ApiServer, name: string, pod = 'web'): any => get(server, pod).status?.containerStatuses?.find((x: any) => x.name === name);

async function inject(server: ApiServer, core: any, ...containers: Record<string, unknown>[]): Promise<void> {
  await core.patchNamespacedPodEphemeralcontainers({ namespace: 'default', name: 'web', body: { spec: { ephemeralContainers: containers } } }, strategicPatch);
}

describe('SimKubelet', () => {
  test('a pod goes Pending → Running: containers created, then started', async () => {
    const { server } = await harness({ objects: [pod('web')] });
    const kubelet = new SimKubelet(server);
    kubelet.tick();
    assert.equal(cState(server, 'app').state.waiting.reason, 'ContainerCreating');
    assert.equal(get(server).status.phase, 'Pending');
    kubelet.tick();
    assert.ok(cState(server, 'app').state.running.startedAt);
    assert.equal(get(server).status.phase, 'Running');
    assert.ok(get(server).status.startTime);
    assert.deepEqual(kubelet.tick(), { pods: 0, crrs: 0 }, 'a steady pod is not rewritten');
  });

  test('a pod whose phase was made terminal by a status write has its running containers stopped, and nothing started', async () => {
    const { server, core } = await harness({ objects: [pod('web')] });
    const kubelet = new SimKubelet(server, { sigtermExitCode: () => 143 });
    kubelet.tick();
    kubelet.tick();
    assert.equal(state(cState(server, 'app')), 'running');
    await core.patchNamespacedPodStatus({ namespace: 'default', name: 'web', body: { status: { phase: 'Succeeded' } } }, mergePatch);
    await inject(server, core, { name: 'late', image: 'busybox:1' });
    kubelet.tick();
    assert.equal(cState(server, 'app').state.terminated.exitCode, 143, 'stopped, as the pod worker stops a terminal pod\'s containers');
    assert.equal(get(server).status.phase, 'Succeeded', 'the phase stays');
    assert.equal(ecState(server, 'late'), 'none', 'no container starts in a terminal pod');
  });

  test('an ephemeral container: no status → waiting ContainerCreating → running → terminated with the policy exit code', async () => {
    const { server, core } = await harness({ objects: [pod('web', { status: { phase: 'Running' } })] });
    const codes: Record<string, number> = { ok: 0, bad: 3 };
    const kubelet = new SimKubelet(server, { ephemeral: (_p, c) => ({ exitCode: codes[c.name]! }) });
    await inject(server, core, { name: 'ok', image: 'busybox:1' }, { name: 'bad', image: 'busybox:1' });
    const steps: string[] = [];
    for (let i = 0; i < 3; i++) {
      kubelet.tick();
      steps.push(`${ecState(server, 'ok')}/${ecState(server, 'bad')}`);
    }
    assert.deepEqual(steps, ['waiting/waiting', 'running/running', 'terminated/terminated']);
    const statuses = get(server).status.ephemeralContainerStatuses;
    assert.equal(statuses.find((s: any) => s.name === 'ok').state.terminated.exitCode, 0);
    assert.equal(statuses.find((s: any) => s.name === 'ok').state.terminated.reason, 'Completed');
    assert.equal(statuses.find((s: any) => s.name === 'bad').state.terminated.exitCode, 3);
    assert.equal(statuses[0].state.waiting, undefined);
    kubelet.tick();
    assert.equal(ecState(server, 'ok'), 'terminated', 'ephemeral containers never restart');
  });

  test('a policy can keep an ephemeral container running or hold it waiting with a reason', async () => {
    const { server, core } = await harness({ objects: [pod('web', { status: { phase: 'Running' } })] });
    const fates: Record<string, ContainerFate> = { long: 'run', broken: { waitingReason: 'ErrImagePull', message: 'no such image' } };
    const kubelet = new SimKubelet(server, { ephemeral: (_p, c) => fates[c.name]! });
    await inject(server, core, { name: 'long', image: 'busybox:1' }, { name: 'broken', image: 'nope:1' });
    for (let i = 0; i < 5; i++) kubelet.tick();
    assert.equal(ecState(server, 'long'), 'running');
    const broken = get(server).status.ephemeralContainerStatuses.find((s: any) => s.name === 'broken');
    assert.deepEqual(broken.state, { waiting: { reason: 'ErrImagePull', message: 'no such image' } });
  });

  test('status writes go through pods/status, so a watcher sees MODIFIED events', async () => {
    const { server } = await harness({ objects: [pod('web')] });
    const w = rawWatch(server.url, '/api/v1/namespaces/default/pods', { resourceVersion: server.store.resourceVersion });
    await eventually(() => server.faults.openWatches === 1, 'watching');
    const kubelet = new SimKubelet(server);
    kubelet.tick();
    kubelet.tick();
    await eventually(() => w.events.length === 2, 'two MODIFIED');
    w.stop();
    assert.deepEqual(w.events.map((e) => e.type), ['MODIFIED', 'MODIFIED']);
  });

  test('restartPolicy Never: all containers exit 0 → Succeeded; a failure → Failed', async () => {
    const { server } = await harness({
      objects: [
        pod('good', { spec: { restartPolicy: 'Never' } }),
        pod('bad', { spec: { restartPolicy: 'Never', containers: [{ name: 'app', image: 'a:1' }, { name: 'other', image: 'b:1' }] } }),
      ],
    });
    const kubelet = new SimKubelet(server, { container: (p, c) => ({ exitCode: p.metadata.name === 'bad' && c.name === 'other' ? 1 : 0 }) });
    for (let i = 0; i < 4; i++) kubelet.tick();
    assert.equal(get(server, 'good').status.phase, 'Succeeded');
    assert.equal(get(server, 'bad').status.phase, 'Failed');
  });

  test('restartPolicy OnFailure restarts a container that exits non-zero (kruise#1366)', async () => {
    const { server } = await harness({ objects: [pod('web', { spec: { restartPolicy: 'OnFailure' } })] });
    const kubelet = new SimKubelet(server, { container: () => ({ exitCode: 137 }) });
    kubelet.tick();
    kubelet.tick();
    kubelet.tick();
    assert.equal(cState(server, 'app').state.terminated.exitCode, 137);
    assert.equal(get(server).status.phase, 'Running', 'not terminal: it will be restarted');
    kubelet.tick();
    assert.equal(state(cState(server, 'app')), 'running');
    assert.equal(cState(server, 'app').restartCount, 1);
    assert.equal(cState(server, 'app').lastState.terminated.exitCode, 137);
  });

  test('init containers run first, one at a time', async () => {
    const { server } = await harness({ objects: [pod('web', { spec: { initContainers: [{ name: 'i1', image: 'x:1' }, { name: 'i2', image: 'x:1' }] } })] });
    const kubelet = new SimKubelet(server);
    for (let i = 0; i < 3; i++) kubelet.tick();
    assert.equal(get(server).status.initContainerStatuses.find((s: any) => s.name === 'i1').state.terminated.exitCode, 0);
    assert.equal(get(server).status.containerStatuses, undefined);
    for (let i = 0; i < 5; i++) kubelet.tick();
    assert.equal(state(cState(server, 'app')), 'running');
    assert.equal(get(server).status.phase, 'Running');
  });

  test('executes a ContainerRecreateRequest: listed containers get SIGTERM, the CRR completes', async () => {
    const { server, custom } = await harness({
      objects: [pod('web', { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'a:1' }, { name: 'sidecar', image: 'envoy:1' }] } })],
    });
    const kubelet = new SimKubelet(server, { container: (_p, c) => (c.name === 'main' ? { exitCode: 0 } : 'run'), sigtermExitCode: () => 143 });
    for (let i = 0; i < 3; i++) kubelet.tick();
    assert.equal(state(cState(server, 'sidecar')), 'running');
    await custom.createNamespacedCustomObject({
      group: 'apps.kruise.io', version: 'v1alpha1', plural: 'containerrecreaterequests', namespace: 'default',
      body: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ContainerRecreateRequest', metadata: { name: 'crr' }, spec: { podName: 'web', containers: [{ name: 'sidecar' }], strategy: { forceRecreate: true } } },
    });
    assert.deepEqual(kubelet.tick(), { pods: 1, crrs: 1 });
    assert.equal(cState(server, 'sidecar').state.terminated.exitCode, 143);
    const crr: any = server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ContainerRecreateRequest', namespace: 'default', name: 'crr' });
    assert.equal(crr.status.phase, 'Completed');
    assert.ok(crr.status.completionTime);
    assert.deepEqual(crr.status.containerRecreateStates, [{ name: 'sidecar', phase: 'Succeeded', isKilled: true }]);
    assert.equal(get(server).status.phase, 'Failed', 'a sidecar killed with 143 fails a Never pod');
    assert.deepEqual(kubelet.tick(), { pods: 0, crrs: 0 }, 'a completed CRR is not executed again');
  });

  test('a CRR for a missing pod completes with a message', async () => {
    const { server } = await harness({
      objects: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ContainerRecreateRequest', metadata: { name: 'crr', namespace: 'default' }, spec: { podName: 'gone', containers: [{ name: 'x' }] } }],
    });
    new SimKubelet(server).tick();
    const crr: any = server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ContainerRecreateRequest', namespace: 'default', name: 'crr' });
    assert.equal(crr.status.phase, 'Completed');
    assert.equal(crr.status.message, 'pod not found');
  });

  test('kill() sends SIGTERM to one container', async () => {
    const { server } = await harness({ objects: [pod('web')] });
    const kubelet = new SimKubelet(server, { sigtermExitCode: () => 0 });
    kubelet.tick();
    kubelet.tick();
    assert.equal(kubelet.kill('default', 'web', 'app'), true);
    assert.equal(cState(server, 'app').state.terminated.exitCode, 0);
    assert.equal(kubelet.kill('default', 'web', 'app'), false, 'already terminated');
  });

  test('an ephemeral container that runs kill against a target stops the target', async () => {
    const { server, core } = await harness({
      objects: [pod('web', { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'a:1' }, { name: 'sidecar', image: 'envoy:1' }] } })],
    });
    const kubelet = new SimKubelet(server, { container: (_p, c) => (c.name === 'main' ? { exitCode: 0 } : 'run') });
    for (let i = 0; i < 3; i++) kubelet.tick();
    await inject(server, core, { name: 'stop-sidecar', image: 'busybox:1.36', command: ['kill', '-TERM', '1'], targetContainerName: 'sidecar' });
    kubelet.tick();
    assert.equal(state(cState(server, 'sidecar')), 'running');
    kubelet.tick();
    assert.equal(cState(server, 'sidecar').state.terminated.exitCode, 0);
    assert.equal(get(server).status.phase, 'Succeeded');
  });

  test('an in-place image swap restarts the container with the new image, which exits 0', async () => {
    const { server, core } = await harness({
      objects: [pod('web', { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'a:1' }, { name: 'sidecar', image: 'envoy:1' }] } })],
    });
    const kubelet = new SimKubelet(server, { container: (_p, c) => (c.name === 'main' ? { exitCode: 0 } : 'run') });
    for (let i = 0; i < 3; i++) kubelet.tick();
    await core.patchNamespacedPod({ namespace: 'default', name: 'web', body: { spec: { containers: [{ name: 'sidecar', image: 'pause:exit0' }] } } }, strategicPatch);
    kubelet.tick();
    const s = cState(server, 'sidecar');
    assert.equal(s.image, 'pause:exit0');
    assert.equal(s.restartCount, 1);
    assert.equal(s.state.terminated.exitCode, 0);
    assert.equal(get(server).status.phase, 'Succeeded');
  });

  test('terminal pods are left alone; subclasses can override one step', async () => {
    const { server } = await harness({ objects: [pod('done', { status: { phase: 'Succeeded' } }), pod('web')] });
    class Stubborn extends SimKubelet {
      protected override owns(p: KubeObject): boolean {
        return p.metadata.name !== 'web' && super.owns(p);
      }
    }
    assert.deepEqual(new Stubborn(server).tick(), { pods: 0, crrs: 0 });
    assert.equal(get(server, 'done').status.containerStatuses, undefined);
  });

  test('the API refuses to move a terminated container of a Never pod back to running', async () => {
    const { server, core } = await harness({ objects: [pod('web', { spec: { restartPolicy: 'Never' } })] });
    const kubelet = new SimKubelet(server, { container: () => ({ exitCode: 0 }) });
    for (let i = 0; i < 3; i++) kubelet.tick();
    const s = await rejects(core.patchNamespacedPodStatus({
      namespace: 'default', name: 'web', body: { status: { containerStatuses: [{ ...cState(server, 'app'), state: { running: { startedAt: '2026-01-01T00:00:00Z' } } }] } },
    }, mergePatch), 422);
    assert.equal(s.details!.causes![0]!.field, 'status.containerStatuses[0].state');
  });

  test('run() ticks on an interval until stop()', async () => {
    const { server } = await harness({ objects: [pod('web')] });
    const kubelet = new SimKubelet(server);
    kubelet.run(5);
    await eventually(() => get(server).status?.phase === 'Running', 'running via run()');
    kubelet.stop();
    const rv = get(server).metadata.resourceVersion;
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(get(server).metadata.resourceVersion, rv, 'nothing written after stop()');
  });
});
