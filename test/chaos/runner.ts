// Runs one chaos schedule: the embedded API server and simulated kubelet in this process,
// 2–4 real ephemera processes against it, the schedule's arrivals, faults and kills played on
// time, until every job has finished and every sidecar pod has ended (or the time limit).
// Then the checker judges the API server's history. A failing schedule keeps its files.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SimKubelet, startApiServer, type ApiServer, type Fault, type KubeObject, type RequestRecord, type WriteRecord } from '../../functions/cluster/index.ts';
import { check, staleJobLeases } from './check.ts';
import { leaseOwner, readLeaseView } from '../../functions/ejob/lease-record.ts';
import { Fleet } from './fleet.ts';
import { chaosPolicy } from './kubelet-policy.ts';
import { allTerminated, isJob, isPod, isSidecarPod, keyOf, phaseOf, podEnded } from './pod-view.ts';
import { UNWATCHED_MS, type RunRecord, type Violation } from './record.ts';
import { EJOB_CLEANUP_FINALIZER, relabelable, type Deletion, type FaultEvent, type Kill, type Replacement, type Schedule } from './world.ts';

/** How a schedule is run (not part of the schedule: the same seed may run with other limits). */
export interface RunOptions {
  /** Give up (a "did not converge" violation) after this long past the start (default 30 s, or 20 s past a later calm point: held injections move it). */
  limitMs?: number;
  /** Simulated kubelet tick (default 100 ms). */
  tickMs?: number;
  /** Keep the files even when the schedule passes. */
  keep?: boolean;
  /** Override the schedule's number of processes. */
  processes?: number;
  /** The processes' LOG_LEVEL (default warn). */
  logLevel?: string;
}

/** What one schedule did and found. */
export interface ScheduleResult {
  seed: number;
  violations: Violation[];
  /** Faults that fired, by kind (counted by the API server), kills included. */
  faults: Record<string, number>;
  processes: number;
  writes: number;
  durationMs: number;
  /** Of which: until every process watched (process start-up). */
  startupMs: number;
  /** The directory with history, world and logs, when kept. */
  dir?: string;
  /** Claims the processes made again (functions/ejob/README.md, step 8), from the Lease writes. */
  renewals: number;
}

/** Environment of every ephemera process: short leases and timeouts so a schedule takes seconds. */
const PROCESS_ENV = {
  EPHEMERA_RELAY_LEADER_ELECTION: 'false',
  EPHEMERA_RELAY_LISTEN: '127.0.0.1:0',
  EPHEMERA_RELAY_COALESCE_MS: '30',
  EPHEMERA_RELAY_RESYNC_SECONDS: '10',
  EPHEMERA_LEASE_SECONDS: '2',
  EPHEMERA_LEASE_SKEW_SECONDS: '2',
  EPHEMERA_API_TIMEOUT_MS: '1000',
};

/**
 * Odd slots run with a longer claim window and a larger skew than PROCESS_ENV's (5 + 3 = 8 s,
 * beyond the others' retention of 2 + 2 × 2 = 6 s): every schedule mixes instances whose
 * settings differ, as during a rollout that changes them. Each claim carries its claimer's
 * window and readers keep the longer (functions/ejob/claims.ts claimRetentionMs; review70),
 * and a LIST read before the Lease stands only within the smallest skew of the record's
 * writers (standingLagMs; review76).
 */
const LONG_WINDOW_ENV = { EPHEMERA_LEASE_SECONDS: '5', EPHEMERA_LEASE_SKEW_SECONDS: '3' };
const envFor = (slot: number): Record<string, string> => (slot % 2 === 1 ? LONG_WINDOW_ENV : {});

/** The longest claim window of the fleet, in ms: what the checker allows a late write. */
const LONGEST_WINDOW_MS = Math.max(Number(PROCESS_ENV.EPHEMERA_LEASE_SECONDS) + Number(PROCESS_ENV.EPHEMERA_LEASE_SKEW_SECONDS), Number(LONG_WINDOW_ENV.EPHEMERA_LEASE_SECONDS) + Number(LONG_WINDOW_ENV.EPHEMERA_LEASE_SKEW_SECONDS)) * 1000;

/** Runs one schedule to the end and checks it. */
export async function runSchedule(schedule: Schedule, options: RunOptions = {}): Promise<ScheduleResult> {
  const dir = mkdtempSync(join(tmpdir(), `ephemera-chaos-${schedule.seed}-`));
  const started = Date.now();
  const server = await startApiServer();
  const kubelet = new SimKubelet(server, chaosPolicy());
  const fleet = new Fleet({ dir, kubeconfig: (actor) => server.kubeconfigYaml({ token: actor }), env: { ...PROCESS_ENV, LOG_LEVEL: options.logLevel ?? 'warn' }, envFor });
  const count = options.processes ?? schedule.processes;
  let outcome: { converged: boolean; pending: string[] };
  const deletes: DeleteSeen[] = [];
  let unwatchedDeletes: string[];
  let startupMs: number;
  let notStarted: string[];
  let startupBoundMs: number;
  let pendingBacks = new Set<NodeJS.Timeout>();
  try {
    for (let slot = 0; slot < count; slot++) fleet.start(slot);
    watchInjections(server, fleet, schedule.kills);
    const backs = (pendingBacks = relabelInjected(server, schedule));
    ({ notStarted, boundMs: startupBoundMs } = await waitForWatches(server, fleet, STARTUP));
    startupMs = Date.now() - started;
    kubelet.run(options.tickMs ?? 100);
    outcome = await play(server, fleet, schedule, { limitMs: options.limitMs ?? Math.max(30_000, schedule.calmAfterMs + 20_000), slots: count, deletes, backs });
    // Before the fleet stops: the end of the run is no process's death.
    unwatchedDeletes = unwatched(deletes, fleet);
  } finally {
    kubelet.stop();
    await fleet.stop();
    for (const t of pendingBacks) clearTimeout(t);
  }
  const record: RunRecord = {
    writes: server.history.writes, rejected: server.history.rejected, final: server.store.all(), exits: fleet.exits, ...outcome, notStarted, startupBoundMs,
    // The product's bound on writes planned before a job's delete: the processes' claim window.
    lateWriteGraceMs: LONGEST_WINDOW_MS,
    leaseSkewMs: Math.max(Number(PROCESS_ENV.EPHEMERA_LEASE_SKEW_SECONDS), Number(LONG_WINDOW_ENV.EPHEMERA_LEASE_SKEW_SECONDS)) * 1000,
  };
  // Counted, not excused: the next relay's first sync sweeps such a job's Lease.
  if (unwatchedDeletes.length) server.faults.count('job deleted while no process lived to handle it', unwatchedDeletes.length);
  const requests = server.requests.entries;
  await server.close();
  const violations = check(record);
  const result: ScheduleResult = {
    seed: schedule.seed, violations, faults: server.faults.fired(), processes: count, writes: record.writes.length, durationMs: Date.now() - started, startupMs, renewals: renewals(record.writes),
  };
  if (violations.length === 0 && !options.keep) rmSync(dir, { recursive: true, force: true });
  else result.dir = keepFiles(dir, { schedule, record, result, requests });
  return result;
}

/** SIGKILL the process that made the n-th injection write, synchronously, before it hears the answer. */
function watchInjections(server: ApiServer, fleet: Fleet, kills: Kill[]): void {
  let n = 0;
  server.history.onWrite((w: WriteRecord) => {
    if (w.subresource !== 'ephemeralcontainers' || !w.actor.startsWith('proc-')) return;
    n++;
    for (const k of kills) {
      if ('afterInjection' in k && k.afterInjection === n && fleet.killActor(w.actor, k.restartAfterMs)) server.faults.count('SIGKILL right after an injection');
    }
  });
}

/**
 * Relabel the pod of the n-th injection write out of every selector just after it lands
 * (its container new, another pod may take the slot), maybe back later (the job may then be
 * over parallelism until one ends: README "Injection"; the checker allows for it).
 */
function relabelInjected(server: ApiServer, schedule: Schedule): Set<NodeJS.Timeout> {
  const backs = new Set<NodeJS.Timeout>();
  // A pod the schedule relabels too is left alone: the label seen at the injection may be the
  // schedule's for a while, and going back to it would leave the pod moved for good (review).
  const scheduled = new Set((schedule.relabels ?? []).map((r) => `${r.namespace}/${r.name}`));
  let n = 0;
  server.history.onWrite((w: WriteRecord) => {
    if (w.subresource !== 'ephemeralcontainers' || !w.actor.startsWith('proc-')) return;
    n++;
    for (const p of (schedule.relabelInjected ?? []).filter((x) => x.afterInjection === n)) {
      const { namespace = '', name } = w.object.metadata;
      if (!relabelable(name) || scheduled.has(`${namespace}/${name}`)) continue;
      const was = String((w.object.metadata.labels as Record<string, string> | undefined)?.app ?? '');
      setImmediate(() => relabel(server, namespace, name, 'nobody'));
      // Pending work for play(): the schedule has not converged while a pod is still out.
      const t = setTimeout(() => {
        backs.delete(t);
        relabel(server, namespace, name, was);
      }, p.backAfterMs);
      backs.add(t);
    }
  });
  return backs;
}

/**
 * The clock starts once every process watches (so fault times mean the same in every run);
 * the processes that did not within the bound, the checker reports (before, the run went on
 * with the others and could pass: review). The bound: 30 s, or four times as long as the
 * first process took, whichever is longer. A loaded machine starts every process slowly (each
 * compiles the product and the fleet's starts contend for the CPUs): at 15 s, a burst of load
 * from other work once kept all four of a schedule's processes from watching (27135, passed
 * alone in 2.9 s). A process that hangs or dies at start (the relay once died on one transient
 * error there) stays unwatched however long the bound, and only a failing run waits it out.
 */
const STARTUP = { floorMs: 30_000, factor: 4 };

/** Waits until every process watches pods and jobs; returns those that did not within the bound. */
async function waitForWatches(server: ApiServer, fleet: Fleet, bound: typeof STARTUP): Promise<{ notStarted: string[]; boundMs: number }> {
  const start = Date.now();
  const idle = (): string[] => fleet.actors().filter((a) => server.requests.entries.filter((r) => r.watch && r.actor === a).length < 2);
  let boundMs = bound.floorMs;
  let firstMs: number | undefined;
  for (let waiting = idle(); waiting.length > 0 && Date.now() - start < boundMs; waiting = idle()) {
    if (firstMs === undefined && waiting.length < fleet.actors().length) {
      firstMs = Date.now() - start;
      boundMs = Math.max(bound.floorMs, bound.factor * firstMs);
    }
    await sleep(20);
  }
  return { notStarted: idle(), boundMs };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Plays the timeline, then waits for convergence; returns whether it converged and what stayed open. */
async function play(server: ApiServer, fleet: Fleet, schedule: Schedule, o: { limitMs: number; slots: number; deletes: DeleteSeen[]; backs: Set<NodeJS.Timeout> }): Promise<{ converged: boolean; pending: string[] }> {
  const t0 = Date.now();
  const todo = timeline(schedule, o.deletes);
  let settledAt: number | undefined;
  for (;;) {
    const t = Date.now() - t0;
    const due: Step[] = [];
    while (todo.length && todo[0]!.atMs <= t) due.push(todo.shift()!);
    // A step that cannot run yet (a re-creation while the old job still holds the name) runs again shortly.
    const later = due.filter((s) => s.run(server, fleet, o.slots) === false);
    if (later.length) todo.push(...later.map((s) => ({ ...s, atMs: t + 50 })));
    todo.sort((a, b) => a.atMs - b.atMs);
    // A job deleted while no process lived is no excuse any more: the next relay's first sync sweeps its Lease.
    const pending = todo.length ? [`${todo.length} scheduled steps`] : o.backs.size ? [`${o.backs.size} pods to relabel back`] : openWork(server);
    if (pending.length === 0 && t >= schedule.calmAfterMs) {
      // Converged: watch a little longer, so a late extra injection would still be seen.
      settledAt ??= Date.now();
      if (Date.now() - settledAt >= 500) return { converged: true, pending: [] };
    } else settledAt = undefined;
    if (t > o.limitMs) return { converged: false, pending };
    await sleep(25);
  }
}

interface Step {
  atMs: number;
  /** false: not now, try again in a moment. */
  run(server: ApiServer, fleet: Fleet, slots: number): boolean | void;
}

function timeline(s: Schedule, deletes: DeleteSeen[]): Step[] {
  // The spec of each deleted job as it was when deleted (a paused job's raise included), for its re-creation.
  const specs = new Map<string, unknown>();
  const steps: Step[] = [
    ...(s.deletions ?? []).flatMap((d) => [
      { atMs: d.atMs, run: (server: ApiServer, fleet: Fleet) => deleteJob(server, d, specs, witness(server, fleet, deletes)) },
      ...(d.recreateAfterMs !== undefined ? [{ atMs: d.atMs + d.recreateAfterMs, run: (server: ApiServer) => recreateJob(server, d, specs) }] : []),
    ]),
    ...s.arrivals.map((a) => ({ atMs: a.atMs, run: (server: ApiServer) => create(server, a.object) })),
    ...(s.replacements ?? []).flatMap((r) => {
      const manifest = s.arrivals.find((a) => a.object.kind === 'Pod' && a.object.metadata.name === r.name && a.object.metadata.namespace === r.namespace)?.object;
      return manifest ? [
        { atMs: r.atMs, run: (server: ApiServer) => deletePod(server, r) },
        { atMs: r.atMs + r.againAfterMs, run: (server: ApiServer) => createAgain(server, manifest) },
      ] : [];
    }),
    ...s.raises.map((r) => ({ atMs: r.atMs, run: (server: ApiServer) => editJob(server, r, { parallelism: r.parallelism }) })),
    ...(s.specChanges ?? []).map((c) => ({ atMs: c.atMs, run: (server: ApiServer) => editJob(server, c, c.change) })),
    ...(s.relabels ?? []).flatMap((r) => [
      { atMs: r.atMs, run: (server: ApiServer) => relabel(server, r.namespace, r.name, r.app) },
      { atMs: r.atMs + r.back.afterMs, run: (server: ApiServer) => relabel(server, r.namespace, r.name, r.back.app) },
    ]),
    ...s.faults.flatMap((f) => (f.kind === 'hold-injections' ? holdInjections(f) : f.kind === 'slow-lease-writes' ? [slowLeaseWrites(f)] : [{ atMs: f.atMs, run: (server: ApiServer) => playFault(server, f) }])),
    // The calm point: faults armed before it and not yet used up are disarmed, so that from
    // here on the system converges undisturbed (world.ts). Before, an armed fault matching a
    // rare request (an injection's PATCH) kept firing long after the calm point.
    { atMs: s.calmAfterMs, run: (server: ApiServer) => server.faults.clear() },
    ...s.kills.flatMap((k) => ('atMs' in k ? [{
      atMs: k.atMs,
      run: (server: ApiServer, fleet: Fleet, slots: number) => {
        if (fleet.kill(k.slot % slots, k.restartAfterMs)) server.faults.count('SIGKILL at a random time');
      },
    }] : [])),
  ];
  return steps.sort((a, b) => a.atMs - b.atMs);
}

function create(server: ApiServer, object: KubeObject): void {
  const def = server.store.defFor(object.apiVersion, object.kind);
  server.rest.create(def, def.namespaced ? object.metadata.namespace ?? 'default' : '', object);
}

/**
 * A user's edit of a job's spec (`kubectl patch`), on a copy: the stored object is the one
 * the history recorded at its last write, which an edit in place would change after the fact.
 */
function editJob(server: ApiServer, at: { namespace: string; name: string }, change: Record<string, unknown>): void {
  const def = server.store.defFor('apps.kruise.io/v1alpha1', 'EphemeralJob');
  const stored = server.store.read(def, at.namespace, at.name);
  if (!stored) return;
  const job = structuredClone(stored);
  job.spec = { ...(job.spec as Record<string, unknown>), ...change };
  server.history.during({ verb: 'update', subresource: '', actor: 'in-process' }, () => server.rest.update({ def, namespace: at.namespace, name: at.name }, job));
  server.faults.count(`EphemeralJob ${'paused' in change ? (change.paused ? 'paused' : 'resumed') : 'parallelism set'}`);
}

/** `kubectl label pod --overwrite app=…` through the REST layer (the pod there now, whatever its uid). */
function relabel(server: ApiServer, namespace: string, name: string, app: string): void {
  const def = server.store.defFor('v1', 'Pod');
  const stored = server.store.read(def, namespace, name);
  if (!stored) return;
  const pod = structuredClone(stored);
  pod.metadata.labels = { ...(pod.metadata.labels as Record<string, string>), app };
  server.history.during({ verb: 'update', subresource: '', actor: 'in-process' }, () => server.rest.update({ def, namespace, name }, pod));
  server.faults.count('app pod relabelled');
}

const EJOB = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob' };

/** A job's delete, and the processes that knew the job then (running, and had listed the jobs). */
interface DeleteSeen {
  uid: string;
  at: number;
  witnesses: string[];
}

/** Notes who knew the job at its delete. */
function witness(server: ApiServer, fleet: Fleet, deletes: DeleteSeen[]): (uid: string) => void {
  return (uid) => {
    const listed = new Set(server.requests.entries.filter((r) => r.verb === 'list' && r.path.endsWith('/ephemeraljobs')).map((r) => r.actor));
    deletes.push({ uid, at: Date.now(), witnesses: fleet.actors().filter((a) => listed.has(a)) });
  };
}

/** Jobs whose delete no process lived to handle: every one that knew the job ended within UNWATCHED_MS. */
function unwatched(deletes: DeleteSeen[], fleet: Fleet): string[] {
  return deletes.filter((d) => d.witnesses.every((a) => (fleet.endedAt.get(a) ?? Infinity) < d.at + UNWATCHED_MS)).map((d) => d.uid);
}

/** `kubectl delete ejob`: through the REST layer, so a finalizer leaves the job being deleted. */
function deleteJob(server: ApiServer, d: Deletion, specs: Map<string, unknown>, seen: (uid: string) => void): void {
  const def = server.store.defFor(EJOB.apiVersion, EJOB.kind);
  const job = server.store.read(def, d.namespace, d.name);
  if (!job) return;
  seen(job.metadata.uid ?? '');
  specs.set(`${d.namespace}/${d.name}`, structuredClone(job.spec));
  server.history.during({ verb: 'delete', subresource: '', actor: 'in-process' }, () => server.rest.delete({ def, namespace: d.namespace, name: d.name }));
  server.faults.count(d.finalizer ? 'EphemeralJob deleted (finalizer)' : 'EphemeralJob deleted');
}

/** A pod deleted (a StatefulSet's, before it makes the pod again): through the REST layer, so the history has it. */
function deletePod(server: ApiServer, r: Replacement): void {
  const def = server.store.defFor('v1', 'Pod');
  if (!server.store.read(def, r.namespace, r.name)) return;
  server.history.during({ verb: 'delete', subresource: '', actor: 'in-process' }, () => server.rest.delete({ def, namespace: r.namespace, name: r.name }));
  server.faults.count('app pod replaced under its name');
}

/** The same pod manifest again once its name is free: another uid. */
function createAgain(server: ApiServer, manifest: KubeObject): boolean {
  const def = server.store.defFor('v1', 'Pod');
  if (server.store.read(def, manifest.metadata.namespace ?? '', manifest.metadata.name)) return false;
  create(server, structuredClone(manifest));
  return true;
}

/** `kubectl apply` of the same manifest again, once the name is free: a new job (new uid). */
function recreateJob(server: ApiServer, d: Deletion, specs: Map<string, unknown>): boolean {
  const def = server.store.defFor(EJOB.apiVersion, EJOB.kind);
  if (server.store.read(def, d.namespace, d.name)) return false;
  const spec = specs.get(`${d.namespace}/${d.name}`);
  if (spec === undefined) return true;
  const metadata = { name: d.name, namespace: d.namespace, ...(d.finalizer ? { finalizers: [EJOB_CLEANUP_FINALIZER] } : {}) };
  server.rest.create(def, d.namespace, { ...EJOB, metadata, spec: structuredClone(spec) });
  server.faults.count('EphemeralJob re-created');
  return true;
}

/**
 * Every injection (PATCH of ephemeral containers) to an app pod that comes after the
 * `afterInjection`-th injection write to one (that one itself landed), or from atMs if that
 * comes first, is held until atMs + forMs; then they are all carried out together (world.ts
 * heldInjections), but those whose deadline (`?timeout=`) passed meanwhile: the server
 * answered those 504 and makes no write.
 */
export function holdInjections(f: Extract<FaultEvent, { kind: 'hold-injections' }>): Step[] {
  let release = (): void => undefined;
  const hold = new Promise<void>((resolve) => (release = resolve));
  let fault: Fault | undefined;
  let ended = false;
  let unwatch = (): void => undefined;
  // The EphemeralJobs' targets are the app pods (world.ts), whose only PATCH is an injection.
  const start = (server: ApiServer): void => {
    if (!fault && !ended) fault = server.faults.add({ method: 'PATCH', pathIncludes: '/pods/app-', watch: false, hold, times: Infinity, label: 'injection held, then let go with the others' });
  };
  return [
    ...(f.afterInjection === undefined ? [] : [{ atMs: 0, run: (server: ApiServer) => void (unwatch = onInjection(server, f.afterInjection!, () => start(server))) }]),
    { atMs: f.atMs, run: start },
    {
      atMs: f.atMs + f.forMs,
      run: () => {
        ended = true;
        unwatch();
        fault?.remove();
        release();
      },
    },
  ];
}

/** Calls `then` synchronously on the n-th injection write to an app pod (counted as watchInjections counts, on those pods only); returns the unsubscribe. */
function onInjection(server: ApiServer, n: number, then: () => void): () => void {
  let seen = 0;
  return server.history.onWrite((w: WriteRecord) => {
    if (w.subresource !== 'ephemeralcontainers' || !w.actor.startsWith('proc-') || !w.object.metadata.name.startsWith('app-')) return;
    if (++seen === n) then();
  });
}

/** One process's Lease updates held a while (world.ts slowLeaseWrites): scoped to the incarnation running in the slot then. */
function slowLeaseWrites(f: Extract<FaultEvent, { kind: 'slow-lease-writes' }>): Step {
  return {
    atMs: f.atMs,
    run: (server: ApiServer, fleet: Fleet, slots: number) => {
      const actor = fleet.actorIn(f.slot % slots);
      if (actor) server.faults.add({ method: 'PUT', pathIncludes: '/leases/', watch: false, actor, delayMs: f.delayMs, times: f.times, label: 'one process\'s Lease update held' });
    },
  };
}

function playFault(server: ApiServer, f: Exclude<FaultEvent, { kind: 'hold-injections' | 'slow-lease-writes' }>): void {
  switch (f.kind) {
    case 'request': server.faults.add(f.spec); return;
    case 'watch-reset': server.faults.resetWatches(); return;
    case 'watch-close': server.faults.closeWatches(); return;
    case 'compact':
      server.compact();
      server.faults.count('compaction');
      return;
    case 'gone-on-resume':
      // Compact, then end every watch: each resume asks for a version that is gone (410).
      server.compact();
      server.faults.count('410 on resume');
      server.faults.closeWatches();
  }
}

/**
 * What convergence waits for: jobs not finished, jobs being deleted (their finalizer still
 * there), sidecar pods not ended, and job Leases whose claims record is no live job's.
 */
function openWork(server: ApiServer): string[] {
  const all = server.store.all();
  const jobs = all.filter(isJob).filter((j) => !j.metadata.deletionTimestamp && !['Succeeded', 'Failed'].includes(phaseOf(j))).map((j) => `job ${keyOf(j)} ${phaseOf(j) || 'no phase'}`);
  const deleting = all.filter(isJob).filter((j) => j.metadata.deletionTimestamp).map((j) => `job ${keyOf(j)} being deleted (finalizers ${String(j.metadata.finalizers)})`);
  const pods = all.filter(isPod).filter(isSidecarPod).filter((p) => !podEnded(p) && !allTerminated(p)).map((p) => `sidecar pod ${keyOf(p)} ${phaseOf(p) || 'no phase'}`);
  const leases = staleJobLeases(all).map((l) => `Lease ${keyOf(l.lease)} holds a record of job uid ${l.job}, no live job's`);
  return [...jobs, ...deleting, ...pods, ...leases];
}

interface Kept {
  schedule: Schedule;
  record: RunRecord;
  result: ScheduleResult;
  requests: RequestRecord[];
}

function keepFiles(dir: string, { schedule, record, result, requests }: Kept): string {
  writeFileSync(join(dir, 'requests.jsonl'), requests.map((r) => JSON.stringify(r)).join('\n') + '\n');
  writeFileSync(join(dir, 'schedule.json'), JSON.stringify(schedule, null, 2));
  writeFileSync(join(dir, 'history.jsonl'), record.writes.map((w) => JSON.stringify(w)).join('\n') + '\n');
  writeFileSync(join(dir, 'rejected.jsonl'), record.rejected.map((w) => JSON.stringify(w)).join('\n') + '\n');
  writeFileSync(join(dir, 'final.json'), JSON.stringify(record.final, null, 2));
  writeFileSync(join(dir, 'result.json'), JSON.stringify({ ...result, exits: record.exits, pending: record.pending }, null, 2));
  return dir;
}

/** Distinct renewed claims (Lease, pod, time) in the Lease writes of a history. */
export function renewals(writes: readonly WriteRecord[]): number {
  const seen = new Set<string>();
  for (const w of writes) {
    const owner = w.object.kind === 'Lease' ? leaseOwner(w.object) : undefined;
    const view = owner ? readLeaseView(w.object, owner.job) : undefined;
    for (const c of view?.kind === 'ours' ? view.record.claims : []) if (c.renewed) seen.add(`${w.object.metadata.name}/${c.pod}/${c.at}`);
  }
  return seen.size;
}
