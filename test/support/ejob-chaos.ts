// Random schedules against the EphemeralJob controller through real HTTP: several engine
// instances (each its own client and holder identity) get the same events in random order,
// duplicated, concurrently and late; instances crash between any two writes or stall after
// their claim until the claim window has passed; the API server answers 409/429/5xx or
// drops connections. After every step the invariants are checked from the server's state.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Pod } from '../../functions/api/pod.ts';
import type { ApiServer } from '../../functions/cluster/index.ts';
import { handle, type EngineDeps } from '../../functions/engine/engine.ts';
import type { Action } from '../../functions/engine/plan.ts';
import { CLAIMS_ANNOTATION } from '../../functions/ejob/lease-record.ts';
import type { Kube, PerformOptions } from '../../functions/kube/kube.ts';
import { check } from '../chaos/check.ts';
import { CRDS, envelopeFor, jobStatus, worldWith } from './ejob-world.ts';

const UID_ENV = 'KRUISE_EJOB_ID';
const JOB = 'chaos';
/** The fault run's invariants on the write history that hold here too (its others judge what this run does not do: kills, deletes, a converged fleet). */
const HISTORY_INVARIANTS = ['claimed-first', 'own-claim-first', 'claims-carried', 'sealed-final', 'injected-once'];
const TERMINAL_WAITING = new Set(['InvalidImageName', 'ErrImageNeverPull', 'RunContainerError', 'CreateContainerError']);

/** One world: how many pods, the job's limits, its template, how many instances. */
export interface ChaosWorld {
  pods: number;
  parallelism: number;
  replicas: number | undefined;
  /** A second template container whose image never resolves (the pod fails while the first still runs). */
  badImage: boolean;
  /** How many of the oldest pods have no container the template targets: failed at once, never injected (pod-state.ts unfitReason). */
  unfit?: number;
  instances: number;
  crd: 0 | 1;
}

/** One step of a schedule. `target` -1 is the job, otherwise a pod index. */
export type ChaosStep =
  | { op: 'deliver'; who: number[]; target: number }
  | { op: 'kubelet'; pod: number }
  | { op: 'crash'; who: number; target: number; afterWrites: number }
  | { op: 'stall'; who: number; target: number }
  | { op: 'resume' }
  | { op: 'time'; seconds: number }
  /** The user changes spec.parallelism (the invariant is checked against the lower of old and new until settled). */
  | { op: 'parallelism'; value: number }
  | { op: 'fault'; method: string; path: string; status: number | 'reset'; times: number }
  /** The pod is deleted and created again under its name (a StatefulSet's): another uid, the same labels, newer. */
  | { op: 'replace'; pod: number }
  /** The user sets spec.paused: while it holds, no pod gets the job's containers but those claimed before. */
  | { op: 'pause'; value: boolean }
  /** The pod's label leaves the selector, or comes back (README "Injection": slots count target pods). */
  | { op: 'relabel'; pod: number; out: boolean };

/** fast-check arbitraries for worlds and schedules. */
export const chaosWorld: fc.Arbitrary<ChaosWorld> = fc.record({
  pods: fc.integer({ min: 2, max: 7 }),
  parallelism: fc.integer({ min: 1, max: 3 }),
  replicas: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
  badImage: fc.boolean(),
  instances: fc.integer({ min: 4, max: 8 }),
  crd: fc.constantFrom(0 as const, 1 as const),
  unfit: fc.constantFrom(0, 0, 1, 2),
});

const target = fc.integer({ min: -1, max: 6 });
const who = fc.integer({ min: 0, max: 7 });
/** A schedule of steps; indices beyond the world's pods/instances wrap. */
export const chaosSteps: fc.Arbitrary<ChaosStep[]> = fc.array(
  fc.oneof(
    { weight: 6, arbitrary: fc.record({ op: fc.constant('deliver' as const), who: fc.uniqueArray(who, { minLength: 1, maxLength: 4 }), target }) },
    { weight: 5, arbitrary: fc.record({ op: fc.constant('kubelet' as const), pod: fc.integer({ min: 0, max: 6 }) }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('crash' as const), who, target, afterWrites: fc.integer({ min: 0, max: 4 }) }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('stall' as const), who, target }) },
    { weight: 1, arbitrary: fc.constant({ op: 'resume' as const }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('time' as const), seconds: fc.constantFrom(1, 10, 25) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('parallelism' as const), value: fc.integer({ min: 0, max: 3 }) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('replace' as const), pod: fc.integer({ min: 0, max: 6 }) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('pause' as const), value: fc.boolean() }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('relabel' as const), pod: fc.integer({ min: 0, max: 6 }), out: fc.boolean() }) },
    {
      weight: 1,
      arbitrary: fc.record({
        op: fc.constant('fault' as const),
        method: fc.constantFrom('GET', 'PUT', 'POST', 'PATCH'),
        path: fc.constantFrom('/leases/', '/ephemeralcontainers', '/status', '/pods', '/ephemeraljobs'),
        status: fc.constantFrom<number | 'reset'>(409, 429, 500, 503, 'reset', 403, 404, 422),
        times: fc.integer({ min: 1, max: 2 }),
      }),
    },
    {
      // A write refused for good (RBAC, a missing lock namespace, a version not served), aimed
      // at the writes a plan's others depend on: the claim, the injections, the status.
      weight: 1,
      arbitrary: fc.record({
        op: fc.constant('fault' as const),
        method: fc.constantFrom('PUT', 'POST', 'PATCH'),
        path: fc.constantFrom('/leases/', '/leases', '/ephemeralcontainers', '/status'),
        status: fc.constantFrom<number | 'reset'>(403, 404, 422),
        times: fc.integer({ min: 1, max: 2 }),
      }),
    },
  ),
  { minLength: 5, maxLength: 30 },
);

/** Pods, then the job: parallelism, replicas and the template as the world says. */
function objects(w: ChaosWorld): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i < w.pods; i++) {
    out.push({
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name: `p${i}`, namespace: 'default', uid: `pod-uid-${i}`, labels: { app: 'chaos' }, creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString() },
      spec: { containers: [{ name: i < (w.unfit ?? 0) ? 'web' : 'app', image: 'nginx' }] },
      status: { phase: 'Running' },
    });
  }
  const containers = [{ name: 'probe', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'app' }];
  if (w.badImage) containers.push({ name: 'broken', image: 'no-such-registry.invalid/x', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'app' });
  out.push({
    apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob',
    metadata: { name: JOB, namespace: 'default', uid: 'job-uid', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { selector: { matchLabels: { app: 'chaos' } }, parallelism: w.parallelism, ...(w.replicas !== undefined ? { replicas: w.replicas } : {}), template: { ephemeralContainers: containers } },
  });
  return out;
}

/** The job's containers in a pod and their states, as the server has them. */
function jobContainers(pod: Pod): { name: string; state: 'none' | 'waiting' | 'running' | 'stuck' | 'exited'; exitCode?: number }[] {
  const statuses = new Map((pod.status?.ephemeralContainerStatuses ?? []).map((s) => [s.name, s.state]));
  return (pod.spec.ephemeralContainers ?? []).filter((c) => (c.env ?? []).some((e) => e.name === UID_ENV && e.value === 'job-uid')).map((c) => {
    const s = statuses.get(c.name);
    if (!s) return { name: c.name, state: 'none' };
    if (s.terminated) return { name: c.name, state: 'exited', exitCode: s.terminated.exitCode };
    if (s.running) return { name: c.name, state: 'running' };
    return { name: c.name, state: s.waiting?.reason && TERMINAL_WAITING.has(s.waiting.reason) ? 'stuck' : 'waiting' };
  });
}

function allPods(server: ApiServer): Pod[] {
  return server.store.list({ apiVersion: 'v1', kind: 'Pod', namespace: 'default' }) as unknown as Pod[];
}

/** The job's selector matches it: slots and counters are of target pods (README "Injection"). */
const isTarget = (p: Pod): boolean => p.metadata.labels?.app === 'chaos';

/**
 * The invariants, from the API server's state alone. `ever`: the uids of every pod seen
 * injected so far, replaced ones included (replicas bounds the pods ever injected).
 */
export function checkInvariants(server: ApiServer, w: ChaosWorld, seen: { templateSize: number; ever: Set<string>; paused?: Set<string> }, when: string): void {
  const { templateSize, ever } = seen;
  const pods = allPods(server);
  const injected = pods.filter((p) => jobContainers(p).length > 0);
  for (const p of injected) assert.equal(jobContainers(p).length, templateSize, `${when}: pod ${p.metadata.name} has ${jobContainers(p).length} job containers (injected in parts or twice)`);
  // While paused, only pods injected or claimed before the pause may carry the containers.
  for (const p of injected) if (seen.paused && !seen.paused.has(p.metadata.uid ?? '')) assert.fail(`${when}: pod ${p.metadata.name} got the job's containers while the job was paused, not claimed before`);
  const holding = injected.filter((p) => isTarget(p) && jobContainers(p).some((c) => c.state === 'none' || c.state === 'waiting' || c.state === 'running'));
  assert.ok(holding.length <= w.parallelism, `${when}: ${holding.length} pods with a non-terminal job container (${holding.map((p) => p.metadata.name).join(', ')}) > parallelism ${w.parallelism}`);
  for (const p of injected) ever.add(p.metadata.uid ?? p.metadata.name);
  if (w.replicas !== undefined) assert.ok(ever.size <= w.replicas, `${when}: ${ever.size} pods ever injected > replicas ${w.replicas}`);
}

/** The pod deleted and created again under its name: a new uid, the same labels, created now; no containers of the job. */
function replacePod(server: ApiServer, name: string, generation: number): void {
  const pod = server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name }) as unknown as Pod | undefined;
  if (!pod) return;
  server.store.delete({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name });
  const { uid: _uid, resourceVersion: _rv, ...metadata } = pod.metadata;
  server.store.put({ apiVersion: 'v1', kind: 'Pod', metadata: { ...metadata, uid: `${name}-again-${generation}`, creationTimestamp: server.now().toISOString() }, spec: { containers: pod.spec.containers }, status: { phase: 'Running' } } as never);
}

/**
 * Pods that hold or may soon hold a slot: a non-terminal job container, or a claim on the
 * job's Lease not yet injected and still within its window (a decision already taken; a
 * parallelism change binds it only as it drains, like pods already running).
 */
function currentHolding(server: ApiServer): number {
  const pods = allPods(server).filter(isTarget);
  const holding = pods.filter((p) => jobContainers(p).some((c) => c.state === 'none' || c.state === 'waiting' || c.state === 'running')).length;
  const pending = pendingClaims(server).filter((c) => pods.some((p) => p.metadata.name === c.pod && jobContainers(p).length === 0));
  return holding + pending.length;
}

/** Claims on the job's Lease still within their window (leaseSeconds 15 + skew 5). */
function pendingClaims(server: ApiServer): { pod: string; at: string }[] {
  const lease = server.store.list({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'ephemera-system' })[0] as { metadata: { annotations?: Record<string, string> } } | undefined;
  let claims: { pod: string; at: string }[] = [];
  try {
    claims = (JSON.parse(lease?.metadata.annotations?.[CLAIMS_ANNOTATION] ?? '{}') as { claims?: typeof claims }).claims ?? [];
  } catch {
    claims = [];
  }
  return claims.filter((c) => Date.parse(c.at) + 20_000 > server.now().getTime());
}

/** The pods that may carry the job's containers while it is paused: those that do, and those claimed on its Lease (uids). */
function mayCarry(server: ApiServer): Set<string> {
  const claimed = new Set(pendingClaims(server).map((c) => c.pod));
  return new Set(allPods(server).filter((p) => jobContainers(p).length > 0 || claimed.has(p.metadata.name)).map((p) => p.metadata.uid ?? ''));
}

function specParallelism(server: ApiServer): number {
  const job = server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'default', name: JOB }) as unknown as { spec: { parallelism: number } };
  return job.spec.parallelism;
}

/** A user's spec update (generation bumped, as the API server would). */
function setSpec(server: ApiServer, change: { parallelism?: number; paused?: boolean }): void {
  const job = server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'default', name: JOB }) as unknown as { metadata: { generation: number }; spec: Record<string, unknown> };
  server.store.put({ ...job, metadata: { ...job.metadata, generation: job.metadata.generation + 1 }, spec: { ...job.spec, ...change } } as never);
}

const setParallelism = (server: ApiServer, value: number): void => setSpec(server, { parallelism: value });

/** `kubectl label pod --overwrite`: into the job's selector, or out of it. */
function relabel(server: ApiServer, name: string, out: boolean): boolean {
  const pod = server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name }) as unknown as Pod | undefined;
  if (!pod || isTarget(pod) !== out) return false;
  server.store.put({ ...pod, metadata: { ...pod.metadata, labels: { ...pod.metadata.labels, app: out ? 'elsewhere' : 'chaos' } } } as never);
  return true;
}

/** The simulated kubelet, one step for one pod: none → waiting → running → exited (or stuck on a bad image). */
function kubeletStep(server: ApiServer, name: string): void {
  const pod = server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name }) as unknown as Pod | undefined;
  if (!pod) return;
  const index = Number(name.slice(1));
  const statuses = jobContainers(pod).map((c) => {
    if (c.name === 'broken') return { name: c.name, state: { waiting: { reason: 'InvalidImageName' } } };
    if (c.state === 'none') return { name: c.name, state: { waiting: { reason: 'ContainerCreating' } } };
    if (c.state === 'waiting') return { name: c.name, state: { running: { startedAt: '2026-01-01T00:00:00Z' } } };
    const exitCode = c.state === 'exited' ? (c.exitCode ?? 0) : index % 3 === 2 ? 1 : 0;
    return { name: c.name, state: { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error' } } };
  });
  if (statuses.length === 0) return;
  server.store.put({ ...pod, status: { ...pod.status, ephemeralContainerStatuses: statuses } } as never);
}

/** The same Kube with its writes wrapped (reads pass straight through): for crashes and stalls. A wrapper passes `options` (a write's deadline, `?timeout=`) on. */
export function withWrites(kube: Kube, perform: (action: Action, options?: PerformOptions) => Promise<unknown>): Kube {
  return { get: (r) => kube.get(r), list: (...a) => kube.list(...a), serverNow: () => kube.serverNow(), perform };
}

/** A Kube that dies (throws a non-API error) before its (k+1)-th write: the writes before it took effect. */
export function crashingKube(kube: Kube, afterWrites: number): Kube {
  let writes = 0;
  return withWrites(kube, async (action, options) => {
    if (writes >= afterWrites) throw new Error('crashed (process killed between writes)');
    writes++;
    return kube.perform(action, options);
  });
}

/** A Kube that stops after its first Lease write until released (a paused process); `reached` is called when it stops. */
export function stallingKube(kube: Kube, gate: Promise<void>, reached: () => void = () => undefined): Kube {
  let stalled = false;
  return withWrites(kube, async (action, options) => {
    const res = await kube.perform(action, options);
    if (!stalled && action.kind === 'Lease') {
      stalled = true;
      reached();
      await gate;
    }
    return res;
  });
}

const envelope = (t: number, pods: number): ReturnType<typeof envelopeFor> =>
  t < 0 || t >= pods ? envelopeFor('EphemeralJob', 'default', JOB) : envelopeFor('Pod', 'default', `p${t}`);

/** What the world's changes leave for the invariants: the parallelism bound, the pause, what was replaced or relabelled. */
interface Changes {
  /** Lowering parallelism does not stop what already runs: the bound is the pods in flight at the change, shrinking as they finish, until it reaches the new value. */
  limit: ChaosWorld;
  /** While paused: the pods (uids) that may carry the job's containers (injected or claimed before the pause). */
  paused?: Set<string>;
  replaced: number;
  relabelled: boolean;
}

/** A step the world takes (the kubelet, the user, the API server), not an engine instance. */
function change(server: ApiServer, w: ChaosWorld, st: Changes, step: ChaosStep): void {
  switch (step.op) {
    case 'kubelet':
      kubeletStep(server, `p${step.pod % w.pods}`);
      break;
    case 'parallelism':
      setParallelism(server, step.value);
      st.limit = { ...st.limit, parallelism: Math.max(step.value, currentHolding(server)) };
      break;
    case 'fault':
      server.faults.add({ method: step.method, pathIncludes: step.path, watch: false, times: step.times, ...(step.status === 'reset' ? { reset: true } : { status: step.status }) });
      break;
    case 'replace':
      replacePod(server, `p${step.pod % w.pods}`, ++st.replaced);
      break;
    case 'pause':
      // What is claimed now may still land: a decision already taken (as with parallelism).
      if (step.value && !st.paused) st.paused = mayCarry(server);
      if (!step.value) delete st.paused;
      setSpec(server, { paused: step.value });
      break;
    case 'relabel':
      if (relabel(server, `p${step.pod % w.pods}`, step.out)) st.relabelled = true;
      // A pod back in the selector counts again at once: the job may be over parallelism
      // until one of them ends (README "Injection"), like a lowered parallelism draining.
      if (!step.out) st.limit = { ...st.limit, parallelism: Math.max(st.limit.parallelism, currentHolding(server)) };
      break;
    default:
      throw new Error(`not a world step: ${step.op}`);
  }
}

/** Run one schedule, checking invariants after every step; then drain to a verdict and check the counters. */
export async function runSchedule(w: ChaosWorld, steps: readonly ChaosStep[]): Promise<void> {
  let offsetMs = 0;
  const { server, deps } = await worldWith({
    objects: objects(w),
    crd: CRDS[w.crd]?.crd,
    now: () => new Date(Date.now() + offsetMs),
    serverClock: () => new Date(Date.now() + offsetMs),
    monotonic: () => performance.now() + offsetMs,
    functionsTokens: Array.from({ length: w.instances }, (_, i) => `proc-${i}`),
  });
  const templateSize = w.badImage ? 2 : 1;
  // Short backoff: the schedule, not the wall clock, decides how long a fault lasts.
  const instances: EngineDeps[] = Array.from({ length: w.instances }, (_, i) => ({ ...deps(`instance-${i}`, `proc-${i}`), maxReplans: 3, retry: { minTimeoutMs: 2 }, conflictBackoffMs: 1 }));
  let release: () => void = () => undefined;
  let gate = new Promise<void>((r) => (release = r));
  const stalled: Promise<unknown>[] = [];
  const run = (d: EngineDeps, t: number): Promise<unknown> => handle(envelope(t, w.pods), d).catch(() => undefined); // a failed handle is redelivered later
  const ever = new Set<string>();
  const st: Changes = { limit: { ...w }, replaced: 0, relabelled: false };
  try {
    for (const [i, step] of steps.entries()) {
      const at = (n: number): EngineDeps => instances[n % instances.length] as EngineDeps;
      switch (step.op) {
        case 'deliver':
          await Promise.all(step.who.map((n) => run(at(n), step.target)));
          break;
        case 'crash':
          await run({ ...at(step.who), kube: crashingKube(at(step.who).kube, step.afterWrites) }, step.target);
          break;
        case 'stall': {
          // Wait until it stops after its claim (or finishes without one), so what it decided is on the Lease.
          let reached: () => void = () => undefined;
          const stopped = new Promise<void>((r) => (reached = r));
          const p = run({ ...at(step.who), kube: stallingKube(at(step.who).kube, gate, reached) }, step.target);
          stalled.push(p);
          await Promise.race([stopped, p]);
          break;
        }
        case 'resume':
          release();
          await Promise.all(stalled.splice(0));
          gate = new Promise<void>((r) => (release = r));
          break;
        case 'time':
          offsetMs += step.seconds * 1000;
          break;
        default:
          change(server, w, st, step);
      }
      checkInvariants(server, st.limit, { templateSize, ever, ...(st.paused ? { paused: st.paused } : {}) }, `after step ${i} ${JSON.stringify(step)}`);
      // Once the pods in flight drop to the new parallelism, it binds from then on.
      st.limit = { ...st.limit, parallelism: Math.max(specParallelism(server), Math.min(st.limit.parallelism, currentHolding(server))) };
    }
    release();
    await Promise.all(stalled.splice(0));
    server.faults.clear();
    if (specParallelism(server) === 0) setParallelism(server, 1); // a paused job cannot finish
    if (st.paused) setSpec(server, { paused: false });
    for (let p = 0; p < w.pods; p++) relabel(server, `p${p}`, false);
    const limitNow = { ...st.limit, parallelism: Math.max(st.limit.parallelism, specParallelism(server), currentHolding(server)) };
    await drain(server, limitNow, instances[0] as EngineDeps, { advance: (ms) => (offsetMs += ms), templateSize, ever, replaced: st.replaced > 0 || st.relabelled });
    // What only the server's history shows (npm run chaos's checker): every injection followed a
    // claim that took effect, its own instance's (each has its own token, `proc-N`, which the
    // history names it by), nothing was claimed after the verdict's seal, and every claims
    // record was planned from the one it replaced (no live claim nor the seal lost).
    const history = check({ writes: server.history.writes, rejected: [], final: server.store.all(), exits: [], converged: true });
    assert.deepEqual(history.filter((v) => HISTORY_INVARIANTS.includes(v.invariant)), [], 'the server\'s history');
  } finally {
    release();
    await server.close();
  }
}

/** Everything delivered, the kubelet runs every pod to its end, claims expire: the job must reach a verdict that matches the pods. */
async function drain(server: ApiServer, w: ChaosWorld, d: EngineDeps, env: { advance: (ms: number) => void; templateSize: number; ever: Set<string>; replaced: boolean }): Promise<void> {
  const { advance, templateSize } = env;
  for (let round = 0; round < 60 && !jobStatus(server, JOB).completionTime; round++) {
    await handle(envelope(-1, w.pods), d).catch(() => undefined);
    for (let p = 0; p < w.pods; p++) kubeletStep(server, `p${p}`);
    checkInvariants(server, w, { templateSize, ever: env.ever }, `drain round ${round}`);
    advance(21_000); // past any claim window (15 s + 5 s skew), so abandoned claims are dropped
  }
  const s = jobStatus(server, JOB);
  assert.ok(s.phase === 'Succeeded' || s.phase === 'Failed', `job ended ${String(s.phase)}: ${JSON.stringify(s)}`);
  // With pods replaced, replicas may have gone to pods that are gone (and a verdict may
  // count them); with pods relabelled, the verdict may have come while one was out of the
  // selector: the job must still finish, and say nothing of it runs or waits; the
  // counters are checked against the pods only when no pod was replaced or relabelled.
  if (env.replaced) {
    assert.deepEqual({ running: s.running, waiting: s.waiting }, { running: 0, waiting: 0 }, `a finished job says nothing runs: ${JSON.stringify(s)}`);
    return;
  }
  const injected = allPods(server).filter((p) => jobContainers(p).length > 0);
  const failed = injected.filter((p) => jobContainers(p).some((c) => c.state === 'stuck' || (c.state === 'exited' && c.exitCode !== 0)));
  // Pods the containers cannot go into are never injected; they are failed targets after the
  // others, within what replicas leaves.
  const wanted = w.replicas ?? w.pods;
  const fit = w.pods - (w.unfit ?? 0);
  const expected = Math.min(wanted, fit);
  const unfit = Math.min(w.unfit ?? 0, Math.max(0, wanted - fit));
  assert.deepEqual(
    { match: s.match, succeeded: s.succeeded, failed: s.failed, running: s.running, waiting: s.waiting, injected: injected.length },
    { match: expected + unfit, succeeded: injected.length - failed.length, failed: failed.length + unfit, running: 0, waiting: 0, injected: expected },
  );
  assert.equal(s.phase, failed.length + unfit === 0 ? 'Succeeded' : 'Failed');
}
