import type { Message } from '../envelope.ts';

/**
 * What became of one envelope. `permanent`: the destination refused this entry for what
 * it is (too big, malformed): resending cannot help, so it is counted and logged, not retried.
 * `retryAfterMs`: how long the destination asked to wait before this entry is sent again (the
 * memory sink: the API server's Retry-After); the queue waits at least that.
 */
export type SendOutcome = { ok: true } | { ok: false; error: string; permanent?: boolean; retryAfterMs?: number };

/**
 * Where the relay sends envelopes, each as a message: its JSON text, built once by the
 * delivery queue (relay/envelope.ts). `send` resolves with one outcome per message, in
 * order, so only the failed entries are sent again; it resolves within the sink's own
 * deadline (a sink never hangs the relay). Throwing counts as "every entry failed".
 */
export interface Sink {
  readonly name: string;
  /**
   * Sends the delivery queue may have in flight at once, each with keys of its own (default
   * 1: one send at a time). A sink whose send lasts as long as its slowest entry (the memory
   * sink: a handling) takes several, with `batchMax` 1, so a slow key holds one of them, not
   * every other key (a worker pool, as client-go's workqueue has).
   */
  readonly concurrency?: number;
  /** Most messages in one send (default: the queue's own, 100). */
  readonly batchMax?: number;
  send(messages: Message[]): Promise<SendOutcome[]>;
  close?(): Promise<void>;
}

/** Every entry failed with the same error. */
export function allFailed(n: number, error: string): SendOutcome[] {
  return Array.from({ length: n }, () => ({ ok: false, error }));
}
