import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { envelopeKey, type Envelope } from '../../functions/api/envelope.ts';
import { withoutSnapshot } from '../envelope.ts';
import type { Sink } from './sink.ts';

/** SQS's message size limit. */
export const SQS_MAX_BYTES = 1024 * 1024;
const BATCH = 10;

/**
 * Sends envelopes to SQS in batches of 10 (SendMessageBatch). FIFO queues (name ends in
 * .fifo) get one message group per object key, so a key's events stay in order, and the
 * envelope id as deduplication id. An envelope over the size limit goes without its
 * snapshot. Entries SQS refuses are returned as undelivered.
 */
export function sqsSink(client: SQSClient, queueUrl: string): Sink {
  const fifo = queueUrl.endsWith('.fifo');
  return {
    name: `sqs:${queueUrl}`,
    async send(envelopes: Envelope[]): Promise<Envelope[]> {
      const failed: Envelope[] = [];
      for (let i = 0; i < envelopes.length; i += BATCH) {
        const batch = envelopes.slice(i, i + BATCH);
        const res = await client.send(new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: batch.map((e, j) => ({
            Id: String(j),
            MessageBody: fitBody(e),
            ...(fifo ? { MessageGroupId: envelopeKey(e).slice(0, 128), MessageDeduplicationId: e.id.slice(0, 128) } : {}),
          })),
        }));
        for (const f of res.Failed ?? []) failed.push(batch[Number(f.Id)] as Envelope);
      }
      return failed;
    },
  };
}

/** The JSON body, without the snapshot when it would not fit. */
export function fitBody(e: Envelope): string {
  const body = JSON.stringify(e);
  return Buffer.byteLength(body) <= SQS_MAX_BYTES ? body : JSON.stringify(withoutSnapshot(e));
}
