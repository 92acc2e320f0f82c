// The AWS Lambda SQS event handler around `handle`: a batch's records run concurrently,
// one key's records in order; each is bounded by the invocation's remaining time; only
// records really handled are acknowledged (partial batch response, ReportBatchItemFailures).
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { envelopeKey, type Envelope } from '../../api/envelope.ts';
import { failedKey, handle, InvalidEnvelopeError, newProgress, parseEnvelope, restAfter, restOf, type EngineDeps, type HandleProgress, type HandleResult } from '../../engine/engine.ts';
import { ALARM_CREDENTIALS, ALARM_REDELIVERY, ALARM_THROTTLED } from '../../engine/apply.ts';
import type { Logger } from '../../engine/logger.ts';
import { UnknownClusterError } from '../../kube/credentials.ts';
import { KubeError, refusedForGood } from '../../kube/errors.ts';
import { MAX_RETRY_AFTER_SECONDS } from '../../kube/status-error.ts';
import { MAX_SQS_DELAY_SECONDS } from './sqs-queue.ts';

/** Refused at the first batch: FIFO queues have no per-message delay, so requeues would loop. */
export class FifoQueueError extends Error {
  constructor() {
    super('FIFO queues are not supported: they have no per-message delay, so every "look again in N s" would come straight back (a hot loop until the TTL). Use a standard queue (the infra/aws stack makes one); resourceVersion-fenced writes (the EphemeralJob Lease claims) and idempotent planners make redelivery safe.');
    this.name = 'FifoQueueError';
  }
}

/** What the SQS consumer needs besides the engine. */
export interface SqsConsumerDeps {
  /** The engine deps for an envelope's cluster (undefined: the default cluster); a fresh lock holder each call. */
  engineFor?(cluster: string | undefined): Promise<EngineDeps>;
  /** A single-cluster deployment may pass its engine deps directly. */
  engine?: EngineDeps;
  /**
   * Put the envelope back on the queue to be looked at after `delaySeconds` (at most 900).
   * `signal`: aborted when the invocation has no time left to wait for the send.
   */
  requeue(envelope: Envelope, delaySeconds: number, signal?: AbortSignal): Promise<void>;
  /** Park a message that can never be handled, with the reason; without it, SQS's redrive does. `signal`: as for requeue. */
  deadLetter?(body: string, reason: string, signal?: AbortSignal): Promise<void>;
  logger?: Logger;
  /** Time kept back from the invocation's remaining time for answering (default 3 s). */
  marginMs?: number;
  /** Keys handled at once (default 10, a full standard batch). */
  concurrency?: number;
  /** The throttled requeue's jitter (default Math.random). */
  random?: () => number;
}

/** The bits of the Lambda context the consumer reads. */
export interface InvocationContext {
  getRemainingTimeInMillis(): number;
}

type Outcome = 'ack' | 'fail';
interface Job {
  record: SQSRecord;
  envelope: Envelope;
}
interface Batch {
  deps: SqsConsumerDeps;
  log: Logger;
  /** When handlings must have ended (ms since the epoch): the invocation's end less the margin. */
  deadline: number;
  /** When the queue sends after a handling must have ended: the invocation's end less ANSWER_MS (half the margin when that is less). */
  sendsEnd: number;
  /** Clusters whose credentials were refused in this batch: their other records fail at once. */
  refused: Set<string>;
}

/**
 * Time kept for answering after the last send (ms; half the margin when that is less): the
 * sends after a handling (requeues, dead letters) may use the rest of the margin, and no
 * more, so the batch response always reaches Lambda (review80 L2: a slow SQS held them past
 * the invocation's end, and with no response every record of the batch was redelivered,
 * the ones handled too).
 */
const ANSWER_MS = 500;

/** The Lambda handler body: records in, the ones to redeliver out. */
export function createSqsConsumer(deps: SqsConsumerDeps): (event: SQSEvent, context?: InvocationContext) => Promise<SQSBatchResponse> {
  if (!deps.engine && !deps.engineFor) throw new Error('createSqsConsumer needs engine or engineFor');
  return async (event, context) => {
    if (event.Records.some((r) => r.attributes?.MessageGroupId !== undefined)) throw new FifoQueueError();
    const log = deps.logger ?? deps.engine?.logger ?? silent;
    const end = context ? Date.now() + context.getRemainingTimeInMillis() : Infinity;
    const margin = deps.marginMs ?? 3000;
    const batch: Batch = { deps, log, deadline: end - margin, sendsEnd: end - Math.min(margin / 2, ANSWER_MS), refused: new Set() };
    const failures: string[] = [];
    const groups = new Map<string, Job[]>();
    for (const record of event.Records) {
      const job = await admit(record, batch);
      if (job === 'ack') continue;
      if (job === 'fail') {
        failures.push(record.messageId);
        continue;
      }
      const key = `${job.envelope.cluster ?? ''}|${envelopeKey(job.envelope)}`;
      groups.set(key, [...(groups.get(key) ?? []), job]);
    }
    await pool([...groups.values()], deps.concurrency ?? 10, async (jobs) => {
      failures.push(...(await runInOrder(jobs, batch)));
    });
    return { batchItemFailures: event.Records.filter((r) => failures.includes(r.messageId)).map((r) => ({ itemIdentifier: r.messageId })) };
  };
}

/** Parse a record; bad input is dead-lettered. */
async function admit(record: SQSRecord, b: Batch): Promise<Job | Outcome> {
  let envelope: Envelope;
  try {
    envelope = parseEnvelope(JSON.parse(record.body));
  } catch (err) {
    const reason = err instanceof InvalidEnvelopeError ? err.message : `message body is not JSON: ${(err as Error).message}`;
    return deadLetter(record, reason, b);
  }
  return { record, envelope };
}

/** One key's records, oldest first; after the first that cannot finish, the rest wait too. */
async function runInOrder(jobs: Job[], b: Batch): Promise<string[]> {
  const failed: string[] = [];
  for (const job of jobs) {
    if (failed.length > 0 || (await consumeOne(job, b)) === 'fail') failed.push(job.record.messageId);
  }
  return failed;
}

async function consumeOne({ record, envelope }: Job, b: Batch): Promise<Outcome> {
  const log = b.log.child({ messageId: record.messageId, cluster: envelope.cluster, subject: envelope.subject });
  const cluster = envelope.cluster ?? '';
  if (b.refused.has(cluster)) return 'fail';
  const left = b.deadline - Date.now();
  if (left < 1000) {
    log.warn({ leftMs: left, alarm: ALARM_REDELIVERY }, 'not enough invocation time left: leaving the message for redelivery');
    return 'fail';
  }
  try {
    const engine = b.deps.engineFor ? await withDeadline(b.deps.engineFor(envelope.cluster), left) : b.deps.engine!;
    if (engine === 'timeout') {
      log.warn({ leftMs: left, alarm: ALARM_REDELIVERY }, 'the cluster\'s credentials were not ready within the invocation: leaving the message for redelivery');
      return 'fail';
    }
    const progress = newProgress();
    // The engine's lines carry the record's messageId, cluster and subject too: an on-call
    // joins a key's failure to its message without a time window (operability review).
    const result = await withDeadline(handle(envelope, { ...engine, logger: log }, { deadline: b.deadline, progress }), left);
    if (result !== 'timeout') return await afterHandle({ record, envelope }, result, b, log);
    const partial = timedOut(envelope, { progress, controllers: engine.controllers.length, budgetMs: left }, log);
    return partial === undefined ? 'fail' : await afterHandle({ record, envelope }, partial, b, log);
  } catch (err) {
    return onError(err, { record, envelope }, b, log);
  }
}

/** What a handling's result asks of the queue: the keys left, dead letters, the next look; then the record is acknowledged. */
async function afterHandle({ record, envelope }: Job, result: HandleResult, b: Batch, log: Logger): Promise<Outcome> {
  // Its other keys were handled; the envelope is kept as a dead letter for the keys refused
  // for good, once: a requeued copy names them as reported (reviews: one copy per requeue
  // cycle; then, waiting for the last pass, none while another key kept looking).
  const seen = new Set(envelope.data.reported ?? []);
  const reported = [...new Set([...seen, ...result.failed.map(failedKey)])];
  // A handling that ran ends its throttled run: the copies' throttled requeues start over.
  const withReported = (e: Envelope): Envelope => unthrottled(reported.length > 0 ? { ...e, data: { ...e.data, reported } } : e);
  // The keys there was no time for go on now as their own message; this one is done with
  // the keys it ran (a redelivery would start again from the first, and stop at the same place).
  // After the longest Retry-After one of its keys that failed for now was answered with, if any (review90 L2).
  if (result.rest && (await settle((signal) => b.deps.requeue(withReported(result.rest!), result.restAfterSeconds ?? 0, signal), b, record, log)) === 'fail') return 'fail';
  const fresh = result.failed.filter((f) => !seen.has(failedKey(f)));
  if (fresh.length > 0) {
    const why = fresh.map((f) => `${failedKey(f)}: the API server refused it for good (HTTP ${f.error.status}${f.error.reason ? ` ${f.error.reason}` : ''}): ${f.error.message}`).join('; ');
    if ((await deadLetter(record, why, b, { what: 'refused for good', log })) === 'fail') return 'fail';
  }
  if (result.requeueAfterSeconds === null) return 'ack';
  const now = Date.now();
  const since = chainStart(envelope, now);
  if ((now - since) / 1000 + result.requeueAfterSeconds > MAX_SQS_DELAY_SECONDS) {
    // A look more than 900 s after its chain of looks began (SQS's longest delay): no message.
    // The relay's resync (EPHEMERA_RELAY_RESYNC_SECONDS, 600 s by default) brings back every
    // key that can need work — every unfinished job, every job whose TTL comes within 900 s,
    // every pod the SidecarTerminator must still act on — and its reconcile starts a new
    // chain, so a deadline or TTL is acted on to the second once within 900 s. Chains that
    // none ended piled up before: a long deadline's 900 s hops (one chain per reconcile), then
    // a condition answered "look again in 120/600 s" for as long as it lasted (a CRR that is
    // never served), one more chain per resync, restart and pod event (reviews; review70: 879
    // messages an hour for one pod after a day).
    log.debug({ requeueAfterSeconds: result.requeueAfterSeconds, looksSince: new Date(since).toISOString() }, 'next look is more than 900 s after its chain of looks began: left to the relay\'s resync');
    return 'ack';
  }
  // Split: the next look is of the keys that ran here, the rest having gone on as their own
  // message (review: requeued whole, each requeue split again, and the messages multiplied).
  const ran = result.rest ? restOf(envelope, [...result.keys.map((k) => k.key), ...result.failed.flatMap((f) => (f.key === undefined ? [] : [f.key]))]) : envelope;
  const look = withReported(ran);
  return settle((signal) => b.deps.requeue({ ...look, data: { ...look.data, looksSince: new Date(since).toISOString() } }, result.requeueAfterSeconds!, signal), b, record, log);
}

/** When the chain of looks this envelope belongs to began: its `looksSince`, or now for a message the relay sent (or an unreadable or future time). */
function chainStart(envelope: Envelope, now: number): number {
  const since = envelope.data.looksSince === undefined ? Number.NaN : Date.parse(envelope.data.looksSince);
  return Number.isFinite(since) && since <= now ? since : now;
}

/**
 * The invocation's time ran out with the handling still running (a key slower than the ones
 * before it): what the keys that finished did, as a result whose `rest` is the keys not
 * finished, the running one last — it goes on as their own message, the finished keys' next
 * looks and dead letters as after any handling, and the record is acknowledged, so the next
 * pass starts past what was done (reviews: each redelivery stopped at the same key until the
 * message was dead-lettered; then the finished keys' results were dropped). Undefined — the
 * record left for redelivery, as before — when no key finished (a key that never finishes
 * keeps failing its record, toward maxReceiveCount and the dead letters), or while a route
 * was still being taken (its keys cannot be named). A pod claimed but not injected is
 * repaired by the next reconcile, or its claim lapses.
 */
function timedOut(envelope: Envelope, at: { progress: HandleProgress; controllers: number; budgetMs: number }, log: Logger): HandleResult | undefined {
  const { progress } = at;
  const rest = progress.finished.size > 0 ? restAfter(envelope, progress, at.controllers) : undefined;
  if (rest === undefined || progress.partial === undefined) {
    log.warn({ budgetMs: at.budgetMs, alarm: ALARM_REDELIVERY }, 'handling did not finish within the invocation: leaving the message for redelivery');
    return undefined;
  }
  log.warn({ budgetMs: at.budgetMs, finished: progress.finished.size, left: progress.routed.length - progress.finished.size }, 'handling did not finish within the invocation: the keys not finished are sent on as their own message');
  // A copy: the handling given up on goes on in the background.
  const { keys, failed, skipped, requeueAfterSeconds } = progress.partial;
  // A key the server throttled goes on no sooner than it asked, as when the budget cuts the keys (review93 L1).
  return { keys: [...keys], failed: [...failed], skipped: [...skipped], requeueAfterSeconds, rest, ...(progress.asked ? { restAfterSeconds: progress.asked } : {}) };
}

async function onError(err: unknown, { record, envelope }: Job, b: Batch, log: Logger): Promise<Outcome> {
  if (err instanceof UnknownClusterError) return deadLetter(record, err.message, b, { log });
  if (err instanceof KubeError && err.status === 401) {
    // Not retried here: every record of this cluster would fail the same way. The messages
    // stay on the queue (and reach the dead-letter queue after maxReceiveCount). Its own
    // alarm value: a quiet cluster's messages come back only once per visibility timeout,
    // too few to reach the redelivery alarm's threshold, and no retry cures it (review).
    b.refused.add(envelope.cluster ?? '');
    log.error({ err: err.message, reason: err.reason, alarm: ALARM_CREDENTIALS }, 'authentication to the cluster failed: fix the credential source');
    return 'fail';
  }
  if (err instanceof KubeError && err.retryAfterSeconds !== undefined && err.retryAfterSeconds > 0) return throttled(err, { record, envelope }, b, log);
  const final = refusedForGood(err);
  if (final) {
    // A refusal that no retry can change (403, 400, 422, …): redelivering it would only cost
    // maxReceiveCount invocations before SQS's redrive, so it goes to the dead letters now.
    return deadLetter(record, `${envelope.subject}: the API server refused it for good (HTTP ${final.status}${final.reason ? ` ${final.reason}` : ''}): ${final.message}`, b, { what: 'refused for good', log });
  }
  log.warn({ err: (err as Error).message, alarm: ALARM_REDELIVERY }, 'handling failed: leaving the message for redelivery');
  return 'fail';
}

/** The first throttled requeue's delay before jitter (s); each throttled requeue of a chain doubles it, up to THROTTLED_MAX_SECONDS. */
const THROTTLED_BASE_SECONDS = 1;

/** The longest throttled requeue delay (s): the longest Retry-After taken (status-error.ts), so the stack's throttle alarm counts as before. */
const THROTTLED_MAX_SECONDS = MAX_RETRY_AFTER_SECONDS;

/**
 * The API server said when to come back (429/503 Retry-After): the envelope goes back to the
 * queue (a new message: a throttle that never ends never reaches the dead letters, nor fails
 * an invocation; its own alarm value, review) after at least that long. Each throttled copy
 * carries its count (`data.throttled`), and the delay grows with it: max(Retry-After, a
 * jittered 1·2ⁿ s capped at 60 s). The copies of a chain carry when it began
 * (`data.looksSince`), as a "look again" does, and a requeue past 900 s after that sends
 * nothing: the relay's resync brings the key back. Requeued after exactly Retry-After, each
 * message for a key was a chain that lived as long as the throttle, and every resync, event and
 * leadership gain added one: a key's request rate grew with the throttle's length, and all the
 * copies fired together when it ended (review90 M1).
 */
async function throttled(err: KubeError, { record, envelope }: Job, b: Batch, log: Logger): Promise<Outcome> {
  const now = Date.now();
  const since = chainStart(envelope, now);
  const count = envelope.data.throttled ?? 0;
  const random = b.deps.random ?? Math.random;
  const grown = Math.min(THROTTLED_MAX_SECONDS, THROTTLED_BASE_SECONDS * 2 ** Math.min(count, 16));
  const delay = Math.max(err.retryAfterSeconds ?? 0, Math.ceil(grown * (0.5 + random() / 2)));
  const line = { retryAfterSeconds: err.retryAfterSeconds, status: err.status, err: err.message, throttled: count + 1, looksSince: new Date(since).toISOString(), alarm: ALARM_THROTTLED };
  if ((now - since) / 1000 + delay > MAX_SQS_DELAY_SECONDS) {
    log.warn(line, 'API server asked to retry later, past 900 s after this chain of copies began: left to the relay\'s resync');
    return 'ack';
  }
  log.warn({ ...line, delaySeconds: delay }, 'API server asked to retry later: requeued with a growing delay, at least its Retry-After');
  const copy: Envelope = { ...envelope, data: { ...envelope.data, looksSince: new Date(since).toISOString(), throttled: count + 1 } };
  return settle((signal) => b.deps.requeue(copy, delay, signal), b, record, log);
}

/** The envelope without its throttled count. */
function unthrottled(e: Envelope): Envelope {
  if (e.data.throttled === undefined) return e;
  const { throttled: _drop, ...data } = e.data;
  return { ...e, data };
}

/** `log`: the record's own (its messageId, cluster and subject), once its envelope was read. */
async function deadLetter(record: SQSRecord, reason: string, b: Batch, o: { what?: string; log?: Logger } = {}): Promise<Outcome> {
  const { what = 'bad message', log = b.log.child({ messageId: record.messageId }) } = o;
  log.error({ reason }, `${what}: dead-lettering`);
  if (!b.deps.deadLetter) return 'fail'; // the queue's redrive policy moves it after maxReceiveCount
  return settle((signal) => b.deps.deadLetter!(record.body, reason, signal), b, record, log);
}

/**
 * Acknowledge once a send worked; if the send fails, or has not answered by `sendsEnd` (its
 * signal is aborted then, and it is not waited for), let SQS redeliver the original: this
 * record only, the others' outcomes still reach Lambda in the batch response.
 */
async function settle(send: (signal?: AbortSignal) => Promise<void>, b: Batch, record: SQSRecord, log: Logger = b.log.child({ messageId: record.messageId })): Promise<Outcome> {
  const left = b.sendsEnd - Date.now();
  try {
    if (left <= 0) throw new Error('no invocation time left to send');
    const sent = await withDeadline(send(Number.isFinite(left) ? AbortSignal.timeout(left) : undefined), left);
    if (sent === 'timeout') throw new Error(`the queue did not answer within the invocation's remaining time (${Math.round(left)} ms)`);
    return 'ack';
  } catch (err) {
    log.warn({ err: (err as Error).message, alarm: ALARM_REDELIVERY }, 'queue send failed: leaving the message for redelivery');
    return 'fail';
  }
}

async function withDeadline<T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> {
  if (!Number.isFinite(ms)) return p;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

const silent: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {}, child: () => silent };
