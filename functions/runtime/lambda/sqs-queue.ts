import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { envelopeKey, type Envelope } from '../../api/envelope.ts';

/** SQS's per-message delay limit (standard queues only). */
export const MAX_SQS_DELAY_SECONDS = 900;

/**
 * Requeue through SQS. Standard queues delay the message (up to 900 s; a longer wait is
 * chained: the handler asks again for the remaining time). FIFO queues have no per-message
 * delay, so the message goes back at once, grouped by key; the deployment default is a
 * standard queue, which the Lease lock and idempotent planners make safe.
 */
export function sqsRequeue(client: SQSClient, queueUrl: string): (envelope: Envelope, delaySeconds: number) => Promise<void> {
  const fifo = queueUrl.endsWith('.fifo');
  return async (envelope, delaySeconds) => {
    const body = JSON.stringify({ ...envelope, id: `${envelope.id}+requeue@${Date.now()}`, time: new Date().toISOString() });
    await client.send(new SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: body,
      ...(fifo
        ? { MessageGroupId: envelopeKey(envelope), MessageDeduplicationId: `${envelopeKey(envelope)}@${Date.now()}`.slice(0, 128) }
        : { DelaySeconds: Math.min(MAX_SQS_DELAY_SECONDS, Math.max(0, Math.ceil(delaySeconds))) }),
    }));
  };
}

/** Dead-letter through SQS: the original body, with the reason as a message attribute. */
export function sqsDeadLetter(client: SQSClient, dlqUrl: string): (body: string, reason: string) => Promise<void> {
  const fifo = dlqUrl.endsWith('.fifo');
  return async (body, reason) => {
    await client.send(new SendMessageCommand({
      QueueUrl: dlqUrl,
      MessageBody: body.length > 0 ? body : '(empty)',
      MessageAttributes: { reason: { DataType: 'String', StringValue: reason.slice(0, 1000) } },
      ...(fifo ? { MessageGroupId: 'dead-letter', MessageDeduplicationId: `${Date.now()}-${Math.random()}` } : {}),
    }));
  };
}
