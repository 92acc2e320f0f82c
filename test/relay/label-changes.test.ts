// Labels matter to the functions only through which jobs select a pod (issue 10): the relay
// drops a change of labels alone that leaves that set as it was, deciding from its cache.
// The decision reads the fingerprint text (relay/trim.ts, labelsChangedOnly): a property
// test holds that reading to what parsing would say.
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Pod } from '../../functions/api/pod.ts';
import { decodePod, labelsChangedOnly } from '../../relay/trim.ts';
import { objectKeys } from '../support/json-key-bug.ts';
import { eventually, job, pod, relayWorld } from '../support/relay-world.ts';

const POD = { apiVersion: 'v1', kind: 'Pod', namespace: 'default' } as const;
type PodLike = { metadata: Record<string, unknown>; spec: Record<string, unknown>; status: Record<string, unknown> };

describe('the fingerprint tells a change of labels alone', () => {
  // Strings that would fool a careless reading of the text: quotes, braces, the very marker.
  const tricky = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('', '"', '\\', '}', '},"name":"x', '{"metadata":{"labels":', 'name', '\n'));
  const labels = fc.option(fc.dictionary(objectKeys(tricky), tricky, { maxKeys: 3 }), { nil: undefined });
  const raw = (name: string, l: Record<string, string> | undefined, node: string): unknown => JSON.parse(JSON.stringify({
    metadata: { name, namespace: 'ns', uid: 'u', resourceVersion: '1', ...(l ? { labels: l } : {}) },
    spec: { nodeName: node, containers: [{ name: 'main' }] },
    status: { phase: 'Running' },
  }));
  const fp = (r: unknown): string => (decodePod(r) as { fingerprint: string }).fingerprint;
  const object = (r: unknown): Pod => (decodePod(r) as { object: Pod }).object;
  const plain = (v: unknown): unknown => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

  test('labels alone → the labels before; anything else as well, or nothing → null; and the text is the snapshot', () => {
    const node = fc.constantFrom('n1', 'n2');
    fc.assert(fc.property(fc.record({ name: tricky.filter((s) => s.length > 0), a: labels, b: labels, nodeA: node, nodeB: node }), ({ name, a, b, nodeA, nodeB }) => {
      const before = raw(name, a, nodeA);
      const after = raw(name, b, nodeB);
      const { resourceVersion: _rv, ...meta } = object(before).metadata;
      assert.deepEqual(JSON.parse(fp(before)), plain({ ...object(before), metadata: meta }), 'the fingerprint parses to the trimmed pod');
      const sameLabels = JSON.stringify(plain(a)) === JSON.stringify(plain(b));
      const expected = nodeA === nodeB && !sameLabels ? { before: plain(object(before).metadata.labels) } : null;
      const got = labelsChangedOnly(fp(before), fp(after));
      assert.deepEqual(got && { before: plain(got.before) }, expected);
    }), { numRuns: 3000 });
  });
});

describe('a change of labels alone', () => {
  const getPod = (w: { server: { store: { get(k: unknown): unknown } } }, name: string): PodLike => w.server.store.get({ ...POD, name }) as PodLike;
  const relabel = (p: PodLike, labels: Record<string, string>): PodLike => ({ ...p, metadata: { ...p.metadata, labels } });

  test('that selects the pod for the same jobs is not forwarded; one that changes them is, with the new jobs', async () => {
    const w = await relayWorld([job('web', { app: 'web' }), job('canary', { track: 'canary' }), pod('web-1', { app: 'web' }), pod('web-2', { app: 'web' })]);
    try {
      await w.relay.flush();
      w.sink.clear();
      w.server.store.put(relabel(getPod(w, 'web-1'), { app: 'web', version: '2' }));
      w.server.store.put(relabel(getPod(w, 'web-2'), { app: 'web', track: 'canary' }));
      await eventually(async () => {
        await w.relay.flush();
        assert.deepEqual(w.sink.subjects(), ['MODIFIED Pod/default/web-2']);
      });
      assert.deepEqual(w.sink.got[0]?.data.jobs?.sort(), ['canary', 'web']);
      const filtered = (await w.relay.metrics.filtered.get()).values.find((v) => v.labels.reason === 'only labels changed, selected by the same jobs');
      assert.equal(filtered?.value, 1);
      // Leaving every job is news too (the functions learn the pod is no longer theirs).
      w.sink.clear();
      w.server.store.put(relabel(getPod(w, 'web-2'), { app: 'web' }));
      w.server.store.put(relabel(getPod(w, 'web-1'), { app: 'other' }));
      await eventually(async () => {
        await w.relay.flush();
        assert.deepEqual(w.sink.subjects().sort(), ['MODIFIED Pod/default/web-2']);
      });
    } finally {
      await w.close();
    }
  });

  test('labels changed together with a field the functions read are forwarded', async () => {
    const w = await relayWorld([job('web', { app: 'web' }), pod('web-1', { app: 'web' })]);
    try {
      await w.relay.flush();
      w.sink.clear();
      const p = relabel(getPod(w, 'web-1'), { app: 'web', version: '2' });
      w.server.store.put({ ...p, status: { ...p.status, phase: 'Failed' } });
      await eventually(async () => {
        await w.relay.flush();
        assert.deepEqual(w.sink.subjects(), ['MODIFIED Pod/default/web-1']);
      });
    } finally {
      await w.close();
    }
  });
});

describe('a pod the job injected, relabelled out of its selector', () => {
  test('is still forwarded, naming the job: its container\'s end frees the job\'s slot (review: else the job waited for the resync)', async () => {
    const w = await relayWorld([job('j', { app: 'web' })]);
    try {
      const uid = (w.server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'default', name: 'j' }) as unknown as { metadata: { uid: string } }).metadata.uid;
      const injected = pod('p', { app: 'web' }, { ephemeralContainers: [{ name: 'ec', image: 'busybox', env: [{ name: 'KRUISE_EJOB_ID', value: uid }] }] });
      w.server.store.put(injected as never);
      await eventually(async () => {
        await w.relay.flush();
        assert.ok(w.sink.subjects().includes('ADDED Pod/default/p'));
      });
      w.sink.clear();
      const stored = (): PodLike => w.server.store.get({ ...POD, name: 'p' }) as unknown as PodLike;
      w.server.store.put({ ...stored(), metadata: { ...stored().metadata, labels: { app: 'elsewhere' } } } as never);
      await eventually(async () => {
        await w.relay.flush();
        assert.deepEqual(w.sink.got.map((e) => [e.subject, e.data.jobs]), [['Pod/default/p', ['j']]]);
      });
      w.sink.clear();
      w.server.store.put({ ...stored(), status: { ...stored().status, ephemeralContainerStatuses: [{ name: 'ec', state: { terminated: { exitCode: 0 } } }] } } as never);
      await eventually(async () => {
        await w.relay.flush();
        assert.deepEqual(w.sink.got.map((e) => [e.subject, e.data.jobs]), [['Pod/default/p', ['j']]]);
      });
    } finally {
      await w.close();
    }
  });
});
