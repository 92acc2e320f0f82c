// Routing a pod event to EphemeralJobs (issue 10): with the relay's stamp (envelope
// `data.jobs`) it costs no request and picks the jobs the plain path picks by listing them;
// without the stamp it lists, as an older relay or `ephemera invoke` needs.
import assert from 'node:assert/strict';
import { before, after, describe, test } from 'node:test';
import { EJOB, EJOB_CLEANUP_FINALIZER, EJOB_ID_ENV } from '../../functions/api/names.ts';
import { Envelope, MAX_ENVELOPE_JOBS } from '../../functions/api/envelope.ts';
import { Pod } from '../../functions/api/pod.ts';
import type { ApiServer } from '../../functions/cluster/index.ts';
import { ejobController } from '../../functions/ejob/controller.ts';
import type { Kube } from '../../functions/kube/kube.ts';
import { concernedJobs } from '../../relay/filter.ts';
import { trimJob, trimPod, type JobView } from '../../relay/trim.ts';
import { envelopeFor, worldWith } from '../support/ejob-world.ts';

const JOB = { apiVersion: EJOB.apiVersion, kind: EJOB.kind } as const;
const template = { ephemeralContainers: [{ name: 'probe', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'app' }] };
const job = (name: string, matchLabels: Record<string, string>): Record<string, unknown> => ({ ...JOB, metadata: { name, namespace: 'default' }, spec: { selector: { matchLabels }, template } });
const pod = (name: string, labels: Record<string, string>, ephemeral: unknown[] = []): Record<string, unknown> => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels },
  spec: { containers: [{ name: 'app', image: 'nginx' }], ephemeralContainers: ephemeral },
  status: { phase: 'Running' },
});

describe('routing a pod event to EphemeralJobs', () => {
  let server: ApiServer;
  let kube: Kube;
  before(async () => {
    const w = await worldWith({ objects: [job('web', { app: 'web' }), job('web-front', { app: 'web', tier: 'front' }), job('done', { app: 'web' }), job('db', { app: 'db' }), job('leaving', { app: 'web' }), job('owner', { app: 'elsewhere' })] });
    server = w.server;
    kube = w.deps().kube;
    const stored = (name: string): Record<string, unknown> & { metadata: { uid: string } } => server.store.get({ ...JOB, namespace: 'default', name }) as never;
    server.store.put({ ...stored('done'), status: { phase: 'Succeeded', completionTime: '2026-01-01T00:00:00Z' } } as never);
    // A finished job being deleted still gets pod events (its finalizer is removed on one).
    server.store.put({ ...stored('leaving'), metadata: { ...stored('leaving').metadata, finalizers: [EJOB_CLEANUP_FINALIZER] }, status: { phase: 'Failed', completionTime: '2026-01-01T00:00:00Z' } } as never);
    await kube.perform({ verb: 'delete', ...JOB, namespace: 'default', name: 'leaving', reason: 'test' });
    const owned = [{ name: 'probe', image: 'busybox', env: [{ name: EJOB_ID_ENV, value: stored('owner').metadata.uid }] }];
    for (const p of [pod('front', { app: 'web', tier: 'front' }), pod('plain', { app: 'web' }), pod('cache', { app: 'cache' }), pod('injected', { app: 'other' }, owned)]) server.store.put(p as never);
  });
  after(() => server.close());

  /** Route one pod event; the keys (sorted) and the requests it cost. */
  async function route(e: Envelope): Promise<{ keys: string[]; requests: number; skipped?: string }> {
    server.requests.clear();
    const r = await ejobController.route(e, kube);
    return { keys: [...r.keys].sort(), requests: server.requests.entries.length, ...(r.skipped ? { skipped: r.skipped } : {}) };
  }

  /** The relay's stamp for a pod: its own rule over its own views of the jobs. */
  function stamp(name: string): string[] {
    const views = (server.store.list({ ...JOB, namespace: 'default' }) as unknown as Record<string, unknown>[]).map((j) => trimJob(j) as JobView);
    const names = concernedJobs(trimPod(Pod.parse(server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name }))), views);
    assert.ok(names, 'a handful of jobs are named');
    return names;
  }

  for (const name of ['front', 'plain', 'cache', 'injected']) {
    test(`pod ${name}: the stamp routes where listing routes, with no request`, async () => {
      const plain = await route(envelopeFor('Pod', 'default', name));
      assert.ok(plain.requests >= 1, 'without a stamp the jobs are listed');
      const e = envelopeFor('Pod', 'default', name);
      const stamped = await route({ ...e, data: { ...e.data, jobs: stamp(name) } });
      assert.deepEqual(stamped.keys, plain.keys);
      assert.equal(stamped.requests, 0);
      assert.equal(stamped.skipped !== undefined, plain.skipped !== undefined);
    });
  }

  test('the keys each pod goes to (selector, finished job, deleting job, owned container)', async () => {
    const keys = async (name: string): Promise<string[]> => (await route(envelopeFor('Pod', 'default', name))).keys.map((k) => k.split('/')[2] ?? '');
    assert.deepEqual(await keys('front'), ['leaving', 'web', 'web-front']);
    assert.deepEqual(await keys('plain'), ['leaving', 'web']);
    assert.deepEqual(await keys('cache'), []);
    assert.deepEqual(await keys('injected'), ['owner']);
  });

  test('a stamp is taken as it is: a stale one costs a reconcile, never a request here', async () => {
    const e = envelopeFor('Pod', 'default', 'cache');
    const r = await route({ ...e, data: { ...e.data, jobs: ['gone-since'] } });
    assert.deepEqual(r, { keys: ['EphemeralJob/default/gone-since'], requests: 0 });
  });
});

test('an envelope names at most MAX_ENVELOPE_JOBS jobs: the relay names none beyond it, and a message naming more is read as naming none (the router lists), not refused: an older relay sends such (security and upgrade reviews)', () => {
  const pod = trimPod(Pod.parse({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i' }] } }));
  const views = (n: number): JobView[] => Array.from({ length: n }, (_, i) => ({ namespace: 'default', name: `j${i}`, uid: `u${i}`, selector: { matchLabels: { app: 'web' } }, finished: false }));
  assert.equal(concernedJobs(pod, views(MAX_ENVELOPE_JOBS))?.length, MAX_ENVELOPE_JOBS);
  assert.equal(concernedJobs(pod, views(MAX_ENVELOPE_JOBS + 1)), undefined);
  const e = envelopeFor('Pod', 'default', 'p');
  assert.ok(Envelope.safeParse({ ...e, data: { ...e.data, jobs: views(MAX_ENVELOPE_JOBS).map((j) => j.name) } }).success);
  const forged = Envelope.safeParse({ ...e, data: { ...e.data, jobs: views(MAX_ENVELOPE_JOBS + 1).map((j) => j.name) } });
  assert.ok(forged.success && forged.data.data.jobs === undefined, 'read as naming no job');
  assert.ok(!Envelope.safeParse({ ...e, data: { ...e.data, jobs: ['Not_A_Name'] } }).success, 'a name no object can have is still refused');
});
