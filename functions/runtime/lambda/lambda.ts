// AWS Lambda entry for the reconcilers: SQS event source → engine. Everything is built
// on the first invocation (not at import), from the environment, validated with zod.
// The environment names clusters only (EKS cluster names, Secrets Manager secret ids):
// no credential is ever placed in it.
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import * as z from 'zod';
import { AwsRegion, ConfigError, FunctionsConfig, parseEnv } from '../../config.ts';
import { awsLookups } from '../../kube/aws-lookups.ts';
import { ClusterSources } from '../../kube/cluster-source.ts';
import { clusterConnections, type AwsLookups } from '../../kube/credentials.ts';
import { clusterEngines } from '../deps.ts';
import { createLogger } from '../logger.ts';
import { createSqsConsumer, FifoQueueError } from './sqs-consumer.ts';
import { lazySqsClient, sqsDeadLetter, sqsRequeue, type SqsSender } from './sqs-queue.ts';

const json = z.string().transform((s, ctx) => {
  try {
    return JSON.parse(s) as unknown;
  } catch {
    ctx.addIssue({ code: 'custom', message: 'JSON, e.g. {"prod":{"eks":{"name":"prod"}}}' });
    return z.NEVER;
  }
});

/** The Lambda's configuration: the functions' plus the queue and the clusters it serves. */
export const LambdaConfig = FunctionsConfig.extend({
  EPHEMERA_QUEUE_URL: z.url(),
  EPHEMERA_DLQ_URL: z.url().optional(),
  /** Cluster name → where its endpoint and credentials come from (functions/kube/cluster-source.ts). */
  EPHEMERA_CLUSTERS: json.pipe(ClusterSources).default({ default: { kubeconfig: {} } }),
  EPHEMERA_DEFAULT_CLUSTER: z.string().min(1).optional(),
  AWS_REGION: AwsRegion.default('us-east-1'),
});
export type LambdaConfig = z.infer<typeof LambdaConfig>;

type Consumer = (event: SQSEvent, context?: Context) => Promise<SQSBatchResponse>;
let consumer: Consumer | undefined;

/** Build the consumer from an environment (exported for tests and the cold-start bench). */
export function buildConsumer(env: Record<string, string | undefined>, inject: { sqs?: SqsSender; aws?: () => AwsLookups } = {}): Consumer {
  const config = parseEnv(LambdaConfig, env);
  if (config.EPHEMERA_QUEUE_URL.endsWith('.fifo')) throw new ConfigError(`EPHEMERA_QUEUE_URL: ${new FifoQueueError().message}`);
  if (config.EPHEMERA_DEFAULT_CLUSTER !== undefined && !(config.EPHEMERA_DEFAULT_CLUSTER in config.EPHEMERA_CLUSTERS)) {
    throw new ConfigError(`EPHEMERA_DEFAULT_CLUSTER: "${config.EPHEMERA_DEFAULT_CLUSTER}" is not one of EPHEMERA_CLUSTERS (${Object.keys(config.EPHEMERA_CLUSTERS).join(', ')})`);
  }
  const client = inject.sqs ?? lazySqsClient(config.AWS_REGION);
  const logger = createLogger(config.LOG_LEVEL);
  const connections = clusterConnections(config.EPHEMERA_CLUSTERS, inject.aws ?? ((): AwsLookups => awsLookups(config.AWS_REGION)));
  return createSqsConsumer({
    engineFor: clusterEngines(config, connections, logger, { defaultCluster: config.EPHEMERA_DEFAULT_CLUSTER }),
    requeue: sqsRequeue(client, config.EPHEMERA_QUEUE_URL),
    ...(config.EPHEMERA_DLQ_URL ? { deadLetter: sqsDeadLetter(client, config.EPHEMERA_DLQ_URL) } : {}),
    logger,
  });
}

/** The Lambda handler (runtime nodejs24.x, handler `index.handler` in the bundle). */
export async function handler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
  consumer ??= buildConsumer(process.env);
  return consumer(event, context);
}
