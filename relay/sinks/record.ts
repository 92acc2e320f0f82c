import { appendFile } from 'node:fs/promises';
import type { Message } from '../envelope.ts';
import { allFailed, type SendOutcome, type Sink } from './sink.ts';

/** Appends one envelope per line: the JSON-lines format `ephemera invoke --event` replays. */
export function recordSink(path: string): Sink {
  return {
    name: `record:${path}`,
    // Encoded before the write: while the file is written only the bytes outside the JS heap
    // are held, not the messages or the joined text, which die young instead of being
    // promoted and swept by a full GC (a batch of 100 pod envelopes is ~100 KB of text).
    send(messages: Message[]): Promise<SendOutcome[]> {
      return append(path, Buffer.from(messages.map((m) => `${m.body}\n`).join('')), messages.length);
    },
  };
}

/** One append: the lines are written together or not at all (as far as the file system goes). */
async function append(path: string, lines: Buffer, count: number): Promise<SendOutcome[]> {
  try {
    await appendFile(path, lines);
    return Array.from({ length: count }, () => ({ ok: true }));
  } catch (err) {
    return allFailed(count, (err as Error).message);
  }
}
