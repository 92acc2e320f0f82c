// The AWS cost model (issue 13): `npm run cost` (also part of `npm run bench`).
// Measures, on the production path (relay → SQS (fauxqs) → Lambda consumer → engine →
// client-node → the embedded API server, with the simulated kubelet), what one pod event
// costs in queue messages, SQS requests, Lambda invocations, handler time and log bytes,
// then prices it with AWS's public list prices (aws-prices.ts, which also prices what costs
// whatever the traffic). Nothing here talks to AWS.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { startFauxqs } from 'fauxqs';
import { pino } from 'pino';
import { SimKubelet, startApiServer } from '../../functions/cluster/index.ts';
import { ejobController } from '../../functions/ejob/controller.ts';
import { createKube } from '../../functions/kube/client.ts';
import { createSqsConsumer } from '../../functions/runtime/lambda/sqs-consumer.ts';
import { sqsRequeue } from '../../functions/runtime/lambda/sqs-queue.ts';
import { withFreshHolder } from '../../functions/runtime/deps.ts';
import { silentLogger } from '../../functions/engine/logger.ts';
import { createMetrics } from '../../relay/metrics.ts';
import { startRelay } from '../../relay/relay.ts';
import { sqsSink } from '../../relay/sinks/sqs.ts';
import { defineStacks } from '../../infra/aws/app.ts';
import { parseSettings } from '../../infra/aws/settings.ts';
import { monthlyCost, monthlyLine, PRICES, usd } from './aws-prices.ts';
import { realisticPod } from './pods.ts';
import { figure } from './report.ts';

/** What the AWS stacks (infra/aws defaults, one EKS cluster, the webhook on) create that costs at idle: counted from the synthesized templates. */
function deployedShape(): { alarms: number; metricFilters: number; maxConcurrency: number } {
  const dir = mkdtempSync(join(tmpdir(), 'ephemera-cost-'));
  const code = join(dir, 'code');
  try {
    mkdirSync(code);
    writeFileSync(join(code, 'index.mjs'), 'export const handler = 1;');
    const settings = parseSettings({ clusters: { prod: { eks: { name: 'prod' } } } });
    const stacks = defineStacks(new App({ outdir: join(dir, 'out') }), settings, { reconciler: code, webhook: code });
    const templates = [stacks.functions, stacks.webhook].filter((s) => s !== undefined).map((s) => Template.fromStack(s));
    const count = (type: string): number => templates.reduce((n, t) => n + Object.keys(t.findResources(type)).length, 0);
    return { alarms: count('AWS::CloudWatch::Alarm'), metricFilters: count('AWS::Logs::MetricFilter'), maxConcurrency: settings.reconciler.maxConcurrency };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Deployment shape priced (infra/aws defaults). */
const SHAPE = { memoryMb: 256, ...deployedShape(), batchSize: 10, idlePollers: 5, pollWaitSeconds: 20, apiRttMs: 5 };
const PODS = 40;

function countingSqs(port: number): { client: SQSClient; sends: { requests: number; messages: number } } {
  const client = new SQSClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, credentials: { accessKeyId: 't', secretAccessKey: 't' } });
  const sends = { requests: 0, messages: 0 };
  const send = client.send.bind(client) as (c: unknown) => Promise<unknown>;
  (client as unknown as { send: (c: unknown) => Promise<unknown> }).send = (c) => {
    if (c instanceof SendMessageBatchCommand) {
      sends.requests++;
      sends.messages += c.input.Entries?.length ?? 0;
    } else if (c instanceof SendMessageCommand) {
      sends.requests++;
      sends.messages++;
    }
    return send(c);
  };
  return { client, sends };
}

function workload(): unknown[] {
  const pods = Array.from({ length: PODS }, (_, i) => realisticPod(i, { namespace: 'default', labels: { app: 'web' }, createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)), container: 'main' }));
  const job = {
    apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob',
    metadata: { name: 'check', namespace: 'default', uid: 'cost-job' },
    spec: { selector: { matchLabels: { app: 'web' } }, parallelism: 4, template: { ephemeralContainers: [{ name: 'probe', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'main', command: ['true'] }] } },
  };
  return [...pods, job];
}

const q = await startFauxqs({ port: 0, logger: false });
const { queueUrl } = q.createQueue('ephemera-events');
const { client: sqs, sends } = countingSqs(q.port);
const server = await startApiServer({ objects: workload() });
const kubelet = new SimKubelet(server, { ephemeral: () => ({ exitCode: 0 }) });
const metrics = createMetrics();
let logBytes = 0;
const logs = new Writable({ write: (chunk: Buffer, _e, cb) => ((logBytes += chunk.length), cb()) });
const logger = pino({ level: 'info', base: { app: 'ephemera' } }, logs);
const relay = await startRelay({ kubeConfig: server.kubeConfig(), sink: sqsSink(sqs, queueUrl), namespaces: [], relayId: 'cost', coalesceMs: 50, holdMs: 20_000, resyncSeconds: 3600, bufferMax: 10_000, logger: silentLogger, metrics });
// gzip, as the Lambda's client asks a real cluster for it (the embedded cluster's kubeconfig says not to).
const engine = { kube: createKube(server.kubeConfig(), { compression: true }), controllers: [ejobController], lock: { namespace: 'ephemera-locks', holder: 'x', leaseSeconds: 15, skewSeconds: 5 }, clock: () => new Date(), logger };
const consume = createSqsConsumer({ engineFor: async () => withFreshHolder(engine), requeue: sqsRequeue(sqs, queueUrl), logger });

let invocations = 0;
let handlerMs = 0;
let billedMs = 0;
let done = false;
const until = Date.now() + 120_000;
try {
  while (Date.now() < until) {
    await relay.flush();
    const r = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: SHAPE.batchSize, WaitTimeSeconds: 0, MessageAttributeNames: ['All'] }));
    const messages = r.Messages ?? [];
    if (messages.length > 0) {
      const event = { Records: messages.map((m) => ({ messageId: m.MessageId, body: m.Body, attributes: {}, messageAttributes: Object.fromEntries(Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => [k, { stringValue: v.StringValue }])) })) } as unknown as SQSEvent;
      const before = server.requests.entries.length;
      const t = performance.now();
      const end = Date.now() + 60_000;
      const { batchItemFailures } = await consume(event, { getRemainingTimeInMillis: () => end - Date.now() });
      const ms = performance.now() - t;
      invocations++;
      handlerMs += ms;
      // Locally the API server answers in microseconds; a real one is a network hop away.
      billedMs += Math.ceil(ms + (server.requests.entries.length - before) * SHAPE.apiRttMs);
      const failed = new Set(batchItemFailures.map((f) => f.itemIdentifier));
      const acked = messages.filter((m) => !failed.has(m.MessageId ?? ''));
      if (acked.length > 0) await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: acked.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })) }));
    } else if (done) {
      break;
    } else {
      await new Promise((res) => setTimeout(res, 100));
    }
    kubelet.tick();
    const job = server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'default', name: 'check' }) as { status?: { completionTime?: string } } | undefined;
    done = Boolean(job?.status?.completionTime);
  }
} finally {
  await relay.stop();
  await server.close();
  await q.stop();
}
if (!done) throw new Error('the workload did not finish in time');

const seen = (await metrics.seen.get()).values.filter((v) => v.labels.kind === 'Pod').reduce((n, v) => n + v.value, 0);
const perEvent = (x: number): number => x / seen;
// SQS requests: every send (relay batches, requeues) + one receive and one delete batch per invocation (the Lambda poller).
const sqsRequests = sends.requests + 2 * invocations;
const gbSeconds = (billedMs / 1000) * (SHAPE.memoryMb / 1024);
const million = 1_000_000;
const costPerMillion = {
  lambdaRequests: perEvent(invocations) * million * (PRICES.lambdaPerMillionRequests / million),
  lambdaDuration: perEvent(gbSeconds) * million * PRICES.lambdaArmPerGbSecond,
  sqs: perEvent(sqsRequests) * million * (PRICES.sqsStandardPerMillionRequests / million),
  logs: (perEvent(logBytes) * million / 1024 ** 3) * PRICES.logsIngestPerGb,
};
const perMillionTotal = Object.values(costPerMillion).reduce((a, b) => a + b, 0);
const idleTotal = monthlyCost(SHAPE).total;

process.stdout.write([
  `workload: EphemeralJob over ${PODS} pods, parallelism 4, to completion; ${seen} pod events seen by the relay`,
  `measured: ${sends.messages} queue messages (${sends.requests} send requests), ${invocations} Lambda invocations of ≤ ${SHAPE.batchSize} records, ${handlerMs.toFixed(0)} ms handler time, ${logBytes} log bytes at LOG_LEVEL=info`,
  `per pod event: ${perEvent(sends.messages).toFixed(2)} messages, ${perEvent(sqsRequests).toFixed(2)} SQS requests, ${perEvent(invocations).toFixed(3)} invocations, ${perEvent(billedMs).toFixed(1)} billed ms (handler + ${SHAPE.apiRttMs} ms per API request), ${perEvent(logBytes).toFixed(0)} log bytes`,
  `prices (${PRICES.region}, ${PRICES.date}): Lambda $${PRICES.lambdaPerMillionRequests}/M requests + $${PRICES.lambdaArmPerGbSecond}/GB-s arm64 at ${SHAPE.memoryMb} MB; SQS $${PRICES.sqsStandardPerMillionRequests}/M requests; logs $${PRICES.logsIngestPerGb}/GB; alarm $${PRICES.cloudwatchAlarmPerMonth}/month; custom metric $${PRICES.cloudwatchMetricPerMonth}/month; secret $${PRICES.secretPerMonth}/month + $${PRICES.secretsPerTenThousandCalls}/10k calls`,
  `per million pod events: Lambda requests ${usd(costPerMillion.lambdaRequests)}, Lambda duration ${usd(costPerMillion.lambdaDuration)}, SQS ${usd(costPerMillion.sqs)}, log ingestion ${usd(costPerMillion.logs)} = ${usd(perMillionTotal)}`,
  monthlyLine(SHAPE),
  '',
].join('\n'));
figure({ name: 'AWS cost per million pod events', value: Math.round(perMillionTotal * 100) / 100, unit: 'USD', what: `measured on the production path (${seen} pod events, ${invocations} invocations), priced with us-east-1 list prices of ${PRICES.date}, no free tier` });
figure({ name: 'AWS cost at idle', value: Math.round(idleTotal * 100) / 100, unit: 'USD/month', what: `${SHAPE.alarms} CloudWatch alarms + SQS long polling by the Lambda event source (${SHAPE.idlePollers} pollers); secrets extra (stored, and read while messages arrive)` });
