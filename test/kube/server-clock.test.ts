// The API server's clock from answers' Date headers (functions/kube/server-clock.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerClock } from '../../functions/kube/server-clock.ts';

const T0 = Date.parse('2026-01-01T00:00:00Z');

test('the last Date seen, advanced by local time; what it told is never taken back by a later answer of the same second', () => {
  let local = 1000;
  const clock = new ServerClock(() => local);
  assert.equal(clock.now(), undefined, 'nothing seen yet');
  clock.seen(new Date(T0));
  local += 900;
  assert.equal(clock.now()?.getTime(), T0 + 900);
  // Another answer 900 ms later still says T0 (a header has a second's resolution).
  clock.seen(new Date(T0));
  local += 50;
  assert.equal(clock.now()?.getTime(), T0 + 900, 'not back to T0 + 50: it told T0 + 900 already');
  local += 900;
  assert.equal(clock.now()?.getTime(), T0 + 950, 'then on from the latest header');
  clock.seen(new Date(T0 + 2000));
  assert.equal(clock.now()?.getTime(), T0 + 2000);
  // A Date that does not parse is not seen.
  clock.seen(new Date('not a date'));
  assert.equal(clock.now()?.getTime(), T0 + 2000);
});
