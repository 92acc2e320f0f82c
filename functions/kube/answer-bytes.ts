// An answer's bytes as the socket delivers them, gathered into one buffer, and inflated into
// one when gzipped.

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

/** deflate's largest ratio (RFC 1951 stored in 258-byte matches): a gzip trailer claiming more is not believed. */
const DEFLATE_MAX_RATIO = 1032;

/**
 * A gzip answer inflated into one buffer. kube-apiserver gzips every answer of 128 KiB or
 * more (a LIST of a large job's pods: 7.5 MB of JSON for 1,000 real pods, ~430 KB gzipped);
 * `gunzipSync` writes it in 16 KiB pieces and joins them at the end, which copies it once
 * more and makes some 460 short-lived buffers: nearly half the time of the inflate. The gzip trailer
 * says the size (ISIZE, modulo 2^32), so the output is sized once. A trailer that is wrong
 * (several members, a size past 4 GiB, a lie) only costs more pieces or a larger output
 * buffer; one claiming more than deflate can produce from the input, or than `limit`, is not
 * used. Exactly `gunzipSync`'s result or error either way (test/kube/answer-bytes.test.ts).
 */
export function gunzipWhole(body: Buffer, limit = PREALLOCATE_LIMIT): Buffer {
  const zlib = process.getBuiltinModule('node:zlib');
  const size = body.length >= 18 ? body.readUInt32LE(body.length - 4) : 0;
  // One byte more than the size: an output filled exactly would get a second piece.
  const sized = size > 0 && size < limit && size <= body.length * DEFLATE_MAX_RATIO;
  return sized ? zlib.gunzipSync(body, { chunkSize: Math.max(zlib.constants.Z_MIN_CHUNK, size + 1) }) : zlib.gunzipSync(body);
}
