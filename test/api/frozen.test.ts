// api/frozen.ts: what deepFreeze froze all the way down, and only that, is deep-frozen.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deepFreeze, isDeepFrozen } from '../../functions/api/frozen.ts';

test('deepFreeze freezes every object and array in a JSON tree, and only its result counts as deep-frozen', () => {
  const shallow = Object.freeze({ status: { phase: 'Running' } });
  assert.equal(isDeepFrozen(shallow), false, 'Object.freeze alone says nothing of what is inside');
  const tree = JSON.parse('{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"app","env":[{"name":"X"}]}]}}') as { spec: { containers: { env: { name: string }[] }[] } };
  assert.equal(deepFreeze(tree), tree);
  assert.ok(isDeepFrozen(tree));
  assert.ok(Object.isFrozen(tree.spec.containers) && Object.isFrozen(tree.spec.containers[0]?.env[0]));
  assert.throws(() => { (tree.spec.containers[0]?.env[0] as { name: string }).name = 'Y'; }, TypeError);
  assert.equal(isDeepFrozen('text'), false);
  assert.equal(isDeepFrozen(null), false);
});
