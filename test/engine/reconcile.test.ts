// The engine's outcomes that only a misbehaving world produces, through real HTTP.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { conflictBackoff, handle } from '../../functions/engine/engine.ts';
import { silentLogger } from '../../functions/engine/logger.ts';
import { KubeError } from '../../functions/kube/errors.ts';
import { ScriptedKube } from '../support/scripted-kube.ts';
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

test('after a 409 the loser waits before observing again: the winner\'s status write lands first and the loser plans none of its own', async () => {
  // Two instances handle the same event at once (duplicate delivery). Both plan the same
  // claim from the same read; one gets 409. The winner's injection is held 150 ms at the
  // server, so a loser that looked again at once would find the claim but no injection yet,
  // and write a status the winner's (planned from the older job) then conflicts with.
  const attempts = async (conflictBackoffMs: number): Promise<{ status: number; conflicts: number; injected: string[] }> => {
    const objects = fixture('test/fixtures/stories/story1-state.yaml').filter((o) => (o.kind as string) !== 'Event');
    const { server, deps } = await world(objects);
    try {
      server.faults.add({ method: 'PATCH', pathIncludes: '/ephemeralcontainers', delayMs: 150, times: Infinity });
      server.requests.clear();
      const event = envelopeFor('EphemeralJob', 'default', JOB, 'ADDED');
      const results = await Promise.all(['a', 'b'].map((h) => handle(event, { ...deps(h), conflictBackoffMs })));
      assert.ok(results.every((r) => r.keys[0]?.outcome === 'done'), JSON.stringify(results.map((r) => r.keys[0]?.outcome)));
      const entries = server.requests.entries;
      return {
        status: entries.filter((r) => r.method !== 'GET' && r.path.endsWith(`/ephemeraljobs/${JOB}/status`)).length,
        conflicts: entries.filter((r) => r.status === 409).length,
        injected: Object.values(injected(server)).flat(),
      };
    } finally {
      await server.close();
    }
  };
  const waited = await attempts(500);
  assert.deepEqual(waited, { status: 1, conflicts: 1, injected: ['helloworld-ec'] }, 'one status write; the only 409 is the claim race');
  const hasty = await attempts(0);
  assert.ok(hasty.status >= 2 && hasty.conflicts >= 2, `without the wait the loser writes a status too and one of them conflicts: ${JSON.stringify(hasty)}`);
  assert.deepEqual(hasty.injected, ['helloworld-ec']);
});

test('the wait before re-plan n is base × 2^n, drawn up to twice that', () => {
  assert.equal(conflictBackoff(10, 0, () => 0), 10);
  assert.ok(Math.abs(conflictBackoff(10, 0, () => 0.999) - 19.99) < 1e-9);
  assert.equal(conflictBackoff(10, 2, () => 0.5), 60);
  assert.equal(conflictBackoff(0, 3, () => 0.5), 0);
});

test('one key failing does not stop the envelope\'s other keys: a retryable failure is thrown after them, one refused for good is reported', async () => {
  const handled: string[] = [];
  const failing = (error: Error) => ({
    name: 'pair',
    route: async () => ({ keys: ['Pod/ns/bad', 'Pod/ns/good'] }),
    observe: async (key: string) => {
      if (key.endsWith('bad')) throw error;
      handled.push(key);
      return key;
    },
    plan: () => ({ actions: [] }),
  });
  const deps = (error: Error) => ({ kube: new ScriptedKube(), controllers: [failing(error)], lock: { namespace: 'x', holder: 'h', leaseSeconds: 15, skewSeconds: 5 }, clock: () => new Date(), logger: silentLogger });
  const transient = new KubeError({ status: 503, message: 'etcd leader changed' });
  await assert.rejects(handle(envelopeFor('Pod', 'ns', 'p'), deps(transient)), /etcd leader changed/);
  assert.deepEqual(handled, ['Pod/ns/good']);
  handled.length = 0;
  const r = await handle(envelopeFor('Pod', 'ns', 'p'), deps(new KubeError({ status: 403, reason: 'Forbidden', message: 'forbidden' })));
  assert.deepEqual(handled, ['Pod/ns/good']);
  assert.deepEqual(r.failed.map((f) => [f.key, f.error.status]), [['Pod/ns/bad', 403]]);
  assert.deepEqual(r.keys.map((k) => k.key), ['Pod/ns/good']);
});

test('a key whose plan warned keeps its warnings whether its writes are done or refused (review92 G7)', async () => {
  const write = { verb: 'patch' as const, apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'p', patchType: 'merge' as const, body: {}, reason: 'test' };
  const warning = {
    name: 'warner',
    route: async () => ({ keys: ['Pod/ns/p'] }),
    observe: async (key: string) => key,
    plan: () => ({ actions: [write], warnings: ['pod ns/q cannot be read: skipped'], notes: ['a note'] }),
  };
  const run = async (kube: ScriptedKube) => (await handle(envelopeFor('Pod', 'ns', 'p'), { kube, controllers: [warning], lock: { namespace: 'x', holder: 'h', leaseSeconds: 15, skewSeconds: 5 }, clock: () => new Date(), logger: silentLogger })).keys[0];
  const done = await run(new ScriptedKube());
  assert.equal(done?.outcome, 'done');
  assert.deepEqual(done?.warnings, ['pod ns/q cannot be read: skipped']);
  const refused = await run(new ScriptedKube().answer(new KubeError({ status: 403, reason: 'Forbidden', message: 'forbidden' })));
  assert.equal(refused?.outcome, 'refused');
  assert.deepEqual(refused?.warnings, ['pod ns/q cannot be read: skipped'], 'not only among the notes');
});
