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

test("the SidecarTerminator without OpenKruise's CRR CRD: no create is tried, a Warning on the pod says what to do, the envelope is not failed, and the pod is looked at again in 10 minutes", async (t) => {
  const w = await sidecarWorld([mainAndSidecar('job-1')], { kubelet: (server) => new NoDaemon(server, jobPolicy()) });
  t.after(() => w.close());
  w.tickUntil('job-1', (p) => stateOf(p, 'main') === 'terminated 0');
  w.server.faults.add({ pathIncludes: '/containerrecreaterequests', ...notServed });
  w.server.requests.clear();
  const r = await handle(envelopeFor('Pod', NS, 'job-1'), w.deps());
  assert.deepEqual(r.keys.map((k) => k.outcome), ['done']);
  assert.deepEqual(r.failed, []);
  assert.equal(r.requeueAfterSeconds, 600);
  assert.deepEqual(w.server.requests.filter((q) => q.path.includes('/containerrecreaterequests')).map((q) => q.method), ['GET'], 'the create could only be refused');
  const warnings = w.server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: NS }).map((e) => e as { type?: string; reason?: string; message?: string }).filter((e) => e.type === 'Warning');
  assert.deepEqual(warnings.map((e) => e.reason), ['SidecarTerminationUnsupported']);
  assert.match(warnings[0]?.message ?? '', /not served in this cluster.*kruise-daemon.*EPHEMERA_SIDECAR_STRATEGY=ephemeral-signal.*ephemera\.io\/sidecar-termination=ephemeral-signal/);
  await handle(envelopeFor('Pod', NS, 'job-1'), w.deps());
  const again = w.server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: NS }).filter((e) => (e as { reason?: string }).reason === 'SidecarTerminationUnsupported');
  assert.equal(again.length, 1, 'one Warning per pod: its name is fixed, a later look meets it');
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

test("the CRR create refused with 404 though the GET was served (the CRD removed in between): the Warning is on the pod, and no Event says a CRR is trying", async (t) => {
  const w = await sidecarWorld([mainAndSidecar('job-1')], { kubelet: (server) => new NoDaemon(server, jobPolicy()) });
  t.after(() => w.close());
  w.tickUntil('job-1', (p) => stateOf(p, 'main') === 'terminated 0');
  w.server.faults.add({ method: 'POST', pathIncludes: '/containerrecreaterequests', ...notServed });
  const r = await handle(envelopeFor('Pod', NS, 'job-1'), w.deps());
  assert.deepEqual(r.keys.map((k) => k.outcome), ['refused']);
  const events = w.server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: NS }).map((e) => e as { reason?: string; message?: string; involvedObject?: { kind?: string } });
  assert.deepEqual(events.filter((e) => e.reason === 'ActionRefused').map((e) => e.involvedObject?.kind), ['Pod']);
  assert.ok(!events.some((e) => /using crr/.test(e.message ?? '')), JSON.stringify(events.map((e) => e.message)));
});
