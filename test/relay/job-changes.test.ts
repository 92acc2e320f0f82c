// Which EphemeralJob changes the relay forwards (issue 10): what can give the job's reconcile
// work, never its own status writes coming back. Changes go through the API server's REST
// path, as the functions and kubectl make them, so metadata.generation moves as in Kubernetes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EJOB, EJOB_CLEANUP_FINALIZER } from '../../functions/api/names.ts';
import { createKube } from '../../functions/kube/client.ts';
import type { Kube } from '../../functions/kube/kube.ts';
import { decodeJob, type JobView } from '../../relay/trim.ts';
import { eventually, job, pod, relayWorld } from '../support/relay-world.ts';

const REF = { apiVersion: EJOB.apiVersion, kind: EJOB.kind, namespace: 'default', name: 'j' } as const;

function merge(kube: Kube, body: unknown, subresource?: 'status'): Promise<unknown> {
  return kube.perform({ verb: 'patch', patchType: 'merge', ...REF, ...(subresource ? { subresource } : {}), body, reason: 'test' });
}

/** Job events the sink got after `change`, once the relay has settled. */
async function forwardedBy(change: (kube: Kube) => Promise<unknown>, objects: unknown[] = [job('j', { app: 'web' })]): Promise<string[]> {
  const w = await relayWorld(objects);
  try {
    const kube = createKube(w.server.kubeConfig());
    await w.relay.flush();
    w.sink.clear();
    const seen = async (): Promise<number> => (await w.relay.metrics.seen.get()).values.filter((v) => v.labels.kind === EJOB.kind).reduce((n, v) => n + v.value, 0);
    const before = await seen();
    await change(kube);
    await eventually(async () => assert.ok((await seen()) > before, 'the relay saw the change'));
    await w.relay.flush();
    return w.sink.subjects();
  } finally {
    await w.close();
  }
}

describe('EphemeralJob changes the relay forwards', () => {
  test('a status-only write (what the functions make every few events) forwards nothing', async () => {
    assert.deepEqual(await forwardedBy((k) => merge(k, { status: { phase: 'Running', match: 3, running: 1, waiting: 2 } }, 'status')), []);
  });

  test('a spec change (parallelism) forwards one event', async () => {
    assert.deepEqual(await forwardedBy((k) => merge(k, { spec: { parallelism: 3 } })), ['MODIFIED EphemeralJob/default/j']);
  });

  test('the verdict (a status write that finishes the job) forwards one event', async () => {
    const verdict = { status: { phase: 'Succeeded', completionTime: '2026-01-01T00:00:00Z', match: 1, succeeded: 1 } };
    assert.deepEqual(await forwardedBy((k) => merge(k, verdict, 'status')), ['MODIFIED EphemeralJob/default/j']);
  });

  test('a deletion forwards one event: the deletionTimestamp while a finalizer holds the job, then DELETED', async () => {
    const held = { ...job('j', { app: 'web' }), metadata: { name: 'j', namespace: 'default', finalizers: [EJOB_CLEANUP_FINALIZER] } };
    assert.deepEqual(await forwardedBy((k) => k.perform({ verb: 'delete', ...REF, reason: 'test' }), [held]), ['MODIFIED EphemeralJob/default/j']);
    assert.deepEqual(await forwardedBy((k) => k.perform({ verb: 'delete', ...REF, reason: 'test' })), ['DELETED EphemeralJob/default/j']);
  });
});

describe('the job fingerprint', () => {
  const raw = (meta: Record<string, unknown>, status: Record<string, unknown> = {}): unknown => ({ ...job('j', { app: 'web' }), metadata: { name: 'j', namespace: 'default', uid: 'u1', generation: 1, resourceVersion: '10', ...meta }, status });
  const fp = (r: unknown): string => (decodeJob(r) as { fingerprint: string }).fingerprint;

  test('ignores the resourceVersion and the status counters, and sees everything that can give work', () => {
    const base = fp(raw({}));
    assert.equal(fp(raw({ resourceVersion: '11' }, { phase: 'Running', running: 1 })), base);
    for (const [what, changed] of [
      ['generation (a spec change)', raw({ generation: 2 })],
      ['uid (a new job under the same name)', raw({ uid: 'u2' })],
      ['deletionTimestamp', raw({ deletionTimestamp: '2026-01-01T00:00:00Z' })],
      ['finalizers', raw({ finalizers: ['x'] })],
      ['the verdict', raw({}, { phase: 'Failed', completionTime: '2026-01-01T00:00:00Z' })],
    ] as const) assert.notEqual(fp(changed), base, what);
  });

  test('the view still carries the resourceVersion for the envelope, and a job without a generation counts every change', () => {
    assert.equal((decodeJob(raw({})) as { object: JobView }).object.resourceVersion, '10');
    const noGeneration = (rv: string): unknown => ({ metadata: { name: 'j', namespace: 'default', resourceVersion: rv }, spec: {} });
    assert.notEqual(fp(noGeneration('1')), fp(noGeneration('2')));
  });
});

describe('pod envelopes name the jobs that concern the pod (data.jobs)', () => {
  const finished = { ...job('done', { app: 'web' }), status: { phase: 'Succeeded', completionTime: '2026-01-01T00:00:00Z' } };
  const stamps = (got: { data: { name: string; kind: string; jobs?: string[] } }[]): Record<string, string[] | undefined> =>
    Object.fromEntries(got.filter((e) => e.data.kind === 'Pod').map((e) => [e.data.name, e.data.jobs && [...e.data.jobs].sort()]));

  test('on live events; the first list and a replay send each unfinished job instead of its pods', async () => {
    const w = await relayWorld([job('j', { app: 'web' }), job('front', { tier: 'front' }), job('db', { app: 'db' }), finished, pod('web-1', { app: 'web' }), pod('web-2', { app: 'web', tier: 'front' })]);
    const jobsSent = (): string[] => [...new Set(w.sink.got.filter((e) => e.data.kind === 'EphemeralJob').map((e) => e.data.name))].sort();
    try {
      await w.relay.flush();
      assert.deepEqual(stamps(w.sink.got), {}, 'no pod: each is one reconcile of its jobs, which are sent themselves');
      assert.deepEqual(jobsSent(), ['db', 'done', 'front', 'j']);
      w.sink.clear();
      w.server.store.put(pod('web-3', { tier: 'front' }));
      await eventually(async () => {
        await w.relay.flush();
        assert.deepEqual(stamps(w.sink.got), { 'web-3': ['front'] });
      });
      w.sink.clear();
      w.relay.resync('test', 'all');
      await eventually(async () => {
        await w.relay.flush();
        assert.deepEqual(jobsSent(), ['db', 'done', 'front', 'j']);
      });
      assert.deepEqual(stamps(w.sink.got), {});
      w.sink.clear();
      w.relay.resync('test', 'due');
      await eventually(async () => {
        await w.relay.flush();
        for (const name of ['db', 'front', 'j']) assert.ok(jobsSent().includes(name), `due: the unfinished ones (${name})`);
      });
      assert.deepEqual(stamps(w.sink.got), {});
    } finally {
      await w.close();
    }
  });
});
