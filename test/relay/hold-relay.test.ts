// The relay's hold end to end (issue 10): a real relay against the fake API server, a job's
// ephemeral container going through the kubelet's steps (injected, running, exited) with
// gaps longer than the coalescing window, so that only the hold can merge them.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';
import type { Envelope } from '../../functions/api/envelope.ts';
import { EJOB, EJOB_ID_ENV } from '../../functions/api/names.ts';
import type { RelayOptions } from '../../relay/relay.ts';
import { eventually, job, pod, relayWorld } from '../support/relay-world.ts';

const POD = { apiVersion: 'v1', kind: 'Pod', namespace: 'default' } as const;
type PodLike = { metadata: Record<string, unknown> & { uid?: string }; spec: Record<string, unknown>; status: Record<string, unknown> };
type World = Awaited<ReturnType<typeof relayWorld>>;
/** Longer than relayWorld's coalescing window (20 ms): changes this far apart are not merged by it. */
const GAP_MS = 80;

async function world(overrides: Partial<RelayOptions> = {}): Promise<World> {
  const w = await relayWorld([job('j', { app: 'web' }), pod('web-1', { app: 'web' }), pod('web-2', { app: 'web' })], overrides);
  await w.relay.flush();
  w.sink.clear();
  return w;
}

const get = (w: World, name: string): PodLike => w.server.store.get({ ...POD, name }) as unknown as PodLike;
const podSeen = async (w: World): Promise<number> => (await w.relay.metrics.seen.get()).values.filter((v) => v.labels.kind === 'Pod').reduce((n, v) => n + v.value, 0);
const envelopes = (w: World, name: string): Envelope[] => w.sink.got.filter((e) => e.data.kind === 'Pod' && e.data.name === name);
const ephemeralStates = (e: Envelope | undefined): unknown => (e?.data.snapshot as { status?: { ephemeralContainerStatuses?: { state: unknown }[] } } | undefined)?.status?.ephemeralContainerStatuses?.map((s) => s.state);

/** Write a change of web-1 and wait until the relay has seen it. */
async function change(w: World, edit: (p: PodLike) => PodLike): Promise<void> {
  const before = await podSeen(w);
  w.server.store.put(edit(get(w, 'web-1')));
  await eventually(async () => assert.equal(await podSeen(w), before + 1, 'the relay saw the change'));
}

/** The job's container as the injector adds it (KRUISE_EJOB_ID = the job's uid), no status yet: the injection's echo. */
function injected(w: World): (p: PodLike) => PodLike {
  const uid = (w.server.store.get({ apiVersion: EJOB.apiVersion, kind: EJOB.kind, namespace: 'default', name: 'j' }) as unknown as PodLike).metadata.uid;
  return (p) => ({ ...p, spec: { ...p.spec, ephemeralContainers: [{ name: 'ec', image: 'busybox', env: [{ name: EJOB_ID_ENV, value: uid }] }] } });
}

const withState = (state: unknown) => (p: PodLike): PodLike => ({ ...p, status: { ...p.status, ephemeralContainerStatuses: [{ name: 'ec', state }] } });
const RUNNING = { running: { startedAt: '2026-01-01T00:00:00Z' } };
const EXITED = { terminated: { exitCode: 0, reason: 'Completed' } };

describe('the relay holds a change that only starts ephemeral containers', () => {
  test('injected, running, exited: one envelope, carrying the exit, sent when the exit ends the hold', async () => {
    const w = await world({ holdMs: 60_000 });
    try {
      await change(w, injected(w));
      await sleep(GAP_MS);
      await change(w, withState(RUNNING));
      await sleep(GAP_MS);
      assert.deepEqual(envelopes(w, 'web-1'), [], 'the echo and the start are held');
      await change(w, withState(EXITED));
      await eventually(() => assert.equal(envelopes(w, 'web-1').length, 1), 3000);
      const [e] = envelopes(w, 'web-1');
      assert.deepEqual(ephemeralStates(e), [{ terminated: { exitCode: 0 } }]);
      assert.equal(e?.data.event, 'MODIFIED');
      assert.deepEqual(e?.data.jobs, ['j']);
      assert.equal(e?.data.resourceVersion, get(w, 'web-1').metadata.resourceVersion, 'the latest state');
      await w.relay.flush();
      assert.equal(envelopes(w, 'web-1').length, 1, 'nothing of the pod is still held');
    } finally {
      await w.close();
    }
  });

  test('a container that keeps running: one envelope when the hold ends, with the running state', async () => {
    const HOLD_MS = 300;
    const w = await world({ holdMs: HOLD_MS });
    try {
      const start = Date.now();
      await change(w, injected(w));
      await sleep(GAP_MS);
      await change(w, withState(RUNNING));
      await eventually(() => assert.equal(envelopes(w, 'web-1').length, 1), 3000);
      assert.ok(Date.now() - start >= HOLD_MS, `sent after ${Date.now() - start} ms, before the hold of ${HOLD_MS} ms ended`);
      assert.deepEqual(ephemeralStates(envelopes(w, 'web-1')[0]), [{ running: {} }]);
      await sleep(HOLD_MS + GAP_MS);
      await w.relay.flush();
      assert.equal(envelopes(w, 'web-1').length, 1, 'the echo and the start went as one');
    } finally {
      await w.close();
    }
  });

  test('a held pod does not delay another pod\'s change', async () => {
    const w = await world({ holdMs: 60_000 });
    try {
      await change(w, injected(w));
      const p = get(w, 'web-2');
      w.server.store.put({ ...p, spec: { ...p.spec, nodeName: 'node-2' } });
      await eventually(() => assert.equal(envelopes(w, 'web-2').length, 1), 2000);
      assert.deepEqual(envelopes(w, 'web-1'), [], 'still held');
      await w.relay.flush();
      assert.equal(envelopes(w, 'web-1').length, 1, 'flush sends the held pod');
    } finally {
      await w.close();
    }
  });

  test('a held pod is not a stalled sink: /readyz stays ready through a hold longer than the delivery grace', async () => {
    const w = await world({ holdMs: 1500, deliveryGraceSeconds: 0.3 });
    try {
      await change(w, injected(w));
      for (let i = 0; i < 10; i++) {
        assert.equal(w.relay.readiness(), 'ready', `${i * 100} ms into the hold`);
        await sleep(100);
      }
      assert.deepEqual(envelopes(w, 'web-1'), [], 'still held');
    } finally {
      await w.close();
    }
  });

  for (const [what, overrides] of [['holdMs absent', {}], ['holdMs 0', { holdMs: 0 }]] as const) {
    test(`${what}: nothing is held, one envelope per change`, async () => {
      const w = await world(overrides);
      try {
        const expected = [[], [{ running: {} }], [{ terminated: { exitCode: 0 } }]];
        const steps = [injected(w), withState(RUNNING), withState(EXITED)];
        for (const [i, step] of steps.entries()) {
          await change(w, step);
          await eventually(() => assert.equal(envelopes(w, 'web-1').length, i + 1), 2000);
          await sleep(GAP_MS);
        }
        assert.deepEqual(envelopes(w, 'web-1').map(ephemeralStates), expected);
      } finally {
        await w.close();
      }
    });
  }
});
