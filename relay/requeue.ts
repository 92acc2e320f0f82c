// Delayed re-delivery for the in-process sink (`requeueAfter`), one timer per key: a key
// asked to come back several times comes back once, at the earliest time asked for, as in
// client-go's delaying workqueue. Memory is bounded by the number of keys, not of requests.
import { envelopeKey, type Envelope } from '../functions/api/envelope.ts';

/** Per-key delayed re-adds. */
export class Requeue {
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly add: (e: Envelope) => void;

  constructor(add: (e: Envelope) => void) {
    this.add = add;
  }

  /** Keys waiting to come back. */
  get size(): number {
    return this.timers.size;
  }

  /** Bring `envelope`'s key back after `delayMs`, unless it already comes back sooner. */
  after(envelope: Envelope, delayMs: number): void {
    const key = envelopeKey(envelope);
    const at = Date.now() + Math.max(0, delayMs);
    const existing = this.timers.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(envelope);
    }, Math.max(0, delayMs));
    timer.unref();
    this.timers.set(key, { at, timer });
  }

  stop(): void {
    for (const t of this.timers.values()) clearTimeout(t.timer);
    this.timers.clear();
  }
}
