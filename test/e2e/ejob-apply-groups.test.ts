// How a plan's writes reach the API server (engine/apply.ts groups, ejob/planner.ts): after
// the claim, a job's injections go out together; the status write and one Event per
// injection that took effect go out together after them; a verdict's Events only once the
// status that says it was written. Through real HTTP against the embedded API server, under
// both CRDs.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ApiServer } from '../../functions/cluster/index.ts';
import { handle } from '../../functions/engine/engine.ts';
import { CRDS, envelopeFor, finish, injected, jobStatus, worldWith } from '../support/ejob-world.ts';

const JOB = 'probe';
const NS = 'default';

function objects(pods: number, parallelism: number): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i < pods; i++) {
    out.push({
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name: `web-${i}`, namespace: NS, uid: `pod-uid-${i}`, labels: { app: 'web' }, creationTimestamp: `2026-01-01T00:00:0${i}Z` },
      spec: { containers: [{ name: 'app', image: 'nginx' }] },
      status: { phase: 'Running', containerStatuses: [{ name: 'app', ready: true, restartCount: 0, state: { running: { startedAt: '2026-01-01T00:00:10Z' } } }] },
    });
  }
  out.push({
    apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob',
    metadata: { name: JOB, namespace: NS, uid: 'job-uid', generation: 1, creationTimestamp: '2026-01-01T00:20:00Z' },
    spec: { selector: { matchLabels: { app: 'web' } }, parallelism, template: { ephemeralContainers: [{ name: 'probe', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'app', command: ['true'] }] } },
  });
  return out;
}

/** Events as stored: reason → the names of the objects they are about. */
function events(server: ApiServer): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const e of server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: NS }) as unknown as { reason: string; involvedObject: { name: string } }[]) {
    (out[e.reason] ??= []).push(e.involvedObject.name);
  }
  for (const names of Object.values(out)) names.sort();
  return out;
}

const injectedPods = (server: ApiServer): string[] => Object.entries(injected(server)).filter(([, c]) => c.length > 0).map(([p]) => p).sort();

for (const { label, crd } of CRDS) describe(`EphemeralJob writes in groups (${label})`, () => {
  test('the claimed injections are in flight at the API server together; the status write follows them all', async () => {
    const { server, deps } = await worldWith({ objects: objects(4, 3), crd });
    try {
      // Each injection is held 150 ms at the server: sent one after another, at most one would be waiting at a time.
      server.faults.add({ method: 'PATCH', pathIncludes: '/ephemeralcontainers', delayMs: 150, times: Infinity });
      const pending = (): number => server.requests.filter((r) => r.path.endsWith('/ephemeralcontainers') && r.status === 0).length;
      let most = 0;
      const watcher = setInterval(() => { most = Math.max(most, pending()); }, 5);
      server.requests.clear();
      try {
        await handle(envelopeFor('EphemeralJob', NS, JOB, 'ADDED'), deps());
      } finally {
        clearInterval(watcher);
      }
      assert.equal(most, 3, 'all three injections waited at the server at once');
      const writes = server.requests.filter((r) => r.method !== 'GET' && !r.path.includes('/events')).map((r) => r.path.split('/').slice(-2).join('/'));
      assert.equal(writes.filter((w) => w.endsWith('/ephemeralcontainers')).length, 3);
      assert.ok(writes.at(-1)?.endsWith(`${JOB}/status`), `the status write comes last: ${writes.join(', ')}`);
      assert.equal(injectedPods(server).length, 3);
      assert.equal(jobStatus(server, JOB).waiting, 3);
    } finally {
      await server.close();
    }
  });

  test('an injection the API server refuses gets no "injected" Event; the others do', async () => {
    const { server, deps } = await worldWith({ objects: objects(4, 4), crd });
    try {
      for (const pod of ['web-1', 'web-3']) server.faults.add({ method: 'PATCH', pathIncludes: `/pods/${pod}/ephemeralcontainers`, status: 422, message: 'refused for this test' });
      await handle(envelopeFor('EphemeralJob', NS, JOB, 'ADDED'), deps());
      assert.deepEqual(injectedPods(server), ['web-0', 'web-2']);
      const ev = events(server);
      assert.deepEqual(ev.EphemeralContainersInjected, ['web-0', 'web-2'], 'no Event says web-1 or web-3 was injected');
      assert.deepEqual(ev.ActionRefused, [JOB, 'web-1', 'web-3'].sort(), 'each refusal is recorded on its pod instead, and the kind of refusal once on the job (kubectl describe of the job says why it does not go on)');
      const onJob = (server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: NS }) as unknown as { reason: string; message: string; involvedObject: { kind: string } }[]).filter((e) => e.reason === 'ActionRefused' && e.involvedObject.kind === 'EphemeralJob');
      assert.match(onJob[0]?.message ?? '', /^inject \S+ for ephemeral job \S+ \(pod web-[13]\): patch pods\/ephemeralcontainers refused: .*refused for this test/);
    } finally {
      await server.close();
    }
  });

  test('a status write that meets a 409 after the injections still leaves an Event for every injected pod', async () => {
    // Before writes went in groups, the Events followed the status write: its 409 ended the
    // run, and the re-plan saw the pods already injected, so their Events were never sent.
    const { server, deps } = await worldWith({ objects: objects(3, 2), crd });
    try {
      server.faults.add({ method: 'PATCH', pathIncludes: `/ephemeraljobs/${JOB}/status`, status: 409, reason: 'Conflict' });
      await handle(envelopeFor('EphemeralJob', NS, JOB, 'ADDED'), deps());
      assert.deepEqual(injectedPods(server), ['web-0', 'web-1']);
      assert.deepEqual(events(server).EphemeralContainersInjected, ['web-0', 'web-1']);
      assert.equal(jobStatus(server, JOB).waiting, 2, 'the re-plan wrote the status');
    } finally {
      await server.close();
    }
  });

  test('an injection refused beside others, or failing past its retries, still leaves an Event for every pod injected beside it (review)', async () => {
    for (const fault of [{ status: 404 }, { status: 503, times: 5 }]) {
      const { server, deps } = await worldWith({ objects: objects(4, 3), crd });
      try {
        server.faults.add({ method: 'PATCH', pathIncludes: '/pods/web-1/ephemeralcontainers', ...fault });
        await handle(envelopeFor('EphemeralJob', NS, JOB, 'ADDED'), { ...deps(), retry: { retries: 4, minTimeoutMs: 1 } }).catch(() => undefined);
        await handle(envelopeFor('EphemeralJob', NS, JOB, 'MODIFIED'), deps()).catch(() => undefined);
        const pods = injectedPods(server);
        assert.ok(pods.includes('web-0') && pods.includes('web-2'), JSON.stringify(pods));
        assert.deepEqual(events(server).EphemeralContainersInjected, pods, `HTTP ${fault.status}`);
      } finally {
        await server.close();
      }
    }
  });

  test("a verdict's Events are sent only once the status that says it was written", async () => {
    const { server, deps } = await worldWith({ objects: objects(2, 2), crd });
    try {
      await handle(envelopeFor('EphemeralJob', NS, JOB, 'ADDED'), deps());
      for (const p of injectedPods(server)) finish(server, p, 0);
      const refused = server.faults.add({ method: 'PATCH', pathIncludes: `/ephemeraljobs/${JOB}/status`, status: 422, message: 'refused for this test' });
      await handle(envelopeFor('Pod', NS, 'web-1'), deps());
      assert.equal(refused.hits, 1);
      assert.notEqual(jobStatus(server, JOB).phase, 'Succeeded');
      assert.equal(events(server).JobSucceeded, undefined, 'no Event announces a verdict the status does not show');
      await handle(envelopeFor('Pod', NS, 'web-1'), deps());
      assert.equal(jobStatus(server, JOB).phase, 'Succeeded');
      assert.deepEqual(events(server).JobSucceeded, [JOB]);
    } finally {
      await server.close();
    }
  });
});
