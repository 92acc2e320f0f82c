import { appendFile } from 'node:fs/promises';
import type { Envelope } from '../../functions/api/envelope.ts';
import { allFailed, type SendOutcome, type Sink } from './sink.ts';

/** Appends one envelope per line: the JSON-lines format `ephemera invoke --event` replays. */
export function recordSink(path: string): Sink {
  return {
    name: `record:${path}`,
    // Serialised before the write and not awaited here: nothing holds the envelopes (and the
    // snapshots the queue added back) while the file is written, so they die young instead
    // of being promoted and swept by a full GC, once per batch.
    send(envelopes: Envelope[]): Promise<SendOutcome[]> {
      let lines: string;
      try {
        lines = envelopes.map((e) => `${JSON.stringify(e)}\n`).join('');
      } catch (err) {
        return Promise.resolve(allFailed(envelopes.length, (err as Error).message));
      }
      return append(path, lines, envelopes.length);
    },
  };
}

/** One append: the lines are written together or not at all (as far as the file system goes). */
async function append(path: string, lines: string, count: number): Promise<SendOutcome[]> {
  try {
    await appendFile(path, lines);
    return Array.from({ length: count }, () => ({ ok: true }));
  } catch (err) {
    return allFailed(count, (err as Error).message);
  }
}
