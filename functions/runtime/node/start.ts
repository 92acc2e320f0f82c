// `npm start`: everything in one process. With a kubeconfig (KUBECONFIG, ~/.kube/config)
// or in-cluster config: relay + in-memory queue + functions + webhook against that cluster.
// With none: an embedded in-memory cluster running the proposal's Story 1, so the whole
// thing visibly does its job with no external service.
import { existsSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { z } from 'zod';
import { FunctionsConfig, parseEnv } from '../../config.ts';
import { handle } from '../../engine/engine.ts';
import { createEngineDeps, createLogger, withFreshHolder } from '../deps.ts';
import { startWebhookServer } from './webhook-server.ts';
import { parseListen } from './webhook.ts';
import { createMetrics } from '../../../relay/metrics.ts';
import { startRelay, type Relay } from '../../../relay/relay.ts';
import { startOpsServer } from '../../../relay/server.ts';
import { memorySink } from '../../../relay/sinks/memory.ts';
import { startDemoCluster } from './demo.ts';

/** HOST:PORT as `--listen` takes it ([::1]:8443 too), checked where the variable is named. */
const Listen = z.string().transform((value, ctx) => {
  try {
    return parseListen(value);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'expected HOST:PORT (e.g. 127.0.0.1:8443)' });
    return z.NEVER;
  }
});

const StartConfig = FunctionsConfig.extend({
  EPHEMERA_WEBHOOK_LISTEN: Listen.prefault('127.0.0.1:8443'),
  EPHEMERA_RELAY_LISTEN: Listen.prefault('127.0.0.1:8080'),
  EPHEMERA_DEMO_TICK_MS: z.coerce.number().int().min(10).max(60_000).default(500),
});

/** Whether the environment points at a real cluster. */
export function clusterConfigured(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.KUBECONFIG || env.KUBERNETES_SERVICE_HOST || existsSync(join(homedir(), '.kube', 'config')));
}

export async function main(_argv: string[]): Promise<number> {
  let config: z.infer<typeof StartConfig>;
  try {
    config = parseEnv(StartConfig, process.env);
  } catch (err) {
    process.stderr.write(`ephemera start: ${(err as Error).message}\n`);
    return 2;
  }
  const logger = createLogger(config.LOG_LEVEL);
  const live = clusterConfigured(process.env);
  const demo = live ? undefined : await startDemoCluster(config.EPHEMERA_DEMO_TICK_MS);
  const kc = demo ? demo.server.kubeConfig() : loadDefault();
  const deps = createEngineDeps(config, kc, logger);
  const box: { relay?: Relay } = {};
  const metrics = createMetrics();
  const relayAddr = config.EPHEMERA_RELAY_LISTEN;
  const ops = await startOpsServer({ ...relayAddr, ready: () => box.relay?.ready() ?? false, registry: metrics.registry });
  const relay = await startRelay({
    kubeConfig: kc, metrics, namespaces: [], relayId: 'ephemera-start', coalesceMs: 200, resyncSeconds: 600, bufferMax: 50_000, logger,
    sink: memorySink(async (e) => handle(e, withFreshHolder(deps)), (e, ms) => box.relay?.requeue(e, ms)),
  });
  box.relay = relay;
  const webhook = await startWebhookServer({ ...config.EPHEMERA_WEBHOOK_LISTEN, logger: pino({ level: config.LOG_LEVEL, base: { app: 'ephemera', component: 'webhook' } }) });
  logger.info({ cluster: live ? kc.getCurrentCluster()?.server : 'embedded demo', webhook: webhook.url, ops: `http://${relayAddr.host}:${ops.port}` }, 'ephemera running');
  const stopDemo = demo ? narrate(demo.server.kubeconfigYaml(), () => demo.server.store.all()) : undefined;
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  stopDemo?.();
  await relay.stop();
  await webhook.close();
  await ops.close();
  if (demo) {
    demo.kubelet.stop();
    await demo.server.close();
  }
  return 0;
}

function loadDefault(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  return kc;
}

/** Print the demo job's `kubectl get ejob` line whenever it changes, on stderr beside the JSON logs. */
function narrate(kubeconfig: string, objects: () => unknown[]): () => void {
  const path = join(tmpdir(), `ephemera-demo-${process.pid}.kubeconfig`);
  writeFileSync(path, kubeconfig);
  const say = (line: string): boolean => process.stderr.write(`${line}\n`);
  say(`ephemera: no kubeconfig found, so running the embedded demo (proposal Story 1: 4 pods, parallelism 1).`);
  say(`ephemera: look inside with: kubectl --kubeconfig ${path} get ejob,pods`);
  say(`NAME                        STATUS    MATCH  SUCCEED  FAILED  RUNNING  WAITING`);
  let last = '';
  const timer = setInterval(() => {
    const job = objects().find((o) => (o as { kind?: string }).kind === 'EphemeralJob') as { metadata: { name: string }; status?: Record<string, unknown> } | undefined;
    const s = job?.status ?? {};
    const line = `${(job?.metadata.name ?? '-').padEnd(28)}${String(s.phase ?? '-').padEnd(10)}${String(s.match ?? 0).padEnd(7)}${String(s.succeeded ?? 0).padEnd(9)}${String(s.failed ?? 0).padEnd(8)}${String(s.running ?? 0).padEnd(9)}${String(s.waiting ?? 0)}`;
    if (line !== last) say(line);
    if (line !== last && s.completionTime) say('ephemera: the demo job has finished; still serving (webhook, metrics). Ctrl-C to stop.');
    last = line;
  }, 100);
  timer.unref();
  return () => clearInterval(timer);
}
