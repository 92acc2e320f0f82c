// The chaos run's own count of claims made again (functions/ejob/README.md, step 8), read from
// the Lease writes of a history as the product's Lease reader reads them.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeObject, WriteRecord } from '../../functions/cluster/index.ts';
import { leaseWrite, type Claim } from '../../functions/ejob/lease-record.ts';
import { renewals } from './runner.ts';

const cfg = { namespace: 'ephemera-system', holder: 'proc-1', leaseSeconds: 15, skewSeconds: 5, name: 'ejob-lease-a', key: 'EphemeralJob/default/a' };
let seq = 0;

/** A history entry: the Lease as written, holding these claims for job `job`. */
function leaseWritten(claims: Claim[], o: { name?: string; job?: string } = {}): WriteRecord {
  const action = leaseWrite({ cfg: { ...cfg, name: o.name ?? cfg.name }, view: { kind: 'absent' }, serverNow: new Date('2026-01-01T00:00:00Z') }, { v: 1, job: o.job ?? 'job-uid', total: claims.length, claims }, 'test');
  const body = action.body as KubeObject;
  seq++;
  return { seq, time: '2026-01-01T00:00:00.000Z', type: 'MODIFIED', verb: 'update', subresource: '', actor: 'proc-1', object: { ...body, metadata: { ...body.metadata, resourceVersion: String(seq) } } };
}

describe('chaos run: claims made again, counted from the history', () => {
  test('each renewed claim once, however many writes carry it; plain claims and other writes not at all', () => {
    const first = { pod: 'p1', at: '2026-01-01T00:00:01.000Z' };
    const renewed: Claim = { pod: 'p1', at: '2026-01-01T00:00:06.000Z', renewed: true };
    const other: Claim = { pod: 'p2', at: '2026-01-01T00:00:07.000Z', renewed: true };
    const pod = { seq: 99, time: '', type: 'MODIFIED', verb: 'patch', subresource: '', actor: 'proc-1', object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p1', namespace: 'default', resourceVersion: '99' } } } as WriteRecord;
    assert.equal(renewals([leaseWritten([first]), pod]), 0);
    assert.equal(renewals([leaseWritten([first]), leaseWritten([renewed]), leaseWritten([renewed, { pod: 'p3', at: first.at }])]), 1, 'the same renewal carried by a later write is one');
    assert.equal(renewals([leaseWritten([renewed]), leaseWritten([renewed], { name: 'ejob-lease-b', job: 'job-b' }), leaseWritten([renewed, other])]), 3, 'per Lease and per claim');
  });

  test('a Lease whose record does not parse counts nothing (and does not throw)', () => {
    const w = leaseWritten([{ pod: 'p1', at: '2026-01-01T00:00:06.000Z', renewed: true }]);
    const broken = { ...w, object: { ...w.object, metadata: { ...w.object.metadata, annotations: { 'ephemera.io/ejob-claims': '{not json' } } } };
    assert.equal(renewals([broken]), 0);
  });
});
