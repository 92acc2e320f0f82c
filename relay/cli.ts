// `ephemera relay [--sink sqs|memory|record:PATH]`: the relay against the cluster of
// KUBECONFIG (or the in-cluster config), with its ops server and leader election.
// Each sink's dependencies are loaded only when it is chosen (the bundle is split, so they
// are not even parsed): the AWS SDK (sqs) and the functions' engine and controllers
// (memory) are ~15 MiB of resident memory a relay with another sink does not need (issue
// 11: an idle relay with the record sink, 92 → 77 MiB).
import { existsSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { parseFlags } from '../functions/runtime/node/args.ts';
import { KubeConfig } from '@kubernetes/client-node';
import { bindFailure, FunctionsConfig, parseEnv } from '../functions/config.ts';
import { createKube } from '../functions/kube/client.ts';
import { contextProblem, prepareKubeConfig } from '../functions/kube/kubeconfig-endpoint.ts';
import { agentProxyEnv } from '../functions/kube/proxy.ts';
import { defaultKubeconfigFiles, SERVICE_ACCOUNT_TOKEN, useTokenFiles } from '../functions/kube/token-files.ts';
import { createLogger } from '../functions/runtime/logger.ts';
import type { Logger } from '../functions/engine/logger.ts';
import { holdSeconds, leaderElection, leaderLock, RelayConfig } from './config.ts';
import { createMetrics } from './metrics.ts';
import { createRelay, type Relay } from './relay.ts';
import { startOpsServer } from './server.ts';
import { recordSink } from './sinks/record.ts';
import type { Sink } from './sinks/sink.ts';

const USAGE = 'usage: ephemera relay [--sink sqs|memory|record:PATH]';

/** Where a pod's service account token is mounted (client-node's loadFromDefault looks there last). */

/** Run the relay until SIGTERM/SIGINT. */
export async function main(argv: string[]): Promise<number> {
  let sinkArg: string | undefined;
  let config: RelayConfig;
  try {
    sinkArg = parseFlags(argv, { sink: { type: 'string' } }).sink;
    config = parseEnv(RelayConfig, process.env);
  } catch (err) {
    process.stderr.write(`ephemera relay: ${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const sinkSpec = sinkArg ?? (config.EPHEMERA_SQS_QUEUE_URL ? 'sqs' : 'memory');
  // Usage first: a wrong --sink is told as such wherever the relay runs.
  const choice = chooseSink(sinkSpec, config);
  if (typeof choice === 'string') {
    process.stderr.write(`ephemera relay: ${choice}\n${USAGE}\n`);
    return 2;
  }
  // The functions' variables too, before the kubeconfig: "no cluster to watch" hid a bad one (review77 L5).
  if (choice.kind === 'memory') {
    try {
      parseEnv(FunctionsConfig, process.env);
    } catch (err) {
      process.stderr.write(`ephemera relay: ${(err as Error).message}\n`);
      return 2;
    }
  }
  const logger = relayLogger(config.LOG_LEVEL, config);
  const election = leaderElection(config, choice.kind);
  const kc = new KubeConfig();
  const files = defaultKubeconfigFiles();
  // client-node falls back to http://localhost:8080 when it finds no kubeconfig and no
  // service account: the relay then asked its own ops server for ever (review).
  if (files.length === 0 && !existsSync(SERVICE_ACCOUNT_TOKEN)) {
    process.stderr.write(`ephemera relay: no cluster to watch: KUBECONFIG is not set, ${join(homedir(), '.kube', 'config')} does not exist, and this is not a pod with a service account token (${SERVICE_ACCOUNT_TOKEN}); set KUBECONFIG\n`);
    return 2;
  }
  const unusable = kubeconfigProblem(kc, files);
  if (unusable) {
    process.stderr.write(`ephemera relay: ${unusable}\n`);
    return 2;
  }
  // The sink's requeue needs the relay, which needs the sink: tie the knot through a box.
  const box: { relay?: Relay } = {};
  const sink = await makeSink(choice, config, kc, (e, ms) => box.relay?.requeue(e, ms)).catch((err: unknown) => err as Error);
  if (sink instanceof Error) {
    process.stderr.write(`ephemera relay: ${sink.message}\n${USAGE}\n`);
    return 2;
  }
  const metrics = createMetrics({ process: true });
  let ops: Awaited<ReturnType<typeof startOpsServer>>;
  try {
    ops = await startOpsServer({ ...config.EPHEMERA_RELAY_LISTEN, ready: () => box.relay?.ready() ?? false, why: () => box.relay?.readiness() ?? 'starting', registry: metrics.registry });
  } catch (err) {
    // As `start` says it (review: the generic hint named no variable); exit 1 as there: the
    // setting is valid, the machine is not as expected.
    process.stderr.write(`ephemera relay: ${bindFailure('EPHEMERA_RELAY_LISTEN', config.EPHEMERA_RELAY_LISTEN, 'the relay\'s /healthz, /readyz, /metrics', err)}\n`);
    return 1;
  }
  const stopping = new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  // Returns at once: the first list is retried with backoff (and /readyz says so) until the
  // API server answers, so a busy API server at start is not a crash loop.
  const relay = createRelay({
    metrics,
    kubeConfig: kc,
    sink,
    namespaces: config.EPHEMERA_RELAY_NAMESPACES ? config.EPHEMERA_RELAY_NAMESPACES.split(',') : [],
    relayId: config.EPHEMERA_RELAY_ID,
    cluster: config.EPHEMERA_RELAY_CLUSTER,
    coalesceMs: config.EPHEMERA_RELAY_COALESCE_MS,
    holdMs: holdSeconds(config) * 1000,
    resyncSeconds: config.EPHEMERA_RELAY_RESYNC_SECONDS,
    bufferMax: config.EPHEMERA_RELAY_BUFFER_MAX,
    deliveryGraceSeconds: config.EPHEMERA_RELAY_DELIVERY_GRACE_SECONDS,
    logger,
    leaseSweep: { namespace: config.EPHEMERA_LOCK_NAMESPACE },
    ...(election.on
      ? { election: { kube: createKube(kc), lock: leaderLock(config) } }
      : {}),
  });
  box.relay = relay;
  // Which cluster it acts on, and as whom: the memory sink writes there (review: a laptop's ~/.kube/config was taken silently).
  // And whether it competes for the leader Lease: a recording relay does not, unless told (review75 H1).
  logger.info({ sink: sink.name, port: ops.port, server: kc.getCurrentCluster()?.server, context: kc.getCurrentContext(), kubeconfig: files.length > 0 ? files.join(delimiter) : 'in-cluster service account', leaderElection: `${election.on ? 'on' : 'off'}: ${election.why}` }, 'relay running');
  await stopping;
  await relay.stop();
  await ops.close();
  return 0;
}

/**
 * Load the kubeconfig the relay acts through (KUBECONFIG's files, ~/.kube/config, or the
 * service account) and say what is wrong with it, as `start` would, or undefined (review: a
 * missing file was a bare ENOENT, a current-context naming no context surfaced as a sink
 * error with the usage). The relay reads KUBECONFIG; it takes no --kubeconfig flag.
 */
function kubeconfigProblem(kc: KubeConfig, files: string[]): string | undefined {
  const missing = files.find((f) => !existsSync(f));
  if (missing) return `KUBECONFIG names ${missing}, which does not exist; set KUBECONFIG to a kubeconfig file`;
  try {
    kc.loadFromDefault();
    for (const file of files) useTokenFiles(kc, file);
  } catch (err) {
    return `the kubeconfig ${files.join(delimiter)} cannot be read: ${(err as Error).message.replace(/\s+/g, ' ').slice(0, 160)}`;
  }
  const problem = files.length > 0 ? contextProblem(kc, `the kubeconfig ${files.join(delimiter)}`, 'kubectl') : undefined;
  if (problem) return problem;
  try {
    prepareKubeConfig(kc);
  } catch (err) {
    return (err as Error).message;
  }
  return undefined;
}

/** A --sink, checked with its settings before anything is started. */
type SinkChoice = { kind: 'record'; path: string } | { kind: 'sqs'; queueUrl: string } | { kind: 'memory' };

/** The sink a --sink names, or what is wrong with it and its settings. */
function chooseSink(spec: string, config: RelayConfig): SinkChoice | string {
  if (spec.startsWith('record:')) return spec === 'record:' ? '--sink record:PATH needs a path' : { kind: 'record', path: spec.slice('record:'.length) };
  if (spec === 'sqs') return config.EPHEMERA_SQS_QUEUE_URL ? { kind: 'sqs', queueUrl: config.EPHEMERA_SQS_QUEUE_URL } : 'invalid configuration:\n  EPHEMERA_SQS_QUEUE_URL: required for --sink sqs (the queue URL)';
  return spec === 'memory' ? { kind: 'memory' } : `--sink must be sqs, memory or record:PATH, got "${spec}"`;
}

async function makeSink(choice: SinkChoice, config: RelayConfig, kc: KubeConfig, requeue: (e: Parameters<Relay['requeue']>[0], ms: number) => void): Promise<Sink> {
  if (choice.kind === 'record') return recordSink(await appendable(choice.path));
  if (choice.kind === 'sqs') {
    const timeoutMs = config.EPHEMERA_RELAY_SEND_TIMEOUT_SECONDS * 1000;
    const requestHandler = sqsRequestHandler(config.EPHEMERA_SQS_ENDPOINT ?? choice.queueUrl, timeoutMs);
    const { SQSClient, signingRegion, sqsSink } = await import('./sinks/sqs.ts');
    const client = new SQSClient({ region: signingRegion(choice.queueUrl, config.AWS_REGION, config.EPHEMERA_SQS_ENDPOINT), requestHandler, ...(config.EPHEMERA_SQS_ENDPOINT ? { endpoint: config.EPHEMERA_SQS_ENDPOINT } : {}) });
    return sqsSink(client, choice.queueUrl, { timeoutMs });
  }
  const fc = parseEnv(FunctionsConfig, process.env);
  const [{ handle }, { createEngineDeps, withFreshHolder }, { memorySink }] = await Promise.all([import('../functions/engine/engine.ts'), import('../functions/runtime/deps.ts'), import('./sinks/memory.ts')]);
  const deps = createEngineDeps(fc, kc, relayLogger(fc.LOG_LEVEL, config));
  return memorySink(async (e) => handle(e, withFreshHolder(deps)), requeue, { timeoutMs: config.EPHEMERA_RELAY_SEND_TIMEOUT_SECONDS * 1000 });
}

/**
 * `path`, once it is known to open for append (and is created if absent): the record sink
 * opens it only at its first send, so a typo in the path started a relay that retried it for
 * ever (review 63 L11).
 */
async function appendable(path: string): Promise<string> {
  try {
    // Created readable by its owner only, as the sink would (review75 L4).
    await (await open(path, 'a', 0o600)).close();
  } catch (err) {
    throw new Error(`--sink record:${path}: the file cannot be opened for append (${(err as Error).message})`, { cause: err });
  }
  return path;
}

/**
 * The SQS client's HTTP options. The SDK's default socket timeout is minutes: without these,
 * a queue endpoint that never answers holds every send (and the relay's backlog) that long.
 * HTTPS_PROXY / NO_PROXY as for the API server (the SDK reads neither), decided for the
 * queue's host (`url`: the endpoint, else the queue URL, whose endpoint the SDK sends to).
 */
export function sqsRequestHandler(url: string, timeoutMs: number, env: Record<string, string | undefined> = process.env): Record<string, unknown> {
  const target = new URL(url);
  const agent = { keepAlive: true, proxyEnv: agentProxyEnv(target, undefined, env) };
  return { connectionTimeout: Math.min(3000, timeoutMs), requestTimeout: timeoutMs, throwOnRequestTimeout: true, httpAgent: agent, httpsAgent: agent };
}

/** Every line names this replica and its cluster: several relays log to one place (operability review). */
function relayLogger(level: RelayConfig['LOG_LEVEL'], config: RelayConfig): Logger {
  return createLogger(level).child({ relay: config.EPHEMERA_RELAY_ID, ...(config.EPHEMERA_RELAY_CLUSTER ? { cluster: config.EPHEMERA_RELAY_CLUSTER } : {}) });
}
