import assert from 'node:assert/strict';
import { test } from 'node:test';
import { objectKey, parseObjectKey } from '../../functions/api/envelope.ts';

test('object keys round-trip, and anything else is not a key of that kind', () => {
  assert.equal(objectKey('Pod', 'batch', 'job-1'), 'Pod/batch/job-1');
  assert.deepEqual(parseObjectKey('Pod', 'Pod/batch/job-1'), { namespace: 'batch', name: 'job-1' });
  for (const key of ['EphemeralJob/batch/job-1', 'Pod/batch', 'Pod//job-1', 'Pod/batch/job-1/extra', 'Pods/batch/job-1', '']) {
    assert.equal(parseObjectKey('Pod', key), null, key);
  }
});
