// A planner whose clock is off from the API server's says so (review95 F2): at no extra
// request (the server's time comes from the answers' Date headers), at most once in a while.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ClockWatch, CLOCK_WARN_EVERY_MS } from '../../functions/engine/clock-watch.ts';
import { handle } from '../../functions/engine/engine.ts';
import { silentLogger, type Logger } from '../../functions/engine/logger.ts';
import { envelopeFor, inWorld, probeJobObjects } from '../support/ejob-world.ts';

const SERVER = new Date('2026-01-01T00:21:00Z');
const at = (ms: number): Date => new Date(SERVER.getTime() + ms);

test('within the skew, either side, nothing; further off, one warning naming the offset, then none until CLOCK_WARN_EVERY_MS has passed', () => {
  let mono = 0;
  const watch = new ClockWatch(() => mono);
  assert.equal(watch.check(at(5000), SERVER, 5), undefined);
  assert.equal(watch.check(at(-5000), SERVER, 5), undefined);
  assert.equal(watch.check(at(60_000), undefined, 5), undefined, 'the server said no time: nothing to compare');
  assert.match(watch.check(at(5001), SERVER, 5) ?? '', /is 5 s ahead of the API server's \(2026-01-01T00:21:00\.000Z, from its Date header\), more than EPHEMERA_LEASE_SKEW_SECONDS \(5\)/);
  mono += CLOCK_WARN_EVERY_MS - 1;
  assert.equal(watch.check(at(-3 * 3600_000), SERVER, 5), undefined, 'not again so soon');
  mono += 1;
  assert.match(watch.check(at(-3 * 3600_000), SERVER, 5) ?? '', /is 10800 s behind the API server's/);
});

test("an engine whose clock is 2 minutes ahead of the API server's logs it once over two reconciles, through real HTTP", async () => {
  const warned: string[] = [];
  const logger: Logger = { ...silentLogger, warn: (obj) => void warned.push(String((obj as { warning?: unknown }).warning)), child: () => logger };
  await inWorld({ objects: probeJobObjects({ pods: 1, parallelism: 1 }), now: () => at(120_000), serverClock: () => SERVER }, async (w) => {
    const deps = { ...w.deps(), logger, clockWatch: new ClockWatch() };
    await handle(envelopeFor('EphemeralJob', 'default', 'probe'), deps);
    await handle(envelopeFor('EphemeralJob', 'default', 'probe'), deps);
  });
  assert.equal(warned.length, 1, warned.join('\n'));
  assert.match(warned[0] ?? '', /^this host's clock \(2026-01-01T00:23:00\.000Z\) is 120 s ahead of the API server's/);
});
