// handle() under an invocation's deadline (engine.ts HandleOptions): the keys there is no
// time for are not started but handed back as an envelope routing to them, through the real
// EphemeralJob router, so a pod event naming many jobs is never cut short for good.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { handle, restOf } from '../../functions/engine/engine.ts';
import { envelopeFor, inWorld, probeJobObjects } from '../support/ejob-world.ts';

const JOBS = ['probe-a', 'probe-b', 'probe-c'];

/** One pod and three jobs selecting it. */
function objects(): unknown[] {
  type Job = { metadata: Record<string, unknown>; spec: { template: { ephemeralContainers: Record<string, unknown>[] } } };
  const [pod, job] = probeJobObjects({ pods: 1, parallelism: 1 }) as [unknown, Job];
  // Each its own container name: namesakes of another job's would be refused.
  const container = job.spec.template.ephemeralContainers[0];
  return [pod, ...JOBS.map((name) => ({ ...job, metadata: { ...job.metadata, name, uid: `uid-${name}` }, spec: { ...job.spec, template: { ephemeralContainers: [{ ...container, name }] } } }))];
}

describe('a deadline on handle', () => {
  for (const stamped of [true, false]) {
    test(`past the deadline the first key still runs and the others come back as one envelope naming their jobs (${stamped ? 'jobs named by the relay' : 'jobs listed by the router'})`, async () => {
      await inWorld({ objects: objects() }, async ({ server, deps }) => {
        const e = envelopeFor('Pod', 'default', 'web-0');
        const event = stamped ? { ...e, data: { ...e.data, jobs: JOBS } } : e;
        const first = await handle(event, deps(), { deadline: Date.now() - 1 });
        assert.deepEqual(first.keys.map((k) => k.key), ['EphemeralJob/default/probe-a'], 'one key, so every pass makes progress');
        assert.deepEqual(first.rest?.data.jobs, ['probe-b', 'probe-c']);
        assert.equal(first.rest?.data.name, 'web-0');
        server.requests.clear();
        const second = await handle(first.rest!, deps());
        assert.deepEqual(second.keys.map((k) => k.key), ['EphemeralJob/default/probe-b', 'EphemeralJob/default/probe-c']);
        assert.equal(second.rest, undefined);
        assert.equal(server.requests.entries.filter((r) => r.path.includes('/ephemeraljobs/probe-a')).length, 0, 'the job done is not looked at again');
        const injected = (server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web-0' }) as unknown as { spec: { ephemeralContainers?: unknown[] } }).spec.ephemeralContainers ?? [];
        assert.equal(injected.length, 3, 'each job injected the pod once');
      });
    });
  }

  test('with time for every key, nothing is left', async () => {
    await inWorld({ objects: objects() }, async ({ deps }) => {
      const r = await handle(envelopeFor('Pod', 'default', 'web-0'), deps(), { deadline: Date.now() + 60_000 });
      assert.equal(r.keys.length, 3);
      assert.equal(r.rest, undefined);
    });
  });

  test('restOf keeps a pod envelope as it was but for the jobs left, and any other envelope whole', () => {
    const pod = { ...envelopeFor('Pod', 'ns', 'web-0'), cluster: 'east' };
    const rest = restOf({ ...pod, data: { ...pod.data, jobs: ['a', 'b'], reported: ['x'] } }, ['EphemeralJob/ns/b', 'Pod/ns/web-0', 'EphemeralJob/other/c']);
    assert.deepEqual(rest, { ...pod, data: { ...pod.data, jobs: ['b'], reported: ['x'] } });
    const job = envelopeFor('EphemeralJob', 'ns', 'a');
    assert.equal(restOf(job, ['EphemeralJob/ns/a']), job);
  });
});
