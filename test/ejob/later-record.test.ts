// A claims record of a later version (lease-record.ts laterRecordVersion; README.md,
// "Upgrading"): an instance that reads a `v` it does not know claims nothing for the job and
// never writes its Lease — read as unreadable, it would hold the job and then rebuild the
// record without what the newer version kept there. A record of this version that does not
// parse is still repaired.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CLAIMS_ANNOTATION, laterRecordVersion, RECORD_VERSION } from '../../functions/ejob/lease-record.ts';
import { jobKey, jobLeaseName } from '../../functions/ejob/controller.ts';
import { handle } from '../../functions/engine/engine.ts';
import type { ApiServer } from '../../functions/cluster/index.ts';
import { envelopeFor, finish, fixture, inFlight, injected, worldWith } from '../support/ejob-world.ts';

const JOB = 'hello-world-ephemeral-job';
const LEASE = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'ephemera-system', name: jobLeaseName(jobKey('default', JOB)) };

type StoredLease = { metadata: { resourceVersion: string; annotations: Record<string, string> } };

function stored(server: ApiServer): StoredLease {
  return server.store.get(LEASE) as unknown as StoredLease;
}

/** Replace the record's text on the stored Lease, as another writer would have left it. */
function putRecord(server: ApiServer, text: string): void {
  const lease = stored(server);
  server.store.put({ ...lease, metadata: { ...lease.metadata, annotations: { ...lease.metadata.annotations, [CLAIMS_ANNOTATION]: text } } } as never);
}

describe('a claims record written by a later version', () => {
  test('laterRecordVersion reads only a larger integer v from a Lease\'s record', () => {
    const lease = (text: string | undefined): unknown => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l', namespace: 'n', ...(text === undefined ? {} : { annotations: { [CLAIMS_ANNOTATION]: text } }) }, spec: {} });
    assert.equal(laterRecordVersion(lease(JSON.stringify({ v: RECORD_VERSION + 1, anything: [1] }))), RECORD_VERSION + 1);
    for (const text of [JSON.stringify({ v: RECORD_VERSION }), JSON.stringify({ v: 0 }), JSON.stringify({ v: '2' }), JSON.stringify({ v: 2.5 }), '{not json', '[2]', undefined]) {
      assert.equal(laterRecordVersion(lease(text)), undefined, String(text));
    }
    assert.equal(laterRecordVersion(null), undefined);
    assert.equal(laterRecordVersion({ kind: 'Lease' }), undefined);
  });

  test('nothing is claimed, injected or written, however long it stands, and the skip says why; a record of this version that does not parse is rebuilt', async () => {
    let time = new Date('2026-01-01T00:21:00Z').getTime();
    const clock = (): Date => new Date(time);
    const { server, deps } = await worldWith({ objects: fixture('test/fixtures/stories/story1-state.yaml'), serverClock: clock, now: clock });
    try {
      await handle(envelopeFor('EphemeralJob', 'default', JOB, 'ADDED'), deps('a'));
      const [first] = inFlight(server);
      assert.ok(first, 'the job claimed and injected its first pod');
      finish(server, first, 0);
      const later = JSON.stringify({ v: RECORD_VERSION + 1, job: 'whatever', layout: 'unknown to this version' });
      putRecord(server, later);
      const before = { rv: stored(server).metadata.resourceVersion, injected: JSON.stringify(injected(server)) };
      server.requests.clear();
      // Now, and ten minutes on (an unreadable record is rebuilt once it is that old).
      const notes: string[] = [];
      for (const [holder, step] of [['b', 0], ['c', 600_000]] as const) {
        time += step;
        const r = await handle(envelopeFor('Pod', 'default', first), deps(holder));
        notes.push(r.keys.flatMap((k) => k.notes ?? []).join('\n'));
      }
      const writes = server.requests.entries.filter((e) => e.verb !== 'get' && e.verb !== 'list' && e.verb !== 'watch');
      assert.deepEqual(writes.map((e) => `${e.verb} ${e.path}`), [], 'no write at all: no claim, no injection, no status, no Lease repair');
      assert.equal(stored(server).metadata.resourceVersion, before.rv);
      assert.equal(stored(server).metadata.annotations[CLAIMS_ANNOTATION], later);
      assert.equal(JSON.stringify(injected(server)), before.injected);
      for (const n of notes) assert.match(n, new RegExp(`skipped: its Lease ephemera-system/${LEASE.name} holds a claims record of version ${RECORD_VERSION + 1}, written by a newer ephemera`));

      // The control: a record of this version for this job that does not parse is rebuilt once it is old enough.
      const uid = (server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'default', name: JOB }) as unknown as { metadata: { uid: string } }).metadata.uid;
      const broken = JSON.stringify({ v: RECORD_VERSION, job: uid, total: 'many' });
      putRecord(server, broken);
      time += 600_000;
      await handle(envelopeFor('Pod', 'default', first), deps('d'));
      assert.notEqual(stored(server).metadata.annotations[CLAIMS_ANNOTATION], broken, 'an unreadable record of this version is rewritten');
    } finally {
      await server.close();
    }
  });
});
