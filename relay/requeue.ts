// Delayed re-delivery for the in-process sink (`requeueAfter`), one timer per key: a key
// asked to come back several times comes back once, at the earliest time asked for, as in
// client-go's delaying workqueue. Memory is bounded by the number of keys, not of requests.
import { queuedKey, type Queued } from './envelope.ts';

/** Per-key delayed re-adds. */
export class Requeue {
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly add: (q: Queued) => void;

  constructor(add: (q: Queued) => void) {
    this.add = add;
  }

  /** Keys waiting to come back. */
  get size(): number {
    return this.timers.size;
  }

  /** Bring `item`'s key back after `delayMs`, unless it already comes back sooner. */
  after(item: Queued, delayMs: number): void {
    const key = queuedKey(item);
    const at = Date.now() + Math.max(0, delayMs);
    const existing = this.timers.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(item);
    }, Math.max(0, delayMs));
    timer.unref();
    this.timers.set(key, { at, timer });
  }

  stop(): void {
    for (const t of this.timers.values()) clearTimeout(t.timer);
    this.timers.clear();
  }
}
