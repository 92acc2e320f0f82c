import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { Envelope } from '../../api/envelope.ts';
import { handle, InvalidEnvelopeError, parseEnvelope, type EngineDeps } from '../../engine/engine.ts';

/** What the SQS consumer needs besides the engine. */
export interface SqsConsumerDeps {
  engine: EngineDeps;
  /** Put the envelope back on the queue to be looked at after `delaySeconds`. */
  requeue(envelope: Envelope, delaySeconds: number): Promise<void>;
  /** Park a message that can never be handled, with the reason; without it, SQS's redrive does. */
  deadLetter?(body: string, reason: string): Promise<void>;
}

/**
 * The AWS Lambda SQS event handler around `handle`. Reports partial batch failures
 * (needs ReportBatchItemFailures on the event source mapping): only messages that were
 * really handled are acknowledged. In a FIFO batch, a failed message also fails the rest
 * of its message group, so order within a group is kept.
 */
export function createSqsConsumer(deps: SqsConsumerDeps): (event: SQSEvent) => Promise<SQSBatchResponse> {
  return async (event) => {
    const failures: { itemIdentifier: string }[] = [];
    const failedGroups = new Set<string>();
    for (const record of event.Records) {
      const group = record.attributes.MessageGroupId;
      if (group !== undefined && failedGroups.has(group)) {
        failures.push({ itemIdentifier: record.messageId });
        continue;
      }
      const ok = await consumeOne(record, deps);
      if (!ok) {
        failures.push({ itemIdentifier: record.messageId });
        if (group !== undefined) failedGroups.add(group);
      }
    }
    return { batchItemFailures: failures };
  };
}

/** true = acknowledge (handled, requeued or dead-lettered); false = let SQS redeliver. */
async function consumeOne(record: SQSRecord, deps: SqsConsumerDeps): Promise<boolean> {
  const log = deps.engine.logger.child({ messageId: record.messageId });
  let envelope: Envelope;
  try {
    envelope = parseEnvelope(JSON.parse(record.body));
  } catch (err) {
    const reason = err instanceof InvalidEnvelopeError ? err.message : `message body is not JSON: ${(err as Error).message}`;
    log.error({ reason }, 'bad message: dead-lettering');
    if (!deps.deadLetter) return false; // the queue's redrive policy moves it after maxReceiveCount
    await deps.deadLetter(record.body, reason);
    return true;
  }
  try {
    const result = await handle(envelope, deps.engine);
    if (result.requeueAfterSeconds !== null) await deps.requeue(envelope, result.requeueAfterSeconds);
    return true;
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'handling failed: leaving the message for redelivery');
    return false;
  }
}
