// Per-key coalescing with client-go workqueue semantics: the first event of a key starts
// its window; later ones within the window replace it (the latest resourceVersion wins);
// at the end of the window the key is sent once. Memory is bounded by the number of keys.
import { envelopeKey, type Envelope } from '../functions/api/envelope.ts';

export interface CoalescerOptions {
  windowMs: number;
  /** Most keys waiting at once; past it, the oldest are flushed early (never dropped). */
  maxPending: number;
  flush(envelopes: Envelope[]): void;
  /** Called when an event replaces a pending one for the same key. */
  onCoalesced?(): void;
}

/** Collects envelopes per key and hands them on once per window. */
export class Coalescer {
  private readonly pending = new Map<string, { envelope: Envelope; due: number }>();
  private timer: NodeJS.Timeout | undefined;
  private readonly opts: CoalescerOptions;

  constructor(opts: CoalescerOptions) {
    this.opts = opts;
  }

  get size(): number {
    return this.pending.size;
  }

  add(envelope: Envelope): void {
    const key = envelopeKey(envelope);
    const existing = this.pending.get(key);
    if (existing) {
      existing.envelope = envelope;
      this.opts.onCoalesced?.();
      return;
    }
    this.pending.set(key, { envelope, due: Date.now() + this.opts.windowMs });
    if (this.pending.size > this.opts.maxPending) this.flushOldest(this.pending.size - this.opts.maxPending);
    this.schedule();
  }

  /** Send everything now (shutdown, tests). */
  drain(): void {
    this.flushOldest(this.pending.size);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.timer || this.pending.size === 0) return;
    const first = this.pending.values().next().value as { due: number };
    this.timer = setTimeout(() => this.tick(), Math.max(0, first.due - Date.now()));
    this.timer.unref();
  }

  private tick(): void {
    this.timer = undefined;
    const now = Date.now();
    const out: Envelope[] = [];
    // Insertion order is due order: stop at the first key still inside its window.
    for (const [key, p] of this.pending) {
      if (p.due > now) break;
      out.push(p.envelope);
      this.pending.delete(key);
    }
    if (out.length > 0) this.opts.flush(out);
    this.schedule();
  }

  private flushOldest(n: number): void {
    const out: Envelope[] = [];
    for (const [key, p] of this.pending) {
      if (out.length >= n) break;
      out.push(p.envelope);
      this.pending.delete(key);
    }
    if (out.length > 0) this.opts.flush(out);
  }
}
