import { envelopeKey, type Envelope } from '../../functions/api/envelope.ts';
import type { SendOutcome, Sink } from './sink.ts';

/** What the in-process handler tells the relay back: look at this key again after a while. */
export type Handler = (envelope: Envelope) => Promise<{ requeueAfterSeconds: number | null }>;

/** Workers and the deadline per handling. */
export interface MemorySinkOptions {
  concurrency?: number;
  /** A handling not done by then counts as failed (and is retried once it has ended). */
  timeoutMs?: number;
}

/**
 * Calls the functions in this process, `concurrency` envelopes at a time. A failed or
 * overdue handling is reported failed (the relay retries it); a requeue goes to `requeue`,
 * which keeps one timer per key. As in client-go's workqueue, a key is never handled twice
 * at once: while an overdue handling of it still runs, the key is reported failed.
 */
export function memorySink(handler: Handler, requeue: (e: Envelope, delayMs: number) => void, opts: MemorySinkOptions = {}): Sink {
  const running = new Set<string>();
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const handleOne = async (e: Envelope): Promise<SendOutcome> => {
    const key = envelopeKey(e);
    if (running.has(key)) return { ok: false, error: `${key} is still being handled` };
    running.add(key);
    const handling = handler(e).finally(() => running.delete(key));
    let timer: NodeJS.Timeout | undefined;
    const overdue = new Promise<'overdue'>((r) => (timer = setTimeout(() => r('overdue'), timeoutMs)));
    try {
      const r = await Promise.race([handling, overdue]);
      if (r === 'overdue') return { ok: false, error: `handling ${key} took longer than ${timeoutMs} ms` };
      if (r.requeueAfterSeconds !== null) requeue(e, r.requeueAfterSeconds * 1000);
      return { ok: true };
    } catch (err) {
      return { ok: false, error: (err as Error).message ?? String(err) };
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    name: 'memory',
    async send(envelopes: Envelope[]): Promise<SendOutcome[]> {
      const out = new Array<SendOutcome>(envelopes.length);
      let next = 0;
      const worker = async (): Promise<void> => {
        for (let i = next++; i < envelopes.length; i = next++) out[i] = await handleOne(envelopes[i] as Envelope);
      };
      await Promise.all(Array.from({ length: Math.min(opts.concurrency ?? 4, envelopes.length) }, worker));
      return out;
    },
  };
}
