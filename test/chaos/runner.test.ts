// The chaos run's own count of claims made again (functions/ejob/README.md, step 8), read from
// the Lease writes of a history as the product's Lease reader reads them.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeObject, WriteRecord } from '../../functions/cluster/index.ts';
import { leaseWrite, type Claim } from '../../functions/ejob/lease-record.ts';
import { holdInjections, renewals } from './runner.ts';
import type { ApiServer, Fault, FaultSpec } from '../../functions/cluster/index.ts';

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

/** What holdInjections uses of a server: the faults it adds and removes, and the write history it listens to. */
function fakeServer(): { server: ApiServer; write: (w: Partial<WriteRecord> & { pod: string }) => void; armed: () => FaultSpec[] } {
  const added: { spec: FaultSpec; removed: boolean }[] = [];
  const listeners = new Set<(w: WriteRecord) => void>();
  const server = {
    faults: { add: (spec: FaultSpec): Fault => { const a = { spec, removed: false }; added.push(a); return { remove: () => { a.removed = true; } } as Fault; } },
    history: { onWrite: (fn: (w: WriteRecord) => void) => { listeners.add(fn); return () => listeners.delete(fn); } },
  } as unknown as ApiServer;
  const write = ({ pod, ...w }: Partial<WriteRecord> & { pod: string }): void => {
    const record = { seq: 0, time: '', type: 'MODIFIED', verb: 'patch', subresource: 'ephemeralcontainers', actor: 'proc-1', ...w, object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: pod, namespace: 'chaos-1' } } } as WriteRecord;
    for (const fn of listeners) fn(record);
  };
  return { server, write, armed: () => added.filter((a) => !a.removed).map((a) => a.spec) };
}

describe('chaos run: injections held (review97 F6)', () => {
  const run = (steps: ReturnType<typeof holdInjections>, atMs: number, server: ApiServer): void => {
    for (const s of steps.filter((x) => x.atMs === atMs)) s.run(server, undefined as never, 2);
  };

  test('held from right after the n-th injection to an app pod, not before; once; let go at atMs + forMs', async () => {
    const { server, write, armed } = fakeServer();
    const steps = holdInjections({ atMs: 2000, kind: 'hold-injections', forMs: 9000, afterInjection: 2 });
    run(steps, 0, server);
    write({ pod: 'app-1' });
    write({ pod: 'job-1' }); // a sidecar's signal container: not an app pod's injection
    write({ pod: 'app-2', actor: 'in-process' });
    write({ pod: 'app-2', subresource: '' });
    assert.equal(armed().length, 0, 'one injection so far');
    write({ pod: 'app-3' });
    assert.equal(armed().length, 1, 'held from right after the second');
    assert.equal(armed()[0]!.pathIncludes, '/pods/app-');
    const hold = armed()[0]!.hold!;
    write({ pod: 'app-4' });
    run(steps, 2000, server);
    assert.equal(armed().length, 1, 'the latest start adds no second hold');
    run(steps, 11_000, server);
    assert.equal(armed().length, 0);
    await hold;
    write({ pod: 'app-5' });
    assert.equal(armed().length, 0, 'no hold after the end');
  });

  test('from atMs when the n-th injection has not come by then, or in a schedule from before afterInjection', () => {
    for (const afterInjection of [3, undefined]) {
      const { server, write, armed } = fakeServer();
      const steps = holdInjections({ atMs: 500, kind: 'hold-injections', forMs: 9000, ...(afterInjection ? { afterInjection } : {}) });
      assert.equal(steps.some((s) => s.atMs === 0), afterInjection !== undefined);
      run(steps, 0, server);
      write({ pod: 'app-1' });
      assert.equal(armed().length, 0);
      run(steps, 500, server);
      assert.equal(armed().length, 1);
      write({ pod: 'app-2' });
      write({ pod: 'app-3' });
      assert.equal(armed().length, 1);
    }
  });
});
