import { open, type FileHandle } from 'node:fs/promises';
import type { Message } from '../envelope.ts';
import { allFailed, type SendOutcome, type Sink } from './sink.ts';

/** How a batch's bytes reach the open file: appended in full, or an error. */
export type WriteAll = (file: FileHandle, data: Buffer) => Promise<void>;

/**
 * Appends one envelope per line: the JSON-lines format `ephemera invoke --event` replays. A
 * batch is in the file whole or not at all; the file is created readable by its owner only
 * (0600): it holds the pods' names, labels and images (review75 L4). `write` stands in for
 * the file system's append in tests.
 */
export function recordSink(path: string, o: { write?: WriteAll } = {}): Sink {
  const write = o.write ?? ((file, data) => file.appendFile(data));
  // One batch at a time (the delivery queue sends so already): a batch cut back on error
  // must not take another's lines with it.
  let last: Promise<unknown> = Promise.resolve();
  return {
    name: `record:${path}`,
    // Encoded before the write, straight into one buffer outside the JS heap: no joined text
    // (~100 KB a batch), and nothing of the messages is held while the file is written.
    send(messages: Message[]): Promise<SendOutcome[]> {
      const sent = last.then(() => append(path, lines(messages), messages.length, write));
      last = sent.catch(() => undefined);
      return sent;
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

/**
 * One append, whole or not at all. A write that fails part way (ENOSPC, EFBIG) has put some
 * of the lines in the file already; left there, the relay's retry of the batch glued its first
 * line to that fragment and the recording could not be replayed (review75 H2). So the file's
 * size is noted before the write and the file cut back to it on error. This assumes no other
 * process appends to the file meanwhile (one relay per recording).
 */
async function append(path: string, data: Buffer, count: number, write: WriteAll): Promise<SendOutcome[]> {
  let file: FileHandle | undefined;
  try {
    file = await open(path, 'a+', 0o600);
    const size = await afterLastLine(file, (await file.stat()).size);
    try {
      await write(file, data);
    } catch (err) {
      const cut = await file.truncate(size).then(() => '', (e: unknown) => `; cutting the file back to ${size} bytes failed too (${(e as Error).message}): its last line may be partial`);
      throw new Error(`${(err as Error).message}${cut}`, { cause: err });
    }
    return Array.from({ length: count }, () => ({ ok: true }));
  } catch (err) {
    return allFailed(count, (err as Error).message);
  } finally {
    await file?.close().catch(() => undefined);
  }
}

/** How much of the file is read at a time looking back for its last newline. */
const TAIL_CHUNK = 64 * 1024;

/**
 * The file's size once a last line cut off mid-write is gone: a relay killed (SIGKILL, OOM)
 * during an append leaves a line with no newline, and the next relay's first line was glued
 * to it, mid-file, where `ephemera invoke` cannot skip it (review76: only a cut-off last line
 * is skipped). The fragment is cut back to the last newline before anything is appended.
 */
async function afterLastLine(file: FileHandle, size: number): Promise<number> {
  // The usual case, on every batch: the file ends with a whole line (one byte read).
  const last = Buffer.alloc(1);
  if (size === 0 || ((await file.read(last, 0, 1, size - 1)).bytesRead === 1 && last[0] === 10)) return size;
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - TAIL_CHUNK);
    const chunk = Buffer.alloc(end - start);
    await file.read(chunk, 0, chunk.length, start);
    const nl = chunk.lastIndexOf(10);
    if (nl >= 0) {
      await file.truncate(start + nl + 1);
      return start + nl + 1;
    }
    end = start;
  }
  await file.truncate(0);
  return 0;
}
