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

test("the server's clock stepped back by more than a Date header's second is followed, as a fresh instance reads it (review95 F1)", () => {
  let local = 0;
  const warm = new ServerClock(() => local);
  warm.seen(new Date(T0 + 60_000));
  assert.equal(warm.now()?.getTime(), T0 + 60_000);
  local += 1000;
  warm.seen(new Date(T0 + 1000)); // stepped back 60 s
  const fresh = new ServerClock(() => local);
  fresh.seen(new Date(T0 + 1000));
  assert.equal(warm.now()?.getTime(), T0 + 1000, 'not the pre-step time (T0 + 61 s) held for a minute');
  assert.equal(warm.now()?.getTime(), fresh.now()?.getTime(), 'the warm and the fresh instance agree');
  // Back by less than the resolution is still the same second read again: not followed.
  local += 900;
  assert.equal(warm.now()?.getTime(), T0 + 1900);
  warm.seen(new Date(T0 + 1000));
  assert.equal(warm.now()?.getTime(), T0 + 1900, 'not T0 + 1000');
  // Back by more than that: followed.
  warm.seen(new Date(T0 + 1900 - 1001));
  assert.equal(warm.now()?.getTime(), T0 + 899);
});
