// The relay: watch Pods and EphemeralJobs, keep fingerprints of trimmed copies, forward what
// can matter as envelopes through one bounded, coalescing delivery queue. No reconcile logic.
import type { KubeConfig } from '@kubernetes/client-node';
import { setTimeout as delay } from 'node:timers/promises';
import type { Envelope } from '../functions/api/envelope.ts';
import { EJOB } from '../functions/api/names.ts';
import type { Pod } from '../functions/api/pod.ts';
import type { LockConfig } from '../functions/engine/lock.ts';
import type { Logger } from '../functions/engine/logger.ts';
import { TERMINATE_SIDECAR_ENV } from '../functions/sidecar/env.ts';
import type { Kube } from '../functions/kube/kube.ts';
import { DeliveryQueue } from './delivery-queue.ts';
import { idSequence, jobSnapshotJson, messageFor, queuedFrom, queuedJob, queuedPod, type Message, type Origin, type Queued } from './envelope.ts';
import { concernedJobs } from './filter.ts';
import { indexJob, type JobsByNamespace } from './job-index.ts';
import { decidePod, type NamespaceJobs } from './pod-event.ts';
import { startElection, type Elector } from './leader.ts';
import { listLeaseJobs, type LeaseSweepOptions, type UnusableLease } from './lease-sweep.ts';
import { createMetrics, type RelayMetrics } from './metrics.ts';
import { listRaw } from './raw-list.ts';
import { Reflector, type Absent, type Decoded, type ReflectorEvent, type Unreadable } from './reflector.ts';
import { Requeue } from './requeue.ts';
import { replayCache, type ReplayScope } from './replay.ts';
import type { Sink } from './sinks/sink.ts';
import { decodeJob, decodePod, type JobView } from './trim.ts';

export interface RelayOptions {
  kubeConfig: KubeConfig;
  sink: Sink;
  /** Namespaces to watch; empty: all. */
  namespaces: string[];
  relayId: string;
  /** The cluster name stamped on envelopes (EPHEMERA_RELAY_CLUSTER). */
  cluster?: string | undefined;
  coalesceMs: number;
  /**
   * How long a pod change that only starts ephemeral containers (an injection's echo, a
   * container's start) may wait for the pod's next change (ms; 0: never held). See
   * pod-event.ts startsOnly and delivery-queue.ts.
   */
  holdMs?: number;
  resyncSeconds: number;
  /** Capacity of the delivery queue (keys queued or in flight). */
  bufferMax: number;
  logger: Logger;
  /** /readyz fails while the sink has taken nothing for longer than this (default 120). */
  deliveryGraceSeconds?: number;
  /** /readyz fails while a kind's LISTs have failed in a row for longer than this (ms, default 5 minutes). */
  listFailingUnreadyMs?: number;
  /** /readyz fails while leader election rounds have failed with an error for longer than this (ms, default ELECTION_FAILING_UNREADY_MS). */
  electionFailingUnreadyMs?: number;
  /** With it, only the Lease holder forwards; without it, this relay always forwards. */
  election?: { kube: Kube; lock: LockConfig };
  metrics?: RelayMetrics;
  clock?: () => Date;
  /** Backoff of the list/watch loops and of the sink retries (tests shorten it). */
  backoff?: { minMs: number; maxMs: number; random?: () => number };
  /** LIST page size (default 500). */
  listPageSize?: number;
  /** A watch with no event or bookmark for this long is resumed, and after a second such watch in a row the kind is listed again (default 150 s; tests shorten it). */
  watchIdleMs?: number;
  /** How often an EphemeralJob list that answered 404/403 is tried again (default 60 s), after five quick tries backing off as `backoff` does. */
  absentRetryMs?: number;
  /** How long the pods wait for the first EphemeralJob list before they are listed anyway, naming no jobs (default 5 s). */
  jobsFirstMs?: number;
  /**
   * How long the jobs' events wait for the pods' first list (default 30 s): after it, a pod
   * list that keeps failing (a right missing in one namespace, a 5xx storm) no longer holds
   * them — the jobs needing work are sent then, and as they change.
   */
  podsFirstMs?: number;
  /**
   * Sweep the claims Leases in this namespace (the functions' lock namespace) at the first
   * sync, on becoming leader and at each periodic resync: the key of every labelled Lease
   * whose job the watch cache lacks is sent as a job event (lease-sweep.ts). Unset: no sweep.
   */
  leaseSweep?: LeaseSweepOptions;
  /**
   * How long stop() sends what is queued and waits for the sends under way before it
   * releases the leader Lease (ms, default FLUSH_ON_STOP_MS; never past the lease held).
   */
  stopWaitMs?: number;
}

export interface Relay {
  readonly metrics: RelayMetrics;
  /** Every kind listed once, and the sink not stalled past the grace. */
  ready(): boolean;
  /** Why not ready (for /readyz), or "ready". */
  readiness(): string;
  isLeader(): boolean;
  /** Resolves once every resource was listed (the first list is retried forever). */
  synced(): Promise<void>;
  /** Replay the watch cache (no LIST): `due` = the jobs that can need work and the pods whose sidecars are due; `all` = every job and those pods. Pulled into the queue as it has room. */
  resync(reason: string, scope?: ReplayScope): void;
  /**
   * Look at this envelope's key again after a delay (in-process requeue; one timer per key):
   * then its state in the watch cache is queued, unless the object already waits in the queue.
   */
  requeue(envelope: Envelope, delayMs: number): void;
  /**
   * Sweep the claims Leases now (or join the sweep under way): resolves with the number of
   * job keys queued, or undefined when no sweep ran (none configured, not synced, the job
   * list absent, not leader, or the Lease LIST failed: logged, tried again at the next resync).
   */
  sweepLeases(reason: string): Promise<number | undefined>;
  /** Send what is queued now and wait for the sink (tests, shutdown). */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

interface State {
  opts: RelayOptions;
  metrics: RelayMetrics;
  clock: () => Date;
  jobs: JobsByNamespace;
  /** Watch scopes (a namespace, or '' for all) whose EphemeralJob list answers 404/403: their jobs are unknown. */
  jobsAbsent: Set<string>;
  /** Each watch scope's EphemeralJob loop: until it has listed (or found them absent), its jobs are unknown too. */
  jobLoops: Map<string, Reflector<JobView>>;
  leader: boolean;
  /** Events were dropped while following: the next leadership (or the first sync) replays. */
  missed: boolean;
  /** The jobs' events stopped waiting for the pods' first list (RelayOptions.podsFirstMs). */
  jobsUnheld: boolean;
  queue: DeliveryQueue;
  /** Where this relay's envelopes come from, and their ids. */
  origin: Origin;
  /** The labelled Leases the last sweep skipped as naming no possible job (warned about once). */
  unusableLeases: Set<string>;
}

/** How long stop() sends what is queued before it releases the leader Lease (a pod's grace period is 30 s). */
const FLUSH_ON_STOP_MS = 10_000;

/** Start watching; resolves after the first list of every resource. */
export async function startRelay(opts: RelayOptions): Promise<Relay> {
  const relay = createRelay(opts);
  await relay.synced();
  return relay;
}

/** Start watching and return at once; the loops retry the first list until it succeeds. */
export function createRelay(opts: RelayOptions): Relay {
  const metrics = opts.metrics ?? createMetrics();
  const box: { relay?: Relay; replay?: (scope: ReplayScope) => Iterator<Queued>; build?: (q: Queued, sameId?: string) => Message } = {};
  const queue = buildQueue(opts, metrics, {
    resyncNeeded: () => overflowReplay(st, box.replay),
    // Set below, before any reflector starts: nothing is queued before then.
    build: (q, sameId) => box.build!(q, sameId),
  });
  metrics.observeQueue({ depth: () => queue.depth, oldestAgeSeconds: () => queue.oldestAgeSeconds() });
  const st: State = { opts, metrics, clock: opts.clock ?? ((): Date => new Date()), jobs: new Map(), jobsAbsent: new Set(), jobLoops: new Map(), leader: opts.election === undefined, missed: false, jobsUnheld: false, queue, origin: { relayId: opts.relayId, cluster: opts.cluster, nextId: idSequence() }, unusableLeases: new Set() };
  const { pods, jobs } = buildReflectors(st);
  box.replay = (scope) => replay(st, pods, scope);
  box.build = (q, sameId) => build(st, pods, q, sameId);
  const all: Reflector<unknown>[] = [...jobs, ...pods] as Reflector<unknown>[];
  const requeue: Requeue = new Requeue((q) => {
    if (!requeued(st, pods, q)) requeue.after(q, REQUEUE_WHEN_FULL_MS);
  });
  let stopped = false;
  const stopping = new AbortController();
  // Jobs first, so the pod filter knows them. But a job list that keeps failing (a 5xx storm,
  // a broken conversion webhook) must not stop the pod watches the SidecarTerminator needs,
  // as a 404 or 403 does not (review: 22 job lists in 3 s and no pod request): after
  // jobsFirstMs the pods are listed anyway, naming no jobs until the jobs are listed, when
  // each job is forwarded (RESYNC) and its reconcile reads its pods.
  for (const r of jobs) r.start();
  const jobsSynced = Promise.all(jobs.map((r) => r.whenSynced()));
  const synced = Promise.race([jobsSynced, delay(opts.jobsFirstMs ?? 5000, undefined, { ref: false })]).then(async () => {
    if (stopped) return;
    for (const r of pods) r.start();
    await Promise.all(pods.map((r) => r.whenSynced()));
    // The pods' first list forwarded none a job selects (onPod): each job that needs work is
    // replayed now, after it, and its reconcile reads all its pods as they are.
    box.relay?.resync(st.missed ? 'listed while leadership changed' : 'the pods were listed', st.missed ? 'all' : 'due');
    await jobsSynced;
    void box.relay?.sweepLeases('first sync');
  });
  // A pod list that keeps failing must not hold the jobs' events for good (review): after
  // podsFirstMs they go without it, the ones already indexed as a replay of the jobs.
  void jobsSynced.then(() => delay(opts.podsFirstMs ?? 30_000, undefined, { ref: false })).then(() => {
    if (stopped || pods.every((r) => r.hasSynced())) return;
    st.jobsUnheld = true;
    opts.logger.warn({ waitedMs: opts.podsFirstMs ?? 30_000 }, 'the pods are not listed yet: the jobs are sent without waiting for them');
    if (st.leader) queue.backfill(replay(st, [], 'due'), 'due');
  });
  const resyncTimer = setInterval(() => {
    box.relay?.resync('periodic resync', 'due');
    void box.relay?.sweepLeases('periodic resync');
  }, opts.resyncSeconds * 1000);
  resyncTimer.unref();
  let elector: Elector | undefined;
  const readiness = readinessOf(opts, all, queue, () => elector);
  let sweeping: Promise<number | undefined> | undefined;
  const relay: Relay = {
    metrics,
    ready: () => readiness() === 'ready',
    readiness,
    isLeader: () => st.leader,
    synced: () => synced,
    resync(reason, scope = 'due') {
      // The pods are listed once the jobs are, or once their list has failed for jobsFirstMs:
      // a job list that keeps failing must not stop the replays of due sidecar pods either
      // (review: a new leader replayed nothing while it failed).
      if (!pods.every((r) => r.hasSynced()) || !st.leader) return;
      opts.logger.info({ reason, scope }, 'resync from the watch cache');
      queue.backfill(replay(st, pods, scope), scope);
    },
    requeue: (e, ms) => requeue.after(queuedFrom(e, st.clock().getTime()), ms),
    sweepLeases(reason) {
      if (stopped || !jobs.every((r) => r.hasSynced())) return Promise.resolve(undefined);
      sweeping ??= sweepLeases(st, reason, stopping.signal).finally(() => (sweeping = undefined));
      return sweeping;
    },
    flush: () => queue.flush(),
    async stop() {
      stopped = true;
      clearInterval(resyncTimer);
      // A sweep's LIST may hang on an API server that does not answer: it is cut, not waited
      // for (its page timeout is a minute; a pod's grace period is 30 s). What is queued is
      // sent while this relay still leads (no new election round, no replay: the successor
      // replays its own cache), for FLUSH_ON_STOP_MS at most, and only then is the leader
      // Lease released, so a successor does not start before it (reviews).
      stopping.abort();
      await sweeping;
      requeue.stop();
      await Promise.all(all.map((r) => r.stop()));
      elector?.stopRenewing();
      queue.dropReplays();
      // Never past the lease still held (then a successor may lead).
      await drain(queue, Math.min(opts.stopWaitMs ?? FLUSH_ON_STOP_MS, elector?.leadsForMs() ?? Infinity));
      await elector?.stop();
      await opts.sink.close?.();
    },
  };
  box.relay = relay;
  if (opts.election) elector = startElection(opts.election.kube, opts.election.lock, opts.logger, { change: (v) => onLeadership(st, relay, v), failed: () => metrics.leaderElectionFailures.inc() });
  metrics.leader.set(st.leader ? 1 : 0);
  return relay;
}

/**
 * At stop: send what is queued, then stop sending, within `waitMs` in all. No send starts
 * after the flush, and the sends under way are waited for within the same bound, not past
 * it: an in-process handling can hang for its whole timeout (60 s), past the pod's grace
 * period, and the leader Lease was then never released (review80 M1). A send cut short is
 * not lost: it goes on, and the successor replays everything.
 */
async function drain(queue: DeliveryQueue, waitMs: number): Promise<void> {
  const bound = delay(waitMs, undefined, { ref: false });
  await Promise.race([queue.flush(), bound]);
  await Promise.race([queue.stop(), bound]);
}

/** The replay after an overflow; a follower's replays nothing, its next lead replays everything (st.missed). */
function overflowReplay(st: State, replay: ((scope: ReplayScope) => Iterator<Queued>) | undefined): Iterator<Queued> {
  if (!st.leader) {
    st.missed = true;
    return [].values();
  }
  st.opts.logger.info({ reason: 'the queue overflowed', scope: 'all' }, 'resync from the watch cache');
  return replay?.('all') ?? [].values();
}

/** A LIST failing this long in a row makes the relay not ready (readinessOf). */
export const LIST_FAILING_UNREADY_MS = 300_000;

/** Leader election rounds failing with an error this long in a row make the relay not ready (readinessOf). */
export const ELECTION_FAILING_UNREADY_MS = 60_000;

/** What /readyz says: 'ready', or why not. */
function readinessOf(opts: RelayOptions, all: Reflector<unknown>[], queue: DeliveryQueue, elector: () => Elector | undefined): () => string {
  const graceMs = (opts.deliveryGraceSeconds ?? 120) * 1000;
  const unreadyMs = opts.listFailingUnreadyMs ?? LIST_FAILING_UNREADY_MS;
  return () => {
    const unlisted = all.find((r) => !r.hasSynced());
    // Which list, and why, when it is refused (review: a relay without its ClusterRole only
    // said it was waiting, like one still starting).
    if (unlisted) return `waiting for the first list${unlisted.listFailure() === undefined ? '' : ` of ${unlisted.path}: failing for ${Math.round(unlisted.listFailingForMs() / 1000)}s (${unlisted.listFailure()})`}`;
    // Synced once is not seeing now: a re-list that keeps failing (a right revoked, the API
    // server refusing) leaves the relay blind while its watch cannot resume (operability review).
    const blind = all.find((r) => r.listFailingForMs() > unreadyMs);
    if (blind) return `listing ${blind.path} has failed for ${Math.round(blind.listFailingForMs() / 1000)}s: no change there is seen`;
    // No replica can lead (the Lease's namespace or right missing): each drops every change
    // as a follower, which a healthy follower does too (review: both stayed ready).
    const election = elector()?.failing();
    if (election && election.forMs > (opts.electionFailingUnreadyMs ?? ELECTION_FAILING_UNREADY_MS)) return `leader election has failed for ${Math.round(election.forMs / 1000)}s (${election.error}): no replica forwards`;
    const stalled = queue.stalledMs();
    return stalled > graceMs ? `the sink has taken nothing for ${Math.round(stalled / 1000)}s (grace ${graceMs / 1000}s)` : 'ready';
  };
}

/** A requeue that found the queue full is asked again this much later. */
const REQUEUE_WHEN_FULL_MS = 1000;

/** A new leader resumes from its cache: replay it instead of listing again. */
function onLeadership(st: State, relay: Relay, leader: boolean): void {
  if (st.leader !== leader) st.metrics.leaderTransitions.inc();
  st.leader = leader;
  st.metrics.leader.set(leader ? 1 : 0);
  if (!leader) {
    // What it had still to replay is the new leader's to send (review: a demoted relay sent
    // its whole cache beside the new leader).
    st.queue.dropReplays();
    st.missed = true;
    return;
  }
  relay.resync('became leader', 'all');
  void relay.sweepLeases('became leader');
}

/**
 * List the labelled claims Leases and queue a job event for each whose job is not in the
 * watch cache, in a namespace this relay watches and whose EphemeralJobs it can list. The
 * functions then take the departed() path: the job read (404), the Lease, the job again, a
 * fenced DELETE. A job created since the cache last heard of it only gets one reconcile more.
 */
async function sweepLeases(st: State, reason: string, signal: AbortSignal): Promise<number | undefined> {
  const { opts } = st;
  const sweep = opts.leaseSweep;
  // No EphemeralJobs can be listed anywhere (no CRD, no right): no job is known, so none is missing.
  const allAbsent = st.jobsAbsent.size >= Math.max(1, opts.namespaces.length);
  if (sweep === undefined || !st.leader || allAbsent) return undefined;
  let named;
  try {
    named = await listLeaseJobs(opts.kubeConfig, sweep.namespace, { limit: opts.listPageSize ?? 500, timeoutMs: 60_000, signal });
  } catch (err) {
    if (signal.aborted) return undefined;
    opts.logger.warn({ namespace: sweep.namespace, reason, err: (err as Error).message }, 'claims Lease sweep: the Lease list failed; trying again at the next resync');
    return undefined;
  }
  warnUnusable(st, named.unusable);
  // The cache as it is now, after the LIST: a job it has is alive or on its way out by its own events.
  if (!st.leader) return undefined;
  const watched = (ns: string): boolean => opts.namespaces.length === 0 || opts.namespaces.includes(ns);
  let n = 0;
  for (const job of named.jobs) {
    if (!watched(job.namespace) || !namespaceJobs(st, job.namespace).known || st.jobs.get(job.namespace)?.has(job.name)) continue;
    forward(st, queuedJob('DELETED', { namespace: job.namespace, name: job.name, finished: true }, st.clock().getTime()));
    n++;
  }
  st.metrics.leaseSweeps.inc(n);
  if (n > 0) opts.logger.info({ namespace: sweep.namespace, reason, jobs: n }, 'claims Lease sweep: sent the keys of jobs the watch cache does not have');
  return n;
}

/**
 * One warning per labelled Lease whose key names a job that cannot exist, the first sweep
 * that finds it, not at every sweep: remembered while the Lease (with that key) is listed.
 */
function warnUnusable(st: State, unusable: UnusableLease[]): void {
  const id = (u: UnusableLease): string => `${u.lease} ${u.key}`;
  for (const u of unusable) {
    if (!st.unusableLeases.has(id(u))) st.opts.logger.warn({ lease: u.lease, key: u.key, problem: u.problem }, 'claims Lease sweep: a labelled Lease names a job that cannot exist; skipped (delete the Lease if nothing uses it)');
  }
  st.unusableLeases = new Set(unusable.map(id));
}

/** The cache as RESYNC events, lazily: the queue pulls them as it has room. */
function replay(st: State, pods: Reflector<Pod>[], scope: ReplayScope): Iterator<Queued> {
  st.missed = false;
  // A pod can be due only with a sidecar, marked by an env var the trimmed pod keeps.
  const maybe = (fp: string): boolean => fp.includes(TERMINATE_SIDECAR_ENV);
  const jobs = [...st.jobs.values()].map((inNs) => inNs.values());
  const stampNone = (pod: Pod): string[] | undefined => (namespaceJobs(st, pod.metadata.namespace ?? '').known ? [] : undefined);
  return replayCache({ scope, now: st.clock(), pods: pods.map((x) => x.cached(maybe)), jobs, stamp: stampNone });
}

/**
 * A key a handler asked to look at again: its state now, as a replay would send it (a RESYNC
 * with the current snapshot and jobs), or the requeued event itself once the object has left
 * the cache (a deleted pod's last state). Queued only if the object does not already wait:
 * what waits is newer than the requeued event, which must not replace it. False when the
 * queue is full: the caller asks again in REQUEUE_WHEN_FULL_MS.
 */
function requeued(st: State, pods: Reflector<Pod>[], q: Queued): boolean {
  // Only the leader sends: a relay that lost the lead went on handling every key its
  // handlers requeued, beside the new leader (review). Its next lead replays everything.
  if (!st.leader) {
    st.missed = true;
    return true;
  }
  const at = st.clock().getTime();
  return st.queue.requeue(current(st, pods, q, at) ?? { ...q, at });
}

/** The queued form of the cached state of `q`'s object, if the cache has it. */
function current(st: State, pods: Reflector<Pod>[], q: Queued, at: number): Queued | undefined {
  if (q.kind === 'EphemeralJob') {
    const job = st.jobs.get(q.namespace)?.get(q.name);
    return job && queuedJob('RESYNC', job, at);
  }
  for (const r of pods) {
    const pod = r.get(`${q.namespace}/${q.name}`);
    if (pod) return queuedPod('RESYNC', pod, at, { jobs: stamp(st, pod) });
  }
  return undefined;
}

function forward(st: State, q: Queued, holdMs = 0): void {
  if (!st.leader) {
    st.missed = true;
    return void st.metrics.countFiltered(q.kind, 'not leader');
  }
  st.queue.add(q, holdMs);
}

/**
 * The message for a queued event, as it is sent: a live pod's snapshot is its latest state
 * in the watch cache, as JSON text; a deleted pod brought its own; a job's is its identity.
 */
function build(st: State, pods: Reflector<Pod>[], q: Queued, sameId?: string): Message {
  const from = st.origin;
  if (q.kind !== 'Pod') return messageFor(q, from, jobSnapshotJson(q), sameId);
  if (q.snapshot !== undefined) return messageFor(q, from, q.snapshot, sameId);
  const key = `${q.namespace}/${q.name}`;
  for (const r of pods) {
    const fp = r.cache.get(key);
    // A pod's fingerprint is its snapshot's JSON text (trim.ts).
    if (fp !== undefined) return messageFor(q, from, fp, sameId);
  }
  return messageFor(q, from, undefined, sameId);
}

function buildQueue(opts: RelayOptions, metrics: RelayMetrics, hooks: { resyncNeeded: () => Iterator<Queued>; build: (q: Queued, sameId?: string) => Message }): DeliveryQueue {
  return new DeliveryQueue({
    sink: opts.sink,
    build: hooks.build,
    capacity: opts.bufferMax,
    windowMs: opts.coalesceMs,
    logger: opts.logger,
    ...(opts.backoff ? { backoff: opts.backoff } : {}),
    hooks: {
      delivered: (kind, n) => metrics.forwarded.inc({ kind }, n),
      sent: (s) => metrics.sendSeconds.observe(s),
      failed: (n) => metrics.sendFailures.inc(n),
      rejected: (n) => metrics.rejected.inc(n),
      coalesced: () => metrics.coalesced.inc(),
      overflowed: () => metrics.overflowed.inc(),
      resyncNeeded: hooks.resyncNeeded,
    },
  });
}

/**
 * A pod event; `previous`: the fingerprint it replaces (the reflector's cache entry), if any;
 * `firstList`: found by the pods' first list, which forwards nothing: the replay after it
 * sends every job that needs work and every pod whose sidecars are due (createRelay).
 */
function onPod(st: State, type: ReflectorEvent, d: Decoded<Pod>, { previous, firstList }: { previous: string | undefined; firstList: boolean }): void {
  st.metrics.countSeen('Pod', type);
  if (firstList) return void st.metrics.countFiltered('Pod', 'first list: replayed once listed');
  const decision = decidePod(type, d, previous, namespaceJobs(st, d.object.metadata.namespace ?? ''));
  if (!decision.forward) return void st.metrics.countFiltered('Pod', decision.reason);
  // A deleted pod leaves the cache: its last state (the fingerprint is its snapshot's text) goes with it.
  forward(st, queuedPod(type, d.object, st.clock().getTime(), { jobs: decision.jobs, snapshot: type === 'DELETED' ? d.fingerprint : undefined }), decision.hold ? (st.opts.holdMs ?? 0) : 0);
}

/** The relay's job views of a namespace; unknown until EphemeralJobs were listed, and while they cannot be (404/403). */
function namespaceJobs(st: State, ns: string): NamespaceJobs {
  const inNs = st.jobs.get(ns);
  const scope = st.opts.namespaces.length > 0 ? ns : '';
  return { jobs: () => inNs?.values() ?? [], known: st.jobLoops.get(scope)?.hasSynced() === true && !st.jobsAbsent.has(scope) };
}

/** The jobs to name on a replayed pod's envelope, as decidePod names them. */
function stamp(st: State, pod: Pod): string[] | undefined {
  const ns = namespaceJobs(st, pod.metadata.namespace ?? '');
  return ns.known ? concernedJobs(pod, ns.jobs()) : undefined;
}

function onJob(st: State, type: ReflectorEvent, job: JobView, { changed, beforePods }: { changed: boolean; beforePods: boolean }): void {
  st.metrics.countSeen(EJOB.kind, type);
  indexJob(st.jobs, type, job);
  if (!changed) return void st.metrics.countFiltered(EJOB.kind, 'nothing relevant changed');
  if (beforePods) return void st.metrics.countFiltered(EJOB.kind, 'before the pods are listed: replayed then');
  forward(st, queuedJob(type, job, st.clock().getTime()));
}

/** One clear line when the EphemeralJob list starts or stops answering 404/403, and a gauge. */
function onJobsAbsent(st: State, ns: string | undefined, absent: Absent | undefined): void {
  const log = st.opts.logger;
  const crd = `${EJOB.plural}.${EJOB.apiVersion.split('/')[0] ?? ''}`;
  if (absent) st.jobsAbsent.add(ns ?? '');
  else st.jobsAbsent.delete(ns ?? '');
  // 1 while any watched namespace's jobs cannot be listed (review: one namespace recovering
  // cleared it while another still answered 403).
  st.metrics.absent.set({ kind: EJOB.kind }, st.jobsAbsent.size > 0 ? 1 : 0);
  if (!absent) return log.info({ kind: EJOB.kind, namespace: ns }, `${crd} can be listed again: the EphemeralJob controller is active`);
  const why = absent.status === 404 ? `the CRD ${crd} is not installed` : `this identity may not list ${crd} (RBAC)`;
  const retry = Math.round((st.opts.absentRetryMs ?? 60_000) / 1000);
  log.warn({ kind: EJOB.kind, namespace: ns, status: absent.status, err: absent.message }, `${why}: no EphemeralJobs here, the EphemeralJob controller is idle; pods are still watched (SidecarTerminator runs); listing again soon, then every ${retry}s`);
}

function buildReflectors(st: State): { pods: Reflector<Pod>[]; jobs: Reflector<JobView>[] } {
  const { opts, metrics } = st;
  const scopes: (string | undefined)[] = opts.namespaces.length > 0 ? opts.namespaces : [undefined];
  const log = opts.logger;
  const common = (kind: string, path: string) => ({
    kind,
    path,
    kubeConfig: opts.kubeConfig,
    listPage: (cont: string | undefined, signal: AbortSignal, each: (raw: unknown) => void) => listRaw(opts.kubeConfig, path, { limit: opts.listPageSize ?? 500, continue: cont, timeoutMs: 60_000, signal, map: each }),
    onRestart: (reason: string, waitMs: number) => {
      metrics.watchRestarts.inc({ kind });
      log.info({ kind, path, reason, retryInMs: waitMs }, 'watch restarted');
    },
    onMissed: (changes: number, reason: string) => {
      metrics.watchRestarts.inc({ kind });
      log.warn({ kind, path, changes, reason }, 'a list after silent watches found changes they never brought: is a proxy buffering the watch stream, or a connection half-open?');
    },
    onListFailure: () => metrics.listFailures.inc({ kind }),
    onUnreadable: (bad: Unreadable) => {
      metrics.unreadable.inc({ kind });
      log.warn({ kind, key: bad.key, err: bad.error }, 'unreadable object skipped');
    },
    logger: log,
    ...(opts.backoff ? { backoff: opts.backoff } : {}),
    ...(opts.watchIdleMs !== undefined ? { watchIdleMs: opts.watchIdleMs } : {}),
  });
  const pods = scopes.map((ns) => {
    const r: Reflector<Pod> = new Reflector<Pod>({
      ...common('Pod', ns ? `/api/v1/namespaces/${ns}/pods` : '/api/v1/pods'),
      decode: decodePod,
      fromFingerprint: (fp) => JSON.parse(fp) as Pod,
      uid: (pod) => pod.metadata.uid,
      onEvent: (type, d, _changed, previous) => onPod(st, type, d, { previous, firstList: !r.hasSynced() }),
    });
    return r;
  });
  // Until the pods are listed, a job is only indexed: the replay after the pods' list sends
  // each that needs work (createRelay), so one of its reconciles follows every pod state listed.
  const podsListed = (): boolean => st.jobsUnheld || pods.every((r) => r.hasSynced());
  const jobs = scopes.map((ns) => new Reflector<JobView>({
    ...common(EJOB.kind, ns ? `/apis/${EJOB.apiVersion}/namespaces/${ns}/${EJOB.plural}` : `/apis/${EJOB.apiVersion}/${EJOB.plural}`),
    decode: decodeJob,
    fromFingerprint: (fp) => JSON.parse(fp) as JobView,
    uid: (job) => job.uid,
    onEvent: (type, d, changed) => onJob(st, type, d.object, { changed, beforePods: !podsListed() }),
    // No CRD or no list right must not stop the pod watches (the SidecarTerminator needs no jobs).
    // A 403 keeps the jobs it knew: a right revoked for a moment sent a DELETED for every job (review).
    absent: { statuses: [403, 404], keep: [403], retryMs: opts.absentRetryMs ?? 60_000, onChange: (a) => onJobsAbsent(st, ns, a) },
  }));
  jobs.forEach((r, i) => st.jobLoops.set(scopes[i] ?? '', r));
  return { pods, jobs };
}
