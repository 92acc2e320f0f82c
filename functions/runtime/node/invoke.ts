import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import type { WatchEvent } from '../../api/envelope.ts';
import { ConfigError, FunctionsConfig, parseEnv } from '../../config.ts';
import type { Controller } from '../../engine/controller.ts';
import { handle, reconcileKey, type EngineDeps, type KeyResult } from '../../engine/engine.ts';
import { silentLogger } from '../../engine/logger.ts';
import { minRequeue, type Action } from '../../engine/plan.ts';
import type { Kube } from '../../kube/kube.ts';
import { createEngineDeps, createLogger } from '../deps.ts';
import { InputError, loadEvents, loadState, type InputEvent } from './input.ts';
import { startApiServer, type ApiServer } from '../../cluster/index.ts';
import { dryRunKube } from './dry-run-kube.ts';
import { relayRoute } from './relay-route.ts';

const USAGE = 'usage: ephemera invoke --state FILE [--event FILE] [--now RFC3339] [--output json] [--kubeconfig FILE [--apply]]';

/** The `--output json` document (DESIGN.md's contract). */
export interface InvokeOutput {
  actions: { verb: string; apiVersion: string; kind: string; subresource?: string; namespace: string; name: string; body?: unknown }[];
  requeueAfterSeconds: number | null;
  objects: unknown[];
}

interface Options {
  state?: string;
  event?: string;
  now: Date;
  json: boolean;
  kubeconfig?: string;
  apply: boolean;
}

/** `ephemera invoke`: run the handlers once against an in-memory cluster (or a live one). */
export async function main(argv: string[]): Promise<number> {
  let opts: Options;
  try {
    opts = parseOptions(argv);
  } catch (err) {
    process.stderr.write(`ephemera invoke: ${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  try {
    const out = opts.kubeconfig ? await invokeLive(opts) : await invokeInMemory(opts);
    process.stdout.write(opts.json ? `${JSON.stringify(out, null, 2)}\n` : summary(out));
    return 0;
  } catch (err) {
    if (err instanceof InputError || err instanceof ConfigError) {
      process.stderr.write(`ephemera invoke: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      state: { type: 'string' },
      event: { type: 'string' },
      now: { type: 'string' },
      output: { type: 'string' },
      kubeconfig: { type: 'string' },
      apply: { type: 'boolean', default: false },
    },
  });
  if (!values.state && !values.kubeconfig) throw new Error('--state FILE is required (or --kubeconfig FILE for a live cluster)');
  if (values.output !== undefined && values.output !== 'json') throw new Error(`--output must be "json", got "${values.output}"`);
  if (values.apply && !values.kubeconfig) throw new Error('--apply only makes sense with --kubeconfig');
  const now = values.now === undefined ? new Date() : new Date(values.now);
  if (Number.isNaN(now.getTime()) || (values.now !== undefined && !/^\d{4}-\d\d-\d\dT/.test(values.now))) throw new Error(`--now must be an RFC 3339 time, got "${values.now}"`);
  return { state: values.state, event: values.event, now, json: values.output === 'json', kubeconfig: values.kubeconfig, apply: values.apply };
}

/** Run against an in-memory API server seeded from --state, whose clock is --now. */
export async function invokeInMemory(opts: Pick<Options, 'state' | 'event' | 'now'>): Promise<InvokeOutput> {
  const objects = opts.state ? await loadState(opts.state) : [];
  const events = opts.event ? await loadEvents(opts.event) : undefined;
  const cluster = await startCluster(objects, opts.now);
  try {
    const run = await runHandlers(engineDeps(cluster.kubeConfig(), opts.now), events ?? asResync(objects), events === undefined);
    return { actions: run.actions.map(contractAction), requeueAfterSeconds: run.requeueAfterSeconds, objects: cluster.store.all() };
  } finally {
    await cluster.close();
  }
}

/** The in-memory cluster; objects it cannot hold (unknown kinds) are an input error. */
async function startCluster(objects: unknown[], now: Date): Promise<ApiServer> {
  try {
    return await startApiServer({ objects, clock: () => now });
  } catch (err) {
    throw new InputError(`--state: ${(err as Error).message}`);
  }
}

/** Against a live cluster: plan only (writes are recorded, not sent) unless --apply. */
async function invokeLive(opts: Options): Promise<InvokeOutput> {
  const kc = new KubeConfig();
  try {
    kc.loadFromFile(opts.kubeconfig as string);
  } catch (err) {
    throw new InputError(`--kubeconfig: cannot read ${opts.kubeconfig}: ${(err as Error).message}`);
  }
  const events = opts.event ? await loadEvents(opts.event) : asResync(opts.state ? await loadState(opts.state) : []);
  const run = await runHandlers(engineDeps(kc, opts.now, opts.apply ? undefined : dryRunKube), events, !opts.event);
  return { actions: run.actions.map(contractAction), requeueAfterSeconds: run.requeueAfterSeconds, objects: [] };
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

function summary(out: InvokeOutput): string {
  const lines = out.actions.map((a) => `${a.verb} ${a.kind} ${a.namespace}/${a.name}${a.subresource ? `/${a.subresource}` : ''}`);
  if (lines.length === 0) lines.push('no actions');
  lines.push(`requeue after: ${out.requeueAfterSeconds === null ? 'none' : `${out.requeueAfterSeconds}s`}`);
  return `${lines.join('\n')}\n`;
}

