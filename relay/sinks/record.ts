import { appendFile } from 'node:fs/promises';
import type { Message } from '../envelope.ts';
import { allFailed, type SendOutcome, type Sink } from './sink.ts';

/** Appends one envelope per line: the JSON-lines format `ephemera invoke --event` replays. */
export function recordSink(path: string): Sink {
  return {
    name: `record:${path}`,
    // The lines are joined before the write and the messages not held while the file is
    // written, so they die young instead of being promoted and swept by a full GC.
    send(messages: Message[]): Promise<SendOutcome[]> {
      return append(path, messages.map((m) => `${m.body}\n`).join(''), messages.length);
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
