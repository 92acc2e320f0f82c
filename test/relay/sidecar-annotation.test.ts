// The pod's termination strategy annotation is the way out the SidecarTerminator's Warnings
// name (annotate the pod ephemera.io/sidecar-termination=ephemeral-signal): the relay
// forwards its change at once, where it used to wait for the periodic resync (review: the
// fingerprint had no annotations, so "nothing relevant changed"). Other annotations stay out.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { STRATEGY_ANNOTATION } from '../../functions/sidecar/strategy.ts';
import { decidePod } from '../../relay/pod-event.ts';
import { decodePod } from '../../relay/trim.ts';
import type { Decoded } from '../../relay/reflector.ts';
import type { Pod } from '../../functions/api/pod.ts';
import { eventually, pod, relayWorld } from '../support/relay-world.ts';

const sidecar = [{ name: 'main', image: 'app' }, { name: 'proxy', image: 'envoy', env: [{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' }] }];
/** A Job pod whose main container exited while its sidecar runs. */
const duePod = (annotations?: Record<string, string>): Record<string, unknown> => {
  const p = pod('batch-1', { app: 'batch' }, { restartPolicy: 'Never', containers: sidecar });
  return {
    ...p,
    metadata: { ...(p['metadata'] as object), uid: 'u-1', ...(annotations ? { annotations } : {}) },
    status: { phase: 'Running', containerStatuses: [{ name: 'main', state: { terminated: { exitCode: 0 } } }, { name: 'proxy', state: { running: {} } }] },
  };
};
const decoded = (raw: unknown): Decoded<Pod> => {
  const d = decodePod(JSON.parse(JSON.stringify(raw)));
  if ('error' in d) throw new Error(d.error);
  return d;
};
const noJobs = { jobs: () => [], known: true };

test('a change of the strategy annotation alone is forwarded; of any other annotation, not', () => {
  const before = decoded(duePod({ note: 'a' }));
  const strategy = decoded(duePod({ note: 'a', [STRATEGY_ANNOTATION]: 'ephemeral-signal' }));
  const fixed = decoded(duePod({ note: 'a', [STRATEGY_ANNOTATION]: 'crr' }));
  const other = decoded(duePod({ note: 'b' }));
  assert.equal(decidePod('MODIFIED', strategy, before.fingerprint, noJobs).forward, true, 'set');
  assert.equal(decidePod('MODIFIED', fixed, strategy.fingerprint, noJobs).forward, true, 'changed (a mistyped value fixed)');
  assert.equal(decidePod('MODIFIED', before, strategy.fingerprint, noJobs).forward, true, 'removed');
  assert.deepEqual(decidePod('MODIFIED', other, before.fingerprint, noJobs), { forward: false, reason: 'nothing relevant changed' });
  assert.deepEqual(strategy.object.metadata.annotations, { [STRATEGY_ANNOTATION]: 'ephemeral-signal' }, 'the snapshot carries it, and nothing else of the annotations');
});

test('through the relay: annotating a due pod reaches the functions at once', async () => {
  const w = await relayWorld([duePod()]);
  try {
    await eventually(async () => {
      await w.relay.flush();
      assert.deepEqual(w.sink.subjects(), ['RESYNC Pod/default/batch-1']);
    });
    const p = w.server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'batch-1' }) as unknown as { metadata: Record<string, unknown> };
    w.server.store.put({ ...p, metadata: { ...p.metadata, annotations: { [STRATEGY_ANNOTATION]: 'ephemeral-signal' } } } as never);
    await eventually(async () => {
      await w.relay.flush();
      assert.deepEqual(w.sink.subjects(), ['RESYNC Pod/default/batch-1', 'MODIFIED Pod/default/batch-1']);
    });
    const snapshot = w.sink.got.at(-1)?.data.snapshot as { metadata?: { annotations?: unknown } } | undefined;
    assert.deepEqual(snapshot?.metadata?.annotations, { [STRATEGY_ANNOTATION]: 'ephemeral-signal' });
  } finally {
    await w.close();
  }
});
