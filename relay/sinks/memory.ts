import type { Envelope } from '../../functions/api/envelope.ts';
import type { Sink } from './sink.ts';

/** What the in-process handler tells the relay back: look at this key again after a while. */
export type Handler = (envelope: Envelope) => Promise<{ requeueAfterSeconds: number | null }>;

/**
 * Calls the functions in this process. A failed call is reported undelivered (the relay
 * retries it); a requeue is scheduled with `requeue` after the delay the handler asked for.
 */
export function memorySink(handler: Handler, requeue: (e: Envelope, delayMs: number) => void, concurrency = 4): Sink {
  return {
    name: 'memory',
    async send(envelopes: Envelope[]): Promise<Envelope[]> {
      const failed: Envelope[] = [];
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < envelopes.length) {
          const e = envelopes[next++] as Envelope;
          try {
            const r = await handler(e);
            if (r.requeueAfterSeconds !== null) requeue(e, r.requeueAfterSeconds * 1000);
          } catch {
            failed.push(e);
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, envelopes.length) }, worker));
      if (failed.length === envelopes.length && failed.length > 0) throw new Error(`all ${failed.length} in-process handlings failed`);
      return failed;
    },
  };
}
