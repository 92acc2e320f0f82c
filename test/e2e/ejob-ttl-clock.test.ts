// A TTL deletes, so it is judged by the earlier of the planner's clock and the API server's
// (the one that stamped creationTimestamp and completionTime) — through the controller's own
// observation, for a finished job (read without its Lease) and a running one (time review:
// the first fix reached only the planner, and a finished job was still judged by the
// planner's clock alone, 8 minutes early with it 10 minutes ahead).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EJOB } from '../../functions/api/names.ts';
import { handle } from '../../functions/engine/engine.ts';
import { envelopeFor, finish, inWorld, jobStatus, probeJobObjects } from '../support/ejob-world.ts';

const template = { ephemeralContainers: [{ name: 'ec', image: 'busybox', imagePullPolicy: 'Always', terminationMessagePolicy: 'File' }] };
const job = (name: string, spec: Record<string, unknown>, status?: Record<string, unknown>): unknown => ({
  apiVersion: EJOB.apiVersion, kind: EJOB.kind,
  metadata: { name, namespace: 'default', creationTimestamp: '2026-01-01T00:30:00Z' },
  spec: { selector: { matchLabels: { app: 'none' } }, template, ...spec },
  ...(status ? { status } : {}),
});

test("a planner clock 10 minutes ahead of the API server's deletes no job before its TTL by the server's clock", async () => {
  let server = new Date('2026-01-01T00:36:00Z');
  const objects = [
    job('finished', { ttlSecondsAfterFinished: 600 }, { phase: 'Succeeded', completionTime: '2026-01-01T00:34:00Z' }),
    job('created', { ttlSecondsAfterCreated: 900 }),
  ];
  await inWorld({ objects, now: () => new Date(server.getTime() + 600_000), serverClock: () => server }, async (w) => {
    const exists = (name: string): boolean => w.server.store.get({ apiVersion: EJOB.apiVersion, kind: EJOB.kind, namespace: 'default', name }) !== undefined;
    for (const name of ['finished', 'created']) await handle(envelopeFor('EphemeralJob', 'default', name), w.deps());
    assert.deepEqual([exists('finished'), exists('created')], [true, true], 'by the server\'s clock neither TTL has passed (00:44 and 00:45)');
    server = new Date('2026-01-01T00:45:01Z');
    for (const name of ['finished', 'created']) await handle(envelopeFor('EphemeralJob', 'default', name), w.deps());
    assert.deepEqual([exists('finished'), exists('created')], [false, false], 'both are deleted once the server\'s clock passes them');
  });
});

test("a verdict written by a planner 5 minutes behind the API server's carries the server's time: another instance does not delete the job before its TTL (review95 F4)", async () => {
  let server = new Date('2026-01-01T00:20:30Z');
  let engine = (): Date => new Date(server.getTime() - 300_000);
  await inWorld({ objects: probeJobObjects({ pods: 1, parallelism: 1, ttlSecondsAfterFinished: 120 }), now: () => engine(), serverClock: () => server }, async (w) => {
    await handle(envelopeFor('EphemeralJob', 'default', 'probe'), w.deps('behind'));
    server = new Date('2026-01-01T00:20:40Z');
    finish(w.server, 'web-0', 0);
    await handle(envelopeFor('Pod', 'default', 'web-0'), w.deps('behind'));
    const status = jobStatus(w.server, 'probe') as { phase?: string; startTime?: string; completionTime?: string; conditions?: { type: string; lastTransitionTime: string }[] };
    assert.deepEqual([status.phase, status.startTime, status.completionTime], ['Succeeded', '2026-01-01T00:20:00Z', '2026-01-01T00:20:40Z'], 'completionTime by the server\'s clock, not 00:15:40, before startTime');
    assert.equal(status.conditions?.find((c) => c.type === 'JobSucceeded')?.lastTransitionTime, '2026-01-01T00:20:40Z');
    // An instance with the server's clock, 10 s later: 110 s of the TTL are left.
    server = new Date('2026-01-01T00:20:50Z');
    engine = () => server;
    const r = await handle(envelopeFor('EphemeralJob', 'default', 'probe'), w.deps('right'));
    assert.ok(w.server.store.get({ apiVersion: EJOB.apiVersion, kind: EJOB.kind, namespace: 'default', name: 'probe' }) !== undefined, 'not deleted');
    assert.equal(r.requeueAfterSeconds, 110);
  });
});
