// Answers kube-apiserver itself does not send but a proxy, a restarting server or a shim can:
// none may read as "the object is absent" or "the list is empty", and none may crash the
// engine (review of the client, 2026-11-27).
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { applyPlan } from '../../functions/engine/apply.ts';
import { silentLogger } from '../../functions/engine/logger.ts';
import type { Action } from '../../functions/engine/plan.ts';
import { KubeError } from '../../functions/kube/errors.ts';
import { createHttpsKube } from '../../functions/kube/https-kube.ts';

/** A server that answers every request with this status and body. */
async function answering(status: number, body: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((_req, res) => res.writeHead(status, { 'content-type': 'application/json' }).end(body));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function transient(p: Promise<unknown>, what: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => err instanceof KubeError && err.errorClass === 'transient', what);
}

const POD = { apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'p' };
const unserved = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'the server could not find the requested resource', reason: 'NotFound', details: {}, code: 404 });

test('a 404 that names no object (a path not served) is no "absent" on a read: it is thrown, classed unserved', async () => {
  const srv = await answering(404, unserved);
  try {
    const kube = createHttpsKube({ server: srv.url });
    const isUnserved = (err: unknown): boolean => err instanceof KubeError && err.errorClass === 'unserved';
    await assert.rejects(kube.get(POD), isUnserved);
    await assert.rejects(kube.list('v1', 'Pod', 'ns'), isUnserved);
    await assert.rejects(kube.list('v1', 'Pod', 'ns', { view }), isUnserved);
  } finally {
    await srv.close();
  }
});

test("a 404 that names the object read is kube-apiserver's NotFound: absent", async () => {
  const srv = await answering(404, JSON.stringify({ kind: 'Status', reason: 'NotFound', message: 'pods "p" not found', details: { name: 'p', kind: 'pods' }, code: 404 }));
  try {
    assert.equal(await createHttpsKube({ server: srv.url }).get(POD), null);
  } finally {
    await srv.close();
  }
});

test('a 404 naming nothing on a write is refused for good, not a re-plan (a subresource the server lacks)', async () => {
  const srv = await answering(404, unserved);
  try {
    const inject: Action = { verb: 'patch', apiVersion: 'v1', kind: 'Pod', subresource: 'ephemeralcontainers', namespace: 'ns', name: 'p', patchType: 'strategic', body: { spec: { ephemeralContainers: [] } }, reason: 'test' };
    const r = await applyPlan([inject], { kube: createHttpsKube({ server: srv.url }), logger: silentLogger });
    assert.equal(r.replan, false);
    assert.deepEqual(r.refused.map((x) => x.error.status), [404]);
  } finally {
    await srv.close();
  }
});

/** A LIST read as it arrives, through a view (review82 H2): odd answers are read as a LIST read whole reads them. */
const view = { name: 'test', read: (raw: unknown) => ({ raw }) };

for (const [label, status, body] of [['an empty 200', 200, ''], ['a 200 of {}', 200, '{}'], ['items that are not a list', 200, '{"items":{}}'], ['a 200 cut short', 200, '{"kind":"PodList","items":[{"metadata":{"name":"a"}},{"meta'], ['a 200 of null', 200, 'null'], ['a 200 that is not JSON', 200, '<html>']] as const) {
  test(`${label} to a LIST is no answer, never an empty list (read whole, and through a view)`, async () => {
    const srv = await answering(status, body);
    try {
      await transient(createHttpsKube({ server: srv.url }).list('v1', 'Pod', 'ns'), 'list');
      await transient(createHttpsKube({ server: srv.url }).list('v1', 'Pod', 'ns', { view }), 'list through a view');
    } finally {
      await srv.close();
    }
  });
}

for (const [label, body] of [['an empty 200', ''], ['a 200 of null', 'null'], ['a 200 of a list', '[]']] as const) {
  test(`${label} to a GET is no answer, never "absent" nor an object with nothing in it`, async () => {
    const srv = await answering(200, body);
    try {
      await transient(createHttpsKube({ server: srv.url }).get(POD), 'get');
    } finally {
      await srv.close();
    }
  });
}

test("a LIST whose items are null (Go's nil slice) is an empty list", async () => {
  const srv = await answering(200, '{"kind":"PodList","metadata":{"resourceVersion":"5"},"items":null}');
  try {
    assert.deepEqual(await createHttpsKube({ server: srv.url }).list('v1', 'Pod', 'ns'), { items: [], resourceVersion: '5' });
    assert.deepEqual(await createHttpsKube({ server: srv.url }).list('v1', 'Pod', 'ns', { view }), { items: [], resourceVersion: '5' });
  } finally {
    await srv.close();
  }
});

test('a Status whose fields have odd types is read for what it can give, and does not crash the engine', async () => {
  const srv = await answering(422, JSON.stringify({ kind: 'Status', reason: 7, message: ['x'], code: 422, details: { name: 3, causes: { field: 'spec', message: 'x' } } }));
  try {
    const inject: Action = { verb: 'patch', apiVersion: 'v1', kind: 'Pod', subresource: 'ephemeralcontainers', namespace: 'ns', name: 'p', patchType: 'strategic', body: { metadata: { uid: 'u' }, spec: { ephemeralContainers: [] } }, alreadyExists: 'look-again', reason: 'test' };
    const r = await applyPlan([inject], { kube: createHttpsKube({ server: srv.url }), logger: silentLogger });
    const err = r.refused[0]?.error;
    assert.ok(err);
    assert.deepEqual([err.status, err.reason, err.message, err.causes, err.objectName], [422, '', 'HTTP 422', [], undefined]);
  } finally {
    await srv.close();
  }
});
