import { parseArgs } from 'node:util';
import type { KubeConfig } from '@kubernetes/client-node';
import type { WatchEvent } from '../../api/envelope.ts';
import { ConfigError, FunctionsConfig, parseEnv } from '../../config.ts';
import type { Controller } from '../../engine/controller.ts';
import { handle, reconcileKey, type EngineDeps, type KeyResult } from '../../engine/engine.ts';
import { silentLogger } from '../../engine/logger.ts';
import { minRequeue, type Action } from '../../engine/plan.ts';
import { EJOB } from '../../api/names.ts';
import { isKubeError } from '../../kube/errors.ts';
import type { Kube } from '../../kube/kube.ts';
import { CliError } from './cli-error.ts';
import { describeCluster, loadCluster, probeCluster, unreachable, type Cluster } from './kubeconfig.ts';
import { createEngineDeps } from '../deps.ts';
import { createLogger } from '../logger.ts';
import { InputError, loadEvents, loadState, type InputEvent } from './input.ts';
import { startApiServer, type ApiServer } from '../../cluster/index.ts';
import { dryRunKube } from './dry-run-kube.ts';
import { relayRoute } from './relay-route.ts';

const USAGE = `usage: ephemera invoke --state FILE [--event FILE] [--now RFC3339] [--output json]
       ephemera invoke --kubeconfig FILE [--namespace NS] [--state FILE | --event FILE] [--now RFC3339] [--output json] [--apply]

Runs the handlers (EphemeralJob, SidecarTerminator) once and prints the actions they plan,
each with the reason, and when to look again.

  --state FILE       objects to start from: YAML or JSON, a kind: List or several documents
  --event FILE       a watch event {type, object}, or JSON lines of them (ephemera relay
                     --sink record:PATH); without it every object is reconciled once
  --now RFC3339      the clock the handlers and the in-memory API server see (default: now)
  --output json      one JSON document: {actions, requeueAfterSeconds, objects}
  --kubeconfig FILE  read a live cluster instead; without --state/--event, its EphemeralJobs
                     and Job pods are listed and reconciled. Plans only, unless --apply
  --namespace NS     with --kubeconfig and no --state: only this namespace (default: all)
  --apply            with --kubeconfig: perform the writes
  -h, --help         this help

Variables: those of the functions (EPHEMERA_LOCK_NAMESPACE, EPHEMERA_CONTROLLERS, LOG_LEVEL, …;
see the README's Configuration table). LOG_LEVEL set: handler logs go to stderr.
`;

/** The `--output json` document (DESIGN.md's contract). */
export interface InvokeOutput {
  actions: { verb: string; apiVersion: string; kind: string; subresource?: string; namespace: string; name: string; body?: unknown }[];
  requeueAfterSeconds: number | null;
  objects: unknown[];
}

/** A run: the contract document, plus each action's reason for the human summary. */
interface Run {
  out: InvokeOutput;
  reasons: string[];
}

interface Options {
  state?: string;
  event?: string;
  now: Date;
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
    const run = opts.kubeconfig ? await invokeLive(opts) : await invokeInMemory(opts);
    process.stdout.write(opts.json ? `${JSON.stringify(run.out, null, 2)}\n` : summary(run));
    return 0;
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
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      state: { type: 'string' },
      event: { type: 'string' },
      now: { type: 'string' },
      output: { type: 'string', short: 'o' },
      kubeconfig: { type: 'string' },
      namespace: { type: 'string', short: 'n' },
      apply: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  if (!values.state && !values.kubeconfig) throw new Error('--state FILE is required (or --kubeconfig FILE for a live cluster)');
  if (values.output !== undefined && values.output !== 'json') throw new Error(`--output must be "json", got "${values.output}"`);
  if (values.apply && !values.kubeconfig) throw new Error('--apply only makes sense with --kubeconfig');
  if (values.namespace !== undefined && (!values.kubeconfig || values.state || values.event)) throw new Error('--namespace only makes sense with --kubeconfig and no --state or --event');
  const now = values.now === undefined ? new Date() : new Date(values.now);
  if (Number.isNaN(now.getTime()) || (values.now !== undefined && !/^\d{4}-\d\d-\d\dT/.test(values.now))) throw new Error(`--now must be an RFC 3339 time, got "${values.now}"`);
  return { state: values.state, event: values.event, now, json: values.output === 'json', kubeconfig: values.kubeconfig, namespace: values.namespace, apply: values.apply };
}

/** Run against an in-memory API server seeded from --state, whose clock is --now. */
export async function invokeInMemory(opts: Pick<Options, 'state' | 'event' | 'now'>): Promise<Run> {
  const objects = opts.state ? await loadState(opts.state) : [];
  const events = opts.event ? await loadEvents(opts.event) : undefined;
  const cluster = await startCluster(objects, opts.now);
  try {
    const run = await runHandlers(engineDeps(cluster.kubeConfig(), opts.now), events ?? asResync(objects), events === undefined);
    return toRun(run, cluster.store.all());
  } finally {
    await cluster.close();
  }
}

function toRun(run: { actions: Action[]; requeueAfterSeconds: number | null }, objects: unknown[]): Run {
  return { out: { actions: run.actions.map(contractAction), requeueAfterSeconds: run.requeueAfterSeconds, objects }, reasons: run.actions.map((a) => a.reason) };
}

/** The in-memory cluster; objects it cannot hold (unknown kinds) are an input error. */
async function startCluster(objects: unknown[], now: Date): Promise<ApiServer> {
  try {
    return await startApiServer({ objects, clock: () => now });
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
  const deps = engineDeps(cluster.kc, opts.now, opts.apply ? undefined : dryRunKube);
  const events = opts.event ? await loadEvents(opts.event) : asResync(opts.state ? await loadState(opts.state) : await listLive(deps.kube, opts.namespace, cluster));
  const run = await runHandlers(deps, events, !opts.event);
  return toRun(run, []);
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

/** Production's engine deps (unique lock holder, API timeout) with the --now clock; `wrap` may stand in front of the client. */
function engineDeps(kc: KubeConfig, now: Date, wrap?: (kube: Kube) => Kube): EngineDeps {
  const config = parseEnv(FunctionsConfig, process.env);
  const deps = createEngineDeps(config, kc, process.env.LOG_LEVEL ? createLogger(config.LOG_LEVEL, 2) : silentLogger);
  return { ...deps, kube: wrap ? wrap(deps.kube) : deps.kube, clock: () => now };
}

/** Without --event, every object is looked at once. */
function asResync(objects: unknown[]): InputEvent[] {
  return objects.map((o) => ({ watch: { type: 'RESYNC', object: o } as WatchEvent }));
}

/**
 * Each event goes through production's routing: the relay's filter and envelope, then the
 * engine. With `once` (no --event: every object), each routed key is reconciled once.
 */
async function runHandlers(deps: EngineDeps, events: InputEvent[], once: boolean): Promise<{ actions: Action[]; requeueAfterSeconds: number | null }> {
  const actions: Action[] = [];
  let requeue: number | null = null;
  const record = (r: { actions: Action[]; requeueAfterSeconds?: number | undefined }): void => {
    actions.push(...r.actions);
    requeue = minRequeue(requeue ?? undefined, r.requeueAfterSeconds) ?? null;
  };
  const seen = new Set<string>();
  for (const ev of events) {
    const routed = await relayRoute(ev, deps.kube, deps.clock());
    if ('skipped' in routed) {
      deps.logger.info({ reason: routed.skipped }, 'the relay would not forward this event');
      continue;
    }
    const { envelope } = routed;
    if (!once) {
      const r = await handle(envelope, deps);
      for (const k of r.keys) record(k);
      // The other keys were handled; the refusal is still this run's error, as it was.
      if (r.failed[0]) throw r.failed[0].error;
      continue;
    }
    for (const c of deps.controllers) for (const key of (await c.route(envelope, deps.kube)).keys) {
      if (seen.has(`${c.name}/${key}`)) continue;
      seen.add(`${c.name}/${key}`);
      record(await reconcileKey(c as Controller<unknown>, key, deps) as KeyResult);
    }
  }
  return { actions, requeueAfterSeconds: requeue };
}

/** Exactly the contract's fields: verb, apiVersion, kind, subresource?, namespace, name, body?. */
function contractAction(a: Action): InvokeOutput['actions'][number] {
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

/** One line per action with the planner's reason, then when to look again. */
function summary({ out, reasons }: Run): string {
  const lines = out.actions.map((a, i) => `${a.verb} ${a.kind} ${a.namespace}/${a.name}${a.subresource ? `/${a.subresource}` : ''}: ${reasons[i] ?? ''}`);
  if (lines.length === 0) lines.push('no actions');
  lines.push(`requeue after: ${out.requeueAfterSeconds === null ? 'none' : `${out.requeueAfterSeconds}s`}`);
  return `${lines.join('\n')}\n`;
}

