// A chaos schedule from a seed: the world (namespaces, app pods, EphemeralJobs, Job pods
// with sidecars, late arrivals, jobs deleted and re-created), the faults the API server plays and when, and when ephemera
// processes are killed. Pure: the same seed gives the same schedule (fast-check's seeded
// generator), so a failing seed can be re-run; only process timing differs between runs.
import fc from 'fast-check';
import type { KubeObject } from '../../functions/cluster/index.ts';
import type { FaultSpec } from '../../functions/cluster/faults.ts';

/** One object the harness creates, at a time after the start (0: before the processes see anything). */
export interface Arrival {
  atMs: number;
  object: KubeObject;
}

/**
 * A fault the harness plays at a time: a request fault (added to server.faults), a watch/history
 * one, or the injections held and then carried out together at atMs + forMs (heldInjections):
 * from right after the `afterInjection`-th injection write to an app pod, or from atMs if that
 * comes first (or the schedule predates afterInjection).
 */
export type FaultEvent =
  | { atMs: number; kind: 'request'; spec: FaultSpec }
  | { atMs: number; kind: 'watch-reset' | 'watch-close' | 'compact' | 'gone-on-resume' }
  | { atMs: number; kind: 'hold-injections'; forMs: number; afterInjection?: number }
  | { atMs: number; kind: 'slow-lease-writes'; slot: number; delayMs: number; times: number };

/** When to SIGKILL a process: at a time (slot), or right after the n-th injection write (whoever made it). */
export type Kill = { atMs: number; slot: number; restartAfterMs: number } | { afterInjection: number; restartAfterMs: number };

/**
 * `kubectl delete ejob` mid-run: the job was created with OpenKruise's cleanup finalizer when
 * `finalizer` (so the delete only sets deletionTimestamp until ephemera removes it), and when
 * `recreateAfterMs` is set the same manifest is applied again that long after the delete (a new
 * job, new uid, same name and spec), as soon as the name is free. A fresh app pod matching it
 * arrives then too (`freshPod`): the old job's containers have the same names, so every pod the
 * old job reached is skipped by the new one, which would otherwise wait forever with no pod.
 */
export interface Deletion {
  atMs: number;
  namespace: string;
  name: string;
  finalizer?: boolean;
  recreateAfterMs?: number;
  freshPod?: string;
}

/**
 * An app pod deleted and created again under its name mid-run (as a StatefulSet does): the
 * same manifest `againAfterMs` later, so another uid. Whatever a job did to the old pod stays
 * with the old uid: its containers, its replica.
 */
export interface Replacement {
  atMs: number;
  namespace: string;
  name: string;
  againAfterMs: number;
}

/** An app pod's `app` label set to `app` at atMs, and to `back.app` (what it was) `back.afterMs` later. */
export interface Relabel {
  atMs: number;
  namespace: string;
  name: string;
  app: string;
  back: { app: string; afterMs: number };
}

/** A job's spec edited at atMs (by name: a job created again under it gets the edit). */
export interface SpecChange {
  atMs: number;
  namespace: string;
  name: string;
  change: { parallelism: number } | { paused: boolean };
}

/** OpenKruise's finalizer on an EphemeralJob; ephemera removes it once the job's Lease is gone. */
export const EJOB_CLEANUP_FINALIZER = 'apps.kruise.io/ephemeralcontainers-cleanup';

/** A whole schedule. */
export interface Schedule {
  seed: number;
  /** How many ephemera processes run at once. */
  processes: number;
  arrivals: Arrival[];
  /** Jobs created with parallelism 0 and raised later (a spec change while running). */
  raises: { atMs: number; namespace: string; name: string; parallelism: number }[];
  faults: FaultEvent[];
  kills: Kill[];
  /** Jobs deleted (and maybe created again) mid-run; absent in older schedules. */
  deletions?: Deletion[];
  /** App pods deleted and created again under their names mid-run; absent in older schedules. */
  replacements?: Replacement[];
  /** App pods (namespace/name) whose container is not the `app` every template targets: no job's containers can go into them. */
  unfit?: string[];
  /** App pods whose `app` label changes mid-run (out of / into selectors), and back later: every job keeps the pod it was drawn for. */
  relabels?: Relabel[];
  /** The pod of the n-th injection write is relabelled out of every selector right after it, and back later. */
  relabelInjected?: { afterInjection: number; backAfterMs: number }[];
  /** A user's edits of a job's spec mid-run: paused and resumed, or its parallelism lowered or raised (to at least 1). */
  specChanges?: SpecChange[];
  /** Faults, kills and deletions happen before this; afterwards the system must converge undisturbed. */
  calmAfterMs: number;
}

type G = fc.GeneratorValue;
const EJOB_API = 'apps.kruise.io/v1alpha1';
const APPS = ['web', 'api', 'db'] as const;
const TIERS = ['a', 'b'] as const;
/** Annotation the chaos kubelet reads: the exit code of a sidecar stopped with SIGTERM. */
export const SIGTERM_EXIT_ANNOTATION = 'chaos.ephemera.io/sigterm-exit';
/** The nodes every schedule has: a normal one and a virtual-kubelet one. */
export const NODES: KubeObject[] = [
  { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a', labels: { 'kubernetes.io/hostname': 'node-a' } } },
  { apiVersion: 'v1', kind: 'Node', metadata: { name: 'vk-1', labels: { type: 'virtual-kubelet' } } },
];

// fast-check biases its values towards the bounds (good for finding edge cases, wrong for a
// world's proportions), so every draw here is unbiased.
const uniform = (min: number, max: number): fc.Arbitrary<number> => fc.noBias(fc.integer({ min, max }));
const int = (g: G, min: number, max: number): number => g(uniform, min, max);
const pick = <T>(g: G, xs: readonly T[]): T => xs[int(g, 0, xs.length - 1)]!;
const chance = (g: G, p: number): boolean => int(g, 0, 9999) < p * 10_000;

/** The schedule of a seed. */
export function generate(seed: number): Schedule {
  const g = fc.sample(fc.gen(), { seed, numRuns: 1 })[0]!;
  const namespaces = chance(g, 0.3) ? ['chaos-1', 'chaos-2'] : ['chaos-1'];
  const calmAfterMs = int(g, 2000, 4000);
  const arrivals = [...NODES.map((object) => ({ atMs: 0, object })), ...appPods(g, namespaces), ...jobPods(g, namespaces)];
  const raises: Schedule['raises'] = [];
  arrivals.push(...jobs(g, { arrivals, raises }));
  const processes = int(g, 2, 4);
  const planned = { faults: faults(g, calmAfterMs), kills: kills(g, calmAfterMs) };
  // Drawn last, so the draws above (world, faults, kills) are what they were before deletions existed.
  const dels = deletions(g, { arrivals, raises, calmAfterMs });
  // Drawn after those, for the same reason: a seed keeps its world, faults, kills and deletions.
  const reps = replacements(g, { arrivals, calmAfterMs });
  // Drawn after those too: a seed keeps everything above.
  const unfit = unfitPods(g, arrivals);
  const rel = relabels(g, { arrivals, calmAfterMs });
  const relInj = chance(g, 0.5) ? Array.from({ length: int(g, 1, 2) }, () => ({ afterInjection: int(g, 1, 6), backAfterMs: chance(g, 0.5) ? int(g, 50, 600) : int(g, 600, 3000) })) : [];
  const edits = specChanges(g, { arrivals, raises, calmAfterMs, deleted: dels });
  planned.faults.push(...refusals(g, calmAfterMs));
  // Drawn last too, so a seed keeps everything above; the calm point waits for its end.
  const held = heldInjections(g, calmAfterMs);
  planned.faults.push(...held);
  // Drawn after everything, so a seed keeps all of the above.
  planned.faults.push(...slowLeaseWrites(g, calmAfterMs));
  // Drawn after everything too (review97 F6), so a seed keeps all of the above.
  for (const h of held) h.afterInjection = int(g, 1, 3);
  const calm = Math.max(calmAfterMs, ...held.map((h) => h.atMs + h.forMs));
  return {
    seed, processes, arrivals: arrivals.sort((a, b) => a.atMs - b.atMs), raises, ...planned, calmAfterMs: calm,
    ...(dels.length ? { deletions: dels } : {}),
    ...(reps.length ? { replacements: reps } : {}),
    ...(unfit.length ? { unfit } : {}),
    ...(rel.length ? { relabels: rel } : {}),
    ...(relInj.length ? { relabelInjected: relInj } : {}),
    ...(edits.length ? { specChanges: edits } : {}),
  };
}

const late = (g: G): number => (chance(g, 0.2) ? int(g, 200, 1500) : 0);

function appPods(g: G, namespaces: string[]): Arrival[] {
  const n = int(g, 5, 30);
  return Array.from({ length: n }, (_, i) => ({
    // app-0 is there from the start, so every job can select a pod that exists.
    atMs: i === 0 ? 0 : late(g),
    object: {
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name: `app-${i}`, namespace: pick(g, namespaces), labels: { app: pick(g, APPS), tier: pick(g, TIERS) } },
      spec: { nodeName: 'node-a', restartPolicy: 'Always', containers: [{ name: 'app', image: 'chaos/app:run' }] },
    },
  }));
}

function jobPods(g: G, namespaces: string[]): Arrival[] {
  const n = int(g, 0, 10);
  return Array.from({ length: n }, (_, i) => {
    // On a virtual-kubelet node only an image swap can stop a sidecar, so every sidecar there names its exit image.
    const vk = chance(g, 0.25);
    const signal = !vk && chance(g, 0.5);
    const sidecars = Array.from({ length: int(g, 0, 2) }, (_, k) => sidecar(g, k, vk));
    const restartPolicy = pick(g, ['Never', 'OnFailure'] as const);
    const exit = restartPolicy === 'Never' ? pick(g, [0, 0, 1]) : pick(g, [0, 1]);
    return {
      atMs: late(g),
      object: {
        apiVersion: 'v1', kind: 'Pod',
        metadata: {
          name: `job-${i}`, namespace: pick(g, namespaces), labels: { role: 'batch' },
          annotations: { [SIGTERM_EXIT_ANNOTATION]: String(pick(g, [0, 0, 143])), ...(signal ? { 'ephemera.io/sidecar-termination': 'ephemeral-signal' } : {}) },
        },
        spec: {
          nodeName: vk ? 'vk-1' : 'node-a', restartPolicy,
          containers: [{ name: 'main', image: `chaos/main:exit-${exit}-after-${int(g, 1, 4)}` }, ...sidecars],
        },
      },
    };
  });
}

function sidecar(g: G, k: number, vk: boolean): Record<string, unknown> {
  const env = [{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' }];
  if (vk) env.push({ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE', value: 'chaos/exit-now:1' });
  if (chance(g, 0.3)) env.push({ name: 'KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE', value: 'true' });
  return { name: `sidecar-${k}`, image: 'chaos/sidecar:run', env, securityContext: { runAsUser: 1000 } };
}

interface JobInputs {
  arrivals: Arrival[];
  raises: Schedule['raises'];
}

function jobs(g: G, { arrivals, raises }: JobInputs): Arrival[] {
  const n = int(g, 1, 3);
  const out: Arrival[] = [];
  for (let i = 0; i < n; i++) {
    // Select labels some app pod present from the start has, so every job has work.
    const present = arrivals.filter((a) => a.atMs === 0 && a.object.metadata.name.startsWith('app-'));
    const anchor = pick(g, present).object;
    const labels = anchor.metadata.labels as Record<string, string>;
    const selector = { matchLabels: chance(g, 0.3) ? { app: labels.app!, tier: labels.tier! } : { app: labels.app! } };
    const parallelism = chance(g, 0.1) ? 0 : chance(g, 0.8) ? int(g, 1, 3) : int(g, 4, 10);
    const replicas = chance(g, 0.6) ? undefined : int(g, 1, 4);
    const namespace = anchor.metadata.namespace!;
    const name = `ejob-${i}`;
    const atMs = late(g);
    if (parallelism === 0) raises.push({ atMs: atMs + int(g, 500, 2000), namespace, name, parallelism: int(g, 1, 3) });
    out.push({
      atMs,
      object: {
        apiVersion: EJOB_API, kind: 'EphemeralJob', metadata: { name, namespace },
        spec: { selector, parallelism, ...(replicas !== undefined ? { replicas } : {}), template: { ephemeralContainers: template(g, i) } },
      },
    });
  }
  return out;
}

function template(g: G, job: number): Record<string, unknown>[] {
  const two = chance(g, 0.4);
  // Names unique per job: a pod holding another job's container of the same name is skipped by design, and a job left with no pods waits forever.
  const names = two ? [`probe-${job}`, `helper-${job}`] : [`probe-${job}`];
  // With two containers, sometimes one has an image the kubelet refuses (InvalidImageName) while the other runs on.
  const invalid = two && chance(g, 0.4) ? int(g, 0, 1) : -1;
  return names.map((name, i) => ({
    name,
    image: i === invalid ? 'chaos/INVALID:image' : `chaos/probe:exit-${pick(g, [0, 0, 0, 1])}-after-${int(g, 0, 3)}`,
    imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'app', command: ['probe'],
  }));
}

/** Request faults by kind; `writes`: only POST/PATCH/PUT requests (the fault is about a write). */
const REQUEST_FAULTS: { label: string; spec: FaultSpec; writes?: boolean }[] = [
  { label: '409 conflict', spec: { status: 409, reason: 'Conflict', message: 'injected conflict: the object has been modified' }, writes: true },
  { label: '429 Retry-After', spec: { status: 429, retryAfterSeconds: 1 } },
  { label: '500', spec: { status: 500 } },
  { label: '503 before write', spec: { status: 503 }, writes: true },
  { label: '500 after write', spec: { status: 500, after: true }, writes: true },
  { label: '504 after write', spec: { status: 504, after: true }, writes: true },
  { label: 'reset before write', spec: { reset: true }, writes: true },
  { label: 'reset after write', spec: { reset: true, after: true }, writes: true },
  { label: 'reset', spec: { reset: true } },
  { label: 'slow request', spec: { delayMs: 200 } },
  { label: 'stalled request', spec: { delayMs: 1500 } },
  { label: '410 on watch', spec: { status: 410, watch: true } },
];
const METHODS = [undefined, 'GET', 'POST', 'PATCH', 'PUT'] as const;
const WRITE_METHODS = ['POST', 'PATCH', 'PATCH', 'PUT'] as const;
const PATHS = [undefined, undefined, '/ephemeralcontainers', '/status', '/pods/', '/ephemeraljobs', '/leases'] as const;
const WATCH_FAULTS = ['watch-reset', 'watch-close', 'compact', 'gone-on-resume'] as const;

function faults(g: G, calmAfterMs: number): FaultEvent[] {
  const out: FaultEvent[] = [];
  for (let t = int(g, 100, 300); t < calmAfterMs; t += int(g, 60, 300)) {
    if (chance(g, 0.2)) {
      out.push({ atMs: t, kind: pick(g, WATCH_FAULTS) });
      continue;
    }
    const f = pick(g, REQUEST_FAULTS);
    const watchOnly = f.spec.watch === true;
    const method = watchOnly ? undefined : f.writes ? pick(g, WRITE_METHODS) : pick(g, METHODS);
    const path = watchOnly ? undefined : pick(g, PATHS);
    out.push({
      atMs: t, kind: 'request',
      spec: { ...f.spec, label: f.label, times: int(g, 1, 3), ...(method ? { method } : {}), ...(path ? { pathIncludes: path } : {}), ...(watchOnly ? {} : { watch: false }) },
    });
  }
  return out;
}

/**
 * Requests refused for good, as a missing RBAC rule, lock namespace or served version would
 * refuse them (a 404 naming nothing is a path the server does not serve). In about half of
 * the schedules, one to three of them, each matching one to three requests; the calm point
 * lifts what is left, as an operator fixing the cause would. Drawn after everything else,
 * so a seed keeps its world, faults, kills and changes.
 */
function refusals(g: G, calmAfterMs: number): FaultEvent[] {
  if (!chance(g, 0.5)) return [];
  return Array.from({ length: int(g, 1, 3) }, () => {
    const f = pick(g, REFUSALS);
    const method = pick(g, f.writes ? WRITE_METHODS : METHODS);
    const path = pick(g, PATHS);
    return {
      atMs: int(g, 100, calmAfterMs - 100), kind: 'request' as const,
      spec: { ...f.spec, label: f.label, times: int(g, 1, 3), watch: false, ...(method ? { method } : {}), ...(path ? { pathIncludes: path } : {}) },
    };
  }).sort((a, b) => a.atMs - b.atMs);
}

/** The share of schedules in which the API server holds injections past their claims (heldInjections). */
export const HELD_INJECTIONS_CHANCE = 0.15;

/**
 * In a few schedules, the API server holds every injection to an app pod (every PATCH of
 * ephemeral containers under /pods/app-) that comes after the first, second or third injection to an app pod
 * (afterInjection, drawn last in generate), and at the latest from atMs, until atMs + 9–16 s,
 * then carries them out together, as kube-apiserver may queue writes under API Priority and
 * Fairness (up to a quarter of a request's deadline: 15 s by default) or wait on a slow etcd. That is longer than any
 * claim's margin, and than the short-window processes' retention (2 + 2 × 2 s): meanwhile
 * claims are dropped and other pods claimed, whose injections are held too. Each attempt of an
 * injection carries its deadline (`?timeout=`), past which the server answers 504 and makes
 * no write (functions/ejob/README.md step 4); without it, every held injection landed at the
 * end, and a job ran more pods than its parallelism (review87 F1). The sidecar terminator's
 * signal containers go to job pods and are not held. The calm
 * point is moved past the end. A hold from a random moment alone usually came after the
 * last injection, held nothing, and the missing deadline showed in ~4% of schedules (review97
 * F6); atMs stays the latest start, so the end and the calm point are what they were.
 */
function heldInjections(g: G, calmAfterMs: number): Extract<FaultEvent, { kind: 'hold-injections' }>[] {
  if (!chance(g, HELD_INJECTIONS_CHANCE)) return [];
  return [{ atMs: int(g, 0, calmAfterMs - 100), kind: 'hold-injections', forMs: int(g, 9000, 16_000) }];
}

/** The share of schedules in which one process's Lease writes are slowed (slowLeaseWrites). */
export const SLOW_LEASE_WRITES_CHANCE = 0.3;

/**
 * In some schedules, one process's next one to three Lease updates (PUT) from atMs are held
 * 100–800 ms before the server handles them: that process planned from a record another
 * process may meanwhile replace, from a newer view of the pods, so the two plans differ. Its
 * update must then meet a 409 and be planned again (functions/ejob/README.md step 2); a
 * "retry on conflict" that re-sends it, or a 409 taken as done, is a lost update
 * (own-claim-first, claims-carried; review97 F1: every other process got the same events at
 * nearly the same time, so the plans that raced were the same and nothing showed). The fault
 * names the process by its slot; the harness scopes it to the incarnation running then.
 */
function slowLeaseWrites(g: G, calmAfterMs: number): Extract<FaultEvent, { kind: 'slow-lease-writes' }>[] {
  if (!chance(g, SLOW_LEASE_WRITES_CHANCE)) return [];
  return Array.from({ length: int(g, 1, 2) }, () => ({
    atMs: int(g, 0, Math.min(1500, calmAfterMs - 100)), kind: 'slow-lease-writes' as const, slot: int(g, 0, 3), delayMs: int(g, 100, 800), times: int(g, 1, 3),
  })).sort((a, b) => a.atMs - b.atMs);
}

const REFUSALS: { label: string; spec: FaultSpec; writes?: boolean }[] = [
  { label: '403 forbidden', spec: { status: 403 } },
  { label: '404 naming nothing (unserved)', spec: { status: 404 } },
  { label: '422 invalid', spec: { status: 422, reason: 'Invalid', message: 'injected: the request is invalid' }, writes: true },
];

function kills(g: G, calmAfterMs: number): Kill[] {
  const out: Kill[] = [];
  for (let i = int(g, 1, 3); i > 0; i--) out.push({ atMs: int(g, 200, calmAfterMs), slot: int(g, 0, 3), restartAfterMs: int(g, 100, 800) });
  for (let i = int(g, 0, 2); i > 0; i--) out.push({ afterInjection: int(g, 1, 6), restartAfterMs: int(g, 100, 800) });
  return out;
}

/**
 * In about a third of the schedules, some jobs are deleted before the calm point: each with the
 * cleanup finalizer or not, and half of them created again. A paused job is deleted only after
 * it was raised (its re-creation takes the spec as it is when deleted, raised). Adds the
 * finalizer to the job's manifest, and a fresh matching app pod for each re-created job.
 */
function deletions(g: G, { arrivals, raises, calmAfterMs }: JobInputs & { calmAfterMs: number }): Deletion[] {
  if (!chance(g, 0.35)) return [];
  const jobs = arrivals.filter((a) => a.object.kind === 'EphemeralJob');
  const first = int(g, 0, jobs.length - 1);
  const out: Deletion[] = [];
  jobs.forEach((arrival, i) => {
    if (i !== first && !chance(g, 0.4)) return;
    const { name, namespace = '' } = arrival.object.metadata;
    const raise = raises.find((r) => r.namespace === namespace && r.name === name);
    const from = (raise?.atMs ?? arrival.atMs) + 50;
    const to = calmAfterMs - 50;
    if (from > to) return;
    // Early (before or at the first injections) as often as late (mid-run or after the verdict).
    const atMs = chance(g, 0.5) ? int(g, from, Math.min(to, from + 400)) : int(g, from, to);
    const finalizer = chance(g, 0.5);
    const recreateAfterMs = chance(g, 0.5) ? int(g, 100, 1500) : undefined;
    if (finalizer) arrival.object.metadata.finalizers = [EJOB_CLEANUP_FINALIZER];
    const d: Deletion = { atMs, namespace, name, ...(finalizer ? { finalizer } : {}) };
    if (recreateAfterMs !== undefined) {
      d.recreateAfterMs = recreateAfterMs;
      d.freshPod = `app-for-${name}`;
      arrivals.push({ atMs: atMs + recreateAfterMs, object: freshPod(d.freshPod, namespace, arrival.object) });
    }
    out.push(d);
  });
  return out;
}

/** In about a third of the schedules, one to three app pods are replaced under their names before the calm point. */
function replacements(g: G, { arrivals, calmAfterMs }: { arrivals: Arrival[]; calmAfterMs: number }): Replacement[] {
  if (!chance(g, 0.35)) return [];
  const pods = arrivals.filter((a) => a.object.kind === 'Pod' && a.object.metadata.name.startsWith('app-') && a.atMs + 100 < calmAfterMs - 400);
  const out: Replacement[] = [];
  for (let i = int(g, 1, 3); i > 0 && pods.length > 0; i--) {
    const a = pods.splice(int(g, 0, pods.length - 1), 1)[0]!;
    out.push({ atMs: int(g, a.atMs + 100, calmAfterMs - 400), namespace: a.object.metadata.namespace ?? '', name: a.object.metadata.name, againAfterMs: int(g, 0, 300) });
  }
  return out;
}

/**
 * In about a third of the schedules, one or two app pods (never app-0, which every job's
 * selector was drawn from) run their app in a container named `web`: every template targets
 * `app`, so these pods are failed targets, never injected (functions/ejob/pod-state.ts
 * unfitReason). A pod created again under its name keeps its manifest, so it stays unfit.
 */
function unfitPods(g: G, arrivals: Arrival[]): string[] {
  if (!chance(g, 0.35)) return [];
  const pods = arrivals.filter((a) => a.object.kind === 'Pod' && a.object.metadata.name.startsWith('app-') && a.object.metadata.name !== 'app-0');
  const out: string[] = [];
  for (let i = int(g, 1, 2); i > 0 && pods.length > 0; i--) {
    const a = pods.splice(int(g, 0, pods.length - 1), 1)[0]!;
    (a.object.spec as { containers: { name: string }[] }).containers = [{ name: 'web', image: 'chaos/app:run' }] as never;
    out.push(`${a.object.metadata.namespace ?? ''}/${a.object.metadata.name}`);
  }
  return out;
}

/** An app pod with every label the job's selector can ask for (its anchor's app and tier). */
function freshPod(name: string, namespace: string, job: KubeObject): KubeObject {
  const labels = ((job.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels);
  const tier = labels.tier ?? TIERS[0];
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace, labels: { app: labels.app!, tier } },
    spec: { nodeName: 'node-a', restartPolicy: 'Always', containers: [{ name: 'app', image: 'chaos/app:run' }] },
  };
}

/**
 * In about 40% of the schedules (drawn after everything else, so older seeds keep their
 * worlds), one job not raised from parallelism 0 is edited mid-run: paused and resumed
 * 0.2–2 or 4–8 s later, or its parallelism set to 1–3 (lowered while pods run, or raised).
 */
function specChanges(g: G, { arrivals, raises, calmAfterMs, deleted }: JobInputs & { calmAfterMs: number; deleted: Deletion[] }): SpecChange[] {
  if (!chance(g, 0.4)) return [];
  // Not a job the world deletes: one created again copies the spec it had, so a pause before the
  // delete and a resume that finds no job would leave it paused for good.
  const same = (a: Arrival, x: { namespace: string; name: string }): boolean => x.name === a.object.metadata.name && x.namespace === a.object.metadata.namespace;
  const jobs = arrivals.filter((a) => a.object.kind === 'EphemeralJob' && !raises.some((r) => same(a, r)) && !deleted.some((d) => same(a, d)));
  if (jobs.length === 0) return [];
  const a = pick(g, jobs);
  const { namespace = '', name } = a.object.metadata;
  const atMs = int(g, a.atMs + 50, Math.max(a.atMs + 50, calmAfterMs - 200));
  // Half the pauses outlast the claim window (lease + skew, 3 s), or a claim planned while
  // paused could not be told from one planned just before (review: none did, so the paused
  // invariant could never fire).
  const pausedFor = chance(g, 0.5) ? int(g, 200, 2000) : int(g, 4000, 8000);
  if (chance(g, 0.5)) return [{ atMs, namespace, name, change: { paused: true } }, { atMs: atMs + pausedFor, namespace, name, change: { paused: false } }];
  return [{ atMs, namespace, name, change: { parallelism: int(g, 1, 3) } }];
}

/**
 * App pods a relabel may move: not app-0, nor a pod made for a job (`app-for-…`, a re-created
 * job's fresh target), so every job keeps a pod it can finish on (a job whose every target
 * leaves the selector waits, MatchedEmpty, as it should).
 */
export function relabelable(name: string): boolean {
  return name.startsWith('app-') && name !== 'app-0' && !name.startsWith('app-for-');
}

/**
 * In about half the schedules (drawn after everything else, so older seeds keep their
 * worlds), one to three app pods change their app label mid-run, and back 0.1–4 s later (a
 * pod relabelled for good could leave a job no target: it would wait, rightly, for good).
 */
function relabels(g: G, { arrivals, calmAfterMs }: { arrivals: Arrival[]; calmAfterMs: number }): Relabel[] {
  if (!chance(g, 0.5)) return [];
  const pods = arrivals.filter((a) => a.object.kind === 'Pod' && relabelable(a.object.metadata.name) && a.atMs + 100 < calmAfterMs - 400);
  const out: Relabel[] = [];
  for (let i = int(g, 1, 3); i > 0 && pods.length > 0; i--) {
    const a = pods.splice(int(g, 0, pods.length - 1), 1)[0]!;
    const was = (a.object.metadata.labels as Record<string, string>).app!;
    const app = pick(g, APPS.filter((x) => x !== was));
    const atMs = int(g, a.atMs + 100, calmAfterMs - 400);
    out.push({ atMs, namespace: a.object.metadata.namespace ?? '', name: a.object.metadata.name, app, back: { app: was, afterMs: chance(g, 0.5) ? int(g, 100, 1500) : int(g, 1500, 4000) } });
  }
  return out;
}
