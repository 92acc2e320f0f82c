// An answer's bytes as the socket delivers them, gathered into one buffer.

/** Beyond this a Content-Length is not trusted with memory before the bytes arrive. */
export const PREALLOCATE_LIMIT = 128 * 1024 * 1024;

/** Collects an answer's chunks; `done()` is every byte added, in order. */
export interface AnswerBytes {
  add(chunk: Buffer): void;
  done(): Buffer;
}

/**
 * With a Content-Length (kube-apiserver sends one with every answer it does not stream)
 * the chunks are copied into one buffer of that size as they come, so each can go at once:
 * a LIST of a large job's pods would otherwise keep a hundred or more 64 KiB reads alive
 * and copy them all again at the end. A body that is not the length announced is still
 * returned whole, as it came; a length that is missing, not a number or above `limit`
 * gathers the chunks and joins them at the end.
 */
export function answerBytes(contentLength: string | undefined, limit = PREALLOCATE_LIMIT): AnswerBytes {
  const announced = contentLength !== undefined && /^\d{1,16}$/.test(contentLength) ? Number(contentLength) : 0;
  let into: Buffer | undefined = announced > 0 && announced <= limit ? Buffer.allocUnsafe(announced) : undefined;
  let length = 0;
  const chunks: Buffer[] = [];
  return {
    add(chunk) {
      if (into !== undefined && length + chunk.length <= into.length) {
        chunk.copy(into, length);
      } else {
        // More than announced: what was copied becomes the first chunk.
        if (into !== undefined) chunks.push(into.subarray(0, length));
        into = undefined;
        chunks.push(chunk);
      }
      length += chunk.length;
    },
    done() {
      return into !== undefined ? into.subarray(0, length) : Buffer.concat(chunks, length);
    },
  };
}
