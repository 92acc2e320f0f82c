// Delayed re-delivery for the in-process sink (`requeueAfter`), one timer per key: a key
// asked to come back several times comes back once, at the earliest time asked for, as in
// client-go's delaying workqueue. What comes back is the key: the relay reads the object's
// state then from its watch cache (relay.ts requeued); the item kept here, the latest one
// asked for, is sent only when the object has left the cache. Memory is bounded by the
// number of keys, not of requests.
import { queuedKey, type Queued } from './envelope.ts';

interface Waiting {
  at: number;
  /** The latest item asked for: a later requeue's payload is the newer one. */
  item: Queued;
  timer: NodeJS.Timeout;
}

/** Per-key delayed re-adds. */
/** The longest delay setTimeout keeps (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class Requeue {
  private readonly timers = new Map<string, Waiting>();
  private readonly add: (q: Queued) => void;
  private stopped = false;

  constructor(add: (q: Queued) => void) {
    this.add = add;
  }

  /** Keys waiting to come back. */
  get size(): number {
    return this.timers.size;
  }

  /** Bring `item`'s key back after `delayMs`, unless it already comes back sooner; either way with `item`. */
  after(item: Queued, requestedMs: number): void {
    // Node runs a timer longer than 2^31-1 ms at once (review: a 30-day TTL came back every
    // millisecond); a key that far off comes back with the periodic resync long before.
    const delayMs = Math.min(Math.max(0, requestedMs), MAX_TIMER_MS);
    // Handlers still answering while the relay stops ask for nothing any more (review: one
    // asked into a full, stopped queue was asked again every second for good).
    if (this.stopped) return;
    const key = queuedKey(item);
    const at = performance.now() + Math.max(0, delayMs);
    const existing = this.timers.get(key);
    if (existing && existing.at <= at) {
      existing.item = item;
      return;
    }
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      const waited = this.timers.get(key);
      this.timers.delete(key);
      if (waited) this.add(waited.item);
    }, Math.max(0, delayMs));
    timer.unref();
    this.timers.set(key, { at, item, timer });
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t.timer);
    this.timers.clear();
  }
}
