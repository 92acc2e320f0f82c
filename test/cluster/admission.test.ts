import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startApiServer, type ApiServer } from '../../functions/cluster/index.ts';
import { humanDuration } from '../../functions/cluster/human-duration.ts';
import { validateSchema } from '../../functions/cluster/schema-validate.ts';

const BASE = '/apis/apps.kruise.io/v1alpha1/namespaces/default/ephemeraljobs';
const container = { name: 'c', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'app' };
const job = (name: string, spec: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', metadata: { name, namespace: 'default', ...extra },
  spec: { selector: { matchLabels: { app: 'x' } }, parallelism: 1, template: { ephemeralContainers: [container] }, ...spec },
});

async function call(server: ApiServer, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const res = await fetch(server.url + path, { method, headers: { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

describe('admission in the embedded cluster', () => {
  test('objects seeded past validation still get their status and finalizers written; new errors are refused', async () => {
    const seeded = [
      job('wide', { parallelism: 42 }, { finalizers: ['apps.kruise.io/ephemeralcontainers-cleanup'] }),
      job('no-image', { template: { ephemeralContainers: [{ ...container, image: '' }] } }, { finalizers: ['apps.kruise.io/ephemeralcontainers-cleanup'] }),
    ];
    const server = await startApiServer({ objects: seeded, admission: true });
    try {
      for (const name of ['wide', 'no-image']) {
        assert.equal((await call(server, 'PATCH', `${BASE}/${name}/status`, { status: { phase: 'Error' } })).status, 200, name);
        assert.equal((await call(server, 'PATCH', `${BASE}/${name}`, { metadata: { finalizers: null } })).status, 200, name);
      }
      const worse = await call(server, 'PATCH', `${BASE}/no-image`, { spec: { parallelism: 11 } });
      assert.equal(worse.status, 422);
      assert.match(String(worse.body.message), /spec\.parallelism: Invalid value: 11/);
    } finally {
      await server.close();
    }
  });

  test('without admission (the default) partial objects are stored as given', async () => {
    const server = await startApiServer();
    try {
      const r = await call(server, 'POST', BASE, { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', metadata: { name: 'bare' } });
      assert.equal(r.status, 201);
    } finally {
      await server.close();
    }
  });

  test('seeded custom resources get generation 1; fieldValidation=Warn, also when not given, answers with a Warning header; Ignore does not', async () => {
    const server = await startApiServer({ objects: [job('seeded')] });
    try {
      const got = await call(server, 'GET', `${BASE}/seeded`);
      assert.equal((got.body.metadata as { generation?: number }).generation, 1);
      const warned = await call(server, 'POST', `${BASE}?fieldValidation=Warn`, job('warned', { extra: true }));
      assert.equal(warned.status, 201);
      assert.equal(warned.headers.get('warning'), '299 - "unknown field \\"spec.extra\\""');
      const unsaid = await call(server, 'POST', BASE, job('unsaid', { extra: true }));
      assert.equal(unsaid.headers.get('warning'), '299 - "unknown field \\"spec.extra\\""', 'handlers/rest.go: Warn unless told otherwise');
      const ignored = await call(server, 'POST', `${BASE}?fieldValidation=Ignore`, job('ignored', { extra: true }));
      assert.equal(ignored.headers.get('warning'), null);
      const bad = await call(server, 'POST', `${BASE}?fieldValidation=Loose`, job('loose'));
      assert.equal(bad.status, 400);
    } finally {
      await server.close();
    }
  });

  test('a Pod\'s ephemeral containers, by the fields kube-apiserver 1.33 decodes: Strict refuses an unknown one (a patch 422, a create 400), Warn drops it with a Warning, Ignore drops it', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'app', image: 'nginx' }] } };
    const server = await startApiServer({ objects: [pod] });
    try {
      const PODS = '/api/v1/namespaces/default/pods';
      const sub = `${PODS}/p/ephemeralcontainers`;
      const patch = async (q: string, c: Record<string, unknown>): Promise<Awaited<ReturnType<typeof call>>> => {
        const res = await fetch(`${server.url}${sub}${q}`, { method: 'PATCH', headers: { 'content-type': 'application/strategic-merge-patch+json' }, body: JSON.stringify({ spec: { ephemeralContainers: [c] } }) });
        return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
      };
      const strict = await patch('?fieldValidation=Strict', { name: 'd1', image: 'busybox', securityContext: { runAsNonRot: true } });
      assert.equal(strict.status, 422);
      assert.equal(strict.body.reason, 'Invalid');
      assert.match(String(strict.body.message), /patch: Invalid value: "map\[spec:map\[ephemeralContainers:\[map\[image:busybox name:d1 securityContext:map\[runAsNonRot:true\]\]\]\]\]": strict decoding error: unknown field "spec\.ephemeralContainers\[0\]\.securityContext\.runAsNonRot"$/);
      const ephemeral = async (): Promise<unknown[]> => ((await call(server, 'GET', `${PODS}/p`)).body.spec as { ephemeralContainers?: unknown[] }).ephemeralContainers ?? [];
      assert.deepEqual(await ephemeral(), [], 'refused: nothing written');
      const warned = await patch('', { name: 'd1', image: 'busybox', comand: ['sh'] });
      assert.equal(warned.status, 200);
      assert.equal(warned.headers.get('warning'), '299 - "unknown field \\"spec.ephemeralContainers[0].comand\\""');
      const ignored = await patch('?fieldValidation=Ignore', { name: 'd2', image: 'busybox', tyy: true });
      assert.equal(ignored.headers.get('warning'), null);
      const written = (await ephemeral()) as Record<string, unknown>[];
      assert.deepEqual(written.map((c) => [c.name, c.image, 'comand' in c || 'tyy' in c]), [['d1', 'busybox', false], ['d2', 'busybox', false]], 'the unknown fields were dropped, the rest written');
      const created = await call(server, 'POST', `${PODS}?fieldValidation=Strict`, { ...pod, metadata: { name: 'q', namespace: 'default' }, spec: { ...pod.spec, ephemeralContainers: [{ name: 'd', image: 'busybox', targetContainerName: 'app', extra: 1 }] } });
      assert.equal(created.status, 400);
      assert.equal(created.body.message, 'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.ephemeralContainers[0].extra"');
    } finally {
      await server.close();
    }
  });

  test('tables: includeObject None, Metadata (default) and Object; anything else is a 400', async () => {
    const server = await startApiServer({ objects: [job('t')] });
    try {
      const get = async (q: string): Promise<Response> => fetch(`${server.url}${BASE}${q}`, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' } });
      const table = (await (await get('')).json()) as { kind: string; columnDefinitions: { name: string }[]; rows: { cells: unknown[]; object: { kind: string } }[] };
      assert.equal(table.kind, 'Table');
      assert.deepEqual(table.columnDefinitions.map((c) => c.name), ['Name', 'STATUS', 'MATCH', 'SUCCEED', 'FAILED', 'RUNNING', 'WAITING', 'AGE']);
      assert.equal(table.rows[0]?.object.kind, 'PartialObjectMetadata');
      assert.equal(((await (await get('?includeObject=Object')).json()) as typeof table).rows[0]?.object.kind, 'EphemeralJob');
      assert.equal(((await (await get('?includeObject=None')).json()) as typeof table).rows[0]?.object, undefined);
      assert.equal((await get('?includeObject=All')).status, 400);
      const plain = await fetch(`${server.url}${BASE}`);
      assert.equal(((await plain.json()) as { kind: string }).kind, 'EphemeralJobList', 'no Accept for tables: plain JSON');
    } finally {
      await server.close();
    }
  });

  test('/openapi/v3 declares fieldValidation on each group-version\'s PATCH, with the CRD schema', async () => {
    const server = await startApiServer();
    try {
      const root = (await (await fetch(`${server.url}/openapi/v3`)).json()) as { paths: Record<string, { serverRelativeURL: string }> };
      const url = root.paths['apis/apps.kruise.io/v1alpha1']?.serverRelativeURL ?? '';
      const doc = (await (await fetch(server.url + url)).json()) as { paths: Record<string, { patch?: { parameters: { name: string }[]; 'x-kubernetes-group-version-kind': unknown } }>; components: { schemas: Record<string, { properties?: { spec?: { properties?: Record<string, { maximum?: number }> } } }> } };
      const patch = doc.paths['/apis/apps.kruise.io/v1alpha1/namespaces/{namespace}/ephemeraljobs/{name}']?.patch;
      assert.ok(patch?.parameters.some((p) => p.name === 'fieldValidation'));
      assert.deepEqual(patch?.['x-kubernetes-group-version-kind'], { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'EphemeralJob' });
      assert.equal(doc.components.schemas['io.kruise.apps.v1alpha1.EphemeralJob']?.properties?.spec?.properties?.parallelism?.maximum, 10);
      assert.equal((await fetch(`${server.url}/openapi/v3/apis/nope/v1`)).status, 404);
    } finally {
      await server.close();
    }
  });
});

describe('schema validation and ages, as units', () => {
  test('type, required, bounds, items, enum; unchanged parts are not judged again', () => {
    const schema = { type: 'object', required: ['a'], properties: { n: { type: 'integer', minimum: 0, maximum: 3 }, l: { type: 'array', minItems: 1, items: { type: 'string', enum: ['x'] } }, s: { type: 'string', maxLength: 2 } } };
    const lines = (errs: { field: string; message: string }[]): string[] => errs.map((e) => `${e.field}: ${e.message}`);
    assert.deepEqual(lines(validateSchema(schema, { n: 'one', l: [], s: 'abc' })), [
      'a: Required value',
      'n: Invalid value: "string": n in body must be of type integer: "string"',
      'l: Invalid value: 0: l in body should have at least 1 items',
      's: Invalid value: "abc": s in body may not be longer than 2',
    ]);
    assert.deepEqual(lines(validateSchema(schema, { a: 1, n: 4, l: ['y'] })), ['n: Invalid value: 4: n in body should be less than or equal to 3', 'l[0]: Unsupported value: "y": supported values: "x"']);
    assert.deepEqual(lines(validateSchema(schema, { a: 1, n: 4, l: ['x'] }, { a: 1, n: 4, l: [] })), [], 'n did not change');
  });

  test('ages read like kubectl\'s', () => {
    assert.deepEqual([59_000, 119_000, 303_000, 3_600_000 * 2.5, 3_600_000 * 3.5, 3_600_000 * 30, 86_400_000 * 3 + 3_600_000].map(humanDuration), ['59s', '119s', '5m3s', '150m', '3h30m', '30h', '3d1h']);
  });
});
