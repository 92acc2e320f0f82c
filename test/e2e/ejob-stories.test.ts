import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { handle } from '../../functions/engine/engine.ts';
import { CRDS, envelopeFor, inWorld, finish, fixture, inFlight, injected, jobStatus } from '../support/ejob-world.ts';

const JOB = 'hello-world-ephemeral-job';
const exitCodeOf = (pod: string): number => (pod.includes('no-work') ? 1 : 0); // `pidof helloworld` fails where it does not run

for (const { label, crd } of CRDS) describe(`EphemeralJob end to end (engine → client-node → API server over HTTP, ${label})`, () => {
  test('Story 1: 4 matched pods, parallelism 1 → MATCH 4, SUCCEED 2, FAILED 2, phase Failed, completionTime', async () => {
    await inWorld({ objects: fixture('test/fixtures/stories/story1-state.yaml'), crd }, async ({ server, deps }) => {
      await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), deps());
      for (let step = 0; step < 10 && !jobStatus(server, JOB).completionTime; step++) {
        const flying = inFlight(server);
        assert.ok(flying.length <= 1, `step ${step}: ${flying.length} pods in flight`);
        for (const pod of flying) {
          finish(server, pod, exitCodeOf(pod));
          await handle(envelopeFor('Pod', 'default', pod), deps());
        }
      }
      const s = jobStatus(server, JOB);
      assert.deepEqual({ phase: s.phase, match: s.match, succeeded: s.succeeded, failed: s.failed, running: s.running, waiting: s.waiting },
        { phase: 'Failed', match: 4, succeeded: 2, failed: 2, running: 0, waiting: 0 });
      assert.ok(s.completionTime);
      assert.deepEqual(Object.values(injected(server)), [['helloworld-ec'], ['helloworld-ec'], ['helloworld-ec'], ['helloworld-ec']]);
      const conditions = s.conditions as { type: string; status: string; message?: string }[];
      assert.match(conditions.find((c) => c.type === 'JobFailed')?.message ?? '', /2 of 4 pods failed/);
    });
  });

  test('a pod without the target container fails at once and the job goes on: no stall at parallelism 1, no refused injection', async () => {
    const objects = fixture('test/fixtures/stories/story1-state.yaml');
    // The oldest pod runs its app under another name: `targetContainerName: helloworld` cannot go in.
    const oldest = objects.find((o) => (o.metadata as { name: string }).name === 'helloworld-865cd8865b-nl8lq') as { spec: { containers: { name: string }[] } };
    oldest.spec.containers = oldest.spec.containers.map((c) => ({ ...c, name: 'hello' }));
    await inWorld({ objects, crd }, async ({ server, deps }) => {
      await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), deps());
      for (let step = 0; step < 10 && !jobStatus(server, JOB).completionTime; step++) {
        for (const pod of inFlight(server)) {
          finish(server, pod, 0);
          await handle(envelopeFor('Pod', 'default', pod), deps());
        }
      }
      const s = jobStatus(server, JOB);
      assert.deepEqual({ phase: s.phase, match: s.match, succeeded: s.succeeded, failed: s.failed }, { phase: 'Failed', match: 4, succeeded: 3, failed: 1 });
      const conditions = s.conditions as { type: string; message?: string }[];
      assert.match(conditions.find((c) => c.type === 'JobFailed')?.message ?? '', /1 of 4 pods failed; 1 could not take the containers \(helloworld-865cd8865b-nl8lq: the pod has no container helloworld/);
      assert.deepEqual(injected(server)['helloworld-865cd8865b-nl8lq'], []);
      assert.ok(!server.requests.entries.some((r) => r.path.endsWith('/pods/helloworld-865cd8865b-nl8lq/ephemeralcontainers')), 'never sent: it would be refused');
    });
  });

  test('Story 2: a running sleep container → phase Running, RUNNING 1', async () => {
    await inWorld({ objects: fixture('test/fixtures/stories/story2-state.yaml'), crd }, async ({ server, deps }) => {
      await handle(envelopeFor('EphemeralJob', 'default', 'nginx-ephemeral-job'), deps());
      const s = jobStatus(server, 'nginx-ephemeral-job');
      assert.equal(s.phase, 'Running');
      assert.equal(s.running, 1);
      assert.equal(s.match, 1);
    });
  });

  test('two engine instances on the same job at once never inject twice nor exceed parallelism', async () => {
    const objects = fixture('test/fixtures/stories/story1-state.yaml');
    const job = objects.find((o) => o.kind === 'EphemeralJob') as { spec: { parallelism: number } };
    job.spec.parallelism = 2;
    await inWorld({ objects, crd }, async ({ server, deps }) => {
      let changed: string[] = [];
      for (let round = 0; round < 6; round++) {
        // As the relay would: the job, and every pod the kubelet changed since last round.
        const events = [envelopeFor('EphemeralJob', 'default', JOB, round === 0 ? 'ADDED' : 'MODIFIED'), ...changed.map((p) => envelopeFor('Pod', 'default', p))];
        // Both instances get every event at the same moment (duplicate delivery).
        await Promise.all(events.flatMap((e) => [handle(e, deps(`a-${round}`)), handle(e, deps(`b-${round}`))]));
        for (const [pod, names] of Object.entries(injected(server))) assert.ok(names.length <= 1, `${pod} injected ${names.length} times`);
        assert.ok(inFlight(server).length <= 2, `round ${round}: ${inFlight(server).length} in flight`);
        changed = inFlight(server);
        for (const pod of changed) finish(server, pod, 0);
      }
      await handle(envelopeFor('EphemeralJob', 'default', JOB, 'RESYNC'), deps('final'));
      assert.equal(jobStatus(server, JOB).succeeded, 4);
      assert.equal(jobStatus(server, JOB).phase, 'Succeeded');
    });
  });

  test('a crash between injection and status write converges on the next run, without a second injection', async () => {
    await inWorld({ objects: fixture('test/fixtures/stories/story1-state.yaml'), crd }, async ({ server, deps }) => {
      const fault = server.faults.add({ method: 'PATCH', pathIncludes: '/ephemeraljobs/hello-world-ephemeral-job/status', status: 503, times: Number.POSITIVE_INFINITY });
      await assert.rejects(handle(envelopeFor('EphemeralJob', 'default', JOB), deps()), /503|unavailable/i);
      fault.remove();
      assert.deepEqual(injected(server)['helloworld-865cd8865b-nl8lq'], ['helloworld-ec'], 'the injection happened');
      assert.equal(jobStatus(server, JOB).phase, undefined, 'the status write did not');
      await handle(envelopeFor('EphemeralJob', 'default', JOB), deps('after-crash'));
      assert.deepEqual(injected(server)['helloworld-865cd8865b-nl8lq'], ['helloworld-ec']);
      assert.deepEqual(inFlight(server), ['helloworld-865cd8865b-nl8lq'], 'parallelism 1 still holds');
      assert.equal(jobStatus(server, JOB).waiting, 1);
    });
  });

  test('a pod event that changes nothing writes nothing: no status, no Lease', async () => {
    await inWorld({ objects: fixture('test/fixtures/stories/story1-state.yaml'), crd }, async ({ server, deps }) => {
      await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), deps());
      server.requests.clear();
      // The last pod waits its turn (parallelism 1, the first pod is in flight).
      const r = await handle(envelopeFor('Pod', 'default', 'helloworld-no-work-6cc445bc7-t286v'), deps());
      assert.deepEqual(r.keys.map((k) => k.outcome), ['done']);
      assert.deepEqual(server.requests.filter((x) => x.method !== 'GET').map((x) => `${x.method} ${x.path}`), []);
    });
  });

  test('a job update that changes nothing (our own status write) writes nothing, and reads no Lease while the one slot is held', async () => {
    await inWorld({ objects: fixture('test/fixtures/stories/story1-state.yaml'), crd }, async ({ server, deps }) => {
      await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), deps());
      server.requests.clear();
      const r = await handle(envelopeFor('EphemeralJob', 'default', JOB, 'MODIFIED'), deps());
      assert.deepEqual(r.keys.map((k) => k.outcome), ['done']);
      assert.deepEqual(server.requests.entries.map((x) => `${x.verb} ${x.path.replace(/ejob-.*$/, 'ejob-…')}`), [
        `get /apis/apps.kruise.io/v1alpha1/namespaces/default/ephemeraljobs/${JOB}`,
        'list /api/v1/namespaces/default/pods',
      ]);
      assert.match(r.keys[0]?.notes?.join('\n') ?? '', /Lease not read: no claim, seal or repair is possible \(1 of 1 slots held/);
    });
  });

  test('once the slot frees, the Lease is read after the pods, whose LIST stands (README step 3, "Reading the pods once"), then the next pod is claimed', async () => {
    await inWorld({ objects: fixture('test/fixtures/stories/story1-state.yaml'), crd }, async ({ server, deps }) => {
      await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), deps());
      const [first] = inFlight(server);
      assert.ok(first);
      finish(server, first, 0);
      server.requests.clear();
      await handle(envelopeFor('EphemeralJob', 'default', JOB, 'MODIFIED'), deps());
      assert.deepEqual(server.requests.entries.filter((x) => x.verb === 'get' || x.verb === 'list').map((x) => `${x.verb} ${x.path.replace(/ejob-.*$/, 'ejob-…')}`), [
        `get /apis/apps.kruise.io/v1alpha1/namespaces/default/ephemeraljobs/${JOB}`,
        'list /api/v1/namespaces/default/pods',
        'get /apis/coordination.k8s.io/v1/namespaces/ephemera-system/leases/ejob-…',
      ]);
      assert.equal(inFlight(server).length, 1, 'the next pod claimed and injected');
    });
  });

  test('the event for a job already gone, that left no Lease, costs two GETs: the job and its Lease', async () => {
    await inWorld({ objects: fixture('test/fixtures/stories/story1-state.yaml'), crd }, async ({ server, deps }) => {
      server.requests.clear();
      const r = await handle(envelopeFor('EphemeralJob', 'default', 'deleted-job', 'DELETED'), deps());
      assert.deepEqual(r.keys.map((k) => k.outcome), ['gone']);
      assert.deepEqual(server.requests.entries.map((x) => `${x.verb} ${x.path.replace(/ejob-.*$/, 'ejob-…')}`), [
        'get /apis/apps.kruise.io/v1alpha1/namespaces/default/ephemeraljobs/deleted-job',
        'get /apis/coordination.k8s.io/v1/namespaces/ephemera-system/leases/ejob-…',
      ]);
    });
  });

  test('a spec change (parallelism 1 → 2) claims the freed slot in one Lease write and injects it', async () => {
    await inWorld({ objects: fixture('test/fixtures/stories/story1-state.yaml'), crd }, async ({ server, deps }) => {
      await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), deps());
      const job = server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'default', name: JOB }) as unknown as { metadata: { generation: number }; spec: { parallelism: number } };
      server.store.put({ ...job, metadata: { ...job.metadata, generation: job.metadata.generation + 1 }, spec: { ...job.spec, parallelism: 2 } } as never);
      server.requests.clear();
      await handle(envelopeFor('EphemeralJob', 'default', JOB, 'MODIFIED'), deps());
      assert.equal(server.requests.filter((x) => x.method === 'PUT' && x.path.includes('/leases/')).length, 1, 'one claim write');
      assert.equal(inFlight(server).length, 2, 'parallelism 2 applied');
    });
  });

  test('losing the claim race (409 on the Lease write) re-plans from fresh state: nothing injected twice, no "busy" requeue', async () => {
    await inWorld({ objects: fixture('test/fixtures/stories/story1-state.yaml'), crd }, async ({ server, deps }) => {
      await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), deps('a'));
      finish(server, inFlight(server)[0] ?? '', 0);
      const fault = server.faults.add({ method: 'PUT', pathIncludes: '/leases/', status: 409, times: 1 });
      const r = await handle(envelopeFor('EphemeralJob', 'default', JOB), deps('b'));
      assert.equal(fault.hits, 1);
      assert.equal(r.keys[0]?.outcome, 'done');
      assert.equal(inFlight(server).length, 1, 'the re-plan claimed and injected the next pod once');
      for (const [pod, names] of Object.entries(injected(server))) assert.ok(names.length <= 1, pod);
    });
  });
});
