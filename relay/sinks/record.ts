import { appendFile } from 'node:fs/promises';
import type { Envelope } from '../../functions/api/envelope.ts';
import { allFailed, type SendOutcome, type Sink } from './sink.ts';

/** Appends one envelope per line: the JSON-lines format `ephemera invoke --event` replays. */
export function recordSink(path: string): Sink {
  return {
    name: `record:${path}`,
    async send(envelopes: Envelope[]): Promise<SendOutcome[]> {
      // One append: the lines are written together or not at all (as far as the file system goes).
      try {
        await appendFile(path, envelopes.map((e) => `${JSON.stringify(e)}\n`).join(''));
        return envelopes.map(() => ({ ok: true }));
      } catch (err) {
        return allFailed(envelopes.length, (err as Error).message);
      }
    },
  };
}
