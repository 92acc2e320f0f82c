import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ENVELOPE_TYPE, type Envelope } from '../../functions/api/envelope.ts';
import type { Action } from '../../functions/engine/plan.ts';
import { KubeError } from '../../functions/kube/errors.ts';
import type { Kube, ObjectList, ObjectRef } from '../../functions/kube/kube.ts';
import { crrName } from '../../functions/sidecar/actions.ts';
import { podKey, route, sidecarController } from '../../functions/sidecar/controller.ts';
import { trimPodForSidecar } from '../../functions/sidecar/predicate.ts';
import { basePod, exited, NODES, NOW, podWith, running, UID } from './support.ts';

/** Objects by kind/namespace/name; every get is logged; some kinds can be made to fail. */
class MemoryKube implements Kube {
  readonly gets: string[] = [];
  readonly objects = new Map<string, unknown>();
  readonly failures = new Map<string, KubeError>();

  constructor(...objects: unknown[]) {
    for (const o of objects) this.put(o);
  }

  put(o: unknown): void {
    const x = o as { kind: string; metadata: { namespace?: string; name: string } };
    this.objects.set(id({ apiVersion: '', kind: x.kind, namespace: x.metadata.namespace, name: x.metadata.name }), o);
  }

  async get(ref: ObjectRef): Promise<unknown> {
    this.gets.push(`${ref.kind}/${ref.name}`);
    const failure = this.failures.get(ref.kind);
    if (failure) throw failure;
    return structuredClone(this.objects.get(id(ref)) ?? null);
  }

  async list<T>(): Promise<ObjectList<T>> {
    throw new Error('the sidecar controller never lists');
  }

  async perform(action: Action): Promise<unknown> {
    throw new Error(`not expected here: ${action.verb}`);
  }

  serverNow(): Date {
    return NOW;
  }
}

const id = (r: ObjectRef): string => `${r.kind}/${r.namespace ?? ''}/${r.name}`;

function envelope(data: Partial<Envelope['data']> = {}): Envelope {
  return {
    specversion: '1.0',
    id: 'e1',
    source: 'relay',
    type: ENVELOPE_TYPE,
    time: '2026-01-01T00:02:00Z',
    subject: 'batch/job-abc12',
    data: { kind: 'Pod', event: 'MODIFIED', namespace: 'batch', name: 'job-abc12', ...data },
  };
}

const controller = sidecarController();
const KEY = podKey('batch', 'job-abc12');

describe('route', () => {
  test('pod events go to Pod/<ns>/<name>', () => {
    assert.deepEqual(route(envelope()), { keys: [KEY] });
  });
  test('EphemeralJob events are not ours', () => {
    assert.equal(route(envelope({ kind: 'EphemeralJob' })).keys.length, 0);
  });
  test('deleted pods are skipped', () => {
    assert.deepEqual(route(envelope({ event: 'DELETED' })), { keys: [], skipped: 'pod deleted' });
  });
  test('a snapshot that shows the pod is not due stops here, with the reason', () => {
    const snapshot = trimPodForSidecar(podWith({ statuses: [running('main'), running('log-shipper')] })) as unknown as Record<string, unknown>;
    assert.deepEqual(route(envelope({ snapshot })), { keys: [], skipped: 'main container main has not terminated' });
  });
  test('a due snapshot, or one that cannot be read, goes on to observe the live pod', () => {
    assert.deepEqual(route(envelope({ snapshot: trimPodForSidecar(basePod()) as unknown as Record<string, unknown> })).keys, [KEY]);
    assert.deepEqual(route(envelope({ snapshot: { spec: 'garbage' } })).keys, [KEY]);
  });
});

describe('observe: bounded reads', () => {
  test('a pod that is not due costs one GET', async () => {
    const kube = new MemoryKube(podWith({ statuses: [running('main'), running('log-shipper')] }), ...NODES);
    const o = await controller.observe(KEY, kube);
    assert.deepEqual(kube.gets, ['Pod/job-abc12']);
    assert.deepEqual(o && controller.plan(o, NOW).actions, []);
  });

  test('a due pod on a normal node: pod, node, one CRR; plans the CRR', async () => {
    const kube = new MemoryKube(basePod(), ...NODES);
    const o = await controller.observe(KEY, kube);
    assert.deepEqual(kube.gets, ['Pod/job-abc12', 'Node/node-a', `ContainerRecreateRequest/${crrName(UID, 'sidecars')}`]);
    assert.ok(o);
    assert.deepEqual(controller.plan(o, NOW).actions.map((a) => a.kind), ['ContainerRecreateRequest', 'Event']);
  });

  test('an existing CRR (even one OpenKruise made) is found and nothing is planned', async () => {
    const crr = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ContainerRecreateRequest', metadata: { name: crrName(UID, 'sidecars'), namespace: 'batch', creationTimestamp: '2026-01-01T00:01:50Z' }, spec: { podName: 'job-abc12', containers: [{ name: 'log-shipper' }] } };
    const o = await controller.observe(KEY, new MemoryKube(basePod(), ...NODES, crr));
    assert.ok(o);
    assert.deepEqual(controller.plan(o, NOW).actions, []);
  });

  test('the CRR\'s status.phase is read: the stuck Warning tells a CRR kruise-daemon took from one nobody did (review86)', async () => {
    const name = crrName(UID, 'sidecars');
    const crr = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ContainerRecreateRequest', metadata: { name, namespace: 'batch', creationTimestamp: '2026-01-01T00:01:50Z' }, spec: { podName: 'job-abc12', containers: [{ name: 'log-shipper' }] }, status: { phase: 'Recreating' } };
    const o = await controller.observe(KEY, new MemoryKube(basePod(), ...NODES, crr));
    assert.deepEqual(o?.crrs[name], { name, containers: ['log-shipper'], createdAt: new Date('2026-01-01T00:01:50Z'), phase: 'Recreating', daemonActed: false });
    // kruise-manager's completion of a CRR no kruise-daemon answered, and one kruise-daemon acted on (review89).
    const unanswered = { ...crr, status: { phase: 'Completed', message: 'daemon has not responded for a long time' } };
    const u = await controller.observe(KEY, new MemoryKube(basePod(), ...NODES, unanswered));
    assert.deepEqual(u?.crrs[name], { name, containers: ['log-shipper'], createdAt: new Date('2026-01-01T00:01:50Z'), phase: 'Completed', message: 'daemon has not responded for a long time', daemonActed: false });
    const acted = { ...crr, status: { phase: 'Completed', containerRecreateStates: [{ name: 'log-shipper', phase: 'Succeeded' }] } };
    const a = await controller.observe(KEY, new MemoryKube(basePod(), ...NODES, acted));
    assert.equal(a?.crrs[name]?.daemonActed, true);
  });

  test('a virtual-kubelet node: pod and node only', async () => {
    const kube = new MemoryKube(podWith({ spec: { nodeName: 'vk-1' } }), ...NODES);
    const o = await controller.observe(KEY, kube);
    assert.deepEqual(kube.gets, ['Pod/job-abc12', 'Node/vk-1']);
    assert.equal(o?.node?.kind, 'virtual-kubelet');
  });

  test('the signal strategy reads no CRR', async () => {
    const kube = new MemoryKube(basePod(), ...NODES);
    await sidecarController({ defaultStrategy: 'ephemeral-signal' }).observe(KEY, kube);
    assert.deepEqual(kube.gets, ['Pod/job-abc12', 'Node/node-a']);
  });

  test('a node that no longer exists: skipped, not an error', async () => {
    const kube = new MemoryKube(podWith({ spec: { nodeName: 'gone' } }), ...NODES);
    const o = await controller.observe(KEY, kube);
    assert.equal(o?.node?.kind, 'missing');
    assert.ok(o);
    assert.deepEqual(controller.plan(o, NOW).actions, []);
  });

  test('nodes not readable (403): assume a normal node', async () => {
    const kube = new MemoryKube(basePod());
    kube.failures.set('Node', new KubeError({ status: 403, reason: 'Forbidden', message: 'nodes is forbidden' }));
    const o = await controller.observe(KEY, kube);
    assert.equal(o?.node?.kind, 'unknown');
    assert.ok(o);
    assert.equal(controller.plan(o, NOW).actions[0]?.kind, 'ContainerRecreateRequest');
  });

  test('CRRs not readable (403): planned as unknown, so the CRR is created (AlreadyExists counts as done)', async () => {
    const kube = new MemoryKube(basePod(), ...NODES);
    kube.failures.set('ContainerRecreateRequest', new KubeError({ status: 403, reason: 'Forbidden', message: 'containerrecreaterequests is forbidden' }));
    const o = await controller.observe(KEY, kube);
    assert.ok(o);
    const p = controller.plan(o, NOW);
    assert.deepEqual(p.actions.map((a) => a.kind), ['ContainerRecreateRequest', 'Event']);
    assert.match(p.notes?.join('\n') ?? '', /unreadable \(403\): planning without it/);
  });

  test('CRRs not served (404 naming no object: OpenKruise\'s CRD is not installed): the planner is told, plans no create and says what to do', async () => {
    const kube = new MemoryKube(basePod(), ...NODES);
    kube.failures.set('ContainerRecreateRequest', new KubeError({ status: 404, reason: 'NotFound', message: 'the server could not find the requested resource' }));
    const o = await controller.observe(KEY, kube);
    assert.ok(o);
    assert.equal(o.crrUnserved, true);
    const p = controller.plan(o, NOW);
    assert.deepEqual(p.actions.map((a) => `${a.kind} ${String((a.body as { reason?: string }).reason ?? '')}`), ['Event SidecarTerminationUnsupported']);
    assert.equal(p.requeueAfterSeconds, 600);
    assert.match(p.notes?.join('\n') ?? '', /containerrecreaterequests not served \(404/);
  });

  test('CRRs not readable (403) are not taken for unserved', async () => {
    const kube = new MemoryKube(basePod(), ...NODES);
    kube.failures.set('ContainerRecreateRequest', new KubeError({ status: 403, reason: 'Forbidden', message: 'containerrecreaterequests is forbidden' }));
    const o = await controller.observe(KEY, kube);
    assert.equal(o?.crrUnserved, undefined);
  });

  test('a pod without nodeName or on a node that does not parse: assumed normal, noted', async () => {
    const noNode = podWith({ spec: { nodeName: undefined } });
    const a = await controller.observe(KEY, new MemoryKube(noNode, ...NODES));
    assert.deepEqual(a?.node, { name: '', kind: 'unknown', detail: 'not set on the pod' });
    const odd = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a', labels: 'type=virtual-kubelet' } };
    const b = await controller.observe(KEY, new MemoryKube(basePod(), odd));
    assert.equal(b?.node?.kind, 'unknown');
    assert.ok(b);
    assert.equal(controller.plan(b, NOW).actions[0]?.kind, 'ContainerRecreateRequest');
  });

  test('a transient failure is thrown (the queue retries)', async () => {
    const kube = new MemoryKube(basePod());
    kube.failures.set('Node', new KubeError({ status: 503, message: 'unavailable' }));
    await assert.rejects(controller.observe(KEY, kube), KubeError);
  });

  test('a pod that is gone: null', async () => {
    assert.equal(await controller.observe(KEY, new MemoryKube()), null);
  });

  test('a pod with malformed env entries is skipped with the path, never acted on', async () => {
    const bad = basePod() as unknown as { spec: { containers: { env?: unknown[] }[] } };
    bad.spec.containers[1]!.env = [{ value: 'true' }];
    const kube = new MemoryKube(bad);
    const o = await controller.observe(KEY, kube);
    assert.ok(o);
    const p = controller.plan(o, NOW);
    assert.deepEqual(p.actions, []);
    assert.match(p.notes?.join('\n') ?? '', /spec\.containers\[1\]\.env\[0\]\.name/);
    assert.deepEqual(kube.gets, ['Pod/job-abc12']);
  });

  test('a pod with missing statuses reads nothing more', async () => {
    const kube = new MemoryKube(podWith({ statuses: [exited('main', 0)] }), ...NODES);
    await controller.observe(KEY, kube);
    assert.deepEqual(kube.gets, ['Pod/job-abc12']);
  });

  test('bad options fail at construction, naming the field', () => {
    assert.throws(() => sidecarController({ defaultStrategy: 'exec' as 'crr' }), /defaultStrategy/);
  });
});
