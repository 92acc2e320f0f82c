// The Worker's warm-up at start: its job must stay valid, or the warm-up stops taking the
// paths a real review takes (a denial returns before most of the validators run).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { warmUp } from '../../functions/webhook/warm-up.ts';

test('the warm-up reviews a CREATE and an UPDATE that are both allowed', () => {
  assert.deepEqual(warmUp(), [true, true]);
});
