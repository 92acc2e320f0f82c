// Whether the functions' client asks the API server for gzip: yes for a real cluster (as
// client-go does: a LIST of a large job's pods goes ×18 smaller), no for the embedded
// cluster, which is in-process (kubeconfig's disable-compression, set on its KubeConfig).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { startApiServer } from '../../functions/cluster/index.ts';
import { createKube } from '../../functions/kube/client.ts';
import { createHttpsKube } from '../../functions/kube/https-kube.ts';
import { pod } from '../support/relay-world.ts';

const many = Array.from({ length: 300 }, (_, i) => {
  const name = `big-${String(i).padStart(3, '0')}`;
  return { ...pod(name, { app: 'big' }), metadata: { name, namespace: 'default', labels: { app: 'big' }, annotations: { note: 'x'.repeat(600) } } };
});
const server = await startApiServer({ objects: many });
after(() => server.close());

/** The bytes the server sent for one LIST of the 300 pods through this Kube, and how many it read. */
async function listed(kube: ReturnType<typeof createKube>): Promise<{ sent: number; items: number }> {
  server.requests.clear();
  const list = await kube.list('v1', 'Pod', 'default', { labelSelector: 'app=big' });
  return { sent: server.requests.entries[0]?.bytes ?? 0, items: list.items.length };
}

test('the embedded cluster is read without gzip; any other endpoint asks for it, and compression: true asks whatever the endpoint says', async () => {
  const json = JSON.stringify(server.rest.list(server.store.defFor('v1', 'Pod'), 'default', { labelSelector: 'app=big' })).length;
  assert.ok(json > 128 * 1024, 'large enough for kube-apiserver to gzip');
  const embedded = await listed(createKube(server.kubeConfig()));
  assert.deepEqual(embedded, { sent: json, items: 300 }, 'the JSON as it is');
  const byUrl = await listed(createHttpsKube({ server: server.url }));
  assert.equal(byUrl.items, 300);
  assert.ok(byUrl.sent < json / 10, `gzipped: ${byUrl.sent} B for ${json}`);
  const forced = await listed(createKube(server.kubeConfig(), { compression: true }));
  assert.deepEqual(forced, byUrl);
  const off = await listed(createHttpsKube({ server: server.url, disableCompression: true }));
  assert.equal(off.sent, json);
});
