// A pod the template cannot go into (pod-state.ts unfitReason): kube-apiserver refuses the
// injection for good (no container named by targetContainerName, a volume the pod lacks, a
// container of the same name), so such a pod is a failed target at once — never claimed,
// never holding a slot — and the job goes on with the others and ends with a verdict that
// says why. Before, it was claimed again every claim window and, at parallelism 1, the job
// never finished.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { EphemeralContainerTemplate, EphemeralJobObject, EphemeralJobSpec } from '../../functions/api/ephemeraljob.ts';
import type { Pod } from '../../functions/api/pod.ts';
import type { Action } from '../../functions/engine/plan.ts';
import { CLAIMS_ANNOTATION, LeaseRecord } from '../../functions/ejob/lease-record.ts';
import { DEFAULT_LEASE, plan, type ObservedLease } from '../../functions/ejob/planner.ts';
import { unfitReason } from '../../functions/ejob/pod-state.ts';
import { selectTargets } from '../../functions/ejob/targets.ts';

const UID = 'job-uid';
const NOW = new Date('2026-01-01T01:00:00Z');
const cfg = { ...DEFAULT_LEASE, name: 'ejob-ns-j', key: 'EphemeralJob/ns/j' };
const probe = { name: 'probe', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'app' };

function pod(name: string, created: number, spec: Partial<Pod['spec']> = {}, done = false): Pod {
  const p: Pod = {
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, labels: { app: 'x' }, creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, created)).toISOString() },
    spec: { containers: [{ name: 'app' }], ...spec },
    status: { phase: 'Running' },
  };
  if (!done) return p;
  p.spec = { ...p.spec, ephemeralContainers: [{ name: 'probe', env: [{ name: 'KRUISE_EJOB_ID', value: UID }] }] };
  p.status = { ...p.status, ephemeralContainerStatuses: [{ name: 'probe', state: { terminated: { exitCode: 0 } } }] };
  return p;
}

const noApp = (name: string, created: number, done = false): Pod => pod(name, created, { containers: [{ name: 'web' }] }, done);

function job(spec: Partial<EphemeralJobSpec> = {}, status?: Record<string, unknown>): EphemeralJobObject {
  return {
    metadata: { name: 'j', namespace: 'ns', uid: UID, generation: 1, resourceVersion: '5', creationTimestamp: '2026-01-01T00:30:00Z' },
    spec: { selector: { matchLabels: { app: 'x' } }, template: { ephemeralContainers: [probe] }, ...spec },
    ...(status ? { status: status as never } : {}),
  };
}

const lease = (record: Partial<LeaseRecord> = {}): ObservedLease => ({ view: { kind: 'ours', resourceVersion: '9', record: { v: 1, job: UID, total: 0, claims: [], ...record } }, serverNow: NOW, cfg });
const statusOf = (actions: Action[]): Record<string, unknown> | undefined => (actions.find((a) => a.subresource === 'status')?.body as { status: Record<string, unknown> } | undefined)?.status;
const injected = (actions: Action[]): string[] => actions.filter((a) => a.subresource === 'ephemeralcontainers').map((a) => a.name);
const recordOf = (a: Action | undefined): LeaseRecord => JSON.parse((a?.body as { metadata: { annotations: Record<string, string> } }).metadata.annotations[CLAIMS_ANNOTATION] ?? 'null') as LeaseRecord;

describe('a pod the template cannot go into', () => {
  test('unfitReason names what kube-apiserver would refuse, and nothing else', () => {
    const tpl = [probe];
    assert.equal(unfitReason(pod('a', 1), tpl), undefined);
    assert.equal(unfitReason(pod('a', 1, { containers: [{ name: 'side' }], initContainers: [{ name: 'app' }] }), tpl), undefined, 'an init container may be the target');
    assert.equal(unfitReason(pod('a', 1), [{ ...probe, targetContainerName: undefined }]), undefined, 'no target: any pod');
    assert.match(unfitReason(noApp('a', 1), tpl) ?? '', /no container app \(targetContainerName of probe\)/);
    assert.match(unfitReason(pod('a', 1, { containers: [{ name: 'app' }, { name: 'probe' }] }), tpl) ?? '', /already has a container named probe/);
    const mounts = [{ ...probe, volumeMounts: [{ name: 'data', mountPath: '/d' }] }];
    assert.equal(unfitReason(pod('a', 1), mounts), 'the pod has no volume data (volumeMounts[0] of probe)');
    assert.equal(unfitReason(pod('a', 1, { volumes: [{ name: 'data' }] }), mounts), undefined);
    assert.match(unfitReason(pod('a', 1), [{ ...probe, volumeDevices: [{ name: 'blk', devicePath: '/dev/x' }] }]) ?? '', /no volume blk/);
    const mirror = pod('a', 1);
    mirror.metadata = { ...mirror.metadata, annotations: { 'kubernetes.io/config.mirror': 'abc123' } };
    assert.match(unfitReason(mirror, tpl) ?? '', /static pod/, "a static pod's mirror takes no ephemeral containers (review)");
    // The template is schemaless under OpenKruise's CRD: an odd entry is the webhook's to name, not a reason here.
    assert.equal(unfitReason(pod('a', 1), [{ ...probe, volumeMounts: 'oops' }]), undefined);
    assert.equal(unfitReason(pod('a', 1), [{ ...probe, volumeMounts: [7, null] }]), undefined);
  });

  test('a device on a volume that is no PVC or ephemeral volume, procMount Unmasked in a pod that keeps host users: unfit, said plainly (review91 F2, F3)', () => {
    const device = [{ ...probe, volumeDevices: [{ name: 'blk', devicePath: '/dev/x' }] }];
    assert.equal(unfitReason(pod('a', 1, { volumes: [{ name: 'blk', emptyDir: {} }] }), device), "the pod's volume blk is no PersistentVolumeClaim or ephemeral volume (volumeDevices[0] of probe: a block device needs one)");
    assert.equal(unfitReason(pod('a', 1, { volumes: [{ name: 'blk', persistentVolumeClaim: { claimName: 'c' } }] }), device), undefined);
    assert.equal(unfitReason(pod('a', 1, { volumes: [{ name: 'blk', ephemeral: { volumeClaimTemplate: {} } }] }), device), undefined);
    assert.match(unfitReason(pod('a', 1, { volumes: [{ name: 'blk', persistentVolumeClaim: null }] }), device) ?? '', /no PersistentVolumeClaim/, 'null is no source, as in Go');
    // An empty name (the spec parse refuses it first) is quoted, and the list named: not "the pod has no volume  (mounted by probe)".
    assert.equal(unfitReason(pod('a', 1), [{ ...probe, volumeDevices: [{ name: '', devicePath: '/dev/x' }] }]), 'the pod has no volume "" (volumeDevices[0] of probe)');
    const unmasked = [{ ...probe, securityContext: { procMount: 'Unmasked' } }];
    const hostUsers = "the pod keeps the host's user namespace (procMount Unmasked of probe needs hostUsers: false)";
    assert.equal(unfitReason(pod('a', 1), unmasked), hostUsers);
    assert.equal(unfitReason(pod('a', 1, { hostUsers: true }), unmasked), hostUsers);
    assert.equal(unfitReason(pod('a', 1, { hostUsers: false }), unmasked), undefined);
    assert.equal(unfitReason(pod('a', 1), [{ ...probe, securityContext: { procMount: 'Default' } }]), undefined);
  });

  test("the pod-dependent security rules kube-apiserver applies: windowsOptions in a linux pod, linux-only fields in a windows one, HostProcess against the pod's: unfit, the field named", () => {
    const withSc = (securityContext: Record<string, unknown>): EphemeralContainerTemplate[] => [{ ...probe, securityContext }];
    const windowsOptions = withSc({ windowsOptions: { runAsUserName: 'ContainerUser' } });
    assert.equal(unfitReason(pod('a', 1, { os: { name: 'linux' } }), windowsOptions), "the pod's spec.os.name is linux (securityContext.windowsOptions of probe: windows options cannot be set for a linux pod)");
    const capabilities = withSc({ capabilities: { drop: ['ALL'] } });
    assert.equal(unfitReason(pod('a', 1, { os: { name: 'windows' } }), capabilities), "the pod's spec.os.name is windows (securityContext.capabilities of probe: cannot be set for a windows pod)");
    // kube-apiserver applies the OS rules only when spec.os is set: most pods take either.
    for (const tpl of [windowsOptions, capabilities]) assert.equal(unfitReason(pod('a', 1), tpl), undefined);
    assert.equal(unfitReason(pod('a', 1, { os: { name: 'windows' } }), windowsOptions), undefined);
    assert.equal(unfitReason(pod('a', 1, { os: { name: 'linux' } }), capabilities), undefined);
    // HostProcess, whatever spec.os.
    const hostProcess = withSc({ windowsOptions: { hostProcess: true } });
    assert.equal(unfitReason(pod('a', 1), hostProcess), 'the pod is no Windows HostProcess pod (probe is a HostProcess container, securityContext.windowsOptions.hostProcess: every container of the pod must be one, and the pod use hostNetwork)');
    const hostProcessPod = pod('a', 1, { os: { name: 'windows' }, hostNetwork: true, containers: [{ name: 'app', securityContext: { windowsOptions: { hostProcess: true } } }] });
    assert.equal(unfitReason(hostProcessPod, hostProcess), undefined);
    assert.equal(unfitReason(hostProcessPod, [probe]), 'the pod is a Windows HostProcess pod (probe is not a HostProcess container, securityContext.windowsOptions.hostProcess: every container of the pod must be one)');
    const byPod = pod('a', 1, { hostNetwork: true, securityContext: { windowsOptions: { hostProcess: true } } });
    assert.equal(unfitReason(byPod, [probe]), undefined, "a container that sets nothing takes the pod's hostProcess");
    assert.equal(unfitReason(byPod, withSc({ windowsOptions: { hostProcess: false } })), "the pod's securityContext.windowsOptions.hostProcess is true (securityContext.windowsOptions.hostProcess of probe is false: both must be the same)");
  });

  test('a pod a pod-dependent security rule refuses is failed at once: never claimed nor injected, its Warning names the field; a pod without spec.os takes the template', () => {
    const tpl = { ...probe, securityContext: { windowsOptions: { gmsaCredentialSpecName: 'gmsa-webapp' } } };
    const linux = pod('a-linux', 1, { os: { name: 'linux' } });
    const p = plan({ job: job({ parallelism: 1, template: { ephemeralContainers: [tpl] } }), pods: [linux, pod('b', 2)], lease: lease() }, NOW);
    assert.deepEqual(injected(p.actions), ['b'], 'the pod without spec.os gets the slot');
    assert.deepEqual(recordOf(p.actions.find((a) => a.kind === 'Lease')).claims.map((c) => c.pod), ['b'], 'a-linux is never claimed');
    assert.equal((statusOf(p.actions) as { failed?: number }).failed, 1);
    assert.ok(p.notes?.some((n) => n.includes("pod a-linux failed: its containers cannot go into it (the pod's spec.os.name is linux (securityContext.windowsOptions of probe: windows options cannot be set for a linux pod))")), p.notes?.join('\n'));
    // Every pod refuses a HostProcess container: the job fails at once, nothing injected, one Lease write (the seal), no claim.
    const hp = { ...probe, securityContext: { windowsOptions: { hostProcess: true } } };
    const all = plan({ job: job({ template: { ephemeralContainers: [hp] } }), pods: [pod('c', 3), pod('d', 4, { os: { name: 'windows' } })], lease: lease() }, NOW);
    assert.deepEqual(injected(all.actions), []);
    const leaseWrites = all.actions.filter((a) => a.kind === 'Lease');
    assert.equal(leaseWrites.length, 1);
    assert.deepEqual([recordOf(leaseWrites[0]).finished, recordOf(leaseWrites[0]).claims], [true, []]);
    const body = statusOf(all.actions) as { phase: string; conditions: { type: string; message?: string }[] };
    assert.equal(body.phase, 'Failed');
    assert.match(body.conditions.find((c) => c.type === 'JobFailed')?.message ?? '', /2 could not take the containers \(c: the pod is no Windows HostProcess pod \(probe is a HostProcess container, securityContext\.windowsOptions\.hostProcess/);
    const podEvent = all.actions.find((a) => a.kind === 'Event' && (a.body as { involvedObject: { name: string } }).involvedObject.name === 'd');
    assert.match((podEvent?.body as { message: string }).message, /securityContext\.windowsOptions\.hostProcess/);
  });

  test('it is a failed target from the start, never claimed: at parallelism 1 the next pod gets the slot', () => {
    const pods = [noApp('a-old', 1), pod('b', 2), pod('c', 3)];
    const p = plan({ job: job(), pods, lease: lease() }, NOW);
    assert.deepEqual(injected(p.actions), ['b'], 'the oldest pod it can go into');
    const claim = recordOf(p.actions.find((a) => a.kind === 'Lease'));
    assert.deepEqual(claim.claims.map((c) => c.pod), ['b']);
    assert.deepEqual({ ...statusOf(p.actions), conditions: undefined, startTime: undefined }, { match: 3, succeeded: 0, failed: 1, running: 0, waiting: 1, phase: 'Running', conditions: undefined, startTime: undefined });
    assert.ok(p.notes?.some((n) => /pod a-old failed: its containers cannot go into it \(the pod has no container app/.test(n)), 'ephemera invoke shows why');
  });

  test('the job ends Failed, its condition and the pod\'s Event say why', () => {
    const status = { phase: 'Running', match: 3, succeeded: 1, failed: 1, running: 1, waiting: 0, startTime: '2026-01-01T00:30:01Z' };
    const pods = [noApp('a-old', 1), pod('b', 2, {}, true), pod('c', 3, {}, true)];
    const sealing = plan({ job: job({}, status), pods, lease: lease({ total: 2 }) }, NOW);
    assert.equal(recordOf(sealing.actions[0]).verdict?.phase, 'Failed', 'sealed like any verdict');
    const body = statusOf(sealing.actions) as { phase: string; failed: number; match: number; conditions: { type: string; message?: string }[] };
    assert.deepEqual([body.phase, body.match, body.failed], ['Failed', 3, 1]);
    const failed = body.conditions.find((c) => c.type === 'JobFailed');
    assert.equal(failed?.message, '1 of 3 pods failed; 1 could not take the containers (a-old: the pod has no container app (targetContainerName of probe))');
    const podEvent = sealing.actions.find((a) => a.kind === 'Event' && (a.body as { involvedObject: { name: string } }).involvedObject.name === 'a-old');
    assert.match((podEvent?.body as { message: string }).message, /ephemeral job j: the pod has no container app/);
    // The verdict's status write lost: planned again from the sealed record, the pod still counts.
    const sealed = lease({ total: 2, finished: true, verdict: recordOf(sealing.actions[0]).verdict });
    const again = plan({ job: job({}, status), pods, lease: sealed }, NOW);
    assert.deepEqual(statusOf(again.actions), statusOf(sealing.actions));
  });

  test('with replicas, pods the containers can go into are chosen first', () => {
    const spec = job({ replicas: 2 }).spec as EphemeralJobSpec;
    const pods = [noApp('a-old', 1), pod('b', 2), pod('c', 3), noApp('d', 4)];
    assert.deepEqual(selectTargets(spec, UID, pods).targets.map((t) => [t.pod.metadata.name, t.state]), [['b', 'pending'], ['c', 'pending']]);
    const three = { ...spec, replicas: 3 };
    assert.deepEqual(selectTargets(three, UID, pods).targets.map((t) => [t.pod.metadata.name, t.state]), [['b', 'pending'], ['c', 'pending'], ['a-old', 'failed']]);
  });

  test('after the seal, a late pod the containers cannot go into changes nothing: the recorded verdict stands (review)', () => {
    const status = { phase: 'Running', match: 1, succeeded: 0, failed: 0, running: 1, waiting: 0, startTime: '2026-01-01T00:30:01Z' };
    const sealing = plan({ job: job({}, status), pods: [pod('b', 2, {}, true)], lease: lease({ total: 1 }) }, NOW);
    const verdict = recordOf(sealing.actions[0]).verdict;
    assert.equal(verdict?.phase, 'Succeeded');
    // Its status write was lost; then a rollout's pod without the target container appears (with b, or instead of it).
    for (const pods of [[pod('b', 2, {}, true), noApp('u', 9)], [noApp('u', 9)]]) {
      const again = plan({ job: job({}, status), pods, lease: lease({ total: 1, finished: true, verdict }) }, NOW);
      assert.deepEqual(statusOf(again.actions), statusOf(sealing.actions), pods.map((p) => p.metadata.name).join(','));
    }
  });

  test('with replicas, an unfit pod takes a replica only while replicas are left (review)', () => {
    // replicas 2: a injected and done, b claimed and then deleted (its claim stays counted; the
    // observation's GET found b gone, so its claim holds no slot): no replica left.
    const status = { phase: 'Running', match: 2, succeeded: 1, failed: 0, running: 0, waiting: 1, startTime: '2026-01-01T00:30:01Z' };
    const claimed = lease({ total: 2, claims: [{ pod: 'b', uid: 'uid-b', at: new Date(NOW.getTime() - 3000).toISOString() }] });
    const p = plan({ job: job({ replicas: 2 }, status), pods: [pod('a', 1, {}, true), noApp('u', 3)], lease: { ...claimed, unlisted: new Map([['b', null]]) } }, NOW);
    const s = statusOf(p.actions) as { phase: string; match: number; failed: number };
    assert.deepEqual([s.phase, s.match, s.failed], ['Succeeded', 1, 0]);
  });

  test('replicas 1, and the claimed pod got another job\'s container of that name: the next pod is claimed, not PodsGone (review)', () => {
    const theirs = pod('p', 1, { ephemeralContainers: [{ name: 'probe', env: [{ name: 'KRUISE_EJOB_ID', value: 'another-job' }] }] });
    const status = { phase: 'Waiting', match: 1, succeeded: 0, failed: 0, running: 0, waiting: 1, startTime: '2026-01-01T00:30:01Z' };
    const p = plan({ job: job({ replicas: 1 }, status), pods: [theirs, pod('q', 2)], lease: lease({ total: 1, claims: [{ pod: 'p', uid: 'uid-p', at: new Date(NOW.getTime() - 2000).toISOString() }] }) }, NOW);
    assert.deepEqual(injected(p.actions), ['q']);
    const record = recordOf(p.actions[0]);
    assert.deepEqual([record.total, record.claims.map((c) => c.pod), record.finished], [1, ['q'], undefined]);
  });

  test('the note the seal records stays within the record\'s schema, however long the names (review)', () => {
    const long = 'v'.repeat(2000);
    const tpl = { ...probe, volumeMounts: [{ name: long, mountPath: '/v' }] };
    const p = plan({ job: job({ template: { ephemeralContainers: [tpl] } }), pods: [pod('a', 1)], lease: lease() }, NOW);
    const record = recordOf(p.actions[0]);
    assert.equal(record.verdict?.phase, 'Failed');
    assert.ok(LeaseRecord.safeParse(record).success, 'readable again: else the sealed record is "unreadable" and never cleaned up');
  });

  test('a job whose every pod is unfit fails at once instead of waiting', () => {
    const p = plan({ job: job(), pods: [noApp('a', 1), noApp('b', 2)], lease: lease() }, NOW);
    assert.deepEqual(injected(p.actions), []);
    assert.equal((statusOf(p.actions) as { phase?: string }).phase, 'Failed');
    assert.equal(recordOf(p.actions[0]).finished, true);
  });
});
