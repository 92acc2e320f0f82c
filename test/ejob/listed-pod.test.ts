// An EphemeralJob's reconcile keeps only what its planner reads of each listed pod
// (functions/ejob/listed-pod.ts, review82 H2). Properties, over random jobs, pods as the API
// server returns them (every field the planner does not read present too, and now and then
// one field broken), Lease views with claims, sealed verdicts, failures already told and
// claimed pods the LIST does not show, and clocks: the planner, and every question the
// observation asks of the pods, decide exactly the same from the trimmed pods as from the
// whole ones; and a pod the schema refuses is skipped with the very warning it had before.
// Then a whole job against the embedded API server, observed both ways at every step.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { parseEjobSpec, type EphemeralJobObject } from '../../functions/api/ephemeraljob.ts';
import { formatZodIssues } from '../../functions/api/field-path.ts';
import { isDeepFrozen } from '../../functions/api/frozen.ts';
import { Pod } from '../../functions/api/pod.ts';
import { parsePod } from '../../functions/api/pod-shape.ts';
import { listBeforeLeaseStands } from '../../functions/ejob/claims.ts';
import { leaseNeeded } from '../../functions/ejob/lease-needed.ts';
import type { LeaseRecord, LeaseView } from '../../functions/ejob/lease-record.ts';
import { LISTED_POD_VIEW, trimListedPod } from '../../functions/ejob/listed-pod.ts';
import { DEFAULT_LEASE, mayTellFailures, plan, POD_FAILED_REASON, type EjobObserved, type ObservedLease } from '../../functions/ejob/planner.ts';
import { holdsSlot, podState, slotHolders, unfitReason } from '../../functions/ejob/pod-state.ts';
import type { Action } from '../../functions/engine/plan.ts';
import { handle } from '../../functions/engine/engine.ts';
import { ejobController, jobKey } from '../../functions/ejob/controller.ts';
import type { ListedPod } from '../../functions/ejob/listed-pod.ts';
import type { ItemView, Kube, ListOptions } from '../../functions/kube/kube.ts';
import { realisticPod } from '../bench/pods.ts';
import { envelopeFor, finish, inFlight, injected, inWorld, jobStatus } from '../support/ejob-world.ts';

const UID = 'job-uid';
const BASE = Date.parse('2026-01-01T01:00:00Z');
const cfg = { ...DEFAULT_LEASE, name: 'ejob-ns-j', key: 'EphemeralJob/ns/j' };
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** An ephemeral container's state, with the fields the kubelet writes (times, messages, ids). */
const ecState: fc.Arbitrary<Record<string, unknown> | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.record({ reason: fc.constantFrom('ContainerCreating', 'ImagePullBackOff', 'CreateContainerError', 'InvalidImageName', 'RunContainerError'), message: fc.option(fc.constantFrom('pulling', 'exec: "pidof": executable file not found in $PATH', 'x'.repeat(300)), { nil: undefined }) }).map((waiting) => ({ waiting })),
  fc.option(fc.integer({ min: 0, max: 3000 }), { nil: undefined }).map((ago) => ({ running: ago === undefined ? {} : { startedAt: iso(BASE - ago * 1000) } })),
  fc.record({
    exitCode: fc.constantFrom(0, 0, 1, 2, 137),
    reason: fc.option(fc.constantFrom('Completed', 'Error', 'OOMKilled'), { nil: undefined }),
    message: fc.option(fc.constantFrom('ok', 'check failed: disk 97% full', 'é€😀 "quoted"\n'), { nil: undefined }),
    finishedAgo: fc.option(fc.integer({ min: -5, max: 7200 }), { nil: undefined }),
  }).map((t) => ({ terminated: { exitCode: t.exitCode, signal: 0, startedAt: iso(BASE - 9_000_000), containerID: 'containerd://abc', ...(t.reason ? { reason: t.reason } : {}), ...(t.message ? { message: t.message } : {}), ...(t.finishedAgo !== undefined ? { finishedAt: iso(BASE - t.finishedAgo * 1000) } : {}) } })),
);

interface PodSpec {
  owner: 'fresh' | 'ours' | 'other-same-name' | 'other-own-name' | 'ours-by-valueFrom';
  /** Why the template might not fit: a container or init container named like it, no `main` to target (or only an init container), no `data` volume, a static pod's mirror. */
  fit: 'fits' | 'name-taken' | 'init-name-taken' | 'no-target' | 'target-is-init' | 'no-volume' | 'mirror';
  states: (Record<string, unknown> | undefined)[];
  inactive: 'no' | 'Succeeded' | 'Failed' | 'deleting';
  matches: boolean;
  created: number | undefined;
  annotations: Record<string, string>;
  broken: [string, unknown] | undefined;
  /** The source of the pod's `blk` volume (a template device needs a PVC or an ephemeral one), and spec.hostUsers (procMount Unmasked needs false). */
  blk: 'none' | 'pvc' | 'ephemeral' | 'emptyDir' | 'pvc-null';
  hostUsers: boolean | undefined;
  /** spec.os.name (the OS rules apply only when it is set), and how the pod is a Windows HostProcess pod: by its securityContext, by each container's, not at all (false, null, unset). */
  os: 'linux' | 'windows' | undefined;
  hostProcess: 'none' | 'pod' | 'containers' | 'pod-false' | 'null';
}

const podArb: fc.Arbitrary<PodSpec> = fc.record({
  owner: fc.constantFrom<PodSpec['owner']>('fresh', 'fresh', 'ours', 'ours', 'ours', 'other-same-name', 'other-own-name', 'ours-by-valueFrom'),
  fit: fc.constantFrom<PodSpec['fit']>('fits', 'fits', 'fits', 'fits', 'name-taken', 'init-name-taken', 'no-target', 'target-is-init', 'no-volume', 'mirror'),
  states: fc.array(ecState, { minLength: 2, maxLength: 2 }),
  inactive: fc.constantFrom<PodSpec['inactive']>('no', 'no', 'no', 'no', 'Succeeded', 'Failed', 'deleting'),
  matches: fc.nat(9).map((n) => n > 0),
  created: fc.option(fc.nat(5), { nil: undefined, freq: 8 }),
  annotations: fc.dictionary(fc.constantFrom('example.com/blob', 'kubectl.kubernetes.io/restartedAt', 'kubernetes.io/config.source', 'prometheus.io/scrape'), fc.string({ maxLength: 40 }), { maxKeys: 3 }),
  // One pod in 16 with a field broken (the schema refuses most of those).
  broken: fc.oneof({ arbitrary: fc.constant(undefined), weight: 15 }, { arbitrary: fc.tuple(fc.constantFrom('metadata', 'spec', 'status', 'containers', 'ephemeralContainers', 'statuses', 'labels', 'name', 'creationTimestamp', 'volumes', 'initContainers', 'containerStatuses', 'annotations', 'hostUsers', 'os', 'securityContext'), fc.jsonValue({ maxDepth: 1 })), weight: 1 }),
  blk: fc.constantFrom<PodSpec['blk']>('pvc', 'pvc', 'ephemeral', 'emptyDir', 'none', 'pvc-null'),
  hostUsers: fc.constantFrom(undefined, undefined, false, false, true),
  os: fc.constantFrom(undefined, undefined, 'linux', 'windows'),
  hostProcess: fc.constantFrom<PodSpec['hostProcess']>('none', 'none', 'none', 'pod', 'containers', 'pod-false', 'null'),
});

/** The pod's ephemeral containers (of this job, or another) and their statuses, as the kubelet reports them. */
function ephemeral(s: PodSpec, names: readonly string[]): { ephemeralContainers?: unknown[]; ephemeralContainerStatuses?: unknown[] } {
  const ecUid = s.owner === 'ours' || s.owner === 'ours-by-valueFrom' ? UID : 'other-uid';
  const ecNames = s.owner === 'other-own-name' ? ['theirs'] : names;
  if (s.owner === 'fresh') return {};
  const ecs = ecNames.map((name) => ({
    name, image: 'busybox:1.36', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'main', command: ['sh', '-c', 'true'],
    env: [{ name: 'CHECK', value: '1' }, s.owner === 'ours-by-valueFrom' ? { name: 'KRUISE_EJOB_ID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } } : { name: 'KRUISE_EJOB_ID', value: ecUid }],
    resources: {}, terminationMessagePath: '/dev/termination-log',
  }));
  const ecStatuses = ecs.flatMap((c, j) => {
    const state = s.states[j];
    return state === undefined ? [] : [{ name: c.name, state, lastState: {}, ready: false, restartCount: 0, image: 'docker.io/library/busybox:1.36', imageID: 'sha256:1', ...('terminated' in state ? { containerID: 'containerd://x' } : {}) }];
  });
  return { ephemeralContainers: ecs, ephemeralContainerStatuses: ecStatuses };
}

/** The pod with one field replaced by any JSON value (most of which the schema refuses). */
function broken(pod: Record<string, any>, [where, value]: [string, unknown]): void { // eslint-disable-line @typescript-eslint/no-explicit-any -- a raw object, broken on purpose
  if (where === 'metadata' || where === 'spec' || where === 'status') pod[where] = value;
  else if (['containers', 'ephemeralContainers', 'volumes', 'initContainers', 'hostUsers', 'os', 'securityContext'].includes(where)) pod.spec[where] = value;
  else if (where === 'statuses') pod.status.ephemeralContainerStatuses = value;
  else if (where === 'containerStatuses') pod.status.containerStatuses = value;
  else pod.metadata[where] = value;
}

/** The pod's spec.os, hostNetwork and securityContext by `s`; each container's own hostProcess (written into `containers`) when the pod is HostProcess by them. */
function windowsFields(s: PodSpec, containers: Record<string, unknown>[]): Record<string, unknown> {
  const hostProcess = (v: unknown): Record<string, unknown> => ({ windowsOptions: { hostProcess: v, runAsUserName: 'NT AUTHORITY\\SYSTEM' } });
  if (s.hostProcess === 'containers' || s.hostProcess === 'null') for (const c of containers) c.securityContext = hostProcess(s.hostProcess === 'null' ? null : true);
  const pod = { pod: hostProcess(true), 'pod-false': hostProcess(false), null: hostProcess(null), none: undefined, containers: undefined }[s.hostProcess];
  return {
    ...(s.os ? { os: { name: s.os } } : {}),
    securityContext: { runAsNonRoot: true, ...pod },
    ...(s.hostProcess === 'pod' || s.hostProcess === 'containers' ? { hostNetwork: true } : {}),
  };
}

/** A pod as kube-apiserver returns it: managedFields, probes, resources, owner, conditions and the rest, around what the planner reads. */
function rawPod(i: number, s: PodSpec, names: readonly string[]): unknown {
  const { ephemeralContainers: ecs, ephemeralContainerStatuses: ecStatuses } = ephemeral(s, names);
  const main = s.fit === 'no-target' || s.fit === 'target-is-init' ? 'app' : 'main';
  const containers = [
    { name: main, image: 'registry.example.com/shop/web:1.42.3', ports: [{ containerPort: 8080, protocol: 'TCP' }], env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }], resources: { requests: { cpu: '250m' } }, volumeMounts: [{ name: 'config', mountPath: '/etc/app' }], livenessProbe: { httpGet: { path: '/healthz', port: 8080 } } },
    { name: s.fit === 'name-taken' ? 'ec' : 'log-shipper', image: 'fluent-bit:2', resources: {} },
  ];
  const initContainers = [{ name: s.fit === 'target-is-init' ? 'main' : s.fit === 'init-name-taken' ? 'ec' : 'migrate', image: 'init:1', restartPolicy: 'Always' }];
  const blk = { none: [], pvc: [{ name: 'blk', persistentVolumeClaim: { claimName: `blk-${i}`, readOnly: false } }], ephemeral: [{ name: 'blk', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], volumeMode: 'Block', resources: { requests: { storage: '1Gi' } } } } } }], emptyDir: [{ name: 'blk', emptyDir: {} }], 'pvc-null': [{ name: 'blk', persistentVolumeClaim: null, hostPath: { path: '/dev/sdb' } }] }[s.blk];
  const volumes = [{ name: 'config', configMap: { name: 'web' } }, ...(s.fit === 'no-volume' ? [] : [{ name: 'data', emptyDir: {} }]), ...blk, { name: `kube-api-access-${i}`, projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }];
  const annotations = { ...s.annotations, ...(s.fit === 'mirror' ? { 'kubernetes.io/config.mirror': 'abc123' } : {}) };
  const windows = windowsFields(s, [...containers, ...initContainers, ...((ecs ?? []) as Record<string, unknown>[])]);
  const pod: Record<string, any> = { // eslint-disable-line @typescript-eslint/no-explicit-any -- a raw object, maybe broken below
    metadata: {
      name: `p${i}`, generateName: 'p', namespace: 'ns', uid: `u${i}`, resourceVersion: String(100 + i),
      ...(s.created !== undefined ? { creationTimestamp: iso(Date.UTC(2026, 0, 1, 0, 0, s.created)) } : {}),
      labels: { app: s.matches ? 'x' : 'y', 'pod-template-hash': '7d9c' },
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d9c', uid: 'rs-uid', controller: true, blockOwnerDeletion: true }],
      ...(s.inactive === 'deleting' ? { deletionTimestamp: '2026-01-01T00:59:00Z', deletionGracePeriodSeconds: 30 } : {}),
      managedFields: [{ manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'v1', time: '2026-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': {} } } }],
    },
    spec: {
      nodeName: `node-${i % 3}`, restartPolicy: 'Always', serviceAccountName: 'default', dnsPolicy: 'ClusterFirst', shareProcessNamespace: i % 2 === 0,
      containers, initContainers, volumes, ...(ecs ? { ephemeralContainers: ecs } : {}), ...(s.hostUsers === undefined ? {} : { hostUsers: s.hostUsers }), ...windows,
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
    },
    status: {
      phase: s.inactive === 'Succeeded' || s.inactive === 'Failed' ? s.inactive : 'Running', qosClass: 'Burstable', podIP: `10.1.0.${i}`, hostIP: '10.0.0.1', startTime: '2026-01-01T00:00:01Z',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:11Z' }],
      containerStatuses: containers.map((c) => ({ name: c.name, ready: true, restartCount: 0, image: c.image, imageID: 'sha256:2', state: { running: { startedAt: '2026-01-01T00:00:05Z' } } })),
      initContainerStatuses: initContainers.map((c) => ({ name: c.name, ready: true, restartCount: 0, image: c.image, state: { terminated: { exitCode: 0, reason: 'Completed' } } })),
      ...(ecStatuses ? { ephemeralContainerStatuses: ecStatuses } : {}),
    },
  };
  if (s.broken) broken(pod, s.broken);
  // As the LIST answer gives it: JSON text, parsed.
  return JSON.parse(JSON.stringify(pod));
}

interface JobSpec {
  parallelism: number | undefined;
  replicas: number | undefined;
  paused: boolean;
  deadline: number | undefined;
  twoContainers: boolean;
  mountsData: boolean;
  /** The second container (or the first, alone) has a block device on `blk`, procMount Unmasked, and Windows or Linux security fields. */
  device: boolean;
  unmasked: boolean;
  windows: 'none' | 'windowsOptions' | 'hostProcess' | 'hostProcess-false' | 'linuxOnly';
  status: undefined | { phase: string; match: number; succeeded: number; failed: number; running: number; waiting: number };
}

const jobArb: fc.Arbitrary<JobSpec> = fc.record({
  parallelism: fc.option(fc.integer({ min: 0, max: 10 }), { nil: undefined }),
  replicas: fc.option(fc.integer({ min: 0, max: 8 }), { nil: undefined }),
  paused: fc.nat(5).map((n) => n === 0),
  deadline: fc.option(fc.integer({ min: 1, max: 7200 }), { nil: undefined }),
  twoContainers: fc.boolean(),
  mountsData: fc.nat(3).map((n) => n === 0),
  device: fc.nat(3).map((n) => n === 0),
  unmasked: fc.nat(3).map((n) => n === 0),
  windows: fc.constantFrom<JobSpec['windows']>('none', 'none', 'windowsOptions', 'hostProcess', 'hostProcess-false', 'linuxOnly'),
  status: fc.option(fc.record({ phase: fc.constantFrom('Waiting', 'Running', 'Paused'), match: fc.nat(8), succeeded: fc.nat(4), failed: fc.nat(4), running: fc.nat(4), waiting: fc.nat(4) }), { nil: undefined }),
});

function securityOf(j: JobSpec): Record<string, unknown> {
  const windows = {
    none: {},
    windowsOptions: { windowsOptions: { runAsUserName: 'ContainerUser' } },
    hostProcess: { windowsOptions: { hostProcess: true } },
    'hostProcess-false': { windowsOptions: { hostProcess: false } },
    linuxOnly: { capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } },
  }[j.windows];
  return { ...(j.unmasked ? { procMount: 'Unmasked' } : {}), ...windows };
}

function makeJob(j: JobSpec): EphemeralJobObject {
  const container = (name: string): Record<string, unknown> => ({
    name, image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'main',
    ...(j.mountsData ? { volumeMounts: [{ name: 'data', mountPath: '/data' }] } : {}),
    ...(j.device && name === 'ec2' === j.twoContainers ? { volumeDevices: [{ name: 'blk', devicePath: '/dev/blk' }] } : {}),
    ...(name === 'ec2' === j.twoContainers ? { securityContext: securityOf(j) } : {}),
  });
  return {
    metadata: { name: 'j', namespace: 'ns', uid: UID, generation: 1, resourceVersion: '5', creationTimestamp: '2026-01-01T00:30:00Z' },
    spec: {
      selector: { matchLabels: { app: 'x' } },
      template: { ephemeralContainers: (j.twoContainers ? ['ec', 'ec2'] : ['ec']).map(container) },
      ...(j.parallelism !== undefined ? { parallelism: j.parallelism } : {}),
      ...(j.replicas !== undefined ? { replicas: j.replicas } : {}),
      ...(j.paused ? { paused: true } : {}),
      ...(j.deadline !== undefined ? { activeDeadlineSeconds: j.deadline } : {}),
    },
    ...(j.status ? { status: { ...j.status, startTime: '2026-01-01T00:31:00Z' } } : {}),
  };
}

/** Lease views: absent, not read, ours (claims on listed pods or on pods the LIST does not show, sealed with a verdict or not), unreadable. */
const viewArb: fc.Arbitrary<(now: number) => LeaseView> = fc.oneof(
  { arbitrary: fc.constant(() => ({ kind: 'absent' as const })), weight: 3 },
  fc.constant(() => ({ kind: 'not-read' as const })),
  fc.record({
    total: fc.nat(10),
    claims: fc.array(fc.record({ pod: fc.nat(11), sameUid: fc.nat(4).map((n) => n > 0), ago: fc.integer({ min: -5, max: 60 }), renewed: fc.boolean() }), { maxLength: 4 }),
    holdFor: fc.option(fc.integer({ min: -30, max: 30 }), { nil: undefined }),
    finished: fc.nat(3).map((n) => n === 0),
    verdict: fc.option(fc.record({ phase: fc.constantFrom<'Succeeded' | 'Failed'>('Succeeded', 'Failed'), match: fc.nat(6), succeeded: fc.nat(6), failed: fc.nat(6) }), { nil: undefined }),
    keptAgo: fc.option(fc.integer({ min: 0, max: 3600 }), { nil: undefined }),
    passed: fc.array(fc.nat(7), { maxLength: 2 }),
  }).map((r) => (now: number): LeaseView => {
    const record: LeaseRecord = {
      v: 1, job: UID, total: r.total,
      claims: r.claims.map((c) => ({ pod: `p${c.pod}`, uid: c.sameUid ? `u${c.pod}` : 'replaced', at: new Date(now - c.ago * 1000).toISOString(), ...(c.renewed ? { renewed: true as const } : {}) })),
      ...(r.holdFor !== undefined ? { holdUntil: new Date(now + r.holdFor * 1000).toISOString() } : {}),
      ...(r.finished ? { finished: true, ...(r.verdict ? { verdict: r.verdict } : {}) } : {}),
      ...(r.keptAgo !== undefined ? { keptSince: new Date(now - r.keptAgo * 1000).toISOString() } : {}),
      ...(r.passed.length > 0 ? { passed: r.passed.map((p) => ({ uid: `u${p}`, at: new Date(now - 100_000).toISOString() })) } : {}),
    };
    return { kind: 'ours', resourceVersion: '9', record };
  }),
  fc.record({ renewedAgo: fc.option(fc.nat(60), { nil: undefined }), otherJob: fc.boolean() }).map((r) => (now: number): LeaseView => ({
    kind: 'unreadable', resourceVersion: '9', why: 'does not parse', otherJob: r.otherJob, renewedAt: r.renewedAgo === undefined ? undefined : new Date(now - r.renewedAgo * 1000),
  })),
);

/** The pods of a LIST as listPods read them before (parsed whole), and as it reads them now (through the view). */
function bothWays(items: readonly unknown[]): { whole: readonly Pod[]; trimmed: readonly Pod[]; wholeWarnings: string[]; trimmedWarnings: string[] } {
  const whole: Pod[] = [];
  const wholeWarnings: string[] = [];
  for (const item of items) {
    const p = parsePod(item);
    if (p.success) whole.push(p.data);
    else wholeWarnings.push(`pod ${nameOf(item)} skipped: unreadable (${formatZodIssues(p.error.issues, '')})`);
  }
  const trimmed: Pod[] = [];
  const trimmedWarnings: string[] = [];
  for (const item of items.map((x) => LISTED_POD_VIEW.read(x))) {
    if ('pod' in item) trimmed.push(item.pod);
    else trimmedWarnings.push(item.unreadable);
  }
  return { whole: Object.freeze(whole), trimmed: Object.freeze(trimmed), wholeWarnings, trimmedWarnings };
}

/** controller.ts's nameOf, as listPods named an unreadable pod before. */
function nameOf(item: unknown): string {
  const m = (item as { metadata?: { name?: unknown } } | null)?.metadata;
  return typeof m?.name === 'string' ? m.name : '?';
}

const failureEventNames = (actions: readonly Action[]): string[] => actions.flatMap((a) => ((a.body as { reason?: unknown } | undefined)?.reason === POD_FAILED_REASON ? [a.name ?? ''] : []));

/** The kinds of pod the template cannot go into that a run met, and a HostProcess template that went into a HostProcess pod (the property's coverage). */
function countUnfit(seen: Record<'blockUnfit' | 'hostUsersUnfit' | 'osUnfit' | 'hostProcessUnfit' | 'hostProcessFits', number>, reasons: readonly string[], j: JobSpec): void {
  if (reasons.some((r) => r.includes('block device'))) seen.blockUnfit++;
  if (reasons.some((r) => r.includes('hostUsers: false'))) seen.hostUsersUnfit++;
  if (reasons.some((r) => r.includes('spec.os.name'))) seen.osUnfit++;
  if (reasons.some((r) => r.toLowerCase().includes('hostprocess'))) seen.hostProcessUnfit++;
  if (j.windows === 'hostProcess' && reasons.some((r) => r === '')) seen.hostProcessFits++;
}

describe('the pods an EphemeralJob reconcile keeps (listed-pod.ts)', () => {
  test('property: the planner, and every question the observation asks of the pods, decide exactly the same from trimmed pods as from whole ones', () => {
    const seen = { injections: 0, failuresTold: 0, unfit: 0, verdicts: 0, claimsKept: 0, unreadable: 0, unlisted: 0, mirror: 0, blockUnfit: 0, hostUsersUnfit: 0, osUnfit: 0, hostProcessUnfit: 0, hostProcessFits: 0 };
    fc.assert(fc.property(
      jobArb, fc.array(podArb, { maxLength: 8 }), viewArb,
      fc.record({ nowOffset: fc.integer({ min: 0, max: 7200 }), skew: fc.integer({ min: -5, max: 5 }), told: fc.nat(3), toldUnlisted: fc.nat(5).map((n) => n === 0), unlisted: fc.array(fc.tuple(fc.integer({ min: 8, max: 11 }), fc.option(podArb, { nil: null })), { maxLength: 2 }) }),
      (j, specs, viewAt, o) => {
        const now = BASE + o.nowOffset * 1000;
        const job = makeJob(j);
        const parsed = parseEjobSpec(job.spec);
        assert.ok(parsed.ok);
        const names = j.twoContainers ? ['ec', 'ec2'] : ['ec'];
        const items = specs.map((s, i) => rawPod(i, s, names));
        const { whole, trimmed, wholeWarnings, trimmedWarnings } = bothWays(items);
        assert.deepEqual(trimmedWarnings, wholeWarnings, 'a pod the schema refuses is named the same way');
        assert.equal(trimmed.length, whole.length);
        assert.ok(trimmed.every(isDeepFrozen), 'trimmed pods are frozen (the planner keeps what it works out beside them)');
        const serverNow = new Date(now + o.skew * 1000);
        const view = viewAt(serverNow.getTime());
        // Claimed pods the LIST does not show, as a GET found them (whole, as controller.ts reads them).
        const unlisted = new Map(o.unlisted.map(([i, s]) => [`p${i}`, s === null ? null : Pod.parse(rawPod(i, { ...s, broken: undefined }, names))]));
        const lease: ObservedLease = { view, serverNow, cfg, ...(unlisted.size > 0 && view.kind === 'ours' ? { unlisted } : {}) };
        const observed = (pods: readonly Pod[], told?: ReadonlySet<string>): EjobObserved => ({ job, pods, lease, ...(told ? { told } : {}), ...(o.toldUnlisted ? { toldUnlisted: true as const } : {}) });
        const at = new Date(now);
        const planWhole = plan(observed(whole), at);
        assert.deepStrictEqual(plan(observed(trimmed), at), planWhole);
        // With some of the job's failure Warnings told already (controller.ts withTold lists them).
        const failures = failureEventNames(planWhole.actions);
        const told = new Set([...failures.slice(0, o.told), 'some-other-event']);
        assert.deepStrictEqual(plan(observed(trimmed, told), at), plan(observed(whole, told), at));
        // The observation's own questions.
        assert.deepStrictEqual(leaseNeeded(job, parsed.spec, trimmed, at), leaseNeeded(job, parsed.spec, whole, at));
        assert.equal(mayTellFailures(job, parsed.spec, trimmed, at), mayTellFailures(job, parsed.spec, whole, at));
        if (view.kind !== 'not-read') assert.equal(listBeforeLeaseStands(view, serverNow, cfg, trimmed), listBeforeLeaseStands(view, serverNow, cfg, whole));
        assert.deepStrictEqual(slotHolders(trimmed, UID).map((p) => p.metadata.name), slotHolders(whole, UID).map((p) => p.metadata.name));
        assert.deepStrictEqual(trimmed.map((p) => [podState(p, UID), holdsSlot(p, UID)]), whole.map((p) => [podState(p, UID), holdsSlot(p, UID)]));
        if (planWhole.actions.some((a) => a.subresource === 'ephemeralcontainers')) seen.injections++;
        if (failures.length > 0) seen.failuresTold++;
        if ((planWhole.notes ?? []).some((n) => n.includes('containers cannot go into it'))) seen.unfit++;
        if (planWhole.actions.some((a) => /status: (Succeeded|Failed)/.test(a.reason ?? ''))) seen.verdicts++;
        if (view.kind === 'ours' && view.record.claims.length > 0) seen.claimsKept++;
        if (wholeWarnings.length > 0) seen.unreadable++;
        if (lease.unlisted) seen.unlisted++;
        if (specs.some((s) => s.fit === 'mirror' && s.matches && !s.broken)) seen.mirror++;
        countUnfit(seen, whole.map((p) => unfitReason(p, parsed.spec.template.ephemeralContainers) ?? ''), j);
      },
    ), { numRuns: Number(process.env.LP_RUNS ?? 3000) });
    // Not vacuous: each kind of decision was met often.
    if (process.env.EPHEMERA_DEBUG) console.log(seen);
    for (const [what, n] of Object.entries(seen)) assert.ok(n >= 20, `${what}: only ${n} runs`);
  });

  test('what is kept of a real pod: the fields the planner reads, nothing else', () => {
    const raw = rawPod(3, { owner: 'ours', fit: 'mirror', states: [{ terminated: { exitCode: 1, signal: 0, startedAt: '2026-01-01T00:00:00Z', containerID: 'c', reason: 'Error', message: 'disk full', finishedAt: '2026-01-01T00:10:00Z' } }, undefined], inactive: 'no', matches: true, created: 2, annotations: { 'example.com/blob': 'x'.repeat(40) }, broken: undefined, blk: 'ephemeral', hostUsers: false, os: 'windows', hostProcess: 'pod' }, ['ec']);
    const kept = LISTED_POD_VIEW.read(raw);
    assert.ok('pod' in kept);
    const hostProcess = { securityContext: { windowsOptions: { hostProcess: true } } };
    assert.deepStrictEqual(kept.pod, {
      metadata: { name: 'p3', namespace: 'ns', uid: 'u3', labels: { app: 'x', 'pod-template-hash': '7d9c' }, creationTimestamp: '2026-01-01T00:00:02Z', annotations: { 'kubernetes.io/config.mirror': 'abc123' } },
      spec: {
        containers: [{ name: 'main' }, { name: 'log-shipper' }],
        initContainers: [{ name: 'migrate' }],
        volumes: [{ name: 'config' }, { name: 'data' }, { name: 'blk', ephemeral: {} }, { name: 'kube-api-access-3' }],
        ephemeralContainers: [{ name: 'ec', env: [{ name: 'KRUISE_EJOB_ID', value: UID }] }],
        hostUsers: false,
        // spec.os.name and the pod's hostProcess: not hostNetwork, nor the rest of the securityContext and its windowsOptions.
        os: { name: 'windows' },
        ...hostProcess,
      },
      status: { phase: 'Running', ephemeralContainerStatuses: [{ name: 'ec', state: { terminated: { exitCode: 1, reason: 'Error', message: 'disk full', finishedAt: '2026-01-01T00:10:00Z' } } }] },
    });
    assert.deepStrictEqual(kept.pod, trimListedPod(Pod.parse(raw)));
    assert.ok(JSON.stringify(kept.pod).length * 4 < JSON.stringify(raw).length, 'a fraction of the pod');
    // A pod HostProcess by its containers: each container's hostProcess, init and ephemeral ones too.
    const byContainers = LISTED_POD_VIEW.read(rawPod(3, { owner: 'ours', fit: 'fits', states: [undefined, undefined], inactive: 'no', matches: true, created: 2, annotations: {}, broken: undefined, blk: 'none', hostUsers: undefined, os: undefined, hostProcess: 'containers' }, ['ec']));
    assert.ok('pod' in byContainers);
    const s = byContainers.pod.spec;
    assert.deepStrictEqual([s.containers, s.initContainers, s.ephemeralContainers, s.securityContext, s.os], [
      [{ name: 'main', ...hostProcess }, { name: 'log-shipper', ...hostProcess }], [{ name: 'migrate', ...hostProcess }], [{ name: 'ec', ...hostProcess, env: [{ name: 'KRUISE_EJOB_ID', value: UID }] }], undefined, undefined,
    ]);
  });
});

/** A Kube that reads the job's pods whole, as listPods did before review82 H2 (parsed, not trimmed). */
function wholePods(kube: Kube): Kube {
  const whole: ItemView<ListedPod> = {
    name: 'whole-pod',
    read: (raw) => {
      const p = parsePod(raw);
      return p.success ? { pod: p.data } : { unreadable: `pod ${nameOf(raw)} skipped: unreadable (${formatZodIssues(p.error.issues, '')})` };
    },
  };
  return {
    get: (ref) => kube.get(ref),
    list: <T>(apiVersion: string, kind: string, namespace: string | undefined, opts?: ListOptions & { view?: ItemView<T> }) => kube.list<T>(apiVersion, kind, namespace, opts?.view === (LISTED_POD_VIEW as unknown) ? { ...opts, view: whole as unknown as ItemView<T> } : opts),
    perform: (action) => kube.perform(action),
    serverNow: () => kube.serverNow(),
  };
}

test('a whole reconcile against the embedded API server, real-sized pods: the observation holds trimmed pods, and plans as from whole ones at every step of the job', async () => {
  const created = new Date('2026-01-01T00:00:00Z');
  const pods = Array.from({ length: 40 }, (_, i) => ({ apiVersion: 'v1', kind: 'Pod', ...realisticPod(i, { namespace: 'default', labels: { app: 'web' }, createdAt: created, container: 'app' }) }) as unknown as { metadata: { labels: Record<string, unknown> } });
  // One pod the schema refuses (a label that is not a string): skipped with its warning, either way.
  pods[5]!.metadata.labels.odd = 7;
  const job = {
    apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob',
    metadata: { name: 'probe', namespace: 'default', uid: 'job-uid', creationTimestamp: '2026-01-01T00:20:00Z' },
    spec: { selector: { matchLabels: { app: 'web' } }, parallelism: 4, replicas: 12, template: { ephemeralContainers: [{ name: 'probe', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'app', command: ['true'] }] } },
  };
  await inWorld({ objects: [...pods, job] }, async ({ server, deps }) => {
    const d = deps('a');
    const key = jobKey('default', 'probe');
    let steps = 0;
    for (let round = 0; round < 12 && !['Succeeded', 'Failed'].includes(String(jobStatus(server, 'probe').phase)); round++) {
      const trimmed = await ejobController.observe(key, d.kube, d.lock);
      const whole = await ejobController.observe(key, wholePods(d.kube), d.lock);
      assert.ok(trimmed?.readable && whole?.readable && !('departed' in trimmed) && !('departed' in whole));
      assert.deepEqual(trimmed.warnings, whole.warnings);
      assert.match(trimmed.warnings?.[0] ?? '', /pod web-7d9c8b6f5d-2222\w skipped: unreadable \(metadata\.labels\.odd/);
      const size = (ps: readonly Pod[]): number => JSON.stringify(ps).length;
      assert.ok(size(trimmed.pods) * 8 < size(whole.pods), `trimmed ${size(trimmed.pods)} bytes, whole ${size(whole.pods)}`);
      const now = d.clock();
      // The two observations were made a few ms apart: the server's time they read (claims are
      // dated by it) and how long before the Lease each LIST came back are not the pods'.
      const sameTime = trimmed.lease && whole.lease ? { ...trimmed, lease: { ...trimmed.lease, serverNow: whole.lease.serverNow } } : trimmed;
      const timeless = (p: ReturnType<typeof ejobController.plan>): unknown => ({ ...p, notes: p.notes?.map((n) => n.replace(/\d+ ms/, 'N ms')) });
      assert.deepStrictEqual(timeless(ejobController.plan(sameTime, now)), timeless(ejobController.plan(whole, now)));
      steps++;
      // On with the job: this instance acts, then the kubelet ends what it injected (every third pod fails).
      await handle(envelopeFor('EphemeralJob', 'default', 'probe'), d);
      for (const [n, name] of inFlight(server).entries()) finish(server, name, n % 3 === 0 ? 1 : 0);
    }
    assert.ok(steps >= 4, `${steps} steps`);
    assert.equal(Object.values(injected(server)).filter((c) => c.length > 0).length, 12, 'the job went through its replicas');
    assert.equal(jobStatus(server, 'probe').phase, 'Failed', 'every third pod failed');
  });
});
