import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { handle } from '../../functions/engine/engine.ts';
import { silentLogger, type Logger } from '../../functions/engine/logger.ts';
import { CRDS, envelopeFor, worldWith, fixture, injected, jobStatus } from '../support/ejob-world.ts';


type BrokenJob = { metadata: { name: string; uid?: string }; spec: { template: { ephemeralContainers: Record<string, unknown>[] } } };

/** Story 1's job as broken-job, its container's image emptied (a spec that fails the schema), and that container as it was. */
function brokenJob(objects: Record<string, unknown>[]): BrokenJob & { first: Record<string, unknown> | undefined } {
  const bad = structuredClone(objects.find((o) => o.kind === 'EphemeralJob')) as unknown as BrokenJob;
  bad.metadata = { ...bad.metadata, name: 'broken-job', uid: 'broken-uid' };
  const [first] = bad.spec.template.ephemeralContainers;
  bad.spec.template.ephemeralContainers = [{ ...first, image: '' }];
  return Object.assign(bad, { first });
}
for (const { label, crd } of CRDS) describe(`EphemeralJob bad input (${label})`, () => {
  test('a malformed pod is skipped with a reason; the job goes on with the others', async () => {
    const objects = fixture('test/fixtures/stories/story1-state.yaml');
    const { server, deps } = await worldWith({ objects, crd });
    try {
      // A pod with odd fields: containers is not a list (written past validation, as a broken client might).
      server.store.put({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'aaa-broken', namespace: 'default', labels: { app: 'helloworld' }, creationTimestamp: '2025-12-31T00:00:00Z' }, spec: { containers: 'oops' }, status: { phase: 'Running' } });
      const r = await handle(envelopeFor('EphemeralJob', 'default', 'hello-world-ephemeral-job', 'ADDED'), deps());
      assert.equal(r.keys[0]?.outcome, 'done');
      assert.ok(r.keys[0]?.notes?.some((n) => /aaa-broken skipped: unreadable \(spec\.containers/.test(n)), JSON.stringify(r.keys[0]?.notes));
      assert.deepEqual(injected(server)['helloworld-865cd8865b-nl8lq'], ['helloworld-ec'], 'the oldest readable pod got it');
      assert.equal(jobStatus(server, 'hello-world-ephemeral-job').match, 4);
    } finally {
      await server.close();
    }
  });

  test('a job whose spec fails the schema gets phase Error naming the field; a good job beside it is unaffected', async () => {
    const objects = fixture('test/fixtures/stories/story1-state.yaml');
    const { first: _first, ...bad } = brokenJob(objects);
    const { server, deps } = await worldWith({ objects: [...objects, bad], crd });
    try {
      await handle(envelopeFor('EphemeralJob', 'default', 'broken-job', 'ADDED'), deps());
      await handle(envelopeFor('EphemeralJob', 'default', 'hello-world-ephemeral-job', 'ADDED'), deps());
      const s = jobStatus(server, 'broken-job');
      assert.equal(s.phase, 'Error');
      const cond = (s.conditions as { type: string; message?: string }[]).find((c) => c.type === 'JobError');
      assert.match(cond?.message ?? '', /spec\.template\.ephemeralContainers\[0\]\.image/);
      assert.equal(jobStatus(server, 'hello-world-ephemeral-job').waiting, 1, 'the good job injected as usual');
      assert.equal(Object.values(injected(server)).flat().length, 1, 'the broken job injected nothing');
    } finally {
      await server.close();
    }
  });

  test('a job OpenKruise ran with parallelism 42 (no limit there) runs as it did, and its status and a Warning say so (review72)', async () => {
    const objects = fixture('test/fixtures/stories/story1-state.yaml');
    const wide = structuredClone(objects.find((o) => o.kind === 'EphemeralJob')) as { metadata: { name: string; uid?: string }; spec: { parallelism: number } };
    wide.metadata = { ...wide.metadata, name: 'wide-job', uid: 'wide-uid' };
    wide.spec.parallelism = 42;
    const { server, deps } = await worldWith({ objects: [...objects.filter((o) => o.kind !== 'EphemeralJob'), wide], crd });
    try {
      await handle(envelopeFor('EphemeralJob', 'default', 'wide-job', 'ADDED'), deps());
      const s = jobStatus(server, 'wide-job');
      assert.equal(s.phase, 'Waiting');
      assert.equal(s.waiting, s.match, 'every target injected at once');
      assert.ok((s.match as number) > 1);
      const cond = (s.conditions as { type: string; status: string; reason?: string; message?: string }[]).find((c) => c.type === 'JobError');
      assert.deepEqual([cond?.status, cond?.reason], ['False', 'SpecOutsideLimits']);
      assert.match(cond?.message ?? '', /spec\.parallelism 42 is above 10/);
      const events = server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: 'default' }) as unknown as { reason?: string; type?: string; involvedObject?: { name?: string } }[];
      assert.equal(events.filter((e) => e.reason === 'SpecOutsideLimits' && e.type === 'Warning' && e.involvedObject?.name === 'wide-job').length, 1);
    } finally {
      await server.close();
    }
  });

  test('a Warning told anew after the value changed (edited past the webhook) is a new Event with the new message, and only then (review78)', async () => {
    const objects = fixture('test/fixtures/stories/story1-state.yaml');
    const wide = structuredClone(objects.find((o) => o.kind === 'EphemeralJob')) as { metadata: { name: string; uid?: string }; spec: { parallelism: number } };
    wide.metadata = { ...wide.metadata, name: 'wide-job', uid: 'wide-uid' };
    wide.spec.parallelism = 42;
    const { server, deps } = await worldWith({ objects: [...objects.filter((o) => o.kind !== 'EphemeralJob'), wide], crd });
    const warnings = (): string[] => (server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: 'default' }) as unknown as { reason?: string; message?: string }[])
      .filter((e) => e.reason === 'SpecOutsideLimits').map((e) => /parallelism (\d+)/.exec(e.message ?? '')?.[1] ?? '?').sort();
    try {
      await handle(envelopeFor('EphemeralJob', 'default', 'wide-job', 'ADDED'), deps());
      assert.deepEqual(warnings(), ['42']);
      const stored = server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'default', name: 'wide-job' }) as unknown as { spec: Record<string, unknown> };
      server.store.put({ ...stored, spec: { ...stored.spec, parallelism: 50 } } as never);
      await handle(envelopeFor('EphemeralJob', 'default', 'wide-job'), deps());
      assert.deepEqual(warnings(), ['42', '50'], 'the new values are told, not refused as told already under the first Warning\'s name');
      await handle(envelopeFor('EphemeralJob', 'default', 'wide-job'), deps());
      assert.deepEqual(warnings(), ['42', '50'], 'nothing new: nothing more');
    } finally {
      await server.close();
    }
  });

  test('a template edited (past the webhook) from one error to another: a new InvalidSpec Warning naming the new one, and only then (review78)', async () => {
    const objects = fixture('test/fixtures/stories/story1-state.yaml');
    const { first, ...bad } = brokenJob(objects);
    const { server, deps } = await worldWith({ objects: [...objects.filter((o) => o.kind !== 'EphemeralJob'), bad], crd });
    const warnings = (): string[] => (server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: 'default' }) as unknown as { reason?: string; message?: string }[])
      .filter((e) => e.reason === 'InvalidSpec').map((e) => (/\.(image|imagePullPolicy)\b/.exec(e.message ?? '')?.[1] ?? '?')).sort();
    try {
      await handle(envelopeFor('EphemeralJob', 'default', 'broken-job', 'ADDED'), deps());
      assert.deepEqual(warnings(), ['image']);
      await handle(envelopeFor('EphemeralJob', 'default', 'broken-job'), deps());
      assert.deepEqual(warnings(), ['image'], 'told once');
      const stored = server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'default', name: 'broken-job' }) as unknown as { spec: Record<string, unknown> };
      server.store.put({ ...stored, spec: { ...stored.spec, template: { ephemeralContainers: [{ ...first, imagePullPolicy: 'Sometimes' }] } } } as never);
      await handle(envelopeFor('EphemeralJob', 'default', 'broken-job'), deps());
      assert.equal(jobStatus(server, 'broken-job').phase, 'Error');
      assert.deepEqual(warnings(), ['image', 'imagePullPolicy']);
      await handle(envelopeFor('EphemeralJob', 'default', 'broken-job'), deps());
      assert.deepEqual(warnings(), ['image', 'imagePullPolicy'], 'nothing new: nothing more');
    } finally {
      await server.close();
    }
  });

  test("a job whose selector the API server's parser refuses (seeded past the webhook) gets phase Error naming the value, not a 400 on every LIST", async () => {
    const objects = fixture('test/fixtures/stories/story1-state.yaml');
    const bad = structuredClone(objects.find((o) => o.kind === 'EphemeralJob')) as { metadata: { name: string; uid?: string }; spec: Record<string, unknown> };
    bad.metadata = { ...bad.metadata, name: 'odd-selector', uid: 'odd-uid' };
    bad.spec.selector = { matchExpressions: [{ key: 'app', operator: 'In', values: ['helloworld', 'not a label value!'] }] };
    const { server, deps } = await worldWith({ objects: [...objects, bad], crd });
    try {
      const r = await handle(envelopeFor('EphemeralJob', 'default', 'odd-selector', 'ADDED'), deps());
      assert.equal(r.keys[0]?.outcome, 'done');
      const s = jobStatus(server, 'odd-selector');
      assert.equal(s.phase, 'Error');
      const cond = (s.conditions as { type: string; message?: string }[]).find((c) => c.type === 'JobError');
      assert.match(cond?.message ?? '', /spec\.selector\.matchExpressions\[0\]\.values\[1\]: "not a label value!"/);
      assert.equal(server.requests.filter((x) => x.status === 400).length, 0);
    } finally {
      await server.close();
    }
  });

  test('a template kube-apiserver would refuse in every pod (a mount path twice) gets phase Error naming the field, and no pod is tried', async () => {
    const objects = fixture('test/fixtures/stories/story1-state.yaml');
    const bad = structuredClone(objects.find((o) => o.kind === 'EphemeralJob')) as { metadata: { name: string; uid?: string }; spec: { template: { ephemeralContainers: Record<string, unknown>[] } } };
    bad.metadata = { ...bad.metadata, name: 'odd-template', uid: 'odd-template-uid' };
    const [first] = bad.spec.template.ephemeralContainers;
    bad.spec.template.ephemeralContainers = [{ ...first, volumeMounts: [{ name: 'a', mountPath: '/x' }, { name: 'b', mountPath: '/x' }] }];
    const { server, deps } = await worldWith({ objects: [...objects, bad], crd });
    try {
      await handle(envelopeFor('EphemeralJob', 'default', 'odd-template', 'ADDED'), deps());
      const s = jobStatus(server, 'odd-template');
      assert.equal(s.phase, 'Error');
      const cond = (s.conditions as { type: string; message?: string }[]).find((c) => c.type === 'JobError');
      assert.match(cond?.message ?? '', /spec\.template\.ephemeralContainers\[0\]\.volumeMounts\[1\]\.mountPath: must be unique/);
      assert.equal(server.requests.filter((x) => x.path.endsWith('/ephemeralcontainers')).length, 0);
    } finally {
      await server.close();
    }
  });

  test('a job whose metadata does not parse is skipped with the field named, and nothing is written to it', async () => {
    const objects = fixture('test/fixtures/stories/story1-state.yaml');
    const job = objects.find((o) => o.kind === 'EphemeralJob') as { metadata: Record<string, unknown> };
    const { server, deps } = await worldWith({ objects, crd });
    try {
      // Stored past validation: labels that are not strings.
      server.store.put({ ...job, metadata: { ...job.metadata, labels: { team: 7 } } } as never);
      server.requests.clear();
      const warned: string[] = [];
      const logger = (bound: Record<string, unknown>): Logger => ({ ...silentLogger, warn: (obj, msg) => void warned.push(`${msg ?? ''} ${JSON.stringify({ ...bound, ...obj })}`), child: (more) => logger({ ...bound, ...more }) });
      const r = await handle(envelopeFor('EphemeralJob', 'default', 'hello-world-ephemeral-job', 'ADDED'), { ...deps(), logger: logger({}) });
      assert.match(r.keys[0]?.notes?.join() ?? '', /job default\/hello-world-ephemeral-job skipped: unreadable \(metadata\.labels\.team/);
      // Logged at warn with the key: nothing else shows it (no status, no Event can be written to it; operability review).
      assert.ok(warned.some((w) => w.startsWith('skipped what cannot be read') && w.includes('"key":"EphemeralJob/default/hello-world-ephemeral-job"') && w.includes('metadata.labels.team')), warned.join('\n'));
      assert.deepEqual(server.requests.filter((x) => x.method !== 'GET' && !x.path.includes('/leases')).map((x) => `${x.method} ${x.path}`), []);
      assert.deepEqual(Object.values(injected(server)).flat(), []);
    } finally {
      await server.close();
    }
  });
});
