// SidecarTerminator end to end: engine → client-node → the fake API server over HTTP, with
// the simulated kubelet running the pods and playing kruise-daemon (CRRs), the signal
// container's SIGTERM and the virtual-kubelet image swap.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Pod } from '../../functions/api/pod.ts';
import { handle } from '../../functions/engine/engine.ts';
import type { KubeObject } from '../../functions/cluster/index.ts';
import { crrName } from '../../functions/sidecar/actions.ts';
import { applied, DeafSidecars, IgnoresEphemeral, IGNORE, jobPod, jobPolicy, mainAndSidecar, NoDaemon, NS, SIDECAR, sidecarWorld, stateOf, terminal, withImage } from '../support/sidecar-world.ts';
import { envelopeFor } from '../support/ejob-world.ts';

const SIGNAL = { 'ephemera.io/sidecar-termination': 'ephemeral-signal' };
const condition = (p: Pod, type: string): { status?: string; reason?: string } | undefined =>
  (p.status?.conditions as { type: string; status?: string; reason?: string }[] | undefined)?.find((c) => c.type === type);

describe('crr strategy (kruise-daemon played by the simulated kubelet)', () => {
  test('a Never pod whose main exited 0 gets the CRR, the sidecar stops, the pod Succeeds', async (t) => {
    const w = await sidecarWorld([mainAndSidecar('job-1')]);
    t.after(() => w.close());
    const results = await w.run('job-1', { until: terminal });
    const pod = w.pod('job-1');
    assert.equal(pod.status?.phase, 'Succeeded');
    assert.equal(stateOf(pod, 'log-shipper'), 'terminated 0');
    const [crr, ...more] = w.crrs();
    assert.equal(more.length, 0);
    assert.ok(crr);
    assert.equal(crr.metadata.name, crrName(pod.metadata.uid!, 'sidecars'));
    assert.deepEqual(crr.spec, { podName: 'job-1', containers: [{ name: 'log-shipper' }], strategy: { forceRecreate: true, failurePolicy: 'Ignore' } });
    // No blockOwnerDeletion: OwnerReferencesPermissionEnforcement would want `update pods/finalizers` for it.
    assert.deepEqual(crr.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Pod', name: 'job-1', uid: pod.metadata.uid, controller: true }]);
    assert.equal((crr.metadata.labels as Record<string, string> | undefined)?.['crr.apps.kruise.io/node-name'], 'node-a');
    assert.deepEqual(w.events('job-1'), ['Normal SidecarTerminator']);
    assert.deepEqual(applied(results), ['create ContainerRecreateRequest ' + crr.metadata.name, 'create Event SidecarTerminator']);
  });

  test('an existing CRR (OpenKruise made it) means nothing more to do', async (t) => {
    const w = await sidecarWorld([mainAndSidecar('job-1')], { kubelet: (server) => new NoDaemon(server, jobPolicy()) });
    t.after(() => w.close());
    w.tickUntil('job-1', (p) => stateOf(p, 'main') === 'terminated 0');
    const uid = w.pod('job-1').metadata.uid!;
    w.server.store.put({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ContainerRecreateRequest', metadata: { name: crrName(uid, 'sidecars'), namespace: NS }, spec: { podName: 'job-1', containers: [{ name: 'log-shipper' }] } });
    const before = w.crrs().map((c) => c.metadata.resourceVersion);
    const r = await w.event('job-1');
    assert.deepEqual(applied([r]), []);
    assert.deepEqual(w.crrs().map((c) => c.metadata.resourceVersion), before);
    assert.deepEqual(w.events('job-1'), []);
  });

  test('duplicate deliveries to several instances at once create one CRR and one Event', async (t) => {
    const w = await sidecarWorld([mainAndSidecar('job-1')], { kubelet: (server) => new NoDaemon(server, jobPolicy()) });
    t.after(() => w.close());
    w.tickUntil('job-1', (p) => stateOf(p, 'main') === 'terminated 0');
    const e = envelopeFor('Pod', NS, 'job-1');
    await Promise.all([handle(e, w.deps('a')), handle(e, w.deps('b')), handle(e, w.deps('c'))]);
    w.clock.advance(20); // past the Lease, so a busy instance gets its turn
    await Promise.all([handle(e, w.deps('a')), handle(e, w.deps('b'))]);
    assert.equal(w.crrs().length, 1);
    assert.deepEqual(w.events('job-1'), ['Normal SidecarTerminator']);
  });

  test('without kruise-daemon nobody executes the CRR: a Warning after stuckAfterSeconds names the way out', async (t) => {
    const w = await sidecarWorld([mainAndSidecar('job-1')], { kubelet: (server) => new NoDaemon(server, jobPolicy()), options: { stuckAfterSeconds: 60 } });
    t.after(() => w.close());
    const results = await w.run('job-1', { steps: 6 });
    assert.equal(w.crrs().length, 1);
    assert.equal(stateOf(w.pod('job-1'), 'log-shipper'), 'running');
    const last = results.at(-1)!;
    assert.ok(last.requeueAfterSeconds !== null && last.requeueAfterSeconds <= 60, `requeue ${String(last.requeueAfterSeconds)}`);
    w.clock.advance(61);
    await w.event('job-1');
    assert.deepEqual(w.events('job-1'), ['Normal SidecarTerminator', 'Warning SidecarTerminationStuck']);
    const stuck = w.server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: NS }).find((e) => e.reason === 'SidecarTerminationStuck');
    assert.match(String(stuck?.message), /kruise-daemon.*ephemera\.io\/sidecar-termination=ephemeral-signal/);
    await w.event('job-1');
    assert.equal(w.events('job-1').length, 2, 'the warning is recorded once');
  });
});

describe('ephemeral-signal strategy (no daemon)', () => {
  test('chosen per pod: a signal container targeting the sidecar is injected, the sidecar gets SIGTERM, the pod Succeeds', async (t) => {
    const w = await sidecarWorld([mainAndSidecar('job-1', [SIDECAR], { annotations: SIGNAL })]);
    t.after(() => w.close());
    const results = await w.run('job-1', { until: terminal });
    const pod = w.pod('job-1');
    assert.equal(pod.status?.phase, 'Succeeded');
    assert.equal(stateOf(pod, 'log-shipper'), 'terminated 0');
    assert.equal(w.crrs().length, 0);
    const [ec, ...more] = pod.spec.ephemeralContainers ?? [];
    assert.equal(more.length, 0);
    assert.ok(ec);
    assert.deepEqual(
      { name: ec.name, image: ec.image, command: ec.command, target: ec.targetContainerName, securityContext: (ec as Record<string, unknown>).securityContext },
      { name: 'ephemera-stop-log-shipper', image: 'busybox:1.36', command: ['kill', '-TERM', '1'], target: 'log-shipper', securityContext: { runAsUser: 1000, runAsNonRoot: true } },
    );
    assert.equal(stateOf(pod, 'ephemera-stop-log-shipper'), 'terminated 0');
    assert.deepEqual(applied(results), ['patch Pod/ephemeralcontainers job-1', 'create Event SidecarTerminator']);
  });

  test('chosen per installation, with its own image', async (t) => {
    const w = await sidecarWorld([mainAndSidecar('job-1')], { options: { defaultStrategy: 'ephemeral-signal', signalImage: 'registry.local/tools:1' } });
    t.after(() => w.close());
    await w.run('job-1', { until: terminal });
    assert.equal(w.pod('job-1').status?.phase, 'Succeeded');
    assert.deepEqual(w.pod('job-1').spec.ephemeralContainers?.map((c) => c.image), ['registry.local/tools:1']);
  });

  test('a sidecar that ignores SIGTERM: the signal is sent once; past the grace period the pod is ended Failed, as crr would end it, and the kubelet kills the sidecar (review86)', async (t) => {
    const w = await sidecarWorld([mainAndSidecar('job-1', [SIDECAR], { annotations: SIGNAL })], { kubelet: (server) => new DeafSidecars(server, jobPolicy({ sigterm: () => 137 })), options: { stuckAfterSeconds: 30 } });
    t.after(() => w.close());
    const early = await w.run('job-1', { steps: 8 });
    assert.equal(stateOf(w.pod('job-1'), 'log-shipper'), 'running');
    const look = early.at(-1)?.requeueAfterSeconds ?? null;
    assert.ok(look !== null && look <= 60, `looked at again once the pod's grace (30 s) and the margin have passed: ${String(look)}`);
    w.clock.advance(61);
    await w.event('job-1');
    await w.run('job-1', { steps: 3, until: (p) => stateOf(p, 'log-shipper') !== 'running' });
    const pod = w.pod('job-1');
    assert.equal(pod.status?.phase, 'Failed');
    const ended = condition(pod, 'SidecarTerminated');
    assert.deepEqual([ended?.status, ended?.reason], ['True', 'StuckAfterSignal']);
    assert.equal(stateOf(pod, 'log-shipper'), 'terminated 137', 'stopped by the kubelet, from outside its process namespace');
    assert.equal(pod.spec.ephemeralContainers?.length, 1, 'signalled once');
    assert.deepEqual(w.events('job-1'), ['Normal SidecarTerminator', 'Normal SidecarTerminator', 'Warning SidecarTerminationStuck']);
    const stuck = w.server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: NS }).find((e) => e.reason === 'SidecarTerminationStuck');
    assert.match(String(stuck?.message), /still running 60s after its signal container sent it SIGTERM .*ephemera set the pod's phase to Failed .*make the sidecar exit on SIGTERM \(run it under tini or dumb-init\)/);
  });

  test('the same with the phase write refused: the sidecar runs on, and the Warning says how to end the pod by hand', async (t) => {
    const w = await sidecarWorld([mainAndSidecar('job-1', [SIDECAR], { annotations: SIGNAL })], { kubelet: (server) => new DeafSidecars(server, jobPolicy({ sigterm: () => 137 })) });
    t.after(() => w.close());
    await w.run('job-1', { steps: 8 });
    w.server.faults.add({ method: 'PATCH', pathIncludes: '/pods/job-1/status', status: 403, reason: 'Forbidden', message: 'pods "job-1" is forbidden: User cannot patch resource "pods/status"', times: Infinity });
    w.clock.advance(121);
    const r = await w.event('job-1');
    assert.equal(r.keys[0]?.outcome, 'refused');
    assert.equal(stateOf(w.pod('job-1'), 'log-shipper'), 'running');
    assert.deepEqual(w.events('job-1'), ['Normal SidecarTerminator', 'Warning ActionRefused', 'Warning SidecarTerminationStuck']);
    const stuck = w.server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: NS }).find((e) => e.reason === 'SidecarTerminationStuck');
    assert.match(String(stuck?.message), /could not set the pod's phase to Failed .*kubectl patch pod job-1 -n batch --subresource=status --type=merge -p '\{"status":\{"phase":"Failed"\}\}'/);
  });

  test('a pod deleted and created again under its name while its injection is on the way does not get it: the patch names the uid planned on, and the new pod is looked at afresh (review86)', async (t) => {
    // A workload that reuses pod names (a training operator's <job>-worker-0, a rerun): the
    // new pod's main container still runs, so stopping its sidecar would cut it off.
    let release = (): void => undefined;
    const hold = new Promise<void>((resolve) => { release = resolve; });
    let replaced = false;
    const w = await sidecarWorld([mainAndSidecar('worker-0', [SIDECAR], { annotations: SIGNAL })], { policy: jobPolicy({ mainExit: () => (replaced ? 'run' : 0) }) });
    t.after(() => w.close());
    const first = w.pod('worker-0').metadata.uid;
    w.tickUntil('worker-0', (p) => stateOf(p, 'main') === 'terminated 0' && stateOf(p, 'log-shipper') === 'running');
    const held = w.server.faults.add({ method: 'PATCH', pathIncludes: '/pods/worker-0/ephemeralcontainers', hold });
    const a = w.event('worker-0');
    while (held.hits === 0) await new Promise((r) => setImmediate(r));
    w.server.store.delete({ apiVersion: 'v1', kind: 'Pod', namespace: NS, name: 'worker-0' });
    replaced = true;
    w.server.store.put(mainAndSidecar('worker-0', [SIDECAR], { annotations: SIGNAL }) as never);
    w.tickUntil('worker-0', (p) => stateOf(p, 'main') === 'running' && stateOf(p, 'log-shipper') === 'running');
    release();
    const r = await a;
    assert.notEqual(w.pod('worker-0').metadata.uid, first);
    assert.equal(r.keys[0]?.outcome, 'done', 're-planned on the new pod, which is not due');
    assert.equal(w.pod('worker-0').spec.ephemeralContainers, undefined, 'the new pod got no signal container');
    assert.deepEqual(w.events('worker-0'), [], 'no refusal told, no Event saying it is trying');
    for (let i = 0; i < 3; i++) { w.clock.advance(1); w.kubelet.tick(); }
    assert.equal(stateOf(w.pod('worker-0'), 'log-shipper'), 'running');
  });

  test('the API server refuses the injection: a Warning ActionRefused on the pod, nothing else is touched', async (t) => {
    const w = await sidecarWorld([mainAndSidecar('job-1', [SIDECAR], { annotations: SIGNAL })]);
    t.after(() => w.close());
    w.tickUntil('job-1', (p) => stateOf(p, 'main') === 'terminated 0');
    w.server.faults.add({ method: 'PATCH', pathIncludes: '/ephemeralcontainers', status: 403, message: 'pods "job-1" is forbidden: violates PodSecurity "restricted:latest"', times: Infinity });
    const r = await w.event('job-1');
    assert.equal(r.keys[0]?.outcome, 'refused');
    assert.match(r.keys[0]?.errors?.join() ?? '', /PodSecurity/);
    assert.deepEqual(w.events('job-1'), ['Warning ActionRefused'], 'the refusal says what was tried and why it failed; no Event says it is trying (review)');
    assert.equal(w.pod('job-1').spec.ephemeralContainers, undefined);
    assert.equal(stateOf(w.pod('job-1'), 'log-shipper'), 'running');
  });

  test('two sidecars\' signals refused alike (one status and reason, each message naming its container): a Warning each, counted once, and the first look comes back in 10 s (review)', async (t) => {
    const pod = jobPod('job-1', { annotations: SIGNAL, containers: [
      { name: 'main', image: 'example/job:1' },
      { name: 'log-shipper', image: 'example/fluent-bit:3', env: [SIDECAR] },
      { name: 'proxy', image: 'example/envoy:1', env: [SIDECAR] },
    ] });
    const w = await sidecarWorld([pod]);
    t.after(() => w.close());
    w.tickUntil('job-1', (p) => stateOf(p, 'main') === 'terminated 0');
    for (const c of ['ephemera-stop-log-shipper', 'ephemera-stop-proxy']) {
      w.server.faults.add({ method: 'PATCH', pathIncludes: '/ephemeralcontainers', status: 403, reason: 'Forbidden', message: `pods "job-1" is forbidden: violates PodSecurity "restricted:latest" (container "${c}")`, times: 1 });
    }
    const r = await w.event('job-1');
    assert.equal(r.requeueAfterSeconds, 10, 'met for the first time: the default wait, not the repeat\'s two minutes');
    const refusals = w.server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: NS })
      .filter((e) => (e as { reason?: string }).reason === 'ActionRefused')
      .map((e) => [(e as { count?: number }).count, /container "([^"]+)"/.exec((e as { message?: string }).message ?? '')?.[1]]);
    assert.deepEqual(refusals.sort(), [[1, 'ephemera-stop-log-shipper'], [1, 'ephemera-stop-proxy']]);
  });

  test('a signal container whose kill is refused (another user, no CAP_KILL: it exits 1) signalled nothing: a Warning at once says why, not that the sidecar ignores SIGTERM', async (t) => {
    const policy = jobPolicy({ ephemeral: () => ({ exitCode: 1 }) });
    const w = await sidecarWorld([mainAndSidecar('job-1', [SIDECAR], { annotations: SIGNAL })], { policy });
    t.after(() => w.close());
    const results = await w.run('job-1', { steps: 8 });
    const pod = w.pod('job-1');
    assert.equal(stateOf(pod, 'ephemera-stop-log-shipper'), 'terminated 1');
    assert.equal(stateOf(pod, 'log-shipper'), 'running', 'the sidecar got no signal');
    assert.deepEqual(w.events('job-1'), ['Normal SidecarTerminator', 'Warning SidecarTerminationStuck']);
    const stuck = w.server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: NS }).find((e) => e.reason === 'SidecarTerminationStuck');
    assert.match(String(stuck?.message), /ran but could not signal it: exit code 1\. kill needs the sidecar's user or CAP_KILL/);
    assert.equal(results.at(-1)?.requeueAfterSeconds ?? null, null, 'nothing to look at again: the container will not run again');
  });

  test('a signal container the kubelet will not start (runAsNonRoot, an image that runs as root): a Warning on the pod says so, and the pod is looked at again', async (t) => {
    const refusal = 'container has runAsNonRoot and image will run as root (pod: "job-1_batch", container: ephemera-stop-log-shipper)';
    const policy = jobPolicy({ ephemeral: () => ({ waitingReason: 'CreateContainerConfigError', message: refusal }) });
    const w = await sidecarWorld([mainAndSidecar('job-1', [SIDECAR], { annotations: SIGNAL })], { policy });
    t.after(() => w.close());
    const results = await w.run('job-1', { steps: 8 });
    const pod = w.pod('job-1');
    assert.equal(stateOf(pod, 'ephemera-stop-log-shipper'), 'waiting');
    assert.equal(stateOf(pod, 'log-shipper'), 'running');
    assert.equal(pod.spec.ephemeralContainers?.length, 1, 'injected once');
    assert.deepEqual(w.events('job-1'), ['Normal SidecarTerminator', 'Warning SidecarTerminationStuck']);
    const stuck = w.server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: NS }).find((e) => e.reason === 'SidecarTerminationStuck');
    assert.ok(String(stuck?.message).includes(`CreateContainerConfigError: ${refusal}`), String(stuck?.message));
    assert.equal(results.at(-1)?.requeueAfterSeconds, 120, 'nothing else would bring ephemera back to this pod');
  });

  test('a kubelet that never starts the signal container (it ignores ephemeral containers): a Warning once stuckAfterSeconds have passed since the injection (review86)', async (t) => {
    const w = await sidecarWorld([mainAndSidecar('job-1', [SIDECAR], { annotations: SIGNAL })], { kubelet: (server) => new IgnoresEphemeral(server, jobPolicy()) });
    t.after(() => w.close());
    const results = await w.run('job-1', { steps: 8 });
    assert.equal(w.pod('job-1').spec.ephemeralContainers?.length, 1);
    assert.ok((results.at(-1)?.requeueAfterSeconds ?? 0) > 0, 'looked at again');
    w.clock.advance(121);
    const r = await w.event('job-1');
    assert.deepEqual(w.events('job-1'), ['Normal SidecarTerminator', 'Warning SidecarTerminationStuck']);
    const stuck = w.server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: NS }).find((e) => e.reason === 'SidecarTerminationStuck');
    assert.match(String(stuck?.message), /the kubelet has not started signal container ephemera-stop-log-shipper .* \(it reports no status for it\)/);
    assert.equal(r.requeueAfterSeconds, null, 'said once; not looked at every two minutes for ever');
  });

  for (const spec of [{ shareProcessNamespace: true }, { hostPID: true }]) {
    test(`a pod with ${Object.keys(spec)[0]} gets no signal container, and a Warning`, async (t) => {
      const pod = mainAndSidecar('job-1', [SIDECAR], { annotations: SIGNAL, spec });
      const w = await sidecarWorld([pod]);
      t.after(() => w.close());
      await w.run('job-1', { steps: 6 });
      assert.equal(w.pod('job-1').spec.ephemeralContainers, undefined);
      assert.deepEqual(w.events('job-1'), ['Warning SidecarTerminationUnsupported']);
    });
  }
});

describe('virtual-kubelet node', () => {
  test('the sidecar image is swapped for its _WITH_IMAGE value, the pod Succeeds', async (t) => {
    const w = await sidecarWorld([mainAndSidecar('job-1', [withImage('example/exit0:1')], { nodeName: 'vk-1' })]);
    t.after(() => w.close());
    const results = await w.run('job-1', { until: terminal });
    const pod = w.pod('job-1');
    assert.equal(pod.status?.phase, 'Succeeded');
    assert.deepEqual(pod.spec.containers.map((c) => c.image), ['example/job:1', 'example/exit0:1']);
    assert.equal(stateOf(pod, 'log-shipper'), 'terminated 0');
    assert.equal(w.crrs().length, 0);
    assert.deepEqual(applied(results), ['patch Pod job-1', 'create Event SidecarTerminator']);
  });

  test('a stale view is re-read, not written: the swap lands on the current pod', async (t) => {
    const w = await sidecarWorld([mainAndSidecar('job-1', [withImage('example/exit0:1')], { nodeName: 'vk-1' })]);
    t.after(() => w.close());
    w.tickUntil('job-1', (p) => stateOf(p, 'main') === 'terminated 0');
    // Someone else writes the pod between our read and our patch, once.
    let bumped = false;
    const orig = w.server.rest.patch.bind(w.server.rest);
    w.server.rest.patch = ((...args: Parameters<typeof orig>) => {
      if (!bumped) {
        bumped = true;
        const cur = w.pod('job-1') as unknown as KubeObject;
        w.server.store.put({ ...cur, metadata: { ...cur.metadata, labels: { touched: 'yes' } } });
      }
      return orig(...args);
    }) as typeof orig;
    w.server.requests.clear();
    const r = await w.event('job-1');
    assert.ok(bumped);
    assert.equal(r.keys[0]?.outcome, 'done');
    assert.deepEqual(w.server.requests.filter((x) => x.method === 'PATCH' && x.path.endsWith('/pods/job-1')).map((x) => x.status), [409, 200], 'the stale patch conflicts, the re-read one lands');
    const pod = w.pod('job-1');
    assert.equal(pod.metadata.labels?.touched, 'yes');
    assert.equal(pod.spec.containers[1]?.image, 'example/exit0:1');
  });

  test('an admission policy refuses the swap: a Warning ActionRefused on the pod, no Event says it is trying (review78)', async (t) => {
    const w = await sidecarWorld([mainAndSidecar('job-1', [withImage('example/exit0:1')], { nodeName: 'vk-1' })]);
    t.after(() => w.close());
    w.tickUntil('job-1', (p) => stateOf(p, 'main') === 'terminated 0');
    w.server.faults.add({ method: 'PATCH', pathIncludes: '/pods/job-1', status: 403, message: 'admission webhook "policy.example.com" denied the request: image example/exit0:1 is not allowed', times: Infinity });
    const r = await w.event('job-1');
    assert.equal(r.keys[0]?.outcome, 'refused');
    assert.deepEqual(w.events('job-1'), ['Warning ActionRefused']);
    assert.equal(w.pod('job-1').spec.containers[1]?.image, 'example/fluent-bit:3');
    // The cause is fixed: the swap goes through, and only now is it said.
    w.server.faults.clear();
    await w.event('job-1');
    assert.equal(w.pod('job-1').spec.containers[1]?.image, 'example/exit0:1');
    assert.deepEqual(w.events('job-1').sort(), ['Normal SidecarTerminator', 'Warning ActionRefused']);
  });

  test('a sidecar without _WITH_IMAGE cannot be stopped there: a Warning names it, no write to the pod', async (t) => {
    const w = await sidecarWorld([mainAndSidecar('job-1', [SIDECAR], { nodeName: 'vk-1' })]);
    t.after(() => w.close());
    await w.run('job-1', { steps: 6 });
    assert.deepEqual(w.pod('job-1').spec.containers.map((c) => c.image), ['example/job:1', 'example/fluent-bit:3']);
    assert.deepEqual(w.events('job-1'), ['Warning SidecarTerminationUnsupported']);
    assert.equal(w.crrs().length, 0);
  });
});

describe('KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE', () => {
  const pod = (name: string): Record<string, unknown> => jobPod(name, {
    containers: [
      { name: 'main', image: 'example/job:1' },
      { name: 'proxy', image: 'example/proxy:1', env: [SIDECAR] },
      { name: 'agent', image: 'example/agent:1', env: [SIDECAR, IGNORE] },
    ],
  });
  // The agent dies of SIGTERM (143); the proxy shuts down cleanly.
  const sigterm = (_pod: string, container: string): number => (container === 'agent' ? 143 : 0);

  for (const [mainExit, phase] of [[0, 'Succeeded'], [1, 'Failed']] as const) {
    test(`main exited ${mainExit}: other sidecars first, then phase ${phase} with SidecarTerminated, then the marked one; its 143 does not matter`, async (t) => {
      const w = await sidecarWorld([pod('job-1')], { policy: jobPolicy({ mainExit: () => mainExit, sigterm }) });
      t.after(() => w.close());
      await w.run('job-1', { until: (p) => stateOf(p, 'agent') !== 'running' && terminal(p) });
      const p = w.pod('job-1');
      assert.equal(p.status?.phase, phase);
      assert.deepEqual(condition(p, 'SidecarTerminated'), { ...condition(p, 'SidecarTerminated'), status: 'True', reason: 'IgnoreExitCode' });
      assert.equal(stateOf(p, 'proxy'), 'terminated 0');
      assert.equal(stateOf(p, 'agent'), 'terminated 143');
      const uid = p.metadata.uid!;
      const crrs = Object.fromEntries(w.crrs().map((c) => [c.metadata.name, (c.spec as { containers: { name: string }[] }).containers.map((x) => x.name)]));
      assert.deepEqual(crrs, { [crrName(uid, 'sidecars')]: ['proxy'], [crrName(uid, 'ignore-exit-code')]: ['agent'] });
      // More events change nothing.
      const after = await w.run('job-1', { steps: 3 });
      assert.deepEqual(applied(after), []);
      assert.equal(w.pod('job-1').status?.phase, phase);
    });
  }
});

describe('KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE: the phase write refused', () => {
  test('the marked sidecar is left running and nothing says the phase was set; the refusal is recorded', async (t) => {
    const pod = jobPod('job-1', {
      containers: [
        { name: 'main', image: 'example/job:1' },
        { name: 'proxy', image: 'example/proxy:1', env: [SIDECAR] },
        { name: 'agent', image: 'example/agent:1', env: [SIDECAR, IGNORE] },
      ],
    });
    const w = await sidecarWorld([pod], { policy: jobPolicy({ sigterm: (_p, c) => (c === 'agent' ? 143 : 0) }) });
    t.after(() => w.close());
    const refused = w.server.faults.add({ method: 'PATCH', pathIncludes: `/namespaces/${NS}/pods/job-1/status`, status: 403, message: 'pods "job-1" is forbidden: refused for this test', times: Infinity });
    await w.run('job-1', { steps: 10 });
    const p = w.pod('job-1');
    assert.ok(refused.hits > 0, 'the phase write was tried');
    assert.equal(stateOf(p, 'proxy'), 'terminated 0', 'the first stage went ahead');
    assert.equal(stateOf(p, 'agent'), 'running', 'its exit code must not decide the phase: not stopped before the phase is set');
    assert.ok(!terminal(p));
    assert.ok(!w.crrs().some((c) => c.metadata.name === crrName(p.metadata.uid!, 'ignore-exit-code')), 'no second-stage CRR');
    assert.ok(w.events('job-1').includes('Warning ActionRefused'));
    const said = w.server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: NS }).map((e) => String((e as { message?: string }).message));
    assert.ok(!said.some((m) => m.includes("set the pod's phase")), 'no Event says the phase was set');
  });
});

describe('restartPolicy OnFailure (openkruise/kruise#1366)', () => {
  // review71: ending the pod only after the kubelet restarted the stopped sidecar let the Job
  // controller count that restart against backoffLimit first. The phase now comes first.
  for (const sigterm of [143, 0]) {
    test(`the phase is written before the sidecar is stopped, so it is never restarted (it exits ${sigterm} on SIGTERM): Succeeded, once`, async (t) => {
      const w = await sidecarWorld([mainAndSidecar('job-1', [SIDECAR], { restartPolicy: 'OnFailure' })], { policy: jobPolicy({ sigterm: () => sigterm }) });
      t.after(() => w.close());
      const results = await w.run('job-1', { until: terminal });
      const p = w.pod('job-1');
      assert.equal(p.status?.phase, 'Succeeded');
      assert.equal(condition(p, 'SidecarTerminated')?.reason, 'RestartPolicyOnFailure');
      assert.deepEqual(applied(results).slice(0, 2), ['patch Pod/status job-1', 'create Event SidecarTerminator'], 'the phase, before anything is stopped');
      // A terminal pod restarts nothing, and ephemera writes nothing more.
      const after = await w.run('job-1', { steps: 3 });
      assert.deepEqual(applied(after), []);
      const sidecar = w.pod('job-1').status?.containerStatuses?.find((s) => s.name === 'log-shipper');
      assert.equal(sidecar?.restartCount, 0, 'the kubelet never restarted the sidecar: no restart for the Job controller to count');
      assert.equal(stateOf(w.pod('job-1'), 'log-shipper'), `terminated ${sigterm}`);
    });
  }

  test('a main container that fails under OnFailure is restarted by the kubelet: not due, nothing is done', async (t) => {
    let runs = 0;
    const w = await sidecarWorld([mainAndSidecar('job-1', [SIDECAR], { restartPolicy: 'OnFailure' })], { policy: jobPolicy({ mainExit: () => (runs++ < 100 ? 1 : 0) }) });
    t.after(() => w.close());
    const results = await w.run('job-1', { steps: 8 });
    assert.deepEqual(applied(results), []);
    assert.ok((w.pod('job-1').status?.containerStatuses?.find((s) => s.name === 'main')?.restartCount ?? 0) >= 1);
    assert.ok(results.some((r) => r.keys.some((k) => k.notes?.some((n) => /exited 1 under restartPolicy OnFailure/.test(n)))));
  });
});

describe('native sidecars are Kubernetes\' job', () => {
  test('a pod whose only sidecar is an init container with restartPolicy Always is never acted on', async (t) => {
    const pod = jobPod('job-1', {
      containers: [{ name: 'main', image: 'example/job:1' }],
      spec: { initContainers: [{ name: 'log-shipper', image: 'example/fluent-bit:3', restartPolicy: 'Always', env: [SIDECAR] }] },
    });
    const w = await sidecarWorld([pod]);
    t.after(() => w.close());
    const results = await w.run('job-1', { steps: 6 });
    assert.equal(stateOf(w.pod('job-1'), 'main'), 'terminated 0');
    assert.deepEqual(applied(results), []);
    assert.equal(w.crrs().length, 0);
  });
});

describe('API cost per pod event', () => {
  test('not due: one GET; due: the pod, its node and its CRR are read once, then the writes, with no Lease', async (t) => {
    const w = await sidecarWorld([mainAndSidecar('job-1')], { kubelet: (server) => new NoDaemon(server, jobPolicy()) });
    t.after(() => w.close());
    const calls = (): string[] => w.server.requests.entries.map((r) => `${r.verb} ${r.path.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/, '<uid>').replace(/\/events\/.*/, '/events/<name>')}`);
    const reads = [
      `get /api/v1/namespaces/${NS}/pods/job-1`,
      'get /api/v1/nodes/node-a',
      `get /apis/apps.kruise.io/v1alpha1/namespaces/${NS}/containerrecreaterequests/sidecar-termination-<uid>`,
    ];
    w.clock.advance(1);
    w.kubelet.tick(); // main waiting: not due
    w.server.requests.clear();
    await w.event('job-1');
    assert.deepEqual(calls(), [`get /api/v1/namespaces/${NS}/pods/job-1`]);

    w.tickUntil('job-1', (p) => stateOf(p, 'main') === 'terminated 0');
    w.server.requests.clear();
    await w.event('job-1'); // due, no CRR yet: create it
    assert.deepEqual(calls(), [...reads, `create /apis/apps.kruise.io/v1alpha1/namespaces/${NS}/containerrecreaterequests`, `create /api/v1/namespaces/${NS}/events`]);

    w.server.requests.clear();
    await w.event('job-1'); // due, CRR exists: nothing to write
    assert.deepEqual(calls(), reads);
  });
});

describe('bad input', () => {
  test('malformed env entries: skipped with the field path, no write, no crash', async (t) => {
    const w = await sidecarWorld([mainAndSidecar('job-1')], { kubelet: (server) => new NoDaemon(server, jobPolicy()) });
    t.after(() => w.close());
    w.tickUntil('job-1', (p) => stateOf(p, 'main') === 'terminated 0');
    const cur = w.pod('job-1') as unknown as KubeObject & { spec: { containers: Record<string, unknown>[] } };
    // Stored directly (no validation): as a newer or buggy API server might hand it out.
    w.server.store.put({ ...cur, spec: { ...cur.spec, containers: cur.spec.containers.map((c) => (c.name === 'log-shipper' ? { ...c, env: [{ value: 'true' }, 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT'] } : c)) } });
    w.server.requests.clear();
    const r = await w.event('job-1');
    assert.deepEqual(applied([r]), []);
    assert.match(r.keys[0]?.notes?.join() ?? '', /skipped: pod batch\/job-1 unreadable \(spec\.containers\[1\]\.env\[0\]\.name/);
    assert.ok(w.server.requests.entries.every((r) => r.method === 'GET'));
    assert.equal(w.crrs().length, 0);
  });

  test('missing container statuses: not due until the kubelet reports them', async (t) => {
    const w = await sidecarWorld([mainAndSidecar('job-1')]);
    t.after(() => w.close());
    w.tickUntil('job-1', (p) => stateOf(p, 'main') === 'terminated 0');
    const cur = w.pod('job-1') as unknown as KubeObject & { status: Record<string, unknown> };
    w.server.store.put({ ...cur, status: { ...cur.status, containerStatuses: undefined } });
    const r = await w.event('job-1');
    assert.deepEqual(applied([r]), []);
    assert.match(r.keys[0]?.notes?.join() ?? '', /no state reported yet for container main, log-shipper/);
  });

  test('a node that no longer exists: skipped (orphaned pod), nothing written', async (t) => {
    const w = await sidecarWorld([mainAndSidecar('job-1', [SIDECAR], { nodeName: 'node-gone' })]);
    t.after(() => w.close());
    const results = await w.run('job-1', { steps: 6 });
    assert.deepEqual(applied(results), []);
    assert.ok(results.some((r) => r.keys.some((k) => k.notes?.some((n) => /node node-gone no longer exists/.test(n)))));
    assert.ok(results.some((r) => r.keys.some((k) => k.warnings?.some((n) => /node node-gone no longer exists .*its sidecars are not stopped/.test(n)))), 'logged at warn, not only at debug (review86)');
  });

  test('the node GET failing transiently is thrown for the queue to redeliver; the redelivery acts', async (t) => {
    const w = await sidecarWorld([mainAndSidecar('job-1')], { kubelet: (server) => new NoDaemon(server, jobPolicy()) });
    t.after(() => w.close());
    w.tickUntil('job-1', (p) => stateOf(p, 'main') === 'running');
    w.server.faults.add({ method: 'GET', pathIncludes: '/nodes/node-a', status: 503, times: Infinity });
    w.clock.advance(1);
    w.kubelet.tick(); // main exits: due, and the node cannot be read
    await assert.rejects(w.event('job-1'), /503|unavailable/i);
    assert.equal(w.crrs().length, 0);
    w.server.faults.clear();
    await w.event('job-1');
    assert.equal(w.crrs().length, 1);
  });

  test('never on the wrong container: a signal container name taken by one targeting another container blocks that sidecar', async (t) => {
    const w = await sidecarWorld([mainAndSidecar('job-1', [SIDECAR], { annotations: SIGNAL })], { kubelet: (server) => new NoDaemon(server, jobPolicy()) });
    t.after(() => w.close());
    w.tickUntil('job-1', (p) => stateOf(p, 'main') === 'terminated 0');
    // Someone injected a debug container under the name ephemera would use, aimed at main.
    const cur = w.pod('job-1') as unknown as KubeObject;
    const body = { ...cur, spec: { ...(cur.spec as object), ephemeralContainers: [{ name: 'ephemera-stop-log-shipper', image: 'busybox:1.36', command: ['sleep', '1d'], targetContainerName: 'main' }] } };
    w.server.rest.update({ def: w.server.store.defFor('v1', 'Pod'), namespace: NS, name: 'job-1', sub: 'ephemeralcontainers' }, body);
    const r = await w.event('job-1');
    assert.deepEqual(applied([r]), []);
    assert.match(r.keys[0]?.notes?.join() ?? '', /exists but targets main/);
    assert.deepEqual(w.pod('job-1').spec.ephemeralContainers?.map((c) => c.targetContainerName), ['main']);
  });
});
