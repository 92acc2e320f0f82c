// Which reads an EphemeralJob observation takes (controller.ts): the pods are LISTed once
// before the Lease, and again after it only when that LIST may not stand for them
// (claims.ts listBeforeLeaseStands; functions/ejob/README.md, "Reading the pods once").
// Counted at the embedded API server.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CLAIMS_ANNOTATION, type LeaseRecord } from '../../functions/ejob/lease-record.ts';
import { ejobController, jobKey, jobLeaseName } from '../../functions/ejob/controller.ts';
import { handle } from '../../functions/engine/engine.ts';
import type { ApiServer } from '../../functions/cluster/index.ts';
import type { Kube } from '../../functions/kube/kube.ts';
import { envelopeFor, finish, fixture, inFlight, worldWith } from '../support/ejob-world.ts';

const JOB = 'hello-world-ephemeral-job';
const KEY = jobKey('default', JOB);
const LEASE = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'ephemera-system', name: jobLeaseName(KEY) };

/** The reads one observation of the job makes, in order ("get Lease", "list Pod", …). */
async function readsOf(server: ApiServer, kube: Kube, lock: Parameters<typeof ejobController.observe>[2]): Promise<string[]> {
  server.requests.clear();
  await ejobController.observe(KEY, kube, lock);
  return server.requests.entries.map((r) => `${r.verb} ${r.path.includes('/leases/') ? 'Lease' : r.path.includes('/pods') ? 'Pod' : 'EphemeralJob'}`);
}

type StoredLease = { metadata: { annotations: Record<string, string> } };

function record(server: ApiServer): LeaseRecord {
  const lease = server.store.get(LEASE) as unknown as StoredLease;
  return JSON.parse(lease.metadata.annotations[CLAIMS_ANNOTATION] ?? '{}') as LeaseRecord;
}

/** Replace the record's text on the stored Lease (as another writer would have left it). */
function putRecord(server: ApiServer, text: string): void {
  const lease = server.store.get(LEASE) as unknown as StoredLease;
  server.store.put({ ...lease, metadata: { ...lease.metadata, annotations: { ...lease.metadata.annotations, [CLAIMS_ANNOTATION]: text } } } as never);
}

/** Rewrite the record as an instance of the previous version would have left it (no keptSince). */
function asOlderInstanceWroteIt(server: ApiServer): void {
  const { keptSince: _, ...older } = record(server);
  putRecord(server, JSON.stringify(older));
}

/** A pod of the job ended and one more can be claimed: the observation that leads to a claim. */
async function firstPodDone(server: ApiServer, deps: Awaited<ReturnType<typeof worldWith>>['deps']): Promise<void> {
  await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), deps('a'));
  const [pod] = inFlight(server);
  assert.ok(pod, 'the job claimed and injected its first pod');
  finish(server, pod, 0);
}

describe('observing a job that may claim: the pods are LISTed once when that LIST may stand', () => {
  test('a Lease this version wrote (created where none was): the job, its pods, the Lease — 3 reads, and the claim follows', async () => {
    const { server, deps } = await worldWith({ objects: fixture('test/fixtures/stories/story1-state.yaml') });
    try {
      await firstPodDone(server, deps);
      assert.equal(record(server).keptSince, '1970-01-01T00:00:00.000Z', 'created where no Lease was: kept every claim from the start');
      const d = deps('b');
      assert.deepEqual(await readsOf(server, d.kube, d.lock), ['get EphemeralJob', 'list Pod', 'get Lease']);
      await handle(envelopeFor('Pod', 'default', 'x'), d);
      assert.equal(inFlight(server).length, 1, 'the next pod was claimed and injected from that view');
      assert.equal(record(server).claims.length, 2, 'the ended pod\'s claim stays for its retention; the new one is added');
    } finally {
      await server.close();
    }
  });

  test('a record an older instance wrote (no keptSince): the pods are LISTed again after the Lease until a retention has passed since this version first wrote it', async () => {
    let serverTime = new Date('2026-01-01T00:21:00Z').getTime();
    const { server, deps } = await worldWith({ objects: fixture('test/fixtures/stories/story1-state.yaml'), serverClock: () => new Date(serverTime) });
    try {
      await firstPodDone(server, deps);
      asOlderInstanceWroteIt(server);
      const d = deps('b');
      assert.deepEqual(await readsOf(server, d.kube, d.lock), ['get EphemeralJob', 'list Pod', 'get Lease', 'list Pod']);
      await handle(envelopeFor('Pod', 'default', 'x'), d);
      const [second] = inFlight(server);
      assert.ok(second);
      // The server's time as its Date header said, plus the local time since that answer (kube.serverNow).
      const mark = Date.parse(record(server).keptSince ?? '') - serverTime;
      assert.ok(mark >= 0 && mark < 1000, `the claim write marks the record from now on (${record(server).keptSince})`);
      finish(server, second, 0);
      assert.deepEqual(await readsOf(server, d.kube, d.lock), ['get EphemeralJob', 'list Pod', 'get Lease', 'list Pod'], 'within a retention of the mark: claims an older instance released may still be landing');
      // A retention after the mark, which is up to a second after serverTime (the local time
      // between the last Date header and the claim): with no margin this depended on that time.
      serverTime += (15 + 2 * 5) * 1000 + 1000;
      assert.deepEqual(await readsOf(server, d.kube, d.lock), ['get EphemeralJob', 'list Pod', 'get Lease'], 'a retention later');
    } finally {
      await server.close();
    }
  });

  test('more than skewSeconds between sending the LIST and the Lease coming back: the pods are LISTed again', async () => {
    // A skew of 2 s against a Lease held 2.5 s: a prompt read stays far inside it even on a
    // loaded machine (with 50 ms against 120 ms, a prompt read under load was listed again).
    const { server, deps } = await worldWith({ objects: fixture('test/fixtures/stories/story1-state.yaml'), skewSeconds: 2 });
    try {
      await firstPodDone(server, deps);
      const d = deps('b');
      const slowLease: Kube = { ...d.kube, get: async (ref) => { if (ref.kind === 'Lease') await new Promise((r) => setTimeout(r, 2_500)); return d.kube.get(ref); } };
      assert.deepEqual(await readsOf(server, slowLease, d.lock), ['get EphemeralJob', 'list Pod', 'get Lease', 'list Pod']);
      assert.deepEqual(await readsOf(server, d.kube, d.lock), ['get EphemeralJob', 'list Pod', 'get Lease'], 'the same Lease read promptly');
    } finally {
      await server.close();
    }
  });

  test('a record that claims a pod the first LIST does not show (or shows under another uid): the pods are LISTed again after the Lease', async () => {
    // The pod may have appeared after the LIST and been claimed and injected since (review).
    const { server, deps } = await worldWith({ objects: fixture('test/fixtures/stories/story1-state.yaml') });
    try {
      await firstPodDone(server, deps);
      const d = deps('b');
      const mine = record(server);
      assert.deepEqual(await readsOf(server, d.kube, d.lock), ['get EphemeralJob', 'list Pod', 'get Lease'], 'every claimed pod shown: the LIST stands');
      const claimed = mine.claims[0];
      assert.ok(claimed);
      putRecord(server, JSON.stringify({ ...mine, claims: [...mine.claims, { pod: 'appeared-after-the-list', uid: 'u-new', at: claimed.at }] }));
      // Not shown by the second LIST either: one GET tells gone from relabelled out (claims.ts unlistedHolds).
      assert.deepEqual(await readsOf(server, d.kube, d.lock), ['get EphemeralJob', 'list Pod', 'get Lease', 'list Pod', 'get Pod']);
      putRecord(server, JSON.stringify({ ...mine, claims: [{ ...claimed, uid: 'created-again' }] }));
      assert.deepEqual(await readsOf(server, d.kube, d.lock), ['get EphemeralJob', 'list Pod', 'get Lease', 'list Pod']);
    } finally {
      await server.close();
    }
  });

  test('a sealed record, or an unreadable one: the pods are LISTed again after the Lease', async () => {
    const { server, deps } = await worldWith({ objects: fixture('test/fixtures/stories/story1-state.yaml') });
    try {
      await firstPodDone(server, deps);
      const d = deps('b');
      const put = (text: string): void => putRecord(server, text);
      const mine = record(server);
      put(JSON.stringify({ ...mine, finished: true }));
      assert.deepEqual(await readsOf(server, d.kube, d.lock), ['get EphemeralJob', 'list Pod', 'get Lease', 'list Pod']);
      put('{not json');
      assert.deepEqual(await readsOf(server, d.kube, d.lock), ['get EphemeralJob', 'list Pod', 'get Lease', 'list Pod']);
      put(JSON.stringify({ ...mine, keptSince: 'yesterday' }));
      assert.deepEqual(await readsOf(server, d.kube, d.lock), ['get EphemeralJob', 'list Pod', 'get Lease', 'list Pod'], 'a keptSince that is not a time makes the record unreadable');
    } finally {
      await server.close();
    }
  });
});
