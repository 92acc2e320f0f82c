import { SendMessageBatchCommand, SQSClient, type SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { envelopeOf, withoutSnapshot, type Message } from '../envelope.ts';
import { allFailed, type SendOutcome, type Sink } from './sink.ts';

// The client class too, so `ephemera relay --sink sqs` loads the SDK with this module only.
export { SQSClient };

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
  // Takes the entries, not the messages: only the request holds the bodies during the round trip.
  const sendBatch = async (entries: SendMessageBatchRequestEntry[]): Promise<SendOutcome[]> => {
    try {
      const res = await client.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }), { abortSignal: AbortSignal.timeout(timeoutMs) });
      const out: SendOutcome[] = allFailed(entries.length, 'SQS reported neither success nor failure');
      for (const s of res.Successful ?? []) out[Number(s.Id)] = { ok: true };
      for (const f of res.Failed ?? []) out[Number(f.Id)] = { ok: false, error: `${f.Code ?? 'error'}: ${f.Message ?? ''}`, permanent: f.SenderFault === true };
      return out;
    } catch (err) {
      return allFailed(entries.length, (err as Error).message ?? String(err));
    }
  };
  const entry = (m: Message, j: number): SendMessageBatchRequestEntry => ({
    Id: String(j),
    MessageBody: fitBody(m),
    ...(fifo ? { MessageGroupId: m.key.slice(0, 128), MessageDeduplicationId: m.id.slice(0, 128) } : {}),
  });
  return {
    name: `sqs:${queueUrl}`,
    async send(messages: Message[]): Promise<SendOutcome[]> {
      const batches: SendMessageBatchRequestEntry[][] = [];
      for (let i = 0; i < messages.length; i += BATCH) batches.push(messages.slice(i, i + BATCH).map(entry));
      const results = await mapLimited(batches, opts.concurrency ?? 10, sendBatch);
      return results.flat();
    },
  };
}

/**
 * The JSON body, without the snapshot when it would not fit (the handlers then read the
 * object); the job names stay (routing costs no request), unless even they do not fit.
 */
export function fitBody(m: Message): string {
  if (Buffer.byteLength(m.body) <= SQS_MAX_BYTES) return m.body;
  const lean = withoutSnapshot(envelopeOf(m));
  const body = JSON.stringify(lean);
  if (Buffer.byteLength(body) <= SQS_MAX_BYTES) return body;
  const { jobs: _drop, ...data } = lean.data;
  return JSON.stringify({ ...lean, data });
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
