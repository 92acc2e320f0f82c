import { fitSqsJson, SQS_MAX_BYTES, sqsAttributeText } from '../../api/sqs-text.ts';
import { AWS_CALL_TIMEOUTS } from '../../kube/aws-lookups.ts';
import type { SendMessageCommand, SendMessageCommandInput, SQSClient } from '@aws-sdk/client-sqs';
import type { Envelope } from '../../api/envelope.ts';

/** What the queue functions need of an SQS client (lazySqsClient loads the SDK on first use). */
export type SqsSender = Pick<SQSClient, 'send'>;

// Loaded on the first send, not at import: a first event that needs no requeue never pays
// for the SDK (the Lambda runtime provides it; the bundle leaves it external).
const sendMessage = async (input: SendMessageCommandInput): Promise<SendMessageCommand> => new (await import('@aws-sdk/client-sqs')).SendMessageCommand(input);

/** An SQS client made on its first send, for the given region. */
export function lazySqsClient(region: string): SqsSender {
  let client: Promise<SQSClient> | undefined;
  const send = async (command: Parameters<SQSClient['send']>[0], options?: { abortSignal?: AbortSignal }): Promise<unknown> => {
    // Bounded as the cluster lookups are (review: a VPC with no route to SQS hung until the Lambda's timeout).
    client ??= import('@aws-sdk/client-sqs').then((m) => new m.SQSClient({ region, requestHandler: AWS_CALL_TIMEOUTS }));
    return (await client).send(command, options);
  };
  return { send: send as SQSClient['send'] };
}

/** The SDK's per-call options: the abort signal that ends the call (its HTTP request with it). */
function sendOptions(signal: AbortSignal | undefined): { abortSignal?: AbortSignal } {
  return signal ? { abortSignal: signal } : {};
}

/** SQS's per-message delay limit (standard queues). */
export const MAX_SQS_DELAY_SECONDS = 900;

/**
 * Requeue through a standard SQS queue with a per-message delay of at most 900 s (the
 * consumer sends no longer wait: sqs-consumer.ts). FIFO queues are refused at start.
 */
export function sqsRequeue(client: SqsSender, queueUrl: string, clock: () => number = Date.now): (envelope: Envelope, delaySeconds: number, signal?: AbortSignal) => Promise<void> {
  return async (envelope, delaySeconds, signal) => {
    const wait = Math.max(0, Math.ceil(delaySeconds));
    const now = clock();
    const copy: Envelope = { ...envelope, id: `${envelope.id.split('+requeue@')[0]}+requeue@${now}`, time: new Date(now).toISOString() };
    // Within SQS's limit as the relay fits its own (review80 L1): the copy is a little longer
    // than the envelope received (its id, looksSince, reported), which may have just fitted.
    const body = fitSqsJson(JSON.stringify(copy), () => copy);
    await client.send(await sendMessage({
      QueueUrl: queueUrl,
      MessageBody: body,
      DelaySeconds: Math.min(MAX_SQS_DELAY_SECONDS, wait),
    }), sendOptions(signal));
  };
}

/** The most of a dead letter's reason kept (code points). */
const REASON_MAX = 1000;

/**
 * Dead-letter through SQS: the original body, with the reason as a message attribute, cut to
 * what fits beside the body: SQS counts attributes toward its 1 MiB, so a body near the limit
 * could not be dead-lettered with its reason at all (review80 L1); the log line has it whole.
 */
export function sqsDeadLetter(client: SqsSender, dlqUrl: string): (body: string, reason: string, signal?: AbortSignal) => Promise<void> {
  return async (body, reason, signal) => {
    const text = body.length > 0 ? body : '(empty)';
    const room = SQS_MAX_BYTES - Buffer.byteLength(text) - Buffer.byteLength('reason') - Buffer.byteLength('String');
    const value = sqsAttributeText(reason, REASON_MAX, room);
    await client.send(await sendMessage({
      QueueUrl: dlqUrl,
      MessageBody: text,
      ...(value.length > 0 ? { MessageAttributes: { reason: { DataType: 'String', StringValue: value } } } : {}),
    }), sendOptions(signal));
  };
}
