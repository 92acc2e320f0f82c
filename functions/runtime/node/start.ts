// `npm start` / `ephemera start`: everything in one process (relay + in-memory queue +
// functions + webhook), as DESIGN.md's contract has it: with a kubeconfig or in-cluster
// config, against that cluster; with none, against an embedded in-memory cluster playing the
// proposal's Story 1. A kubeconfig is one given to the process (--kubeconfig FILE, or the
// KUBECONFIG variable), or the pod's service account; ~/.kube/config alone is not taken, so a
// laptop's default context is never acted on by accident (it is named, with the flag to use).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { constants, homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseFlags } from './args.ts';
import { kubeconfigVariableFiles, SERVICE_ACCOUNT_TOKEN } from '../../kube/token-files.ts';
import { pino } from 'pino';
import * as z from 'zod';
import { bindFailure, ConfigError, formatListen, FunctionsConfig, Listen, parseEnv } from '../../config.ts';
import { handle } from '../../engine/engine.ts';
import type { Logger } from '../../engine/logger.ts';
import { createEngineDeps, withFreshHolder } from '../deps.ts';
import { createLogger } from '../logger.ts';
import { CliError } from './cli-error.ts';
import { describeCluster, loadCluster, probeCluster, type Cluster, type ClusterSource } from './kubeconfig.ts';
import { startWebhookServer } from './webhook-server.ts';
import { createMetrics } from '../../../relay/metrics.ts';
import { startRelay, type Relay } from '../../../relay/relay.ts';
import { startOpsServer } from '../../../relay/server.ts';
import { memorySink } from '../../../relay/sinks/memory.ts';
import { startDemo, type Demo } from './demo.ts';

const USAGE = `usage: ephemera start [--kubeconfig FILE | --in-cluster | --embedded] [--namespace NS]...

Runs everything in one process: the relay, an in-memory queue, the functions (EphemeralJob
and SidecarTerminator) and the validating webhook.

The cluster: --kubeconfig FILE; else the KUBECONFIG variable's file; else, in a pod, its
service account; else an embedded in-memory cluster playing the proposal's Story 1 (4 pods,
parallelism 1), with how to look inside with kubectl. ~/.kube/config is not used on its
own (pass it with --kubeconfig). It says which cluster before it acts.

  --kubeconfig FILE  act on the cluster of this kubeconfig's current context
  --in-cluster       act on the cluster this pod runs in (its service account)
  --embedded         the embedded in-memory cluster, whatever KUBECONFIG or the pod say
  --namespace NS     act only in these namespaces (repeat, or comma-separate; default: all)
  -h, --help         this help

Variables (besides the functions' own, see the README's Configuration table):
  EPHEMERA_WEBHOOK_LISTEN  127.0.0.1:8443  where the webhook listens (plain HTTP)
  EPHEMERA_RELAY_LISTEN    127.0.0.1:8080  /healthz, /readyz, /metrics
  EPHEMERA_DEMO_TICK_MS    500             the embedded kubelet's step, in milliseconds
  (HOST:0 picks any free port.)
`;

/** `start`'s variables: the functions' plus where to listen and the demo's pace. */
export const StartConfig = FunctionsConfig.extend({
  EPHEMERA_WEBHOOK_LISTEN: Listen.prefault('127.0.0.1:8443'),
  EPHEMERA_RELAY_LISTEN: Listen.prefault('127.0.0.1:8080'),
  EPHEMERA_DEMO_TICK_MS: z.coerce.number().int().min(10).max(60_000).default(500),
});
type StartConfig = z.infer<typeof StartConfig>;

interface StartOptions {
  source?: ClusterSource;
  /** Where the source came from when no flag named it (KUBECONFIG, the pod): said before acting. */
  implied?: string;
  namespaces: string[];
}

/** `ephemera start`; resolves with the exit code after SIGINT/SIGTERM. */
export async function main(argv: string[]): Promise<number> {
  try {
    const opts = parseOptions(argv);
    if (opts === 'help') {
      process.stdout.write(USAGE);
      return 0;
    }
    return await run(opts, parseEnv(StartConfig, process.env));
  } catch (err) {
    if (!(err instanceof CliError || err instanceof ConfigError)) throw err;
    process.stderr.write(`ephemera start: ${err.message}\n`);
    return err instanceof CliError ? err.exitCode : 2;
  }
}

function parseOptions(argv: string[]): StartOptions | 'help' {
  let values;
  try {
    values = parseFlags(argv, {
      kubeconfig: { type: 'string' },
      'in-cluster': { type: 'boolean', default: false },
      embedded: { type: 'boolean', default: false },
      namespace: { type: 'string', short: 'n', multiple: true, default: [] },
      help: { type: 'boolean', short: 'h' },
    });
  } catch (err) {
    throw usageError((err as Error).message);
  }
  if (values.help) return 'help';
  if ([values.kubeconfig !== undefined, values['in-cluster'], values.embedded].filter(Boolean).length > 1) throw usageError('--kubeconfig, --in-cluster and --embedded exclude each other: choose one cluster');
  const namespaces = values.namespace.flatMap((n) => n.split(',')).map((n) => n.trim()).filter(Boolean);
  if (values.embedded) return { namespaces };
  if (values.kubeconfig !== undefined) return { source: { kubeconfig: values.kubeconfig }, namespaces };
  if (values['in-cluster']) return { source: { inCluster: true }, namespaces };
  return { ...impliedSource(process.env), namespaces };
}

/**
 * No flag: the KUBECONFIG variable's file, else the pod's service account (the variable the
 * kubelet sets, and a token mounted), else none. KUBECONFIG with several files (kubectl merges
 * them) is a usage error naming the flag: start acts on one cluster, and says which.
 */
function impliedSource(env: NodeJS.ProcessEnv): { source?: ClusterSource; implied?: string } {
  const files = kubeconfigVariableFiles(env);
  if (files.length > 0) {
    if (files.length > 1) throw usageError(`KUBECONFIG names ${files.length} files (${files.join(', ')}); start acts on one cluster: pass --kubeconfig FILE, or --embedded for the demo`);
    return { source: { kubeconfig: files[0] as string }, implied: 'KUBECONFIG' };
  }
  if (env.KUBERNETES_SERVICE_HOST && existsSync(SERVICE_ACCOUNT_TOKEN)) return { source: { inCluster: true }, implied: 'this pod\'s service account' };
  return {};
}

function usageError(message: string): CliError {
  return new CliError(`${message}\nRun "ephemera start --help" for the options.`, 2);
}

/**
 * The cluster, then the ports, the demo and the relay; everything stops again on SIGINT,
 * SIGTERM or SIGHUP, also one that comes while it is still starting (what was started is
 * stopped, in reverse order), and an error half-way stops what was started before it.
 */
async function run(opts: StartOptions, config: StartConfig): Promise<number> {
  const stop = new Stopper();
  const started: (() => Promise<void> | void)[] = [];
  try {
    await startAll(opts, config, stop, started);
    await stop.requested;
    return 0;
  } finally {
    for (const close of started.reverse()) await Promise.resolve().then(close).catch(() => undefined);
    stop.dispose();
  }
}

/** Start each part, noting in `started` how to stop it; stops starting once a signal came. */
async function startAll(opts: StartOptions, config: StartConfig, stop: Stopper, started: (() => Promise<void> | void)[]): Promise<void> {
  const logger = createLogger(config.LOG_LEVEL);
  const cluster = opts.source ? await openCluster(opts.source, opts.implied) : undefined;
  if (stop.stopping) return;
  const metrics = createMetrics({ process: true });
  const box: { relay?: Relay } = {};
  const webhook = await listen('EPHEMERA_WEBHOOK_LISTEN', config, () => startWebhookServer({ ...config.EPHEMERA_WEBHOOK_LISTEN, logger: pino({ level: config.LOG_LEVEL, base: { app: 'ephemera', component: 'webhook' } }) }));
  started.push(() => webhook.close());
  const ops = await listen('EPHEMERA_RELAY_LISTEN', config, () => startOpsServer({ ...config.EPHEMERA_RELAY_LISTEN, ready: () => box.relay?.ready() ?? false, registry: metrics.registry }));
  started.push(() => ops.close());
  const demo = cluster ? undefined : await startDemo(config.EPHEMERA_DEMO_TICK_MS);
  if (demo) started.push(() => demo.stop());
  if (stop.stopping) return;
  const kc = cluster?.kc ?? (demo as Demo).server.kubeConfig();
  announce(cluster, opts, config);
  const deps = createEngineDeps(config, kc, logger);
  const relay = await startRelay({
    kubeConfig: kc, metrics, namespaces: opts.namespaces, relayId: 'ephemera-start', coalesceMs: 200, holdMs: (config.EPHEMERA_LEASE_SECONDS + config.EPHEMERA_LEASE_SKEW_SECONDS) * 1000, resyncSeconds: 600, bufferMax: 50_000, logger,
    leaseSweep: { namespace: config.EPHEMERA_LOCK_NAMESPACE },
    sink: memorySink(async (e) => handle(e, withFreshHolder(deps)), (e, ms) => box.relay?.requeue(e, ms)),
  });
  box.relay = relay;
  started.push(() => relay.stop());
  if (stop.stopping) return;
  logServing(logger, { cluster: cluster ? cluster.server : 'embedded demo', webhook: webhook.url, ops: `http://${formatListen({ host: config.EPHEMERA_RELAY_LISTEN.host ?? 'localhost', port: ops.port })}` });
  // The demo's kubeconfig folder is made by the Stopper, which removes it however the process stops.
  demo?.narrate(stop.tempDir('ephemera-demo-'));
}

/** The cluster, checked and reachable; one no flag named says where it came from when it is not (a stale KUBECONFIG). */
async function openCluster(source: ClusterSource, implied: string | undefined): Promise<Cluster> {
  try {
    const cluster = loadCluster(source);
    await probeCluster(cluster);
    return cluster;
  } catch (err) {
    if (!(err instanceof CliError) || implied === undefined) throw err;
    throw new CliError(`${err.message} (the cluster of ${implied}, as no flag named one; --embedded runs the demo instead)`, err.exitCode, { cause: err });
  }
}

function logServing(logger: Logger, fields: Record<string, string>): void {
  logger.info(fields, 'ephemera running');
}

/** Bind a listener; a port in use (or not ours to take) is one line naming the variable. */
async function listen<T>(variable: 'EPHEMERA_WEBHOOK_LISTEN' | 'EPHEMERA_RELAY_LISTEN', config: StartConfig, bind: () => Promise<T>): Promise<T> {
  try {
    return await bind();
  } catch (err) {
    const what = variable === 'EPHEMERA_WEBHOOK_LISTEN' ? 'the webhook' : 'the relay\'s /healthz, /readyz, /metrics';
    throw new CliError(bindFailure(variable, config[variable], what, err), 1, { cause: err });
  }
}

/**
 * Say, before acting, which cluster and namespaces the controllers will write to; a cluster
 * no flag named says where it came from and how to run the demo instead, and the demo names
 * a ~/.kube/config it leaves alone.
 */
function announce(cluster: Cluster | undefined, opts: StartOptions, config: StartConfig): void {
  const where = opts.namespaces.length > 0 ? `namespaces ${opts.namespaces.join(', ')}` : 'all namespaces';
  const target = cluster ? `the cluster at ${describeCluster(cluster)}` : 'the embedded in-memory cluster (no real cluster is touched)';
  process.stderr.write(`ephemera: acting on ${target}, ${where}; controllers ${config.EPHEMERA_CONTROLLERS}; Leases in ${config.EPHEMERA_LOCK_NAMESPACE}.\n`);
  if (cluster && opts.implied) process.stderr.write(`ephemera: the cluster of ${opts.implied}, as no flag named one; --embedded runs the demo instead.\n`);
  const home = join(homedir(), '.kube', 'config');
  if (!cluster && existsSync(home)) process.stderr.write(`ephemera: ${home} is not used on its own; --kubeconfig ${home} acts on its cluster.\n`);
}

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * The process's stop signals, caught from the start of `run` (review: a Ctrl-C while it was
 * starting, a second one while it was stopping, or a SIGHUP from a closed terminal killed it
 * and left /tmp/ephemera-demo-* behind). The first signal asks for a clean stop; a second
 * removes the temporary folders at once and exits with 128 + the signal's number, as a shell
 * reports a process killed by it.
 */
class Stopper {
  /** Settles at the first signal. */
  readonly requested: Promise<void>;
  private signalled = false;
  private readonly folders: string[] = [];
  private readonly onSignal: (signal: NodeJS.Signals) => void;
  private resolve: () => void = () => {};

  constructor() {
    this.requested = new Promise<void>((resolve) => (this.resolve = resolve));
    this.onSignal = (signal) => {
      if (!this.signalled) {
        this.signalled = true;
        process.stderr.write(`ephemera: ${signal}: stopping (${signal === 'SIGINT' ? 'Ctrl-C' : 'a signal'} again stops at once)\n`);
        this.resolve();
        return;
      }
      this.removeFolders();
      process.exit(128 + (constants.signals[signal] ?? 0));
    };
    for (const signal of STOP_SIGNALS) process.on(signal, this.onSignal);
    // Any other way out (an error that escapes: its output pipe closed, `npm start | head`) still removes them (review).
    process.on('exit', this.onExit);
  }

  private readonly onExit = (): void => this.removeFolders();

  /** A signal came. */
  get stopping(): boolean {
    return this.signalled;
  }

  /** A new temporary folder, removed by `dispose` or by a second signal. */
  tempDir(prefix: string): string {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    this.folders.push(dir);
    return dir;
  }

  /** Remove the folders and stop catching the signals. */
  dispose(): void {
    this.removeFolders();
    for (const signal of STOP_SIGNALS) process.off(signal, this.onSignal);
    process.off('exit', this.onExit);
  }

  private removeFolders(): void {
    for (const dir of this.folders.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}
