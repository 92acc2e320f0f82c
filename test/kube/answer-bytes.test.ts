// An answer's bytes gathered as the socket delivers them (functions/kube/answer-bytes.ts):
// whatever the chunks and whatever the Content-Length says, done() is every byte, in order;
// a gzipped one inflates to exactly what gunzipSync gives, whatever its trailer says.
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';
import { answerBytes, gunzipWhole } from '../../functions/kube/answer-bytes.ts';

function gather(contentLength: string | undefined, chunks: readonly Uint8Array[], limit?: number): Buffer {
  const a = answerBytes(contentLength, limit);
  for (const c of chunks) a.add(Buffer.from(c));
  return a.done();
}

describe('answerBytes', () => {
  test('every byte, in order, whether the Content-Length is right, short, long, missing or not a number', () => {
    const chunks = fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 8 });
    const claim = (total: number): fc.Arbitrary<string | undefined> => fc.oneof(
      fc.constant(String(total)),
      fc.nat(total + 50).map(String),
      fc.constant(undefined),
      fc.constantFrom('', '-1', '1e3', ' 12', '0x10', 'NaN'),
    );
    fc.assert(fc.property(chunks.chain((cs) => fc.tuple(fc.constant(cs), claim(cs.reduce((n, c) => n + c.length, 0)), fc.option(fc.nat(100), { nil: undefined }))), ([cs, length, limit]) => {
      assert.deepEqual(gather(length, cs, limit), Buffer.concat(cs));
    }), { numRuns: 2000 });
  });

  test('a Content-Length beyond any memory is not allocated up front', () => {
    // Allocating it would throw (no 100 TB buffer): the bytes are gathered as they come.
    assert.deepEqual(gather('100000000000000', [Buffer.from('{"a":'), Buffer.from('1}')]), Buffer.from('{"a":1}'));
  });
});

/** gunzipSync's answer, or its error's message. */
function outcome(f: () => Buffer): { bytes: Buffer } | { error: string } {
  try {
    return { bytes: f() };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

describe('gunzipWhole', () => {
  test('exactly gunzipSync: any data, several members, a trailer that lies, cut or corrupt input', () => {
    const data = fc.oneof(fc.uint8Array({ maxLength: 3000 }), fc.string({ maxLength: 2000 }).map((x) => new TextEncoder().encode(x.repeat(20))));
    const trailer = fc.oneof(fc.constant(undefined), fc.nat(), fc.constantFrom(0, 1, 0xffffffff, 64, 65));
    const gz = fc.tuple(fc.array(data, { minLength: 1, maxLength: 3 }), trailer, fc.option(fc.nat(40), { nil: undefined }), fc.option(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { nil: undefined }))
      .map(([members, size, cut, flip]) => {
        const body = Buffer.concat(members.map((m) => gzipSync(m, { level: 1 })));
        if (size !== undefined) body.writeUInt32LE(size, body.length - 4);
        if (flip !== undefined) body[flip[0] % body.length]! ^= flip[1];
        return cut === undefined ? body : body.subarray(0, Math.max(0, body.length - cut));
      });
    fc.assert(fc.property(gz, fc.option(fc.nat(5000), { nil: undefined }), (body, limit) => {
      assert.deepEqual(outcome(() => gunzipWhole(body, limit)), outcome(() => gunzipSync(body)));
    }), { numRuns: 1500 });
  });

  test('a gzipped LIST is inflated into one buffer of its size', () => {
    const json = Buffer.from(JSON.stringify({ items: Array.from({ length: 2000 }, (_, i) => ({ metadata: { name: `pod-${i}` } })) }));
    const out = gunzipWhole(gzipSync(json, { level: 1 }));
    assert.deepEqual(out, json);
    // One output, not 16 KiB pieces joined: the buffer under it is the size and a byte.
    assert.equal(out.buffer.byteLength, json.length + 1);
  });
});
