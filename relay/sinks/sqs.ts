import { fitSqsJson, SQS_MAX_BYTES } from '../../functions/api/sqs-text.ts';
import { SendMessageBatchCommand, SQSClient, type SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { envelopeOf, type Message } from '../envelope.ts';
import { allFailed, type SendOutcome, type Sink } from './sink.ts';

// The client class too, so `ephemera relay --sink sqs` loads the SDK with this module only.
export { SQSClient };

/** SQS's message size limit, which is also the limit of a SendMessageBatch's payload (all its entries together). */
export { SQS_MAX_BYTES };
/** Most entries in one SendMessageBatch. */
const BATCH = 10;

/**
 * The region to sign SQS requests for: the queue's, read from an AWS queue URL
 * (`https://sqs[-fips].<region>.amazonaws.com[.cn]/…`, dual-stack `sqs.<region>.api.aws`, the
 * legacy `<region>.queue.amazonaws.com` and `queue.amazonaws.com`, which is us-east-1),
 * else `fallback` (AWS_REGION; a custom endpoint, an emulator). The SDK sends to the queue
 * URL's host but signs for the client's region, which SQS refuses when they differ; and on
 * EKS the IRSA and Pod Identity webhooks put the *cluster's* region in the container's `env`
 * as AWS_REGION, overriding the ConfigMap's (review: a relay in another region than its
 * queue delivered nothing).
 */
export function signingRegion(queueUrl: string, fallback: string, endpoint?: string): string {
  if (endpoint !== undefined) return fallback;
  let host: string;
  try {
    host = new URL(queueUrl).hostname;
  } catch {
    return fallback;
  }
  // The legacy global host is us-east-1's.
  if (host === 'queue.amazonaws.com') return 'us-east-1';
  const m = /^sqs(?:-fips)?\.([a-z0-9-]+)\.(?:amazonaws\.com(?:\.cn)?|api\.aws)$/.exec(host) ?? /^([a-z0-9-]+)\.queue\.amazonaws\.com(?:\.cn)?$/.exec(host);
  return m?.[1] ?? fallback;
}

/** How long one SendMessageBatch may take, and how many run at once. */
export interface SqsSinkOptions {
  /** Deadline per request, retries included (default 10 s). */
  timeoutMs?: number;
  /** SendMessageBatch requests in flight at once (default 10). */
  concurrency?: number;
}

/**
 * Sends envelopes to SQS in batches (SendMessageBatch) of at most 10 entries and 1 MiB in all
 * (packBatches), a few batches at a time, each under a deadline; a batch SQS still finds too
 * long (BatchRequestTooLong) is split in two, each half sent once, down to single entries. FIFO queues (name ends in .fifo) get one message group per object key,
 * so a key's events stay in order, and the envelope id as deduplication id (for a consumer
 * of one's own: the relay's settings refuse a FIFO queue, as the functions do). An envelope over
 * the size limit goes without its snapshot. Reports each entry: sent, refused (SenderFault:
 * permanent) or failed (retry), so a partial failure resends only what failed.
 */
export function sqsSink(client: SQSClient, queueUrl: string, opts: SqsSinkOptions = {}): Sink {
  const fifo = queueUrl.endsWith('.fifo');
  const timeoutMs = opts.timeoutMs ?? 10_000;
  // Takes the entries, not the messages: only the request holds the bodies during the round trip.
  // The halves of a batch refused as too long share its deadline (the sink's deadline holds).
  const sendBatch = async (entries: SendMessageBatchRequestEntry[], deadline = AbortSignal.timeout(timeoutMs)): Promise<SendOutcome[]> => {
    try {
      const res = await client.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }), { abortSignal: deadline });
      const at = new Map(entries.map((e, i) => [e.Id, i]));
      const out: SendOutcome[] = allFailed(entries.length, 'SQS reported neither success nor failure');
      const put = (id: string | undefined, o: SendOutcome): void => {
        const i = at.get(id);
        if (i !== undefined) out[i] = o;
      };
      for (const s of res.Successful ?? []) put(s.Id, { ok: true });
      for (const f of res.Failed ?? []) put(f.Id, { ok: false, error: `${f.Code ?? 'error'}: ${f.Message ?? ''}`, permanent: f.SenderFault === true });
      return out;
    } catch (err) {
      if ((err as Error).name !== 'BatchRequestTooLong' || entries.length < 2) return allFailed(entries.length, (err as Error).message ?? String(err));
      // In order, one half after the other: a FIFO queue's groups keep their order.
      const half = Math.ceil(entries.length / 2);
      const first = await sendBatch(entries.slice(0, half), deadline);
      return [...first, ...(await sendBatch(entries.slice(half), deadline))];
    }
  };
  // Id: the message's index in the send, unique in any batch made of its entries.
  const entry = (m: Message, i: number): SendMessageBatchRequestEntry => ({
    Id: String(i),
    MessageBody: fitBody(m),
    ...(fifo ? { MessageGroupId: m.key.slice(0, 128), MessageDeduplicationId: m.id.slice(0, 128) } : {}),
  });
  return {
    name: `sqs:${queueUrl}`,
    async send(messages: Message[]): Promise<SendOutcome[]> {
      const batches = packBatches(messages.map(entry));
      const results = await mapLimited(batches, opts.concurrency ?? 10, (b) => sendBatch(b));
      return results.flat();
    },
  };
}

/**
 * The bytes an entry adds to a batch's payload, as SQS counts them: the body (UTF-8) and
 * each message attribute's name, data type and value.
 */
export function entryBytes(e: SendMessageBatchRequestEntry): number {
  let n = Buffer.byteLength(e.MessageBody ?? '');
  for (const [name, a] of Object.entries(e.MessageAttributes ?? {})) {
    n += Buffer.byteLength(name) + Buffer.byteLength(a.DataType ?? '');
    if (a.StringValue !== undefined) n += Buffer.byteLength(a.StringValue);
    if (a.BinaryValue !== undefined) n += a.BinaryValue.byteLength;
  }
  return n;
}

/**
 * The entries, in order, cut into SendMessageBatch requests: at most 10 entries and
 * `maxBytes` of payload (entryBytes) each. An entry over `maxBytes` alone goes alone (SQS
 * then refuses it; fitBody keeps bodies under the limit).
 */
export function packBatches(entries: SendMessageBatchRequestEntry[], maxBytes = SQS_MAX_BYTES): SendMessageBatchRequestEntry[][] {
  const batches: SendMessageBatchRequestEntry[][] = [];
  let batch: SendMessageBatchRequestEntry[] = [];
  let bytes = 0;
  for (const e of entries) {
    const n = entryBytes(e);
    if (batch.length > 0 && (batch.length === BATCH || bytes + n > maxBytes)) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(e);
    bytes += n;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/**
 * The JSON body, without the snapshot when it would not fit (the handlers then read the
 * object); the job names stay (routing costs no request), unless even they do not fit. In
 * characters SQS takes (sqsJson: a pod's annotation may hold U+FFFE, which SQS refuses for good).
 */
export function fitBody(m: Message): string {
  return fitSqsJson(m.body, () => envelopeOf(m));
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
