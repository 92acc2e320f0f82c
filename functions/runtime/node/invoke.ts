import { parseFlags } from './args.ts';
import type { KubeConfig } from '@kubernetes/client-node';
import { envelopeKey, objectKey, type WatchEvent } from '../../api/envelope.ts';
import { ConfigError, FunctionsConfig, parseEnv } from '../../config.ts';
import type { Controller } from '../../engine/controller.ts';
import { reconcileKey, type EngineDeps } from '../../engine/engine.ts';
import { silentLogger } from '../../engine/logger.ts';
import { minRequeue, type Action } from '../../engine/plan.ts';
import { EJOB } from '../../api/names.ts';
import { isKubeError, KubeError } from '../../kube/errors.ts';
import type { Kube, ObjectRef } from '../../kube/kube.ts';
import { CliError, rootCause } from './cli-error.ts';
import { describeCluster, loadCluster, probeCluster, unreachable, type Cluster } from './kubeconfig.ts';
import { createEngineDeps } from '../deps.ts';
import { createLogger } from '../logger.ts';
import { InputError, loadEvents, loadState, type InputEvent, type KubeObject } from './input.ts';
import { seededIds, startApiServer, type ApiServer } from '../../cluster/index.ts';
import { dryRunKube } from './dry-run-kube.ts';
import { parseRfc3339 } from './parse-time.ts';
import { relayRoute } from './relay-route.ts';
import { writeLog } from './write-log.ts';

const USAGE = `usage: ephemera invoke --state FILE [--event FILE] [--now RFC3339] [--output json]
       ephemera invoke --kubeconfig FILE [--namespace NS] [--state FILE | --event FILE] [--now RFC3339] [--output json] [--apply]

Runs the handlers (EphemeralJob, SidecarTerminator) once and prints the actions they plan,
each with the reason, and when to look again.

  --state FILE       objects to start from: YAML or JSON, a kind: List or several documents
  --event FILE       a watch event {type, object}, or JSON lines of them (ephemera relay
                     --sink record:PATH, kubectl get --raw '…?watch=1': its BOOKMARK and
                     ERROR events are skipped with a note, and a last line cut off
                     mid-write); without it every object is reconciled once
  --now RFC3339      the clock the handlers and the in-memory API server see, with Z or an
                     offset: 2026-01-01T00:20:30Z, 2026-01-01T01:20:30+01:00. Default: now;
                     in memory, a recorded envelope is planned at its own time (a note says so);
                     with --kubeconfig, the API server's clock, and --now is what would be
                     planned then (with --apply, only the API server's own time)
  --output json      one JSON document: {actions, requeueAfterSeconds, objects}, and
                     refused and errors when there are any; with --kubeconfig, objects is
                     empty (a live cluster's objects are not listed)
  --kubeconfig FILE  read a live cluster instead; without --state/--event, its EphemeralJobs
                     and Job pods are listed and reconciled; with --state, the objects the
                     file names are read from the cluster and reconciled as it has them (the
                     file's contents are not used); those it lacks get a note. Plans only,
                     unless --apply
  --namespace NS     with --kubeconfig and no --state or --event: only this namespace
                     (default: all)
  --apply            with --kubeconfig: perform the writes
  -h, --help         this help

Exit status: 0 done; 1 the API server refused a write, or a key could not be handled (what
was done is printed all the same, then the errors on stderr); 2 bad usage or input.

Variables: those of the functions (EPHEMERA_LOCK_NAMESPACE, EPHEMERA_CONTROLLERS, LOG_LEVEL, …;
see the README's Configuration table). LOG_LEVEL set: handler logs go to stderr.
`;

/** One write, exactly the contract's fields: verb, apiVersion, kind, subresource?, namespace, name, body?. */
type ContractAction = { verb: string; apiVersion: string; kind: string; subresource?: string; namespace: string; name: string; body?: unknown };

/**
 * The `--output json` document: DESIGN.md's contract ({actions, requeueAfterSeconds,
 * objects}), plus `refused` and `errors`, present only when there are any (the exit status
 * is then 1), so a run without them prints the contract's document exactly.
 */
export interface InvokeOutput {
  actions: ContractAction[];
  requeueAfterSeconds: number | null;
  objects: unknown[];
  /** Writes the API server refused for good (403, 422, …), each with its answer. */
  refused?: (ContractAction & { error: string; status?: number })[];
  /** Keys (or events) whose handling stopped on an error; the others were handled all the same. */
  errors?: { controller?: string; key: string; error: string; status?: number }[];
}

/** What the handlers did: the writes that took effect, those refused, keys that failed, and notes on what was skipped. */
interface Tally {
  actions: Action[];
  requeueAfterSeconds: number | null;
  refused: { action: Action; error: unknown }[];
  failed: { controller?: string; key: string; error: unknown }[];
  notes: string[];
  /** The keys reconciled, and those of them not found (`gone`). */
  keys: { looked: Set<string>; gone: Set<string> };
}

/** A run: what the handlers did, and the objects after it (in memory; none for a live cluster, whose writes were sent only if `applied`). */
interface Run {
  tally: Tally;
  objects: unknown[];
  live?: { applied: boolean };
}

interface Options {
  state?: string;
  event?: string;
  now: Date;
  /** Whether --now was given: without it, a recorded envelope is planned at its own time (eventClock). */
  nowGiven: boolean;
  json: boolean;
  kubeconfig?: string;
  namespace?: string;
  apply: boolean;
}

/** `ephemera invoke`: run the handlers once against an in-memory cluster (or a live one). */
export async function main(argv: string[]): Promise<number> {
  let opts: Options | 'help';
  try {
    opts = parseOptions(argv);
  } catch (err) {
    process.stderr.write(`ephemera invoke: ${(err as Error).message}\nRun "ephemera invoke --help" for the options.\n`);
    return 2;
  }
  if (opts === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  try {
    // Before any other work: a cluster out of reach, or a state file's error, hid a bad variable (review77 L5).
    parseEnv(FunctionsConfig, process.env);
    const run = opts.kubeconfig ? await invokeLive(opts) : await invokeInMemory(opts);
    return report(run, opts.json);
  } catch (err) {
    if (err instanceof InputError || err instanceof ConfigError) {
      process.stderr.write(`ephemera invoke: ${err.message}\n`);
      return 2;
    }
    if (err instanceof CliError) {
      process.stderr.write(`ephemera invoke: ${err.message}\n`);
      return err.exitCode;
    }
    throw err;
  }
}

function parseOptions(argv: string[]): Options | 'help' {
  const values = parseFlags(argv, {
    state: { type: 'string' },
    event: { type: 'string' },
    now: { type: 'string' },
    output: { type: 'string', short: 'o' },
    kubeconfig: { type: 'string' },
    namespace: { type: 'string', short: 'n' },
    apply: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return 'help';
  if (!values.state && !values.kubeconfig) throw new Error('--state FILE is required (or --kubeconfig FILE for a live cluster)');
  if (values.output !== undefined && values.output !== 'json') throw new Error(`--output must be "json", got "${values.output}"`);
  if (values.apply && !values.kubeconfig) throw new Error('--apply only makes sense with --kubeconfig');
  if (values.namespace !== undefined && (!values.kubeconfig || values.state || values.event)) throw new Error('--namespace only makes sense with --kubeconfig and no --state or --event');
  const now = values.now === undefined ? new Date() : parseRfc3339(values.now);
  if (!(now instanceof Date)) throw new Error(`--now ${now.error}, got "${values.now}"`);
  return { state: values.state, event: values.event, now, nowGiven: values.now !== undefined, json: values.output === 'json', kubeconfig: values.kubeconfig, namespace: values.namespace, apply: values.apply };
}

/**
 * Run against an in-memory API server seeded from --state, whose clock is --now; without
 * --now, each recorded envelope's own time, else the wall clock (eventClock).
 */
export async function invokeInMemory(opts: Pick<Options, 'state' | 'event' | 'now'> & { nowGiven?: boolean }): Promise<Run> {
  const objects = opts.state ? await loadState(opts.state) : [];
  const loaded = opts.event ? await loadEvents(opts.event) : undefined;
  const clock = { now: opts.now };
  const replay = loaded && opts.nowGiven === false ? eventClock(loaded.events, opts.now, clock) : undefined;
  const unserved = new Map<string, number>();
  const cluster = await startCluster(objects, () => clock.now, (o) => void unserved.set(`${o.apiVersion} ${o.kind}`, (unserved.get(`${o.apiVersion} ${o.kind}`) ?? 0) + 1));
  try {
    const tally = await runHandlers(inMemoryDeps(cluster, () => clock.now), loaded?.events ?? asResync(objects), { once: loaded === undefined, live: false, ...(replay ? { at: replay.at } : {}) });
    tally.notes.unshift(...unservedNote(unserved), ...(loaded?.notes ?? []), ...(replay ? [replay.note] : []));
    if (loaded) tally.notes.push(...stateLacks(tally, opts.state));
    return { tally, objects: cluster.store.all() };
  } finally {
    await cluster.close();
  }
}

/**
 * Without --now, a recorded envelope is planned at its own `time` (the handlers' clock and the
 * in-memory API server's), an event without one at the wall clock: one wall clock for every
 * event planned an old recording's TTLs and deadlines as long past, deletions production
 * never made (review75 M3). Undefined when no envelope has a time to use. Only in memory:
 * a live cluster's state is today's, and so is its clock.
 */
function eventClock(events: InputEvent[], wall: Date, clock: { now: Date }): { at: (ev: InputEvent) => void; note: string } | undefined {
  const timeOf = (ev: InputEvent): Date | undefined => {
    const t = 'envelope' in ev ? parseRfc3339(ev.envelope.time) : undefined;
    return t instanceof Date ? t : undefined;
  };
  const times = events.map(timeOf).filter((t): t is Date => t !== undefined);
  const first = times[0];
  const last = times.at(-1);
  if (first === undefined || last === undefined) return undefined;
  const untimed = events.length - times.length;
  const span = first.getTime() === last.getTime() ? first.toISOString() : `${first.toISOString()} … ${last.toISOString()}`;
  return {
    at: (ev) => void (clock.now = timeOf(ev) ?? wall),
    note: `no --now: each recorded envelope is planned at its own time (${span})${untimed > 0 ? `, the ${untimed} event${untimed === 1 ? '' : 's'} without a time at the wall clock` : ''}; --now RFC3339 sets one clock for every event`,
  };
}

/**
 * A note when none of the objects a recording's events name is in the state: the handlers
 * read --state, and a recording only says which objects changed (its snapshots are trimmed,
 * for routing), so a recording without the state it goes with replays as "no actions"
 * (review75 M2). Each key has its own note already; this one says what to do.
 */
function stateLacks(tally: Tally, state: string | undefined): string[] {
  const { looked, gone } = tally.keys;
  if (looked.size === 0 || gone.size < looked.size) return [];
  return [`the state${state ? ` (${state})` : ''} has none of the ${looked.size} object${looked.size === 1 ? '' : 's'} the events name: invoke reads the objects from --state, an event only says which changed; capture the cluster's state with the recording (the README's "Replaying a recording" says how)`];
}

/** One note for the objects of kinds the in-memory cluster does not model, which were left out. */
function unservedNote(unserved: Map<string, number>): string[] {
  if (unserved.size === 0) return [];
  const n = [...unserved.values()].reduce((a, b) => a + b, 0);
  return [`--state: left out ${n} object${n === 1 ? '' : 's'} of kinds the in-memory cluster does not model (the handlers read none of them): ${[...unserved.entries()].map(([k, c]) => `${k} (${c})`).join(', ')}`];
}

/**
 * The in-memory cluster; objects of kinds it does not serve are left out, each counted by
 * `unserved` (review77 L2: `kubectl get all -o yaml`, with its Deployments and Services, was
 * refused whole). Its uids and generated names are seeded, so one input and one clock print
 * one document (review75 L1).
 */
async function startCluster(objects: unknown[], clock: () => Date, unserved: (o: { apiVersion: string; kind: string }) => void): Promise<ApiServer> {
  try {
    return await startApiServer({ objects, clock, ids: seededIds('ephemera invoke'), onUnserved: unserved });
  } catch (err) {
    throw new InputError(`--state: ${(err as Error).message}`);
  }
}

/**
 * Against a live cluster: plan only (writes are recorded, not sent) unless --apply. The
 * server is asked for its version first, so an unreachable one is an error, not "no actions".
 */
async function invokeLive(opts: Options): Promise<Run> {
  const cluster = loadCluster({ kubeconfig: opts.kubeconfig as string });
  await probeCluster(cluster);
  const client = engineDeps(cluster.kc, () => opts.now, opts.apply ? undefined : dryRunKube);
  const live = await liveClock(opts, client.kube);
  const deps = { ...client, clock: live.clock };
  const named = opts.state && !opts.event ? await readLive(deps.kube, await loadState(opts.state), cluster) : undefined;
  const loaded = opts.event ? await loadEvents(opts.event) : undefined;
  const events = loaded?.events ?? asResync(named ? named.objects : await listLive(deps.kube, opts.namespace, cluster));
  const tally = await runHandlers(deps, events, { once: !opts.event, live: true });
  tally.notes.unshift(...live.notes, ...(named?.notes ?? []), ...(loaded?.notes ?? []));
  return { tally, objects: [], live: { applied: opts.apply } };
}

/**
 * A live run's clock. Without --now, the API server's (its answers' Date headers, moving on
 * as the run goes): the operator's machine may be hours off (a clock kept in local time, a
 * resumed VM), and what is planned at its time is written for real — a deadline judged three
 * hours early failed a running job, final once sealed (review95 F2); production's functions
 * judge by the server's clock too. This machine's clock only when the server says no time
 * (a note says so), as production's functions then do. --now with --apply: checked against
 * the server's (applyingAt), then moving on from it; --now alone: that moment (a preview).
 */
async function liveClock(opts: Options, kube: Kube): Promise<{ clock: () => Date; notes: string[] }> {
  if (opts.nowGiven && !opts.apply) return { clock: () => opts.now, notes: [] };
  // Any answer carries the server's Date: a LIST of EphemeralJobs of one name (the functions may list them; no job has it).
  await kube.list(EJOB.apiVersion, EJOB.kind, opts.namespace, { fieldSelector: 'metadata.name=ephemera-invoke.clock' }).catch(() => undefined);
  const serverNow = kube.serverNow();
  if (opts.nowGiven) {
    applyingAt(opts.now, serverNow);
    const from = performance.now();
    return { clock: () => new Date(opts.now.getTime() + (performance.now() - from)), notes: [] };
  }
  if (serverNow === undefined) return { clock: () => new Date(), notes: ['the API server did not say its time (no Date header): planned at this machine\'s clock'] };
  return { clock: () => kube.serverNow() ?? new Date(), notes: [] };
}

/** How far --now may be from the API server's clock when the writes are real: its Date header's second, and a slow answer. */
const APPLY_NOW_TOLERANCE_MS = 5_000;

/**
 * --now with --apply: only at the API server's own time. A verdict planned at another time
 * is final once written (a deadline judged three hours early fails a running job; review84
 * M1), so a --now away from it previews only.
 */
function applyingAt(now: Date, serverNow: Date | undefined): void {
  const off = serverNow === undefined ? undefined : now.getTime() - serverNow.getTime();
  if (off !== undefined && Math.abs(off) <= APPLY_NOW_TOLERANCE_MS) return;
  const where = serverNow === undefined ? 'the API server did not say its time (no Date header)' : `the API server's clock says ${serverNow.toISOString()}`;
  throw new CliError(`--now ${now.toISOString()} cannot be used with --apply: ${where}, and what is planned at another time would be written for real (a deadline judged early fails a running job); drop --apply to preview, or --now to apply`, 2);
}

/** The kinds the relay watches, read from the cluster by `readLive`; others go as the file has them (the relay skips them). */
const WATCHED: Record<string, string> = { Pod: 'v1', [EJOB.kind]: EJOB.apiVersion };

/**
 * The objects --state names, as the cluster has them: each Pod and EphemeralJob is read by
 * kind, namespace and name, and what the cluster answers is routed, not the file's contents
 * (review 63 L7: a pod was judged by the file, and one the cluster lacked got no note). One
 * the cluster lacks is a note, a pod as a job.
 */
async function readLive(kube: Kube, objects: KubeObject[], cluster: Cluster): Promise<{ objects: unknown[]; notes: string[] }> {
  const found: unknown[] = [];
  const notes: string[] = [];
  for (const o of objects) {
    const apiVersion = WATCHED[o.kind];
    if (apiVersion === undefined) {
      found.push(o);
      continue;
    }
    const ref = { apiVersion, kind: o.kind, namespace: o.metadata.namespace || 'default', name: o.metadata.name };
    const live = await readOne(kube, ref, cluster);
    if (live === null) notes.push(`${objectKey(ref.kind, ref.namespace, ref.name)}: not in the cluster, nothing to do`);
    else found.push(withKind(live, ref.apiVersion, ref.kind));
  }
  return { objects: found, notes };
}

/** One object of the cluster, or null; an unreachable server or a refused read is a CliError naming it. */
async function readOne(kube: Kube, ref: Required<ObjectRef>, cluster: Cluster): Promise<unknown> {
  try {
    return await kube.get(ref);
  } catch (err) {
    if (isKubeError(err, 'transient')) throw unreachable(cluster, err);
    // No such resource at all (the EphemeralJob CRD not installed) is not a missing right (final read).
    if (isKubeError(err, 'unserved')) throw new CliError(`cannot read ${objectKey(ref.kind, ref.namespace, ref.name)} (named by --state): ${describeCluster(cluster)} does not serve ${ref.apiVersion} ${ref.kind} (is its CRD installed?)`, 1, { cause: err });
    if (isKubeError(err)) throw new CliError(`cannot read ${objectKey(ref.kind, ref.namespace, ref.name)} (named by --state) on ${describeCluster(cluster)}: ${err.message} (HTTP ${err.status}); check these credentials may get it`, 1, { cause: err });
    throw err;
  }
}

/**
 * What a live cluster holds for the handlers: its EphemeralJobs and the pods Jobs own (the
 * sidecar terminator's); pods an EphemeralJob targets are read when its job is reconciled.
 */
async function listLive(kube: Kube, namespace: string | undefined, cluster: Cluster): Promise<unknown[]> {
  try {
    const jobs = (await kube.list(EJOB.apiVersion, EJOB.kind, namespace)).items.map((o) => withKind(o, EJOB.apiVersion, EJOB.kind));
    const pods = (await kube.list('v1', 'Pod', namespace)).items.map((o) => withKind(o, 'v1', 'Pod')).filter(ownedByJob);
    return [...jobs, ...pods];
  } catch (err) {
    if (isKubeError(err, 'transient')) throw unreachable(cluster, err);
    if (isKubeError(err)) throw new CliError(`cannot list EphemeralJobs and pods${namespace ? ` in namespace ${namespace}` : ''} on ${describeCluster(cluster)}: ${err.message} (HTTP ${err.status}); check the CRD is installed and these credentials may list them`, 1, { cause: err });
    throw err;
  }
}

/** Typed LISTs drop kind and turn dates into Date objects: back to the wire's JSON. */
function withKind(o: unknown, apiVersion: string, kind: string): Record<string, unknown> {
  return { ...(JSON.parse(JSON.stringify(o)) as Record<string, unknown>), apiVersion, kind };
}

function ownedByJob(pod: Record<string, unknown>): boolean {
  const refs = (pod.metadata as { ownerReferences?: { kind?: string; apiVersion?: string }[] } | undefined)?.ownerReferences ?? [];
  return refs.some((r) => r.kind === 'Job' && String(r.apiVersion).startsWith('batch/'));
}

/**
 * Production's engine deps (unique lock holder, API timeout) with the invoke's clock; `wrap`
 * may stand in front of the client. `takeWrites` hands over the writes sent since it was last called.
 */
function engineDeps(kc: KubeConfig, clock: () => Date, wrap?: (kube: Kube) => Kube): EngineDeps & { takeWrites: () => Action[] } {
  const config = parseEnv(FunctionsConfig, process.env);
  const deps = createEngineDeps(config, kc, process.env.LOG_LEVEL ? createLogger(config.LOG_LEVEL, 2) : silentLogger);
  const log = writeLog(wrap ? wrap(deps.kube) : deps.kube);
  return { ...deps, kube: log.kube, clock, takeWrites: log.take };
}

/**
 * The handlers' deps against the in-memory cluster, made repeatable: the one lock holder is
 * named `ephemera-invoke` (production's is host/pid/random: one per instance, and here there
 * is one), and the server's time, which claims and renewals are stamped with, is the
 * cluster's own clock, read exactly (the client's estimate from Date headers moves with the
 * milliseconds the run takes). Live, both stay production's.
 */
function inMemoryDeps(cluster: ApiServer, clock: () => Date): ReturnType<typeof engineDeps> {
  const deps = engineDeps(cluster.kubeConfig(), clock);
  return { ...deps, kube: { ...deps.kube, serverNow: () => cluster.now() }, lock: { ...deps.lock, holder: 'ephemera-invoke' } };
}

/** Without --event, every object is looked at once. */
function asResync(objects: unknown[]): InputEvent[] {
  return objects.map((o) => ({ watch: { type: 'RESYNC', object: o } as WatchEvent }));
}

/**
 * Each event goes through production's routing: the relay's filter and envelope, then each
 * controller's route and reconcile. With `once` (no --event: every object), each routed key
 * is reconciled once. As the engine's handle does, a key (or event) that fails does not stop
 * the others: its error is kept, and what was written before it stays reported (review: one
 * 403 hid the writes already made for other keys of a live cluster).
 */
async function runHandlers(deps: EngineDeps & { takeWrites: () => Action[] }, events: InputEvent[], mode: { once: boolean; live: boolean; at?: (ev: InputEvent) => void }): Promise<Tally> {
  const tally: Tally = { actions: [], requeueAfterSeconds: null, refused: [], failed: [], notes: [], keys: { looked: new Set(), gone: new Set() } };
  const skipped = new Map<string, string[]>();
  const seen = new Set<string>();
  for (const ev of events) {
    mode.at?.(ev);
    const routed = await guarded(tally, { key: eventKey(ev) }, () => relayRoute(ev, deps.kube, deps.clock()));
    if (routed === undefined) continue;
    if ('skipped' in routed) {
      // The filter's everyday choices, and a state file's Nodes and Leases, are no news; a
      // BOOKMARK, a watch ERROR, an object the relay cannot read, or a recorded event of a
      // kind it does not watch is: said on stderr, whatever LOG_LEVEL (review: a pod it
      // could not read was dropped without a word).
      deps.logger.info({ reason: routed.skipped }, 'the relay would not forward this event');
      if (routed.because === 'input' || (routed.because === 'kind' && !mode.once)) skipped.set(routed.skipped, [...(skipped.get(routed.skipped) ?? []), ev.where ?? eventKey(ev)]);
      continue;
    }
    const { envelope } = routed;
    for (const c of deps.controllers) {
      const route = await guarded(tally, { controller: c.name, key: envelopeKey(envelope) }, () => c.route(envelope, deps.kube));
      for (const key of route?.keys ?? []) {
        if (mode.once && seen.has(`${c.name}/${key}`)) continue;
        seen.add(`${c.name}/${key}`);
        await reconcileOne(c as Controller<unknown>, key, deps, { tally, live: mode.live });
      }
    }
  }
  for (const [reason, where] of skipped) tally.notes.push(`${where.length === 1 ? where[0] : `${where.length} events (${where.slice(0, 3).join('; ')}${where.length > 3 ? '; …' : ''})`}: skipped: ${reason}`);
  return tally;
}

/** `run`'s answer, or undefined when it failed: its error is kept in the tally. */
async function guarded<T>(tally: Tally, what: { controller?: string; key: string }, run: () => Promise<T>): Promise<T | undefined> {
  try {
    return await run();
  } catch (error) {
    tally.failed.push({ ...what, error });
    return undefined;
  }
}

/**
 * Reconcile one key and keep what came of it: the writes that took effect (the plan's, and
 * the engine's own beside it: a refusal's Warning Event), the writes refused, and the error
 * that stopped it, if any.
 */
async function reconcileOne(c: Controller<unknown>, key: string, deps: EngineDeps & { takeWrites: () => Action[] }, into: { tally: Tally; live: boolean }): Promise<void> {
  const { tally } = into;
  const r = await guarded(tally, { controller: c.name, key }, () => reconcileKey(c, key, { ...deps, logger: deps.logger.child({ controller: c.name, key }) }));
  const writes = deps.takeWrites();
  const planned = new Set(r?.actions ?? []);
  tally.actions.push(...(r?.actions ?? []), ...writes.filter((a) => !planned.has(a)));
  if (r === undefined) return;
  tally.requeueAfterSeconds = minRequeue(tally.requeueAfterSeconds ?? undefined, r.requeueAfterSeconds) ?? null;
  tally.keys.looked.add(key);
  if (r.outcome === 'gone') tally.keys.gone.add(key);
  if (r.outcome === 'gone') tally.notes.push(`${c.name} ${key}: not in the ${into.live ? 'cluster' : 'state'}, nothing to do`);
  // What the functions log at warn (a pod skipped for a node gone, a job unreadable): said here whatever LOG_LEVEL.
  for (const w of r.warnings ?? []) tally.notes.push(`${c.name} ${key}: ${w}`);
  tally.refused.push(...(r.refused ?? []));
}

/** The key of the object an input event is about, for messages. */
function eventKey(ev: InputEvent): string {
  if ('envelope' in ev) return envelopeKey(ev.envelope);
  const w = ev.watch;
  if (w.type === 'BOOKMARK' || w.type === 'ERROR') return `a ${w.type} event`;
  return objectKey(w.object.kind ?? '(no kind)', w.object.metadata.namespace ?? 'default', w.object.metadata.name);
}

/**
 * Print the run: notes (what was skipped) on stderr, the summary or JSON document on stdout,
 * then the keys that failed on stderr. 1 when a write was refused or a key failed.
 */
function report(run: Run, json: boolean): number {
  const { tally } = run;
  // A plan prints what --apply prints; only this line tells them apart (review 63 L6).
  if (run.live && !run.live.applied) process.stderr.write('ephemera invoke: plan only, nothing was written (--apply to write)\n');
  // The contract's document keeps its shape: its "objects" cannot be "all objects after the
  // actions" of a live cluster, so it is empty, and said so here.
  if (run.live && json) process.stderr.write('ephemera invoke: note: "objects" is empty: a live cluster\'s objects are not listed (kubectl get shows them)\n');
  for (const note of tally.notes) process.stderr.write(`ephemera invoke: note: ${note}\n`);
  process.stdout.write(json ? `${JSON.stringify(document(run), null, 2)}\n` : summary(tally));
  const n = tally.refused.length;
  if (n > 0) process.stderr.write(`ephemera invoke: the API server refused ${n} write${n === 1 ? '' : 's'} (${json ? 'in "refused"' : 'the "refused:" lines'})\n`);
  for (const f of tally.failed) process.stderr.write(`ephemera invoke: ${failedLabel(f)}: ${errorText(f.error)}\n`);
  return tally.refused.length > 0 || tally.failed.length > 0 ? 1 : 0;
}

function failedLabel(f: { controller?: string; key: string }): string {
  return f.controller ? `${f.controller} ${f.key}` : f.key;
}

/** The contract's document; `refused` and `errors` only when there are any. */
function document({ tally, objects }: Run): InvokeOutput {
  const out: InvokeOutput = { actions: tally.actions.map(contractAction), requeueAfterSeconds: tally.requeueAfterSeconds, objects };
  if (tally.refused.length > 0) out.refused = tally.refused.map((r) => ({ ...contractAction(r.action), error: errorText(r.error), ...statusOf(r.error) }));
  if (tally.failed.length > 0) out.errors = tally.failed.map((f) => ({ ...(f.controller ? { controller: f.controller } : {}), key: f.key, error: errorText(f.error), ...statusOf(f.error) }));
  return out;
}

/** Exactly the contract's fields: verb, apiVersion, kind, subresource?, namespace, name, body?. */
function contractAction(a: Action): ContractAction {
  return {
    verb: a.verb,
    apiVersion: a.apiVersion,
    kind: a.kind,
    ...(a.subresource ? { subresource: a.subresource } : {}),
    namespace: a.namespace,
    name: a.name,
    ...(a.body !== undefined ? { body: a.body } : {}),
  };
}

/** The first KubeError along a cause chain. */
function kubeErrorIn(err: unknown): KubeError | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) if (e instanceof KubeError) return e;
  return undefined;
}

function statusOf(err: unknown): { status?: number } {
  const status = kubeErrorIn(err)?.status;
  return status ? { status } : {};
}

/**
 * An error in one line with what the API server said: its message, then the request and
 * status (`pods is forbidden: … (GET /api/v1/namespaces/b/pods: HTTP 403 Forbidden)`), not
 * only the request (review: the server's message was left out).
 */
function errorText(err: unknown): string {
  const k = kubeErrorIn(err);
  if (!k) return rootCause(err);
  const request = k.cause instanceof Error && /^[A-Z]+ \S+: HTTP \d+$/.test(k.cause.message) ? k.cause.message : k.status ? `HTTP ${k.status}` : '';
  const answer = [request, k.reason].filter(Boolean).join(' ');
  return answer ? `${k.message} (${answer})` : k.message;
}

function line(a: Action): string {
  return `${a.verb} ${a.kind} ${a.namespace}/${a.name}${a.subresource ? `/${a.subresource}` : ''}`;
}

/** One line per action with the planner's reason, one per refused write with the API server's answer, then when to look again. */
function summary(tally: Tally): string {
  const lines = tally.actions.map((a) => `${line(a)}: ${a.reason}`);
  if (lines.length === 0) lines.push('no actions');
  for (const r of tally.refused) lines.push(`refused: ${line(r.action)}: ${r.action.reason}; the API server answered: ${errorText(r.error)}`);
  lines.push(`requeue after: ${tally.requeueAfterSeconds === null ? 'none' : `${tally.requeueAfterSeconds}s`}`);
  return `${lines.join('\n')}\n`;
}
