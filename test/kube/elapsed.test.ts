// The clock a handling's own windows are measured on: monotonic, plus what the wall clock saw
// pass and the monotonic clock may not have (a Lambda frozen between invocations); it never
// stands still or goes back. The server's time estimate does not follow the wall clock.
// One test: the clock is the process's, and a step taken in one test would shift the next.
import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import { elapsedMs } from '../../functions/kube/elapsed.ts';
import { ServerClock } from '../../functions/kube/server-clock.ts';

const busy = (ms: number): void => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

test("a freeze the wall clock saw is counted; a wall clock stepped back neither takes the clock back nor stops it; the server's time does not follow the wall clock (review)", () => {
  mock.timers.enable({ apis: ['Date'], now: Date.now() });
  try {
    const server = new ServerClock();
    const header = new Date('2026-01-01T00:00:00Z');
    server.seen(header);
    const before = elapsedMs();
    mock.timers.setTime(Date.now() + 120_000);
    const thawed = elapsedMs();
    assert.ok(thawed - before >= 119_999, `a freeze of 2 minutes counted: ${thawed - before} ms`);
    mock.timers.setTime(Date.now() - 3_600_000);
    const stepped = elapsedMs();
    assert.ok(stepped >= thawed, 'not back');
    busy(30);
    assert.ok(elapsedMs() - stepped >= 25, 'and it still runs with the monotonic clock');
    assert.ok((server.now()?.getTime() ?? 0) - header.getTime() < 60_000, 'the estimate of the server\'s time stays with the monotonic clock');
  } finally {
    mock.timers.reset();
  }
});
