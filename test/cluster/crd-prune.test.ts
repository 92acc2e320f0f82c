// Structural-schema pruning of custom resources, as kube-apiserver does it, through real HTTP.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pruneBySchema } from '../../functions/cluster/crd-prune.ts';
import { startApiServer } from '../../functions/cluster/index.ts';
import { fixture } from '../support/ejob-world.ts';

const OPENKRUISE_LIKE = fixture('test/fixtures/crds/openkruise-like-ephemeraljob.yaml')[0];
const OURS = fixture('infra/crds/ephemeraljob.yaml')[0];
/** One request to the job collection (POST) or a job (PATCH as a merge patch); the answer's JSON. */
async function call(url: string, method: 'POST' | 'PATCH', path: string, body: unknown): Promise<unknown> {
  const res = await fetch(`${url}/apis/apps.kruise.io/v1alpha1/namespaces/default/ephemeraljobs${path}`, {
    method, headers: { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' }, body: JSON.stringify(body),
  });
  assert.ok(res.ok, `${method} ${path}: HTTP ${res.status} ${await res.clone().text()}`);
  return res.json();
}

const job = {
  apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob',
  metadata: { name: 'j', namespace: 'default', labels: { a: 'b' } },
  spec: {
    selector: { matchLabels: { app: 'x' } }, parallelism: 2, surprise: 'dropped',
    template: { ephemeralContainers: [{ name: 'ec', image: 'busybox', anything: { kept: true } }] },
  },
};

describe('pruneBySchema', () => {
  const schema = {
    type: 'object',
    properties: {
      known: { type: 'object', properties: { a: { type: 'string' } } },
      free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { typed: { type: 'object', properties: {} } } },
      map: { type: 'object', additionalProperties: { type: 'object', properties: { v: { type: 'string' } } } },
      list: { type: 'array', items: { type: 'object', properties: { n: { type: 'string' } } } },
      empty: { type: 'object' },
    },
  };
  test('drops unknown fields at every level; keeps apiVersion/kind/metadata at the root', () => {
    const input = {
      apiVersion: 'x/v1', kind: 'K', metadata: { name: 'n', whatever: 1 }, top: 1,
      known: { a: 'x', b: 'gone' },
      free: { anything: { deep: 1 }, typed: { gone: 1 } },
      map: { k1: { v: 'x', w: 'gone' } },
      list: [{ n: 'x', m: 'gone' }],
      empty: { gone: 1 },
    };
    assert.deepEqual(pruneBySchema(input, schema), {
      apiVersion: 'x/v1', kind: 'K', metadata: { name: 'n', whatever: 1 },
      known: { a: 'x' },
      free: { anything: { deep: 1 }, typed: {} },
      map: { k1: { v: 'x' } },
      list: [{ n: 'x' }],
      empty: {},
    });
  });
});

describe('nulls', () => {
  test('a null where the schema is neither nullable nor defaulted is dropped (PruneNonNullableNullsWithoutDefaults); others stay', () => {
    const schema = { type: 'object', properties: {
      plain: { type: 'boolean' }, nullable: { type: 'string', nullable: true }, defaulted: { type: 'integer', default: 1 },
      nested: { type: 'object', properties: { inner: { type: 'string' } } }, map: { type: 'object', additionalProperties: { type: 'string' } },
    } };
    assert.deepEqual(pruneBySchema({ plain: null, nullable: null, defaulted: null, nested: { inner: null }, map: { k: null, v: 'x' } }, schema), { nullable: null, defaulted: null, nested: {}, map: { v: 'x' } });
  });
});

/** A request's status, Warning header and JSON answer. */
async function ask(url: string, path: string, body: unknown): Promise<{ status: number; warning: string | null; json: Record<string, unknown> }> {
  const res = await fetch(`${url}/apis/apps.kruise.io/v1alpha1/namespaces/default/ephemeraljobs${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, warning: res.headers.get('warning'), json: await res.json() as Record<string, unknown> };
}

describe('the installed CRD decides, not infra/crds (review)', () => {
  const withTtl = { ...job, spec: { ...job.spec, surprise: undefined, ttlSecondsAfterCreated: -5 } };
  test('with OpenKruise\'s CRD, kubectl apply\'s strict validation refuses a field only ephemera\'s CRD has; with ours it is taken', async () => {
    for (const [crd, status] of [[OPENKRUISE_LIKE, 400], [OURS, 201]] as const) {
      const server = await startApiServer({ crds: [crd] });
      try {
        const r = await ask(server.url, '?fieldValidation=Strict', withTtl);
        assert.equal(r.status, status, JSON.stringify(r.json));
        if (status === 400) assert.equal(r.json.message, 'EphemeralJob in version "v1alpha1" cannot be handled as a EphemeralJob: strict decoding error: unknown field "spec.ttlSecondsAfterCreated"');
      } finally {
        await server.close();
      }
    }
  });

  test('with admission, unknown fields are pruned before the schema and the webhook judge the object (a warning, not a refusal); a null is no field', async () => {
    const server = await startApiServer({ crds: [OPENKRUISE_LIKE], admission: true });
    try {
      const template = { ephemeralContainers: [{ name: 'ec', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'app' }] };
      const r = await ask(server.url, '', { ...withTtl, spec: { ...withTtl.spec, template, paused: null } });
      assert.equal(r.status, 201, JSON.stringify(r.json));
      assert.match(r.warning ?? '', /unknown field \\?"spec.ttlSecondsAfterCreated\\?"/);
      const spec = (r.json as { spec: Record<string, unknown> }).spec;
      assert.deepEqual([spec.ttlSecondsAfterCreated, 'paused' in spec], [undefined, false]);
    } finally {
      await server.close();
    }
  });
});

describe('the embedded API server prunes custom resources by their CRD', () => {
  test("OpenKruise's CRD: unknown spec and status fields vanish on create and on a status patch; the schemaless template stays", async () => {
    const server = await startApiServer({ objects: [OPENKRUISE_LIKE] });
    try {
      const created = await call(server.url, 'POST', '', job) as typeof job;
      assert.equal((created.spec as Record<string, unknown>).surprise, undefined);
      assert.deepEqual(created.spec.template.ephemeralContainers[0]?.anything, { kept: true });
      const patched = await call(server.url, 'PATCH', '/j/status', { status: { phase: 'Running', match: 3, ephemera: { v: 1, queue: ['a'] } } }) as { status: Record<string, unknown> };
      assert.deepEqual(patched.status, { phase: 'Running', match: 3 });
      const stored = server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'default', name: 'j' }) as unknown as { status: Record<string, unknown> };
      assert.equal(stored.status.ephemera, undefined, 'never stored');
    } finally {
      await server.close();
    }
  });

  test('an update that only adds unknown fields is a no-op: same resourceVersion, no watch event', async () => {
    const server = await startApiServer({ objects: [OPENKRUISE_LIKE, { ...job, status: { phase: 'Running' } }] });
    try {
      const before = server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'default', name: 'j' }) as { metadata: { resourceVersion: string } };
      const after = await call(server.url, 'PATCH', '/j/status', { status: { ephemera: { v: 1 } } }) as { metadata: { resourceVersion: string }; status?: unknown };
      assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion);
      assert.deepEqual(after.status, { phase: 'Running' });
    } finally {
      await server.close();
    }
  });

  test("ephemera's CRD keeps what its schema lists (ttlSecondsAfterCreated) and prunes the rest", async () => {
    const server = await startApiServer({ crds: [OURS] });
    try {
      const created = await call(server.url, 'POST', '', { ...job, spec: { ...job.spec, ttlSecondsAfterCreated: 60 } }) as { spec: Record<string, unknown> };
      assert.equal(created.spec.ttlSecondsAfterCreated, 60);
      assert.equal(created.spec.surprise, undefined);
    } finally {
      await server.close();
    }
  });

  test("by default the server has ephemera's CRDs installed, as a cluster with ephemera does, and prunes by them", async () => {
    const server = await startApiServer({ objects: [job] });
    try {
      const stored = server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'default', name: 'j' }) as unknown as { spec: Record<string, unknown> };
      assert.equal(stored.spec.surprise, undefined);
    } finally {
      await server.close();
    }
  });

  test('with no CRD installed (crds: []) nothing is pruned', async () => {
    const server = await startApiServer({ objects: [job], crds: [] });
    try {
      const stored = server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'default', name: 'j' }) as unknown as { spec: Record<string, unknown> };
      assert.equal(stored.spec.surprise, 'dropped');
    } finally {
      await server.close();
    }
  });
});
