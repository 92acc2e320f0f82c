// AWS Lambda entry for the reconcilers: SQS event source → engine. Everything is built
// on the first invocation (not at import), from the environment, validated with zod.
import { SQSClient } from '@aws-sdk/client-sqs';
import { KubeConfig } from '@kubernetes/client-node';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { z } from 'zod';
import { FunctionsConfig, parseEnv } from '../../config.ts';
import { createEngineDeps, createLogger, withFreshHolder } from '../deps.ts';
import { createSqsConsumer } from './sqs-consumer.ts';
import { sqsDeadLetter, sqsRequeue } from './sqs-queue.ts';

const LambdaConfig = FunctionsConfig.extend({
  EPHEMERA_QUEUE_URL: z.url(),
  EPHEMERA_DLQ_URL: z.url().optional(),
  /** A kubeconfig document (e.g. from Secrets Manager via the deployment); else KUBECONFIG. */
  EPHEMERA_KUBECONFIG: z.string().min(1).optional(),
});

let consumer: ((event: SQSEvent) => Promise<SQSBatchResponse>) | undefined;

function build(): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const config = parseEnv(LambdaConfig, process.env);
  const kc = new KubeConfig();
  if (config.EPHEMERA_KUBECONFIG) kc.loadFromString(config.EPHEMERA_KUBECONFIG);
  else kc.loadFromDefault();
  const sqs = new SQSClient({});
  const base = createEngineDeps(config, kc, createLogger(config.LOG_LEVEL));
  return (event) =>
    createSqsConsumer({
      engine: withFreshHolder(base),
      requeue: sqsRequeue(sqs, config.EPHEMERA_QUEUE_URL),
      ...(config.EPHEMERA_DLQ_URL ? { deadLetter: sqsDeadLetter(sqs, config.EPHEMERA_DLQ_URL) } : {}),
    })(event);
}

/** The Lambda handler (runtime nodejs24.x, handler `index.handler` in the bundle). */
export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  consumer ??= build();
  return consumer(event);
}
