import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Envelope } from '../../api/envelope.ts';

/** SQS's per-message delay limit (standard queues). */
export const MAX_SQS_DELAY_SECONDS = 900;
/** Message attribute: epoch milliseconds before which the message is not due (a chained delay). */
export const NOT_BEFORE_ATTRIBUTE = 'ephemera-not-before';

/**
 * Requeue through a standard SQS queue with a per-message delay. A wait past 900 s is
 * chained: the message carries when it is due, and the consumer sends it on until then
 * (a TTL of a day costs 96 messages, not a hot loop). FIFO queues are refused at start.
 */
export function sqsRequeue(client: SQSClient, queueUrl: string, clock: () => number = Date.now): (envelope: Envelope, delaySeconds: number) => Promise<void> {
  return async (envelope, delaySeconds) => {
    const wait = Math.max(0, Math.ceil(delaySeconds));
    const now = clock();
    const body = JSON.stringify({ ...envelope, id: `${envelope.id.split('+requeue@')[0]}+requeue@${now}`, time: new Date(now).toISOString() });
    await client.send(new SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: body,
      DelaySeconds: Math.min(MAX_SQS_DELAY_SECONDS, wait),
      ...(wait > MAX_SQS_DELAY_SECONDS ? { MessageAttributes: { [NOT_BEFORE_ATTRIBUTE]: { DataType: 'Number', StringValue: String(now + wait * 1000) } } } : {}),
    }));
  };
}

/** Dead-letter through SQS: the original body, with the reason as a message attribute. */
export function sqsDeadLetter(client: SQSClient, dlqUrl: string): (body: string, reason: string) => Promise<void> {
  return async (body, reason) => {
    await client.send(new SendMessageCommand({
      QueueUrl: dlqUrl,
      MessageBody: body.length > 0 ? body : '(empty)',
      MessageAttributes: { reason: { DataType: 'String', StringValue: reason.slice(0, 1000) } },
    }));
  };
}
