import type { Envelope } from '../../functions/api/envelope.ts';

/**
 * Where the relay sends envelopes. `send` resolves with the envelopes it could NOT
 * deliver (kept and retried by the relay), and throws when nothing went through.
 */
export interface Sink {
  readonly name: string;
  send(envelopes: Envelope[]): Promise<Envelope[]>;
  close?(): Promise<void>;
}
