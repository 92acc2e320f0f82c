// An answer's bytes gathered as the socket delivers them (functions/kube/answer-bytes.ts):
// whatever the chunks and whatever the Content-Length says, done() is every byte, in order.
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { answerBytes } from '../../functions/kube/answer-bytes.ts';

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
