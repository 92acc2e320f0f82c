// One key is never reconciled twice at once in one process (engine.ts reconcileCoalesced):
// envelopes routed to a key while it runs join the one reconcile queued after it, as
// client-go's workqueue marks a key dirty while it is processed. Counted at the API server.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { handle } from '../../functions/engine/engine.ts';
import { envelopeFor, finish, inWorld, jobStatus, probeJobObjects } from '../support/ejob-world.ts';

const NS = 'default';
const PODS = 10;

const objects = (): unknown[] => probeJobObjects({ pods: PODS, parallelism: PODS });

/** Envelopes of every pod, naming the job as the relay does. */
const podEvents = (): ReturnType<typeof envelopeFor>[] => Array.from({ length: PODS }, (_, i) => {
  const e = envelopeFor('Pod', NS, `web-${i}`);
  return { ...e, data: { ...e.data, jobs: ['probe'] } };
});

describe('one key at a time per process', () => {
  test('ten envelopes of one job at once, through one client: two reconciles, not ten, and every envelope gets the result', async () => {
    await inWorld({ objects: objects() }, async ({ server, deps }) => {
      await handle(envelopeFor('EphemeralJob', NS, 'probe', 'ADDED'), deps());
      for (let i = 0; i < PODS; i++) finish(server, `web-${i}`, 0);
      const d = deps('b');
      server.requests.clear();
      const results = await Promise.all(podEvents().map((e) => handle(e, d)));
      const jobGets = server.requests.entries.filter((r) => r.verb === 'get' && r.path.endsWith('/ephemeraljobs/probe'));
      assert.equal(jobGets.length, 2, 'the one running and the one queued behind it');
      assert.ok(results.every((r) => r.keys.length === 1 && r.keys[0]?.outcome === 'done'), JSON.stringify(results.map((r) => r.keys)));
      assert.equal(server.requests.entries.filter((r) => r.status === 409).length, 0, 'no write lost to itself');
      assert.equal(jobStatus(server, 'probe').phase, 'Succeeded');
    });
  });

  test('a change made while the key runs is seen by the reconcile queued behind it', async () => {
    await inWorld({ objects: objects() }, async ({ server, deps }) => {
      await handle(envelopeFor('EphemeralJob', NS, 'probe', 'ADDED'), deps());
      const d = deps('b');
      // Half the pods end; the look that sees them is slow to write the status, and meanwhile
      // the rest end and their events arrive: joined to that look, they would be missed.
      for (let i = 0; i < PODS / 2; i++) finish(server, `web-${i}`, 0);
      server.faults.add({ method: 'PATCH', pathIncludes: '/ephemeraljobs/probe/status', delayMs: 300, times: 1 });
      server.requests.clear();
      const first = handle(podEvents()[0]!, d);
      while (!server.requests.entries.some((r) => r.method === 'PATCH' && r.path.endsWith('/status'))) await new Promise((r) => setTimeout(r, 5));
      for (let i = PODS / 2; i < PODS; i++) finish(server, `web-${i}`, 0);
      const later = Promise.all(podEvents().slice(PODS / 2).map((e) => handle(e, d)));
      await Promise.all([first, later]);
      assert.equal(jobStatus(server, 'probe').phase, 'Succeeded', 'the queued reconcile observed the pods as they ended');
      assert.equal(jobStatus(server, 'probe').succeeded, PODS);
    });
  });

  test('another client (another instance, another cluster) is another key: not joined', async () => {
    await inWorld({ objects: objects() }, async ({ server, deps }) => {
      await handle(envelopeFor('EphemeralJob', NS, 'probe', 'ADDED'), deps());
      server.requests.clear();
      await Promise.all(podEvents().slice(0, 3).map((e, i) => handle(e, deps(`instance-${i}`))));
      const jobGets = server.requests.entries.filter((r) => r.verb === 'get' && r.path.endsWith('/ephemeraljobs/probe'));
      assert.ok(jobGets.length >= 3, `each instance reconciles (${jobGets.length} job GETs)`);
    });
  });
});

test('a reconcile that hangs holds the key\'s later events only so long: the queued one starts after coalesceWaitMs', async () => {
  await inWorld({ objects: objects() }, async ({ server, deps }) => {
    await handle(envelopeFor('EphemeralJob', NS, 'probe', 'ADDED'), deps());
    const d = { ...deps('b'), coalesceWaitMs: 200 };
    // The first look's read of the job does not come back for 3 s.
    server.faults.add({ method: 'GET', pathIncludes: '/ephemeraljobs/probe', delayMs: 3000, times: 1 });
    let hungDone = false;
    const hung = handle(podEvents()[0]!, d).finally(() => (hungDone = true));
    while (!server.requests.entries.some((e) => e.path.endsWith('/ephemeraljobs/probe') && e.status === 0)) await new Promise((r) => setTimeout(r, 5));
    const r = await handle(podEvents()[1]!, d);
    assert.equal(r.keys[0]?.outcome, 'done');
    assert.equal(hungDone, false, 'the queued reconcile finished while the hung one still waited');
    await hung;
  });
});
