// The relay: watch Pods and EphemeralJobs, keep trimmed copies, forward what can matter as
// envelopes, coalesced per key, through a sink that survives outages. No reconcile logic.
import { CustomObjectsApi, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { Envelope } from '../functions/api/envelope.ts';
import { formatZodIssues } from '../functions/api/field-path.ts';
import { EJOB } from '../functions/api/names.ts';
import { Pod } from '../functions/api/pod.ts';
import type { LockConfig } from '../functions/engine/lock.ts';
import type { Logger } from '../functions/engine/logger.ts';
import type { Kube } from '../functions/kube/kube.ts';
import { Coalescer } from './coalesce.ts';
import { Delivery } from './delivery.ts';
import { jobEnvelope, podEnvelope } from './envelope.ts';
import { startElection, type Elector } from './leader.ts';
import { createMetrics, type RelayMetrics } from './metrics.ts';
import type { Sink } from './sinks/sink.ts';
import { podFingerprint, trimJob, trimPod, type JobView } from './trim.ts';
import { Reflector, type ReflectorEvent } from './watch.ts';

export interface RelayOptions {
  kubeConfig: KubeConfig;
  sink: Sink;
  /** Namespaces to watch; empty: all. */
  namespaces: string[];
  relayId: string;
  /** The cluster name stamped on envelopes (EPHEMERA_RELAY_CLUSTER). */
  cluster?: string | undefined;
  coalesceMs: number;
  resyncSeconds: number;
  bufferMax: number;
  logger: Logger;
  /** With it, only the Lease holder forwards; without it, this relay always forwards. */
  election?: { kube: Kube; lock: LockConfig };
  metrics?: RelayMetrics;
  clock?: () => Date;
}

export interface Relay {
  readonly metrics: RelayMetrics;
  /** True once both kinds have been listed. */
  ready(): boolean;
  isLeader(): boolean;
  /** Re-list everything now (RESYNC for all, DELETED for what vanished). */
  resync(reason: string): Promise<void>;
  /** Look at this envelope's key again after a delay (in-process requeue). */
  requeue(envelope: Envelope, delayMs: number): void;
  /** Send what is pending now and wait for the sink (tests, shutdown). */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

/** Start watching; resolves after the first list of both kinds. */
export async function startRelay(opts: RelayOptions): Promise<Relay> {
  const metrics = opts.metrics ?? createMetrics();
  const clock = opts.clock ?? ((): Date => new Date());
  const log = opts.logger;
  const jobs = new Map<string, Map<string, JobView>>();
  let leader = opts.election === undefined;
  let listed = 0;
  const timers = new Set<NodeJS.Timeout>();

  const { delivery, coalescer, forward } = buildPipeline(opts, metrics, {
    isLeader: () => leader,
    resync: (reason) => void relay.resync(reason).catch(() => undefined),
  });
  const { onPod, onJob } = eventHandlers(opts, { metrics, jobs, forward, clock });

  const reflectors = buildReflectors(opts, { onPod, onJob, onListed: () => listed++, metrics });
  // Jobs first: the pod filter needs to know them.
  for (const r of reflectors.jobs) await r.start();
  for (const r of reflectors.pods) await r.start();
  const all = [...reflectors.jobs, ...reflectors.pods];
  const expected = all.length;

  const resyncTimer = setInterval(() => void relay.resync('periodic resync').catch((err: unknown) => log.warn({ err: String(err) }, 'resync failed')), opts.resyncSeconds * 1000);
  resyncTimer.unref();

  let elector: Elector | undefined;
  const relay: Relay = {
    metrics,
    ready: () => listed >= expected,
    isLeader: () => leader,
    async resync(reason) {
      for (const r of all) await r.relist(reason);
    },
    requeue(envelope, delayMs) {
      const t = setTimeout(() => {
        timers.delete(t);
        coalescer.add({ ...envelope, time: clock().toISOString() });
      }, delayMs);
      t.unref();
      timers.add(t);
    },
    async flush() {
      coalescer.drain();
      await delivery.idle();
    },
    async stop() {
      clearInterval(resyncTimer);
      for (const t of timers) clearTimeout(t);
      for (const r of all) r.stop();
      await elector?.stop();
      coalescer.drain();
      coalescer.stop();
      await delivery.idle();
      delivery.stop();
      await opts.sink.close?.();
    },
  };
  if (opts.election) {
    elector = startElection(opts.election.kube, opts.election.lock, log, (v) => {
      leader = v;
      metrics.leader.set(v ? 1 : 0);
      // A new leader looks at everything once: events seen while following were not sent.
      if (v) void relay.resync('became leader').catch(() => undefined);
    });
  } else metrics.leader.set(1);
  return relay;
}

/** Delivery behind a per-key coalescer; forward() only counts what arrives while not leader. */
function buildPipeline(opts: RelayOptions, metrics: RelayMetrics, hooks: { isLeader: () => boolean; resync: (reason: string) => void }): { delivery: Delivery; coalescer: Coalescer; forward: (e: Envelope) => void } {
  const delivery = new Delivery({
    sink: opts.sink,
    maxBuffered: opts.bufferMax,
    logger: opts.logger,
    onSent: (n, s) => {
      if (n > 0) metrics.sendSeconds.observe(s);
    },
    onBufferDepth: (d) => metrics.bufferDepth.set(d),
    onResyncNeeded: () => hooks.resync('sink recovered after overflow'),
  });
  const coalescer = new Coalescer({
    windowMs: opts.coalesceMs,
    maxPending: opts.bufferMax,
    flush: (batch) => void delivery.deliver(batch),
    onCoalesced: () => metrics.coalesced.inc(),
  });
  const forward = (e: Envelope): void => {
    if (!hooks.isLeader()) return void metrics.filtered.inc({ kind: e.data.kind, reason: 'not leader' });
    metrics.forwarded.inc({ kind: e.data.kind });
    coalescer.add(e);
  };
  return { delivery, coalescer, forward };
}

/** What the reflectors call: pods are filtered against the jobs known so far; jobs always go on. */
function eventHandlers(opts: RelayOptions, ctx: { metrics: RelayMetrics; jobs: Map<string, Map<string, JobView>>; forward: (e: Envelope) => void; clock: () => Date }): Pick<Hooks, 'onPod' | 'onJob'> {
  const { metrics, jobs, forward, clock } = ctx;
  return {
    onPod(type, pod, previous) {
      metrics.seen.inc({ kind: 'Pod', type });
      if ((type === 'MODIFIED' || type === 'ADDED') && previous === podFingerprint(pod)) {
        return void metrics.filtered.inc({ kind: 'Pod', reason: 'nothing relevant changed' });
      }
      const routed = podEnvelope(type, pod, jobs.get(pod.metadata.namespace ?? '')?.values() ?? [], { relayId: opts.relayId, cluster: opts.cluster, now: clock() });
      if ('skipped' in routed) return void metrics.filtered.inc({ kind: 'Pod', reason: routed.skipped.split(':')[0] ?? 'filtered' });
      forward(routed.envelope);
    },
    onJob(type, job) {
      metrics.seen.inc({ kind: 'EphemeralJob', type });
      const inNs = jobs.get(job.namespace) ?? new Map<string, JobView>();
      if (type === 'DELETED') inNs.delete(job.name);
      else inNs.set(job.name, job);
      jobs.set(job.namespace, inNs);
      forward(jobEnvelope(type, job, { relayId: opts.relayId, cluster: opts.cluster, now: clock() }));
    },
  };
}

interface Hooks {
  onPod(type: ReflectorEvent, pod: Pod, previous: string | undefined): void;
  onJob(type: ReflectorEvent, job: JobView): void;
  onListed(): void;
  metrics: RelayMetrics;
}

function buildReflectors(opts: RelayOptions, hooks: Hooks): { pods: Reflector<Pod>[]; jobs: Reflector<JobView>[] } {
  const core = opts.kubeConfig.makeApiClient(CoreV1Api);
  const custom = opts.kubeConfig.makeApiClient(CustomObjectsApi);
  const scopes: (string | undefined)[] = opts.namespaces.length > 0 ? opts.namespaces : [undefined];
  const page = { limit: 500 };
  const log = opts.logger;
  const pods = scopes.map((ns) => new Reflector<Pod>(opts.kubeConfig, {
    kind: 'Pod',
    path: ns ? `/api/v1/namespaces/${ns}/pods` : '/api/v1/pods',
    listPage: async (cont) => {
      const l = ns ? await core.listNamespacedPod({ namespace: ns, ...page, _continue: cont }) : await core.listPodForAllNamespaces({ ...page, _continue: cont });
      return { items: l.items, resourceVersion: l.metadata?.resourceVersion ?? '', continue: l.metadata?._continue };
    },
    trim: (raw) => {
      const p = Pod.safeParse(raw);
      if (!p.success) log.warn({ err: formatZodIssues(p.error.issues, '') }, 'unreadable pod skipped');
      return p.success ? trimPod(p.data) : null;
    },
    keyOf: (p) => `${p.metadata.namespace}/${p.metadata.name}`,
    fingerprint: podFingerprint,
    fromFingerprint: (fp) => JSON.parse(fp) as Pod,
    onEvent: (type, p, prev) => hooks.onPod(type, p, prev),
    onListed: hooks.onListed,
    onRestart: (reason) => {
      hooks.metrics.watchRestarts.inc({ kind: 'Pod' });
      log.info({ kind: 'Pod', reason }, 'watch restarted');
    },
    logger: log,
  }));
  const jobs = scopes.map((ns) => new Reflector<JobView>(opts.kubeConfig, {
    kind: EJOB.kind,
    path: ns ? `/apis/${EJOB.apiVersion}/namespaces/${ns}/${EJOB.plural}` : `/apis/${EJOB.apiVersion}/${EJOB.plural}`,
    listPage: async (cont) => {
      const c = { group: EJOB.group, version: EJOB.version, plural: EJOB.plural, ...page, _continue: cont };
      const l = (ns ? await custom.listNamespacedCustomObject({ ...c, namespace: ns }) : await custom.listClusterCustomObject(c)) as { items: unknown[]; metadata?: { resourceVersion?: string; continue?: string } };
      return { items: l.items, resourceVersion: l.metadata?.resourceVersion ?? '', continue: l.metadata?.continue };
    },
    trim: (raw) => trimJob(raw as Record<string, unknown>),
    keyOf: (j) => `${j.namespace}/${j.name}`,
    fingerprint: (j) => JSON.stringify(j),
    fromFingerprint: (fp) => JSON.parse(fp) as JobView,
    onEvent: (type, j) => hooks.onJob(type, j),
    onListed: hooks.onListed,
    onRestart: (reason) => {
      hooks.metrics.watchRestarts.inc({ kind: EJOB.kind });
      log.info({ kind: EJOB.kind, reason }, 'watch restarted');
    },
    logger: log,
  }));
  return { pods, jobs };
}
