import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { envelopeKey, type Envelope } from '../../functions/api/envelope.ts';
import { withoutSnapshot } from '../envelope.ts';
import { allFailed, type SendOutcome, type Sink } from './sink.ts';

/** SQS's message size limit. */
export const SQS_MAX_BYTES = 1024 * 1024;
const BATCH = 10;

/** How long one SendMessageBatch may take, and how many run at once. */
export interface SqsSinkOptions {
  /** Deadline per request, retries included (default 10 s). */
  timeoutMs?: number;
  /** SendMessageBatch requests in flight at once (default 10). */
  concurrency?: number;
}

/**
 * Sends envelopes to SQS in batches of 10 (SendMessageBatch), a few batches at a time, each
 * under a deadline. FIFO queues (name ends in .fifo) get one message group per object key,
 * so a key's events stay in order, and the envelope id as deduplication id. An envelope over
 * the size limit goes without its snapshot. Reports each entry: sent, refused (SenderFault:
 * permanent) or failed (retry), so a partial failure resends only what failed.
 */
export function sqsSink(client: SQSClient, queueUrl: string, opts: SqsSinkOptions = {}): Sink {
  const fifo = queueUrl.endsWith('.fifo');
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const sendBatch = async (batch: Envelope[]): Promise<SendOutcome[]> => {
    try {
      const res = await client.send(new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: batch.map((e, j) => ({
          Id: String(j),
          MessageBody: fitBody(e),
          ...(fifo ? { MessageGroupId: envelopeKey(e).slice(0, 128), MessageDeduplicationId: e.id.slice(0, 128) } : {}),
        })),
      }), { abortSignal: AbortSignal.timeout(timeoutMs) });
      const out: SendOutcome[] = allFailed(batch.length, 'SQS reported neither success nor failure');
      for (const s of res.Successful ?? []) out[Number(s.Id)] = { ok: true };
      for (const f of res.Failed ?? []) out[Number(f.Id)] = { ok: false, error: `${f.Code ?? 'error'}: ${f.Message ?? ''}`, permanent: f.SenderFault === true };
      return out;
    } catch (err) {
      return allFailed(batch.length, (err as Error).message ?? String(err));
    }
  };
  return {
    name: `sqs:${queueUrl}`,
    async send(envelopes: Envelope[]): Promise<SendOutcome[]> {
      const batches: Envelope[][] = [];
      for (let i = 0; i < envelopes.length; i += BATCH) batches.push(envelopes.slice(i, i + BATCH));
      const results = await mapLimited(batches, opts.concurrency ?? 10, sendBatch);
      return results.flat();
    },
  };
}

/** The JSON body, without the snapshot when it would not fit. */
export function fitBody(e: Envelope): string {
  const body = JSON.stringify(e);
  return Buffer.byteLength(body) <= SQS_MAX_BYTES ? body : JSON.stringify(withoutSnapshot(e));
}

/** `fn` over `items` with at most `limit` at once; results in input order. */
async function mapLimited<A, B>(items: A[], limit: number, fn: (a: A) => Promise<B>): Promise<B[]> {
  const out = new Array<B>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i] as A);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
