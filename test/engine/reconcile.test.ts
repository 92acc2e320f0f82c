// The engine's outcomes that only a misbehaving world produces, through real HTTP.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { handle } from '../../functions/engine/engine.ts';
import { envelopeFor, fixture, injected, world } from '../support/ejob-world.ts';

const JOB = 'hello-world-ephemeral-job';

test('a fenced write that keeps conflicting: re-planned maxReplans times, then "conflict" with a quick requeue, nothing done twice', async () => {
  const { server, deps } = await world(fixture('test/fixtures/stories/story1-state.yaml'));
  try {
    const fault = server.faults.add({ method: 'PATCH', pathIncludes: `/ephemeraljobs/${JOB}/status`, status: 409, times: Infinity });
    const r = await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), { ...deps(), maxReplans: 2 });
    assert.equal(r.keys[0]?.outcome, 'conflict');
    assert.equal(r.requeueAfterSeconds, 1);
    assert.equal(fault.hits, 3, 'the first try and two re-plans');
    assert.deepEqual(Object.values(injected(server)).flat(), ['helloworld-ec'], 'injected once across the re-plans');
  } finally {
    await server.close();
  }
});
