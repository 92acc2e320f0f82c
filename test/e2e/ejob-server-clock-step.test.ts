// The API server's clock stepped back (an NTP step, a control-plane VM resumed): every
// instance follows it, warm or fresh, so none takes a claim made a second ago for one past its
// retention (review95 F1). Through real HTTP: the embedded API server's Date header steps.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EJOB } from '../../functions/api/names.ts';
import { handle } from '../../functions/engine/engine.ts';
import { envelopeFor, inWorld, injected, probeJobObjects } from '../support/ejob-world.ts';

/** A job that selects no pod: handling it only warms an instance's estimate of the server's clock. */
const idle = {
  apiVersion: EJOB.apiVersion, kind: EJOB.kind,
  metadata: { name: 'idle', namespace: 'default', uid: 'idle-uid', creationTimestamp: '2026-01-01T00:20:00Z' },
  spec: { selector: { matchLabels: { app: 'none' } }, template: { ephemeralContainers: [{ name: 'x', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File' }] } },
};

test("after the API server's clock steps back 59 s, a warm instance does not drop a fresh instance's claim whose injection is on its way: one pod at parallelism 1", async () => {
  let server = new Date('2026-01-01T00:21:00Z');
  await inWorld({ objects: [...probeJobObjects({ pods: 2, parallelism: 1 }), idle], now: () => server, serverClock: () => server }, async (w) => {
    const a = w.deps('instance-a');
    await handle(envelopeFor('EphemeralJob', 'default', 'idle'), a); // a has read 00:21:00
    server = new Date('2026-01-01T00:20:01Z'); // the step back
    let release = (): void => undefined;
    const held = w.server.faults.add({ pathIncludes: '/ephemeralcontainers', hold: new Promise<void>((r) => (release = r)), times: 1 });
    // b starts after the step: it claims web-0, and the API server holds its injection (APF, a slow etcd).
    const b = handle(envelopeFor('EphemeralJob', 'default', 'probe'), w.deps('instance-b'));
    while (held.hits === 0) await new Promise((r) => setTimeout(r, 5));
    server = new Date('2026-01-01T00:20:02Z');
    const byA = await handle(envelopeFor('EphemeralJob', 'default', 'probe'), a);
    release();
    await b;
    assert.ok(!(byA.keys[0]?.actions ?? []).some((x) => x.subresource === 'ephemeralcontainers'), `a injected nothing: ${JSON.stringify(byA.keys[0]?.actions?.map((x) => `${x.verb} ${x.kind} ${x.name}`))}`);
    assert.deepEqual(injected(w.server), { 'web-0': ['probe'], 'web-1': [] }, 'only b\'s claim, web-0, is injected');
  });
});
