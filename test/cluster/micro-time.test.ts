// metav1.MicroTime fields (a Lease's acquireTime and renewTime, an Event's eventTime) as
// kube-apiserver decodes them: Go's layout `2006-01-02T15:04:05.000000Z07:00` takes exactly six
// fractional digits, so `…:00Z` and JavaScript's `…:00.123Z` are a 400 on every write, and
// what is kept is written back in UTC with six digits (apimachinery micro_time.go). And the
// Lease strategy's other rule the functions rely on: no update without a resourceVersion.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { microTime as written } from '../../functions/api/meta.ts';
import { microTime } from '../../functions/cluster/micro-time.ts';
import { harness } from './support.ts';

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
const lease = (spec: Record<string, unknown>, rv?: string): Record<string, unknown> =>
  ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l', ...(rv ? { resourceVersion: rv } : {}) }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15, ...spec } });

describe('MicroTime fields', () => {
  test('a Lease whose renewTime or acquireTime lacks six fractional digits is refused with 400 on create, update and patch', async () => {
    const { server } = await harness();
    const send = (method: string, path: string, body: unknown, type = 'application/json'): Promise<Response> =>
      fetch(`${server.url}${path}`, { method, headers: { 'content-type': type }, body: JSON.stringify(body) });
    for (const bad of ['2026-01-01T00:00:00Z', '2026-01-01T00:00:00.123Z', '2026-01-01T00:00:00.123456789Z', '2026-02-30T00:00:00.000000Z']) {
      const r = await send('POST', LEASES, lease({ renewTime: bad }));
      assert.equal(r.status, 400, bad);
      const status = (await r.json()) as { reason: string; message: string };
      assert.equal(status.reason, 'BadRequest');
      assert.match(status.message, /^Lease in version "v1" cannot be handled as a Lease: parsing time /, bad);
    }
    assert.equal((await (await send('POST', LEASES, lease({ acquireTime: '2026-01-01T00:00:00Z' }))).json() as { message: string }).message,
      'Lease in version "v1" cannot be handled as a Lease: parsing time "2026-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"');
    const created = await send('POST', LEASES, lease({ renewTime: '2026-01-01T01:00:00.250000+01:00' }));
    assert.equal(created.status, 201);
    const kept = (await created.json()) as { metadata: { resourceVersion: string }; spec: { renewTime: string } };
    assert.equal(kept.spec.renewTime, '2026-01-01T00:00:00.250000Z', 'written back in UTC, six digits');
    assert.equal((await send('PUT', `${LEASES}/l`, lease({ renewTime: '2026-01-01T00:00:01Z' }, kept.metadata.resourceVersion))).status, 400);
    assert.equal((await send('PATCH', `${LEASES}/l`, { spec: { renewTime: '2026-01-01T00:00:01.5Z' } }, 'application/merge-patch+json')).status, 400);
    assert.equal((await send('PUT', `${LEASES}/l`, lease({ renewTime: '2026-01-01T00:00:01.000000Z' }, kept.metadata.resourceVersion))).status, 200);
  });

  test('an Event\'s eventTime is a MicroTime too, its firstTimestamp a Time (any RFC 3339)', async () => {
    const { server } = await harness();
    const event = (extra: Record<string, unknown>): string => JSON.stringify({ apiVersion: 'v1', kind: 'Event', metadata: { name: `e${Math.random().toString(36).slice(2)}` }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' }, reason: 'R', message: 'm', ...extra });
    const post = (body: string): Promise<Response> => fetch(`${server.url}/api/v1/namespaces/default/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    assert.equal((await post(event({ eventTime: '2026-01-01T00:00:00Z' }))).status, 400);
    assert.equal((await post(event({ eventTime: '2026-01-01T00:00:00.000000Z', firstTimestamp: '2026-01-01T00:00:00Z' }))).status, 201);
  });

  test('what ephemera writes is always a MicroTime kube-apiserver takes, and reads back as the same instant', () => {
    fc.assert(fc.property(fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }), (d) => {
      const text = written(d);
      assert.equal(microTime(text), text);
      assert.equal(new Date(text).getTime(), d.getTime());
    }));
  });
});

describe('PUT without a resourceVersion', () => {
  test('is refused for a Lease and a custom resource (their strategies allow no unconditional update), taken for a Pod', async () => {
    const { server } = await harness();
    const put = (path: string, body: unknown): Promise<Response> => fetch(`${server.url}${path}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const post = (path: string, body: unknown): Promise<Response> => fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal((await post(LEASES, lease({}))).status, 201);
    const leaseAnswer = await put(`${LEASES}/l`, lease({ holderIdentity: 'b' }));
    assert.equal(leaseAnswer.status, 422);
    assert.equal(((await leaseAnswer.json()) as { message: string }).message, 'leases.coordination.k8s.io "l" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update');
    const ejobs = '/apis/apps.kruise.io/v1alpha1/namespaces/default/ephemeraljobs';
    const job = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', metadata: { name: 'j' }, spec: { selector: { matchLabels: { app: 'web' } }, template: { ephemeralContainers: [{ name: 'c', image: 'busybox', targetContainerName: 'app' }] } } };
    assert.equal((await post(ejobs, job)).status, 201);
    assert.equal((await put(`${ejobs}/j`, job)).status, 422);
    const pods = '/api/v1/namespaces/default/pods';
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'app', image: 'nginx' }] } };
    assert.equal((await post(pods, pod)).status, 201);
    assert.equal((await put(`${pods}/p`, { ...pod, metadata: { name: 'p', labels: { a: 'b' } } })).status, 200);
  });
});
