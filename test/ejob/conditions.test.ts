// How a status write carries the job's conditions (status.ts mergeConditions): DESIGN says a
// condition's lastTransitionTime moves only when its status changes; lastProbeTime moves when
// anything about it changes; conditions ephemera does not manage are kept as they are.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergeConditions } from '../../functions/ejob/status.ts';

const T0 = new Date('2026-01-01T00:30:00Z');
const T1 = new Date('2026-01-01T01:00:00Z');
const prev = [
  { type: 'MatchedEmpty', status: 'True' as const, reason: 'NoMatch', message: 'replicas is 0', lastProbeTime: '2026-01-01T00:30:00Z', lastTransitionTime: '2026-01-01T00:30:00Z' },
  { type: 'Custom', status: 'True' as const, reason: 'SetByAnOperator', message: 'kept', lastProbeTime: '2025-12-31T00:00:00Z', lastTransitionTime: '2025-12-31T00:00:00Z' },
];

test('a message that changes without the status: lastProbeTime moves, lastTransitionTime stays', () => {
  const [c] = mergeConditions(prev, [{ type: 'MatchedEmpty', status: 'True', reason: 'NoMatch', message: 'no active pod matches the selector' }], T1);
  assert.equal(c?.message, 'no active pod matches the selector');
  assert.equal(c?.lastProbeTime, '2026-01-01T01:00:00Z');
  assert.equal(c?.lastTransitionTime, '2026-01-01T00:30:00Z');
});

test('a status that flips: both move; nothing changed: neither does', () => {
  const [flipped] = mergeConditions(prev, [{ type: 'MatchedEmpty', status: 'False', reason: 'Matched' }], T1);
  assert.equal(flipped?.lastTransitionTime, '2026-01-01T01:00:00Z');
  const [same] = mergeConditions(prev, [{ type: 'MatchedEmpty', status: 'True', reason: 'NoMatch', message: 'replicas is 0' }], T1);
  assert.deepEqual(same, prev[0]);
  assert.ok(T0 < T1);
});

test('a condition ephemera does not manage is kept as it was', () => {
  const out = mergeConditions(prev, [{ type: 'MatchedEmpty', status: 'False', reason: 'Matched' }], T1);
  assert.deepEqual(out.find((c) => c.type === 'Custom'), prev[1]);
});
