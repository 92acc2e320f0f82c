import { appendFile } from 'node:fs/promises';
import type { Message } from '../envelope.ts';
import { allFailed, type SendOutcome, type Sink } from './sink.ts';

/** Appends one envelope per line: the JSON-lines format `ephemera invoke --event` replays. */
export function recordSink(path: string): Sink {
  return {
    name: `record:${path}`,
    // Encoded before the write, straight into one buffer outside the JS heap: no joined text
    // (~100 KB a batch), and nothing of the messages is held while the file is written.
    send(messages: Message[]): Promise<SendOutcome[]> {
      return append(path, lines(messages), messages.length);
    },
  };
}

/** The messages' bodies, one per line, as UTF-8. */
function lines(messages: Message[]): Buffer {
  let size = 0;
  for (const m of messages) size += Buffer.byteLength(m.body) + 1;
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const m of messages) {
    at += out.write(m.body, at);
    out[at++] = 10;
  }
  return out;
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
