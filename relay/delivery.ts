// Between the coalescer and a sink: if the sink fails (queue unreachable), keep the latest
// envelope per key in a bounded buffer and retry with backoff. If the buffer overflows, the
// oldest keys are dropped but a full resync is requested once the sink works again, so the
// need to reconcile is never silently lost.
import { envelopeKey, type Envelope } from '../functions/api/envelope.ts';
import type { Logger } from '../functions/engine/logger.ts';
import type { Sink } from './sinks/sink.ts';
import { backoffMs } from './backoff.ts';

export interface DeliveryOptions {
  sink: Sink;
  maxBuffered: number;
  logger: Logger;
  /** The sink took a batch (for metrics): how many and how long. */
  onSent?(count: number, seconds: number): void;
  onBufferDepth?(depth: number): void;
  /** The buffer overflowed and the sink is back: re-list everything. */
  onResyncNeeded(): void;
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

/** Sends batches through the sink, buffering what fails. */
export class Delivery {
  private readonly buffer = new Map<string, Envelope>();
  private overflowed = false;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private sending: Promise<void> = Promise.resolve();
  private readonly opts: DeliveryOptions;

  constructor(opts: DeliveryOptions) {
    this.opts = opts;
  }

  get depth(): number {
    return this.buffer.size;
  }

  /** Queue envelopes for sending (in order; one batch at a time). */
  deliver(envelopes: Envelope[]): Promise<void> {
    this.sending = this.sending.then(() => this.attempt(envelopes));
    return this.sending;
  }

  /** Wait until everything handed over so far was attempted. */
  idle(): Promise<void> {
    return this.sending;
  }

  stop(): void {
    clearTimeout(this.retryTimer);
  }

  private async attempt(fresh: Envelope[]): Promise<void> {
    // Newer envelopes replace buffered ones for the same key: only the latest need matters.
    for (const e of fresh) this.buffer.delete(envelopeKey(e));
    const batch = [...this.buffer.values(), ...fresh];
    this.buffer.clear();
    if (batch.length === 0) return;
    const started = performance.now();
    let failed: Envelope[];
    try {
      failed = await this.opts.sink.send(batch);
    } catch (err) {
      this.opts.logger.warn({ sink: this.opts.sink.name, err: (err as Error).message, buffered: batch.length }, 'sink unavailable: buffering');
      failed = batch;
    }
    this.opts.onSent?.(batch.length - failed.length, (performance.now() - started) / 1000);
    if (failed.length === 0) return this.recovered();
    this.keep(failed);
  }

  private recovered(): void {
    this.failures = 0;
    this.opts.onBufferDepth?.(this.buffer.size);
    if (this.overflowed) {
      this.overflowed = false;
      this.opts.logger.warn({}, 'sink recovered after the buffer overflowed: resyncing everything');
      this.opts.onResyncNeeded();
    }
  }

  private keep(failed: Envelope[]): void {
    for (const e of failed) {
      this.buffer.delete(envelopeKey(e));
      this.buffer.set(envelopeKey(e), e);
    }
    while (this.buffer.size > this.opts.maxBuffered) {
      const oldest = this.buffer.keys().next().value as string;
      this.buffer.delete(oldest);
      this.overflowed = true;
    }
    this.opts.onBufferDepth?.(this.buffer.size);
    this.failures++;
    const wait = backoffMs(this.failures - 1, this.opts.minBackoffMs ?? 200, this.opts.maxBackoffMs ?? 30_000);
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.deliver([]), wait);
    this.retryTimer.unref();
  }
}
