// API cost of an EphemeralJob over N pods (issue 10, "Performance"), counted at the
// embedded API server (server.requests). Every pod's container runs, then exits 0 (driven
// here as the kubelet would: injected → running → exited). Events are produced as one relay
// delivers them: the relay's own decoding and fingerprints of pods and jobs (an unchanged
// object, a job's status-only write or a pod's labels-only change that selects the same
// jobs is not sent), its pod decision and its envelope text (snapshot and `data.jobs`
// included), and its hold (a change that only starts ephemeral containers waits for the
// pod's next change, EPHEMERA_RELAY_HOLD_SECONDS); each event handled once (or, for the
// duplicate-delivery figures, by 4 instances at once). Containers end within the hold (a
// short check, the default here) or outlive it (`long`: the held change is sent when the
// hold ends, and the clocks move past it). A job requeue is delivered as a job event when
// nothing else is pending, and every requeue a handler asks for is counted: production sends
// each as a delayed message whose reconcile reads again.
import type { Envelope } from '../../functions/api/envelope.ts';
import type { Pod } from '../../functions/api/pod.ts';
import type { ApiServer } from '../../functions/cluster/index.ts';
import { ejobController, jobKey } from '../../functions/ejob/controller.ts';
import { handle, type EngineDeps } from '../../functions/engine/engine.ts';
import { Worker } from 'node:worker_threads';
import type { InstanceAnswer, InstanceData, InstanceRequest } from './engine-worker.ts';
import { handledCounts } from '../support/engine-deps.ts';
import { envelopeOf, jobSnapshotJson, messageFor, queuedJob, queuedPod, type Queued } from '../../relay/envelope.ts';
import { decidePod } from '../../relay/pod-event.ts';
import { decodeJob, decodePod, type JobView } from '../../relay/trim.ts';
import { jobStatus, worldWith } from '../support/ejob-world.ts';
import { TOKENS } from '../support/shipped-rbac.ts';
import { realisticPod } from './pods.ts';
import { figure } from './report.ts';

const JOB = 'probe';
const NS = 'default';
const origin = { relayId: 'bench' };
const AT = Date.parse('2026-01-01T01:01:00Z');

/** The envelope the relay sends for a queued event: its text, parsed as the functions parse it. */
function send(q: Queued, snapshot: string): Envelope {
  return envelopeOf(messageFor(q, origin, snapshot));
}

/**
 * The pods as stored, not copies (read only: a write replaces a stored object). Copying
 * 1,000 real-sized pods at every step of the harness made most of the garbage the timed
 * handlers then paid for in GC pauses.
 */
function storedPods(server: ApiServer): readonly Pod[] {
  return server.store.stored(server.store.defFor('v1', 'Pod'), NS) as unknown as readonly Pod[];
}

/** The job as the relay decodes it (its view and fingerprint). */
function decodedJob(server: ApiServer): { view: JobView; fingerprint: string } {
  const d = decodeJob(server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: NS, name: JOB }));
  if ('error' in d) throw new Error(d.error);
  return { view: d.object, fingerprint: d.fingerprint };
}

function podsAndJob(n: number, parallelism: number): unknown[] {
  const objects: unknown[] = [];
  for (let i = 0; i < n; i++) {
    objects.push(realisticPod(i, { namespace: NS, labels: { app: 'web', tier: 'frontend' }, createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i % 60, Math.floor(i / 60))) }));
  }
  objects.push({
    apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob',
    metadata: { name: JOB, namespace: NS, generation: 1, creationTimestamp: '2026-01-01T01:00:00Z' },
    spec: { selector: { matchLabels: { app: 'web' } }, parallelism, template: { ephemeralContainers: [{ name: 'probe', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'app', command: ['true'] }] } },
  });
  return objects;
}

/**
 * A relay's view: the relay's fingerprints of pods and job, and its decision per pod event
 * (relay/pod-event.ts); what it would forward since the last look becomes envelopes.
 */
class RelayView {
  private readonly pods = new Map<string, string>();
  /** Pods whose queued change is held (only starts ephemeral containers): key → the jobs to name. */
  private readonly held = new Map<string, string[] | undefined>();
  private job = '';
  private readonly server: ApiServer;
  constructor(server: ApiServer) {
    this.server = server;
    for (const p of this.allPods()) {
      const d = decodePod(p);
      if (!('error' in d)) this.pods.set(d.key, d.fingerprint);
    }
  }

  private allPods(): readonly unknown[] {
    return storedPods(this.server);
  }

  /**
   * Envelopes for everything that changed (one per object: the relay coalesces bursts), pods
   * first. A held change waits (the relay's hold) until the pod changes again in a way that
   * may not wait, or `releaseHeld` says the hold has ended; it goes with the pod's latest state.
   */
  changes(): Envelope[] {
    const job = decodedJob(this.server);
    const out: Envelope[] = [];
    for (const p of this.allPods()) {
      const d = decodePod(p);
      if ('error' in d) throw new Error(d.error);
      const previous = this.pods.get(d.key);
      this.pods.set(d.key, d.fingerprint);
      const decision = decidePod('MODIFIED', d, previous, { jobs: () => [job.view], known: true });
      if (!decision.forward) continue;
      if (decision.hold) this.held.set(d.key, decision.jobs);
      else {
        this.held.delete(d.key);
        out.push(send(queuedPod('MODIFIED', d.object, AT, { jobs: decision.jobs }), d.fingerprint));
      }
    }
    if (job.fingerprint !== this.job) {
      const q = queuedJob(this.job === '' ? 'ADDED' : 'MODIFIED', job.view, AT);
      out.push(send(q, jobSnapshotJson(q)));
      this.job = job.fingerprint;
    }
    return out;
  }

  /** The holds have ended: every held pod's latest state, as the relay sends it then. */
  releaseHeld(): Envelope[] {
    const out: Envelope[] = [];
    for (const p of this.allPods()) {
      const d = decodePod(p);
      if ('error' in d || !this.held.has(d.key)) continue;
      out.push(send(queuedPod('MODIFIED', d.object, AT, { jobs: this.held.get(d.key) }), d.fingerprint));
    }
    this.held.clear();
    return out;
  }
}

/** The kubelet, one step for every pod holding the job's container: → running → exited 0. */
function kubeletTick(server: ApiServer, now: Date): number {
  let moved = 0;
  for (const pod of storedPods(server)) {
    const ec = pod.spec.ephemeralContainers?.[0];
    if (!ec) continue;
    const s = pod.status?.ephemeralContainerStatuses?.[0]?.state;
    if (s?.terminated) continue;
    // startedAt is "now" on the engines' clock, as a kubelet stamps it.
    const state = s?.running ? { terminated: { exitCode: 0, reason: 'Completed' } } : { running: { startedAt: now.toISOString() } };
    server.store.put({ ...pod, status: { ...pod.status, ephemeralContainerStatuses: [{ name: ec.name, state }] } } as never);
    moved++;
  }
  return moved;
}

interface Run {
  injected: number;
  writes: number;
  writeAttempts: number;
  eventWrites: number;
  reads: number;
  conflicts: number;
  status409: number;
  podEvents: number;
  podEventRequests: number;
  podEventBytes: number;
  /** Handlers that asked for a requeue (each a delayed message and a reconcile in production). */
  requeues: number;
  /** Reads by what was read: the job's Lease, LISTs of pods, GETs of the job, LISTs of jobs (routing). */
  readsOf: { leases: number; podLists: number; jobGets: number; jobLists: number };
  ms: number[];
  /** The same for the events whose reconcile injected something (a claim event). */
  claimMs: number[];
}

/** How far to run: the whole job, or until so many pods were injected (and have finished) or so many pod events were handled. */
interface Limits {
  injected?: number;
  podEvents?: number;
  /** Containers start within the relay's hold and run past it: held changes are sent before the kubelet ends them, and the clocks move past the hold. */
  long?: boolean;
  /** Ask for gzip as against a real cluster (default: as the embedded cluster's kubeconfig says, not). */
  compression?: boolean;
  /** Hold every request this long at the server: a cluster this far away (a round trip from Lambda to EKS). */
  latencyMs?: number;
  /** Each instance in a thread of its own (engine-worker.ts): its own heap and JIT, as a Lambda's process; timed there. */
  isolated?: boolean;
}

/** One function instance: handles an envelope at the bench's clock. */
interface Instance {
  /** Timed in a thread of its own (its answer's `ms`), or not (deliver() times it). */
  readonly isolated: boolean;
  handle(e: Envelope, clockMs: number): Promise<InstanceAnswer>;
  close(): Promise<void>;
}

/** An instance in the bench's own thread, beside the embedded API server and the harness (timed by deliver()). */
function inThread(deps: EngineDeps): Instance {
  return {
    isolated: false,
    handle: async (e) => {
      return { ms: 0, ...handledCounts(await handle(e, deps)) };
    },
    close: async () => {},
  };
}

/** An instance in a worker thread (engine-worker.ts), one event at a time, timed in its thread. */
function inWorker(data: InstanceData): Instance {
  const worker = new Worker(new URL('./engine-worker.ts', import.meta.url), { workerData: data });
  let queue = Promise.resolve();
  return {
    isolated: true,
    handle: (e, clockMs) => {
      const answer = queue.then(() => new Promise<InstanceAnswer>((resolve, reject) => {
        const failed = (err: Error): void => {
          worker.off('message', answered);
          reject(err);
        };
        const answered = (a: InstanceAnswer): void => {
          worker.off('error', failed);
          if (a.error === undefined) resolve(a);
          else reject(new Error(a.error));
        };
        worker.once('message', answered);
        worker.once('error', failed);
        worker.postMessage({ envelope: e, clockMs } satisfies InstanceRequest);
      }));
      queue = answer.then(() => {}, () => {});
      return answer;
    },
    close: async () => {
      await worker.terminate();
    },
  };
}

/** The relay's hold (EPHEMERA_RELAY_HOLD_SECONDS' default: lease 15 s + skew 5 s, the engines' claim window). */
const HOLD_SECONDS = 20;

/** A job: deliver every event the relay would, to `instances` engines at once, until it finished (or a limit). */
async function wholeJob(n: number, parallelism: number, instances: number, limits: Limits = {}): Promise<Run> {
  const maxPodEvents = limits.podEvents ?? Number.POSITIVE_INFINITY;
  const maxInjected = limits.injected ?? Number.POSITIVE_INFINITY;
  let clock = Date.parse('2026-01-01T01:01:00Z');
  const { server, deps } = await worldWith({ objects: podsAndJob(n, parallelism), now: () => new Date(clock), ...(limits.compression !== undefined ? { compression: limits.compression } : {}) });
  const engines: Instance[] = Array.from({ length: instances }, (_, i) => (limits.isolated ? inWorker({ server: server.url, token: TOKENS.functions, holder: `bench-${i}`, compression: limits.compression ?? false }) : inThread(deps(`bench-${i}`))));
  const relay = new RelayView(server);
  if (limits.latencyMs) server.faults.add({ delayMs: limits.latencyMs, times: Number.POSITIVE_INFINITY, label: 'round trip' });
  const run: Run = { injected: 0, writes: 0, writeAttempts: 0, eventWrites: 0, reads: 0, conflicts: 0, status409: 0, podEvents: 0, podEventRequests: 0, podEventBytes: 0, requeues: 0, readsOf: { leases: 0, podLists: 0, jobGets: 0, jobLists: 0 }, ms: [], claimMs: [] };
  try {
    server.requests.clear();
    for (let round = 0; round < 20 * n && !jobStatus(server, JOB).completionTime && run.podEvents < maxPodEvents && doneCount(server) < maxInjected; round++) {
      const events = relay.changes();
      if (events.length === 0 && limits.long && anyRunning(server)) {
        // The containers started within the hold and run past it: what it held goes now, and time moves past it.
        events.push(...relay.releaseHeld());
        if (events.length > 0) clock += (HOLD_SECONDS + 1) * 1000;
      }
      if (events.length === 0) {
        if (kubeletTick(server, new Date(clock)) !== 0) continue;
        // Nothing moves any more: the holds end.
        events.push(...relay.releaseHeld());
        if (events.length === 0) {
          const q = queuedJob('RESYNC', decodedJob(server).view, AT);
          events.push(send(q, jobSnapshotJson(q)));
        }
      }
      for (const e of events) await deliver(server, e, run, { engines, clockMs: clock });
    }
    const all = server.requests.entries;
    // Writes that took effect (2xx); attempts answered 409 (a concurrent instance moved first) are counted apart.
    run.writes = all.filter((r) => r.method !== 'GET' && !r.path.includes('/events') && r.status < 300).length;
    run.writeAttempts = all.filter((r) => r.method !== 'GET' && !r.path.includes('/events')).length;
    run.eventWrites = all.filter((r) => r.method !== 'GET' && r.path.includes('/events')).length;
    const gets = all.filter((r) => r.method === 'GET');
    run.reads = gets.length;
    const count = (pred: (path: string) => boolean): number => gets.filter((r) => pred(r.path)).length;
    run.readsOf = { leases: count((x) => x.includes('/leases/')), podLists: count((x) => x.endsWith('/pods')), jobGets: count((x) => /\/ephemeraljobs\/[^/]+$/.test(x)), jobLists: count((x) => x.endsWith('/ephemeraljobs')) };
    run.status409 = all.filter((r) => r.status === 409).length;
    run.injected = storedPods(server).filter((p) => (p.spec.ephemeralContainers ?? []).length > 0).length;
    return run;
  } finally {
    await Promise.all(engines.map((x) => x.close()));
    await server.close();
  }
}

/** Some pod's job container is running. */
function anyRunning(server: ApiServer): boolean {
  return storedPods(server).some((p) => p.status?.ephemeralContainerStatuses?.[0]?.state?.running);
}

/** Pods whose job container has exited. */
function doneCount(server: ApiServer): number {
  return storedPods(server).filter((p) => p.status?.ephemeralContainerStatuses?.[0]?.state?.terminated).length;
}

/** One event to every instance at once, at the bench's clock; its time, requests and bytes into `run`. */
async function deliver(server: ApiServer, e: Envelope, run: Run, to: { engines: Instance[]; clockMs: number }): Promise<void> {
  const { engines, clockMs } = to;
  const before = server.requests.entries.length;
  const started = performance.now();
  const results = await Promise.all(engines.map((x) => x.handle(e, clockMs)));
  // In this thread: the wall time of all; in workers: the slowest instance's own handle().
  const ms = engines.every((x) => x.isolated) ? Math.max(...results.map((r) => r.ms)) : performance.now() - started;
  run.ms.push(ms);
  for (const r of results) {
    run.conflicts += r.conflicts;
    if (r.requeue) run.requeues++;
  }
  const mine = server.requests.entries.slice(before);
  if (mine.some((r) => r.path.endsWith('/ephemeralcontainers'))) run.claimMs.push(ms);
  if (e.data.kind === 'Pod') {
    run.podEvents++;
    run.podEventRequests += mine.length;
    run.podEventBytes += mine.reduce((s, r) => s + r.bytes + r.requestBytes, 0);
  }
}

const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? 0;
const per = (x: number, pods: number): number => Math.round((x / Math.max(1, pods)) * 100) / 100;

const podBytes = Math.round(podsAndJob(100, 1).slice(0, 100).reduce((n: number, p) => n + JSON.stringify(p).length, 0) / 100);
process.stdout.write(`EphemeralJob bench pods: ${podBytes} bytes of JSON each on average, as a Deployment's pods come from kube-apiserver (test/bench/pods.ts)\n`);

// 1. Writes, Event writes and reads per injected pod, one instance.
const single: Record<string, Run> = {};
for (const n of [100, 1000]) {
  for (const p of [1, 10]) {
    // The 1,000-pod job runs for its first 100 pods: per-pod counts do not depend on N, and
    // every reconcile LISTs the job's pods (see the bytes figure), which makes a whole run slow.
    const r = await wholeJob(n, p, 1, n > 100 ? { injected: 100 } : {});
    single[`${n}/${p}`] = r;
    const at = `N=${n}, parallelism ${p}${n > 100 ? ', first 100 pods' : ''}`;
    figure({ name: `ejob writes/injected pod excl. Events, ${at}`, value: per(r.writes, r.injected), unit: 'writes', what: `POST/PUT/PATCH/DELETE at the API server except Events (${r.injected} pods injected, every container running then exiting 0), one relay, each event handled once`, goal: { op: '<=', bound: p === 1 ? 3 : 1.5, source: 'issue 10' } });
    figure({ name: `ejob Event writes/injected pod, ${at}`, value: per(r.eventWrites, r.injected), unit: 'writes', what: 'Event creates at the API server over the whole job, per injected pod', goal: { op: '<=', bound: 1, source: 'issue 10' } });
    figure({ name: `ejob reads/injected pod, ${at}`, value: per(r.reads, r.injected), unit: 'reads', what: 'GETs and LISTs at the API server over the whole job (routing included), per injected pod', goal: { op: '<=', bound: 6, source: 'issue 10' } });
    figure({ name: `ejob requeues asked/injected pod, ${at}`, value: per(r.requeues, r.injected), unit: 'requeues', what: 'handled events whose result asked to look again later: in production each is a delayed message and one more reconcile (2–4 reads), not counted in the reads above' });
  }
}

// 1b. The same when every container starts within the relay's hold and runs past it (a long
// check): the held start is sent when the hold ends, and its reconcile shows the pod running.
for (const p of [1, 10]) {
  const r = await wholeJob(100, p, 1, { long: true });
  const at = `N=100, parallelism ${p}, containers running past the ${HOLD_SECONDS} s hold`;
  figure({ name: `ejob writes/injected pod excl. Events, ${at}`, value: per(r.writes, r.injected), unit: 'writes', what: `as above (${r.injected} pods); the start is a pod event of its own, sent when the hold ends, and its status write shows the pod running`, goal: { op: '<=', bound: p === 1 ? 3 : 1.5, source: 'issue 10' } });
  figure({ name: `ejob reads/injected pod, ${at}`, value: per(r.reads, r.injected), unit: 'reads', what: `as above; requeues asked per pod: ${per(r.requeues, r.injected)}`, goal: { op: '<=', bound: 6, source: 'issue 10' } });
}

// 2. Every event delivered to 4 instances at once.
for (const p of [1, 10]) {
  const r = await wholeJob(100, p, 4);
  const base = single[`100/${p}`] as Run;
  figure({ name: `ejob writes/injected pod, 4 instances vs 1, N=100, parallelism ${p}`, value: Math.round((per(r.writes, r.injected) / per(base.writes, base.injected)) * 100) / 100, unit: 'ratio', what: `writes excl. Events that took effect, per injected pod, when every event reaches 4 instances at once (${per(r.writes, r.injected)}) over the same with one (${per(base.writes, base.injected)})`, goal: { op: '<=', bound: 1.5, source: 'issue 10' } });
  figure({ name: `ejob write attempts/injected pod, 4 instances vs 1, N=100, parallelism ${p}`, value: Math.round((per(r.writeAttempts, r.injected) / per(base.writeAttempts, base.injected)) * 100) / 100, unit: 'ratio', what: `the same counting every write request, 409s included (${per(r.writeAttempts, r.injected)} vs ${per(base.writeAttempts, base.injected)}): 4 instances plan the same claim/status from the same read and all but one get 409`, goal: { op: '<=', bound: 1.5, source: 'issue 10' } });
  figure({ name: `ejob conflict requeues/injected pod, 4 instances, N=100, parallelism ${p}`, value: per(r.conflicts, r.injected), unit: 'requeues', what: `reconciles that ended "conflict" (still 409 after 3 re-plans, requeued) per injected pod; there is no "busy" outcome any more. 409 answers seen: ${per(r.status409, r.injected)} per pod`, goal: { op: '<=', bound: 0.5, source: 'issue 10' } });
}

// 3. Requests and bytes per pod event: 10,000 pods vs 100 (the first 30 pod events of the job).
// With gzip, as the functions' client asks a real cluster: the bytes a production job pays.
const small = await wholeJob(100, 10, 1, { podEvents: 30, compression: true });
const large = await wholeJob(10_000, 10, 1, { podEvents: 30, compression: true });
const perEvent = (r: Run): { requests: number; bytes: number } => ({ requests: r.podEventRequests / r.podEvents, bytes: r.podEventBytes / r.podEvents });
figure({ name: 'ejob requests/pod event, 10,000 pods vs 100', value: Math.round((perEvent(large).requests / perEvent(small).requests) * 100) / 100, unit: 'ratio', what: `requests per pod event at the API server, first 30 pod events, parallelism 10 (${perEvent(large).requests.toFixed(2)} vs ${perEvent(small).requests.toFixed(2)})`, goal: { op: '<=', bound: 1.1, source: 'issue 10' } });
figure({ name: 'ejob bytes/pod event, 10,000 pods vs 100', value: Math.round(perEvent(large).bytes / perEvent(small).bytes), unit: 'ratio', what: `pods of ${podBytes} B of JSON; response bytes as sent (gzipped at 128 KiB or more, as kube-apiserver does for a client that asks, as ours does) + request body bytes per pod event (${Math.round(perEvent(large).bytes)} vs ${Math.round(perEvent(small).bytes)} B): each reconcile LISTs the job's pods`, goal: { op: '<=', bound: 1.1, source: 'issue 10' } });

// 4. A pod event that changes nothing (a matched pod's unrelated status update, not yet a target's turn).
{
  const { server, deps } = await worldWith({ objects: podsAndJob(100, 1) });
  try {
    const d = deps();
    const relay = new RelayView(server);
    // Settle: the job's first reconcile and the events it causes.
    for (let pending = relay.changes(); pending.length > 0; pending = relay.changes()) for (const e of pending) await handle(e, d);
    const noop = async (why: string, change: (p: Pod) => Pod): Promise<void> => {
      const idle = storedPods(server).at(-1) as Pod;
      server.store.put(change(idle) as never);
      server.requests.clear();
      const events = relay.changes();
      for (const e of events) await handle(e, d);
      const r = server.requests.entries;
      figure({ name: `ejob requests for a pod event that changes nothing (${why})`, value: r.length, unit: 'requests', what: `${events.length} event(s) the relay sent for it: ${r.map((x) => `${x.verb} ${x.path.split('/').slice(-2).join('/')}`).join(', ') || 'none'} (0 when the relay's snapshot decides, else at most 1 GET)`, goal: { op: '<=', bound: 1, source: 'issue 10' } });
    };
    await noop('podIP of a pod waiting its turn', (p) => ({ ...p, status: { ...p.status, podIP: '10.0.0.99' } }));
    await noop('an unrelated label on a pod waiting its turn', (p) => ({ ...p, metadata: { ...p.metadata, labels: { ...p.metadata.labels, version: '2' } } }));
  } finally {
    await server.close();
  }
}

// 5. Event → actions applied, p99 at 1,000 pods, as a ratio to the planner alone.
{
  const r = single['1000/10'] as Run;
  const { server, deps } = await worldWith({ objects: podsAndJob(1000, 10), now: () => new Date('2026-01-01T01:01:00Z') });
  try {
    const observed = await ejobController.observe(jobKey(NS, JOB), deps().kube, deps().lock);
    const planMs: number[] = [];
    for (let i = 0; i < 200 && observed; i++) {
      const t = performance.now();
      ejobController.plan(observed, new Date('2026-01-01T01:01:00Z'));
      planMs.push(performance.now() - t);
    }
    // The goal's figure: the instance in a thread of its own (its own heap and JIT, as a
    // Lambda's process), over every event of the whole job, so a warm instance's events
    // outnumber the JIT's first ones as they do in production.
    const whole = await wholeJob(1000, 10, 1, { isolated: true });
    const p99 = pct(whole.ms, 99);
    const WARMING = 25;
    figure({ name: 'ejob event→actions applied p99, N=1000, parallelism 10', value: Math.round(p99 * 10) / 10, unit: 'ms', what: `handle() timed in a worker thread of its own (its own V8 heap and JIT, as a Lambda's process has; the in-process API server and the harness in the bench's thread), over loopback HTTP, read without gzip as the embedded cluster is, every event of the whole job (${whole.ms.length} events, ${whole.injected} pods; p50 ${pct(whole.ms, 50).toFixed(1)} ms, p90 ${pct(whole.ms, 90).toFixed(1)} ms, max ${Math.max(...whole.ms).toFixed(1)} ms; the first event, whose instance has parsed no pod yet: ${(whole.ms[0] ?? 0).toFixed(1)} ms; p99 after the first ${WARMING}, while the JIT warms: ${pct(whole.ms.slice(WARMING), 99).toFixed(1)} ms; the ${whole.claimMs.length} claim events: p50 ${pct(whole.claimMs, 50).toFixed(1)}, p99 ${pct(whole.claimMs, 99).toFixed(1)} ms); noisy on a shared 2-core machine`, goal: { op: '<=', bound: 50, source: 'issue 10' } });
    figure({ name: 'ejob event→actions applied p99, N=1000, parallelism 10, in the bench\'s thread, first 100 pods', value: Math.round(pct(r.ms, 99) * 10) / 10, unit: 'ms', what: `as earlier rounds measured it: handle() in the thread of the in-process API server and the harness, whose work and garbage it then pays for too, over the first 100 pods (${r.ms.length} events; p50 ${pct(r.ms, 50).toFixed(1)} ms, p90 ${pct(r.ms, 90).toFixed(1)} ms; the first event: ${(r.ms[0] ?? 0).toFixed(1)} ms; p99 of the rest ${pct(r.ms.slice(1), 99).toFixed(1)} ms)` });
    const zipped = await wholeJob(1000, 10, 1, { injected: 100, compression: true });
    figure({ name: 'ejob event→actions applied p99 with gzip, N=1000, parallelism 10', value: Math.round(pct(zipped.ms, 99) * 10) / 10, unit: 'ms', what: `the same with the client asking for gzip, as against a real cluster: the in-process server compresses each LIST (level 1, as kube-apiserver) and the client inflates it (${zipped.ms.length} events; p50 ${pct(zipped.ms, 50).toFixed(1)} ms)` });
    figure({ name: 'ejob event→actions p99 / planner alone p99, N=1000', value: Math.round(p99 / Math.max(0.001, pct(planMs, 99))), unit: 'ratio', what: `the same p99 over plan() alone on one observation of the 1,000-pod job (p99 ${pct(planMs, 99).toFixed(2)} ms): the rest is HTTP, JSON and the LIST` });
    // A cluster 5 ms away, as EKS is from a Lambda function in the same region: a claim
    // event's latency is mostly its round trips (3 reads, then the claim, the injections,
    // the status write and the Events — which go out in groups, engine/apply.ts).
    const far = await wholeJob(100, 10, 1, { latencyMs: 5 });
    figure({ name: 'ejob claim event → actions applied p50 with 5 ms per request, N=100, parallelism 10', value: Math.round(pct(far.claimMs, 50) * 10) / 10, unit: 'ms', what: `handle() of the events whose reconcile injected pods (${far.claimMs.length} of ${far.ms.length} events; p99 ${pct(far.claimMs, 99).toFixed(1)} ms; every event: p50 ${pct(far.ms, 50).toFixed(1)}, p99 ${pct(far.ms, 99).toFixed(1)} ms), every request held 5 ms at the server` });
    process.stdout.write(`EphemeralJob whole-job runs: ${Object.entries(single).map(([k, v]) => `${k}: ${v.injected} pods, ${v.writes} writes, ${v.eventWrites} Event writes, ${v.reads} reads`).join('; ')}\n`);
  } finally {
    await server.close();
  }
}

// 6. Reads per injected pod by what was read (100 pods, one instance): Lease GETs, pod LISTs,
// job GETs, and the namespace's job LISTs that route pod events. Issue 10 asks for no Lease
// traffic for events that cannot lead to an injection.
for (const p of [1, 10]) {
  const r = single[`100/${p}`] as Run;
  const o = r.readsOf;
  figure({ name: `ejob Lease GETs/injected pod, N=100, parallelism ${p}`, value: per(o.leases, r.injected), unit: 'reads', what: `GETs of the job's Lease over the whole job (${r.injected} pods injected, one instance); of ${per(r.reads, r.injected)} reads per pod: pod LISTs ${per(o.podLists, r.injected)}, job GETs ${per(o.jobGets, r.injected)}, job LISTs (routing) ${per(o.jobLists, r.injected)}, other ${per(r.reads - o.leases - o.podLists - o.jobGets - o.jobLists, r.injected)}` });
}
