// ValidateObjectMeta's rules on labels and annotations, which every kind gets, and the one
// name rule Events have (a path segment): as kube-apiserver answers them (wire-format review).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { harness } from './support.ts';

async function post(url: string, path: string, body: unknown): Promise<{ status: number; message: string; causes: string[] }> {
  const r = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const s = (await r.json()) as { message?: string; details?: { causes?: { field: string; reason: string }[] } };
  return { status: r.status, message: s.message ?? '', causes: (s.details?.causes ?? []).map((c) => `${c.field}: ${c.reason}`) };
}

test('a label value over 63 characters, a bad label key or annotation key, or annotations over 256 KiB are 422; good ones are stored', async () => {
  const { server } = await harness();
  const crr = (name: string, meta: Record<string, unknown>): unknown => ({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ContainerRecreateRequest', metadata: { name, ...meta }, spec: { podName: 'p', containers: [{ name: 'c' }] } });
  const crrs = '/apis/apps.kruise.io/v1alpha1/namespaces/default/containerrecreaterequests';
  const long = await post(server.url, crrs, crr('a', { labels: { 'crr.apps.kruise.io/node-name': `ip-10-0-0-1.${'x'.repeat(60)}` } }));
  assert.equal(long.status, 422);
  assert.deepEqual(long.causes, ['metadata.labels: FieldValueInvalid']);
  assert.match(long.message, /metadata\.labels: Invalid value: "ip-10-0-0-1\.x+": must be no more than 63 characters/);
  assert.equal((await post(server.url, crrs, crr('b', { labels: { 'bad key!': 'v' } }))).status, 422);
  assert.equal((await post(server.url, crrs, crr('c', { annotations: { '/nope': 'v' } }))).status, 422);
  const big = await post(server.url, '/apis/coordination.k8s.io/v1/namespaces/default/leases', { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l', annotations: { 'ephemera.io/ejob-claims': 'x'.repeat(256 * 1024) } }, spec: {} });
  assert.equal(big.status, 422);
  assert.match(big.message, /metadata\.annotations: Too long: may not be more than 262144 bytes/);
  assert.equal((await post(server.url, crrs, crr('d', { labels: { 'crr.apps.kruise.io/node-name': 'node-a', empty: '' }, annotations: { 'Example.com/Key': 'any text at all' } }))).status, 201);
});

test('an Event name need not be a DNS subdomain (kube-apiserver checks only that it can sit in a URL)', async () => {
  const { server } = await harness();
  const event = (name: string): unknown => ({ apiVersion: 'v1', kind: 'Event', metadata: { name }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' }, reason: 'R', message: 'm' });
  assert.equal((await post(server.url, '/api/v1/namespaces/default/events', event(`${'a'.repeat(199)}-.461aa566`))).status, 201);
  assert.equal((await post(server.url, '/api/v1/namespaces/default/events', event('a%b'))).status, 422);
  const newer = { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'Not_A_Subdomain' }, eventTime: '2026-01-01T00:00:00.000000Z', reportingController: 'x', reportingInstance: 'y', action: 'A', reason: 'R', regarding: { kind: 'Pod', name: 'p', namespace: 'default' } };
  assert.equal((await post(server.url, '/apis/events.k8s.io/v1/namespaces/default/events', newer)).status, 422, 'events.k8s.io holds names to DNS subdomains');
});
