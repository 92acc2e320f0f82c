// A path the API server does not serve answers 404 naming no object (a CRD not installed):
// never "the object is gone", never a reason to fail the other keys of an envelope (reviews
// of the client and of the day's fixes, 2026-11-27).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { handle } from '../../functions/engine/engine.ts';
import { ejobController } from '../../functions/ejob/controller.ts';
import { sidecarController } from '../../functions/sidecar/controller.ts';
import { envelopeFor } from '../support/ejob-world.ts';
import { mainAndSidecar, NoDaemon, NS, jobPolicy, sidecarWorld, stateOf } from '../support/sidecar-world.ts';

const notServed = { status: 404, message: 'the server could not find the requested resource', times: Infinity };

test("the SidecarTerminator without OpenKruise's CRR CRD: the create's refusal is reported on the pod, the envelope is not failed", async (t) => {
  const w = await sidecarWorld([mainAndSidecar('job-1')], { kubelet: (server) => new NoDaemon(server, jobPolicy()) });
  t.after(() => w.close());
  w.tickUntil('job-1', (p) => stateOf(p, 'main') === 'terminated 0');
  w.server.faults.add({ pathIncludes: '/containerrecreaterequests', ...notServed });
  const r = await handle(envelopeFor('Pod', NS, 'job-1'), w.deps());
  assert.deepEqual(r.keys.map((k) => k.outcome), ['refused']);
  const warnings = w.server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: NS }).map((e) => e as { type?: string; reason?: string }).filter((e) => e.type === 'Warning');
  assert.deepEqual(warnings.map((e) => e.reason), ['ActionRefused']);
});

test('without the EphemeralJob CRD a pod event still reaches the SidecarTerminator, and its requeue is kept', async (t) => {
  const w = await sidecarWorld([mainAndSidecar('job-1')], { kubelet: (server) => new NoDaemon(server, jobPolicy()) });
  t.after(() => w.close());
  w.tickUntil('job-1', (p) => stateOf(p, 'main') === 'terminated 0');
  w.server.faults.add({ pathIncludes: '/ephemeraljobs', ...notServed });
  const r = await handle(envelopeFor('Pod', NS, 'job-1'), { ...w.deps(), controllers: [ejobController, sidecarController({})] });
  assert.deepEqual(r.failed, []);
  assert.deepEqual(r.skipped.map((s) => s.reason), ['EphemeralJobs are not served in this cluster']);
  assert.equal(w.crrs().length, 1);
  assert.notEqual(r.requeueAfterSeconds, null);
});

test("the CRR refused because OpenKruise's CRD is missing: the Warning is on the pod, and no Event says a CRR is trying", async (t) => {
  const w = await sidecarWorld([mainAndSidecar('job-1')], { kubelet: (server) => new NoDaemon(server, jobPolicy()) });
  t.after(() => w.close());
  w.tickUntil('job-1', (p) => stateOf(p, 'main') === 'terminated 0');
  w.server.faults.add({ pathIncludes: '/containerrecreaterequests', ...notServed });
  await handle(envelopeFor('Pod', NS, 'job-1'), w.deps());
  const events = w.server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: NS }).map((e) => e as { reason?: string; message?: string; involvedObject?: { kind?: string } });
  assert.deepEqual(events.filter((e) => e.reason === 'ActionRefused').map((e) => e.involvedObject?.kind), ['Pod']);
  assert.ok(!events.some((e) => /using crr/.test(e.message ?? '')), JSON.stringify(events.map((e) => e.message)));
});
