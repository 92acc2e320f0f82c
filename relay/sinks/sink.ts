import type { Message } from '../envelope.ts';

/**
 * What became of one envelope. `permanent`: the destination refused this entry for what
 * it is (too big, malformed): resending cannot help, so it is counted and logged, not retried.
 */
export type SendOutcome = { ok: true } | { ok: false; error: string; permanent?: boolean };

/**
 * Where the relay sends envelopes, each as a message: its JSON text, built once by the
 * delivery queue (relay/envelope.ts). `send` resolves with one outcome per message, in
 * order, so only the failed entries are sent again; it resolves within the sink's own
 * deadline (a sink never hangs the relay). Throwing counts as "every entry failed".
 */
export interface Sink {
  readonly name: string;
  send(messages: Message[]): Promise<SendOutcome[]>;
  close?(): Promise<void>;
}

/** Every entry failed with the same error. */
export function allFailed(n: number, error: string): SendOutcome[] {
  return Array.from({ length: n }, () => ({ ok: false, error }));
}
