import type { Envelope } from '../../functions/api/envelope.ts';
import { envelopeOf, type Message } from '../envelope.ts';
import { failedKey, InvalidEnvelopeError } from '../../functions/engine/engine.ts';
import { UnknownClusterError } from '../../functions/kube/credentials.ts';
import { askedRetrySeconds, refusedForGood } from '../../functions/kube/errors.ts';
import type { SendOutcome, Sink } from './sink.ts';

/** What the in-process handler tells the relay back: look at this key again after a while. */
export type Handler = (envelope: Envelope) => Promise<{ requeueAfterSeconds: number | null; failed?: readonly { controller: string; key?: string; error: Error }[] }>;

/** Workers and the deadline per handling. */
export interface MemorySinkOptions {
  /** Handlings at once (default 4): the delivery queue's sends in flight, one key each. */
  concurrency?: number;
  /**
   * A handling not done by then frees its worker and its entry fails (the key is handled
   * again once it has ended); its result, when it comes, is kept: its requeue is armed, and
   * only a failure counts toward `maxAttempts`.
   */
  timeoutMs?: number;
  /** Failed handlings of one key in a row before it is dropped (default 15, as client-go controllers' maxRetries). */
  maxAttempts?: number;
  /** A handling still running this long is taken as hung: its key is dropped (default ten deadlines). */
  hungAfterMs?: number;
  /** Monotonic ms (default performance.now): when a refusal may be reported again (REPORT_AGAIN_MS). */
  now?: () => number;
}

/** Keys refused for good and reported, remembered (the oldest forgotten first). */
const REPORTED_KEPT = 10_000;

/**
 * A key refused for good is reported again after this long if it still is: once per pass
 * that a requeue brings back every few seconds was noise, but once per process hid a refusal
 * that persists — `ephemera_relay_events_rejected_total` stopped growing, and an alert on its
 * increase cleared while the job could never be reconciled (operability review).
 */
export const REPORT_AGAIN_MS = 600_000;

/** A bounded set with a memory of REPORT_AGAIN_MS: `seen` answers whether a key was seen within it, and remembers it. */
class Remembered {
  private readonly keys = new Map<string, number>();
  private readonly max: number;
  private readonly now: () => number;
  constructor(max: number, now: () => number) {
    this.max = max;
    this.now = now;
  }
  seen(key: string): boolean {
    const at = this.keys.get(key);
    if (at !== undefined && this.now() - at < REPORT_AGAIN_MS) return true;
    this.keys.delete(key);
    this.keys.set(key, this.now());
    if (this.keys.size > this.max) this.keys.delete(this.keys.keys().next().value as string);
    return false;
  }
}

type Handled = Awaited<ReturnType<Handler>>;

/** What becomes of a handling's result when it comes after its deadline. */
interface Overdue {
  done(r: Handled): void;
  failed(): void;
}

/**
 * `handling`'s result, or 'overdue' after `timeoutMs`; what an overdue handling ends with
 * goes to `overdue`, then `ended` runs (however it ended, on time or not).
 */
async function raced(handling: Promise<Handled>, timeoutMs: number, overdue: Overdue, ended: () => void): Promise<Handled | 'overdue'> {
  // Set by the deadline's timer itself, before the race is answered: a result that comes
  // after it is the overdue handling's, however close the two are.
  let late = false;
  const watched = handling.then((r) => {
    if (late) overdue.done(r);
    return r;
  }, (err: unknown) => {
    if (late) overdue.failed();
    throw err;
  }).finally(ended);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'overdue'>((r) => (timer = setTimeout(() => {
    late = true;
    r('overdue');
  }, timeoutMs)));
  try {
    return await Promise.race([watched, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Errors that retrying cannot fix: a refused request (403, 400, 422, a 404 naming nothing; not 401) or bad input. */
function isPermanent(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof InvalidEnvelopeError || e instanceof UnknownClusterError) return true;
  }
  return refusedForGood(err) !== undefined;
}

/**
 * Calls the functions in this process, `concurrency` envelopes at a time: the delivery queue
 * keeps that many sends in flight, one envelope each, so a slow handling holds one worker,
 * not the others' keys (review80 M1). A failed or overdue handling is reported failed (the
 * relay retries it); a requeue goes to `requeue`, which keeps one timer per key, also when
 * it comes from a handling that ended after its deadline. As in client-go's workqueue, a key
 * is never handled twice at once: while an overdue handling of it still runs, the key is
 * reported failed.
 * A handling the API server throttled (429/503 with Retry-After) is reported failed with the
 * server's wait, which the queue keeps; it is not an attempt.
 * The dead-letter path: an error retrying cannot fix, or the `maxAttempts`-th failure of a
 * key in a row, is reported `permanent`, so the queue logs the key, counts and drops it
 * (the periodic resync brings the key back if it still needs work).
 */
export function memorySink(handler: Handler, requeue: (e: Envelope, delayMs: number) => void, opts: MemorySinkOptions = {}): Sink {
  /** Keys being handled, and since when (ms, monotonic). */
  const running = new Map<string, number>();
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const hungAfterMs = opts.hungAfterMs ?? 10 * timeoutMs;
  const maxAttempts = opts.maxAttempts ?? 15;
  /** Failed handlings in a row, per key (forgotten on success or drop). */
  const attempts = new Map<string, number>();
  const reported = new Remembered(REPORTED_KEPT, opts.now ?? (() => performance.now()));
  const failed = (key: string, error: string, permanent: boolean): SendOutcome => {
    const n = (attempts.get(key) ?? 0) + 1;
    if (!permanent && n < maxAttempts) {
      attempts.set(key, n);
      return { ok: false, error };
    }
    attempts.delete(key);
    return { ok: false, permanent: true, error: permanent ? `not retryable: ${error}` : `gave up after ${n} attempts: ${error}` };
  };
  /**
   * What an overdue handling's result does when it comes: its requeue is armed and its key's
   * failures are forgotten, or its failure is counted (review80 M1: the requeue was dropped,
   * and a key whose handlings always overran was dropped after maxAttempts "failures" that
   * had each done their work).
   */
  const late = (key: string, e: Envelope): Overdue => ({
    done(r): void {
      attempts.delete(key);
      if (r.requeueAfterSeconds !== null) requeue(e, r.requeueAfterSeconds * 1000);
    },
    failed(): void {
      attempts.set(key, (attempts.get(key) ?? 0) + 1);
    },
  });
  const handleOne = async (m: Message): Promise<SendOutcome> => {
    const key = m.key;
    // The key's earlier handling still runs, past its deadline: not an attempt (a slow one
    // ends, and the key is handled again then), unless it has run so long it is hung: a
    // handling that never ends kept its key retried every 30 s for good (review).
    const since = running.get(key);
    if (since !== undefined) {
      const ranMs = performance.now() - since;
      if (ranMs > hungAfterMs) return { ok: false, permanent: true, error: `${key}'s handling has run ${Math.round(ranMs / 1000)} s (hung): dropped` };
      return { ok: false, error: `${key} is still being handled` };
    }
    running.set(key, performance.now());
    const e = envelopeOf(m);
    try {
      const r = await raced(handler(e), timeoutMs, late(key, e), () => running.delete(key));
      // Not an attempt: the handling goes on, and what it ends with counts then (late()).
      if (r === 'overdue') return { ok: false, error: `handling ${key} took longer than ${timeoutMs} ms (its result is kept when it ends)` };
      attempts.delete(key);
      if (r.requeueAfterSeconds !== null) requeue(e, r.requeueAfterSeconds * 1000);
      // Keys refused for good beside others that were handled: reported (logged and counted
      // as a dead letter) once each, not again on every pass a requeue brings (reviews), and
      // again after REPORT_AGAIN_MS while they still are.
      const refused = (r.failed ?? []).filter((f) => !reported.seen(failedKey(f)));
      if (refused.length > 0) return { ok: false, permanent: true, error: `not retryable: ${refused.map((f) => `${failedKey(f)}: ${f.error.message}`).join('; ')}` };
      return { ok: true };
    } catch (err) {
      const message = (err as Error).message ?? String(err);
      // Throttled (429/503 with Retry-After): the key waits what the server asked, and the
      // failure is no attempt: a throttle of a few minutes dropped every key it met as
      // "refused for good" after maxAttempts (review90 L1).
      const asked = askedRetrySeconds(err);
      if (asked !== undefined) return { ok: false, error: message, retryAfterMs: asked * 1000 };
      return failed(key, message, isPermanent(err));
    }
  };
  return {
    name: 'memory',
    concurrency: opts.concurrency ?? 4,
    batchMax: 1,
    async send(messages: Message[]): Promise<SendOutcome[]> {
      const out = new Array<SendOutcome>(messages.length);
      let next = 0;
      const worker = async (): Promise<void> => {
        for (let i = next++; i < messages.length; i = next++) out[i] = await handleOne(messages[i] as Message);
      };
      await Promise.all(Array.from({ length: Math.min(opts.concurrency ?? 4, messages.length) }, worker));
      return out;
    },
  };
}
