// The EphemeralJob reconciler skips zod for LIST items that plainly fit the Pod schema
// (functions/api/pod-shape.ts). Properties: for any raw pod, well-formed or not, the shortcut
// gives exactly what zod gives (same success, same pod deep-equal, same error); it is taken
// for every pod zod accepts (but for `__proto__` keys); and the planner decides the same from
// pods read either way, for random jobs.
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseEjobSpec, type EphemeralJobObject } from '../../functions/api/ephemeraljob.ts';
import { Pod } from '../../functions/api/pod.ts';
import { deepFreeze } from '../../functions/api/frozen.ts';
import { parsePod, plainPod } from '../../functions/api/pod-shape.ts';
import { leaseNeeded } from '../../functions/ejob/lease-needed.ts';
import { DEFAULT_LEASE, plan } from '../../functions/ejob/planner.ts';
import { withSafeKeys } from '../support/json-key-bug.ts';

/** Usually `good`, sometimes absent, sometimes any JSON value (the wrong type, mostly). */
function field<T>(good: fc.Arbitrary<T>, odd = 1): fc.Arbitrary<T | fc.JsonValue | undefined> {
  return fc.oneof({ arbitrary: good, weight: 16 }, { arbitrary: fc.constant(undefined), weight: 2 }, { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: odd });
}

/** As a LIST answer gives it: JSON text parsed (own `__proto__` keys stay plain data). */
const wire = (v: unknown): unknown => JSON.parse(JSON.stringify(v) ?? 'null');

const str = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('', 'Always', '__proto__', 'constructor', 'KRUISE_EJOB_ID', 'job-uid', 'ec', 'x', 'Running', 'Succeeded'));
const time = fc.constantFrom('2026-01-01T00:00:00Z', '2026-01-01T01:00:05Z', 'x', '');
/** Fields the schema does not declare, which must pass through untouched. */
const extras = fc.dictionary(fc.constantFrom('resources', 'ports', 'volumeMounts', 'securityContext', 'qosClass', 'podIP', 'hostIP', '__proto__', 'constructor', 'zz'), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 2 });
const withExtras = <T extends object>(a: fc.Arbitrary<T>): fc.Arbitrary<T> => fc.tuple(a, extras).map(([x, e]) => ({ ...e, ...x }));

const envVar = withExtras(fc.record({ name: field(str), value: field(str), valueFrom: field(fc.constant({ fieldRef: { fieldPath: 'x' } })) }, { requiredKeys: [] }));
const container = withExtras(fc.record({ name: field(str), image: field(str), env: field(fc.array(field(envVar), { maxLength: 3 })), restartPolicy: field(str), targetContainerName: field(str) }, { requiredKeys: [] }));
const containers = field(fc.array(field(container), { maxLength: 3 }));
const state = withExtras(fc.record({
  waiting: field(fc.record({ reason: field(str), message: field(str) }, { requiredKeys: [] })),
  running: field(fc.record({ startedAt: field(time) }, { requiredKeys: [] })),
  terminated: field(fc.record({ exitCode: field(fc.integer({ min: -2, max: 255 })), signal: field(fc.nat()), reason: field(str), message: field(str), startedAt: field(time), finishedAt: field(time) }, { requiredKeys: [] })),
}, { requiredKeys: [] }));
const status1 = withExtras(fc.record({ name: field(str), state: field(state), lastState: field(state), restartCount: field(fc.nat()), image: field(str), ready: field(fc.boolean()), started: field(fc.boolean()) }, { requiredKeys: [] }));
const statuses = field(fc.array(field(status1), { maxLength: 3 }));
const stringMap = field(fc.dictionary(str, field(str), { maxKeys: 3 }));
const ownerRef = fc.record({ apiVersion: field(str), kind: field(str), name: field(str), uid: field(str), controller: field(fc.boolean()), blockOwnerDeletion: field(fc.boolean()) }, { requiredKeys: [] });
const metadata = withExtras(fc.record({
  name: field(str), namespace: field(str), uid: field(str), resourceVersion: field(str), generation: field(fc.integer()), labels: stringMap, annotations: stringMap,
  creationTimestamp: field(time), deletionTimestamp: field(time), finalizers: field(fc.array(field(str), { maxLength: 2 })), ownerReferences: field(fc.array(field(ownerRef), { maxLength: 2 })),
}, { requiredKeys: [] }));
const spec = withExtras(fc.record({ nodeName: field(str), restartPolicy: field(str), shareProcessNamespace: field(fc.boolean()), hostPID: field(fc.boolean()), containers, initContainers: containers, ephemeralContainers: containers, volumes: field(fc.array(field(withExtras(fc.record({ name: field(str) }, { requiredKeys: [] }))), { maxLength: 2 })) }, { requiredKeys: [] }));
const condition = fc.record({ type: field(str), status: field(str), lastTransitionTime: field(time) }, { requiredKeys: [] });
const status = withExtras(fc.record({ phase: field(str), reason: field(str), conditions: field(fc.array(field(condition), { maxLength: 2 })), containerStatuses: statuses, initContainerStatuses: statuses, ephemeralContainerStatuses: statuses }, { requiredKeys: [] }));
const podLike = withExtras(fc.record({ apiVersion: field(fc.constant('v1')), kind: field(fc.constant('Pod')), metadata: field(metadata), spec: field(spec), status: field(status) }, { requiredKeys: [] }));

// Well-formed pods (every declared field of its type, optional ones present or not), then
// at most one value anywhere in them replaced by any JSON value: a fault zod must name, or
// one it lets through, alone among good fields, so each check of the shortcut is exercised.
const maybe = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(a, { nil: undefined, freq: 3 });
const goodState = fc.record({
  waiting: maybe(fc.record({ reason: maybe(str), message: maybe(str) })),
  running: maybe(fc.record({ startedAt: maybe(time) })),
  terminated: maybe(fc.record({ exitCode: fc.integer({ min: -1, max: 255 }), reason: maybe(str), message: maybe(str), startedAt: maybe(time), finishedAt: maybe(time) })),
});
const goodStatus = fc.record({ name: str, state: maybe(goodState), lastState: maybe(goodState), restartCount: maybe(fc.nat()), image: maybe(str), ready: maybe(fc.boolean()) });
const goodContainer = fc.record({ name: str, image: maybe(str), env: maybe(fc.array(fc.record({ name: str, value: maybe(str) }), { maxLength: 2 })), restartPolicy: maybe(str), targetContainerName: maybe(str) });
const goodPod = withExtras(fc.record({
  apiVersion: maybe(fc.constant('v1')),
  kind: maybe(fc.constant('Pod')),
  metadata: fc.record({
    name: fc.string({ minLength: 1, maxLength: 6 }), namespace: maybe(str), uid: maybe(str), resourceVersion: maybe(str), generation: maybe(fc.integer()),
    creationTimestamp: maybe(time), deletionTimestamp: maybe(time), labels: maybe(fc.dictionary(str, str, { maxKeys: 2 })), annotations: maybe(fc.dictionary(str, str, { maxKeys: 2 })),
    finalizers: maybe(fc.array(str, { maxLength: 2 })), ownerReferences: maybe(fc.array(fc.record({ apiVersion: str, kind: str, name: str, uid: str, controller: maybe(fc.boolean()), blockOwnerDeletion: maybe(fc.boolean()) }), { maxLength: 1 })),
  }),
  spec: fc.record({ nodeName: maybe(str), restartPolicy: maybe(str), shareProcessNamespace: maybe(fc.boolean()), hostPID: maybe(fc.boolean()), containers: fc.array(goodContainer, { maxLength: 2 }), initContainers: maybe(fc.array(goodContainer, { maxLength: 1 })), ephemeralContainers: maybe(fc.array(goodContainer, { maxLength: 2 })), volumes: maybe(fc.array(fc.record({ name: str, emptyDir: maybe(fc.constant({})) }), { maxLength: 2 })) }),
  status: maybe(fc.record({ phase: maybe(str), reason: maybe(str), conditions: maybe(fc.array(fc.record({ type: str, status: str }), { maxLength: 1 })), containerStatuses: maybe(fc.array(goodStatus, { maxLength: 2 })), initContainerStatuses: maybe(fc.array(goodStatus, { maxLength: 1 })), ephemeralContainerStatuses: maybe(fc.array(goodStatus, { maxLength: 2 })) })),
}));

/** Every path to a value inside a JSON object. */
function paths(v: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (typeof v !== 'object' || v === null) return [at];
  const keys: (string | number)[] = Array.isArray(v) ? v.map((_, i) => i) : Object.keys(v);
  return [at, ...keys.flatMap((k) => paths((v as Record<string | number, unknown>)[k], [...at, k]))];
}

/** The pod with the value at one of its paths replaced (or that key removed, when `value` is undefined). */
function corrupt(pod: unknown, pick: number, value: unknown): unknown {
  const raw = wire(pod) as Record<string | number, unknown>;
  const all = paths(raw).filter((p) => p.length > 0);
  const path = all[pick % Math.max(1, all.length)];
  if (!path) return raw;
  let parent = raw;
  for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
  const last = path.at(-1) as string | number;
  if (value === undefined && !Array.isArray(parent)) delete parent[last];
  else parent[last] = value;
  return raw;
}

const damaged = fc.tuple(goodPod, fc.nat(), fc.option(fc.jsonValue({ maxDepth: 1 }), { nil: undefined, freq: 5 }), fc.boolean()).map(([pod, pick, value, clean]) => (clean ? pod : corrupt(pod, pick, value)));

test('the zod shortcut gives exactly what zod gives, for well-formed and broken pods alike, and is taken for every pod zod accepts', () => {
  // Parsed twice below (raw, kept): keys per test/support/json-key-bug.ts (review).
  fc.assert(fc.property(withSafeKeys(fc.oneof({ arbitrary: damaged, weight: 6 }, { arbitrary: podLike, weight: 3 }, { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 1 })), (gen) => {
    const raw = wire(gen);
    const zod = Pod.safeParse(raw);
    assert.deepStrictEqual(parsePod(raw), zod);
    // A LIST item the client keeps between answers (frozen; its check remembered): the same
    // answer the first time and the second.
    const kept = deepFreeze(wire(gen));
    assert.deepStrictEqual(parsePod(kept), zod);
    assert.deepStrictEqual(parsePod(kept), zod);
    if (plainPod(raw)) {
      assert.ok(zod.success, 'a yes of the shortcut is a yes of zod');
      assert.deepStrictEqual(raw, zod.data, 'and the pod is the one zod gives');
    } else if (!JSON.stringify(raw)?.includes('"__proto__":')) assert.equal(zod.success, false, 'the shortcut refused a pod zod accepts');
  }), { numRuns: 6000 });
});

test('well-formed pods take the shortcut: a LIST item as the API server sends it', () => {
  const item = {
    metadata: { name: 'web-1', namespace: 'default', uid: 'u1', resourceVersion: '7', creationTimestamp: '2026-01-01T00:00:00Z', labels: { app: 'web' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs', controller: true, blockOwnerDeletion: true }] },
    spec: { nodeName: 'n1', restartPolicy: 'Always', containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '100m' } }, ports: [{ containerPort: 80 }] }], ephemeralContainers: [{ name: 'ec', image: 'busybox', env: [{ name: 'KRUISE_EJOB_ID', value: 'j' }] }] },
    status: { phase: 'Running', podIP: '10.0.0.1', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'app', ready: true, restartCount: 0, image: 'nginx', state: { running: { startedAt: '2026-01-01T00:00:01Z' } } }], ephemeralContainerStatuses: [{ name: 'ec', state: { terminated: { exitCode: 0, reason: 'Completed' } } }] },
  };
  assert.ok(plainPod(item));
  assert.equal(parsePod(item).data, item, 'taken as it is, not copied');
});

test("a broken pod still goes through zod, whose error names the field", () => {
  const r = parsePod(wire({ metadata: { name: 'p' }, spec: { containers: [{ name: 'c', env: [{ name: 3 }] }] } }));
  assert.equal(r.success, false);
  assert.match(JSON.stringify(r.error?.issues), /"path":\["spec","containers",0,"env",0,"name"\]/);
});

// The planner, fed the pods of a LIST read either way: the same plan, the same Lease need.
const UID = 'job-uid';
const NOW = new Date('2026-01-01T01:00:00Z');
const jobArb = fc.record({
  parallelism: fc.option(fc.integer({ min: 0, max: 10 }), { nil: undefined }),
  replicas: fc.option(fc.integer({ min: 0, max: 8 }), { nil: undefined }),
  paused: fc.boolean(),
  deadline: fc.option(fc.integer({ min: 1, max: 7200 }), { nil: undefined }),
  twoContainers: fc.boolean(),
  status: fc.option(fc.record({ phase: fc.constantFrom('Waiting', 'Running'), match: fc.nat(6), running: fc.nat(3), waiting: fc.nat(3), succeeded: fc.nat(3), failed: fc.nat(3) }), { nil: undefined }),
}).map((j): EphemeralJobObject => ({
  metadata: { name: 'j', namespace: 'ns', uid: UID, generation: 1, resourceVersion: '5', creationTimestamp: '2026-01-01T00:30:00Z' },
  spec: {
    selector: { matchLabels: { app: 'x' } },
    template: { ephemeralContainers: (j.twoContainers ? ['ec', 'ec2'] : ['ec']).map((name) => ({ name, image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'main' })) },
    ...(j.parallelism !== undefined ? { parallelism: j.parallelism } : {}),
    ...(j.replicas !== undefined ? { replicas: j.replicas } : {}),
    ...(j.paused ? { paused: true } : {}),
    ...(j.deadline !== undefined ? { activeDeadlineSeconds: j.deadline } : {}),
  },
  ...(j.status ? { status: { ...j.status, startTime: '2026-01-01T00:31:00Z' } } : {}),
}));

/** A pod of the kind the planner meets: fresh, or holding the job's (or another job's) containers in any state; with server-side extras; now and then one field broken. */
const ecState = fc.constantFrom<unknown>(undefined, { waiting: { reason: 'ContainerCreating' } }, { waiting: { reason: 'InvalidImageName' } }, { running: { startedAt: '2026-01-01T00:59:55Z' } }, { running: {} }, { terminated: { exitCode: 0, reason: 'Completed' } }, { terminated: { exitCode: 1 } });
const plannerPod = fc.record({
  owner: fc.constantFrom('fresh', 'ours', 'ours', 'other', 'other-name'),
  names: fc.constantFrom(['ec'], ['ec', 'ec2']),
  states: fc.array(ecState, { minLength: 2, maxLength: 2 }),
  phase: fc.constantFrom('Running', 'Running', 'Running', 'Pending', 'Succeeded', 'Failed'),
  deleting: fc.nat(4).map((n) => n === 0),
  matches: fc.nat(9).map((n) => n > 0),
  created: fc.nat(5),
  extra: extras,
  broken: fc.option(fc.tuple(fc.constantFrom('metadata', 'spec', 'status', 'containers', 'ephemeralContainers', 'statuses', 'labels', 'name', 'creationTimestamp'), fc.jsonValue({ maxDepth: 1 })), { freq: 6, nil: undefined }),
});

type PlannerPod = typeof plannerPod extends fc.Arbitrary<infer T> ? T : never;

function rawPod(i: number, p: PlannerPod): unknown {
  const uid = p.owner === 'ours' ? UID : 'other-uid';
  const names = p.owner === 'other-name' ? ['theirs'] : p.names;
  const ecs = p.owner === 'fresh' ? undefined : names.map((name) => ({ name, image: 'busybox', env: [{ name: 'KRUISE_EJOB_ID', value: uid }], targetContainerName: 'main' }));
  const ecStatuses = ecs?.flatMap((c, j) => (p.states[j] === undefined ? [] : [{ name: c.name, state: p.states[j] }]));
  const pod: Record<string, any> = { // eslint-disable-line @typescript-eslint/no-explicit-any -- a raw object to break on purpose
    ...p.extra,
    metadata: { name: `p${i}`, namespace: 'ns', uid: `u${i}`, resourceVersion: String(100 + i), labels: { app: p.matches ? 'x' : 'y' }, creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, p.created)).toISOString(), ...(p.deleting ? { deletionTimestamp: '2026-01-01T00:59:00Z' } : {}) },
    spec: { nodeName: 'n1', restartPolicy: 'Always', containers: [{ name: 'main', image: 'nginx', resources: {} }], ...(ecs ? { ephemeralContainers: ecs } : {}) },
    status: { phase: p.phase, podIP: '10.0.0.1', containerStatuses: [{ name: 'main', ready: true, restartCount: 0, state: { running: { startedAt: '2026-01-01T00:00:00Z' } } }], ...(ecStatuses ? { ephemeralContainerStatuses: ecStatuses } : {}) },
  };
  if (p.broken) {
    const [where, value] = p.broken;
    if (where === 'metadata' || where === 'spec' || where === 'status') pod[where] = value;
    else if (where === 'containers' || where === 'ephemeralContainers') pod.spec[where] = value;
    else if (where === 'statuses') pod.status.ephemeralContainerStatuses = value;
    else pod.metadata[where] = value;
  }
  return wire(pod);
}

test('the planner decides the same from pods read through the shortcut as through zod (random jobs and LISTs)', () => {
  fc.assert(fc.property(jobArb, fc.array(plannerPod, { maxLength: 7 }), fc.constantFrom('absent', 'not-read'), fc.integer({ min: -30, max: 7200 }), (job, specs, view, later) => {
    const items = specs.map((p, i) => rawPod(i, p));
    // As the observation reads a LIST: the pods that parse, the others skipped (and named in its notes).
    const viaZod = items.map((x) => Pod.safeParse(x)).flatMap((r) => (r.success ? [r.data] : []));
    const viaShortcut = items.map((x) => parsePod(x)).flatMap((r) => (r.success ? [r.data] : []));
    assert.deepStrictEqual(viaShortcut, viaZod);
    const now = new Date(NOW.getTime() + later * 1000);
    const lease = { view: { kind: view } as { kind: 'absent' } | { kind: 'not-read' }, serverNow: now, cfg: { ...DEFAULT_LEASE, name: 'ejob-ns-j', key: 'EphemeralJob/ns/j' } };
    assert.deepStrictEqual(plan({ job, pods: viaShortcut, lease }, now), plan({ job, pods: viaZod, lease }, now));
    const parsed = parseEjobSpec(job.spec);
    if (parsed.ok) assert.deepStrictEqual(leaseNeeded(job, parsed.spec, viaShortcut, now), leaseNeeded(job, parsed.spec, viaZod, now));
  }), { numRuns: 1500 });
});
