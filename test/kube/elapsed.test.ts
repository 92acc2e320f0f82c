// The functions' "how long since" clock: monotonic, but counting time the wall clock saw pass
// and the monotonic clock may not have (a Lambda frozen between invocations), never going back.
// One test: the clock is the process's, and a step taken in one test would shift the next.
import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import { elapsedMs } from '../../functions/kube/elapsed.ts';
import { ServerClock } from '../../functions/kube/server-clock.ts';

test("a freeze the wall clock saw is counted, by the clock and by the server's time advanced from its last Date header; a wall clock stepped back does not take it back", () => {
  mock.timers.enable({ apis: ['Date'], now: Date.now() });
  try {
    const server = new ServerClock();
    const header = new Date('2026-01-01T00:00:00Z');
    server.seen(header);
    const before = elapsedMs();
    mock.timers.setTime(Date.now() + 120_000);
    const thawed = elapsedMs();
    assert.ok(thawed - before >= 120_000, `${thawed - before} ms`);
    assert.ok((server.now()?.getTime() ?? 0) - header.getTime() >= 120_000, 'a claim is not judged by a server time two minutes old');
    mock.timers.setTime(Date.now() - 3_600_000);
    assert.ok(elapsedMs() >= thawed);
  } finally {
    mock.timers.reset();
  }
});
