// The webhook keeps its own copy of a few EphemeralJob constants (to keep classic zod out of
// the Worker bundle); they must never drift from the shared definitions.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as shared from '../../functions/api/ephemeraljob.ts';
import * as names from '../../functions/webhook/ejob-names.ts';

test('webhook constants equal the shared EphemeralJob definitions', () => {
  assert.equal(names.EJOB_GROUP, shared.EJOB.group);
  assert.equal(names.EJOB_KIND, shared.EJOB.kind);
  assert.equal(names.MAX_PARALLELISM, shared.MAX_PARALLELISM);
  assert.equal(names.EJOB_ID_ENV, shared.EJOB_ID_ENV);
});
