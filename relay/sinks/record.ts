import { appendFile } from 'node:fs/promises';
import type { Envelope } from '../../functions/api/envelope.ts';
import type { Sink } from './sink.ts';

/** Appends one envelope per line: the JSON-lines format `ephemera invoke --event` replays. */
export function recordSink(path: string): Sink {
  return {
    name: `record:${path}`,
    async send(envelopes: Envelope[]): Promise<Envelope[]> {
      await appendFile(path, envelopes.map((e) => `${JSON.stringify(e)}\n`).join(''));
      return [];
    },
  };
}
