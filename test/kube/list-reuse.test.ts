// LIST items reused by uid and resourceVersion (functions/kube/list-reuse.ts): whatever the
// answer, decode() gives exactly what JSON.parse gives, or undefined (then the client parses
// the whole answer). Properties over random answers as kube-apiserver writes them (compact,
// items last, metadata opening with name, namespace, uid, resourceVersion), over lists of
// pods that change between answers (a new resourceVersion with each change, as the API
// server gives), and over arbitrary JSON and broken bodies.
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { identity, ListReuse } from '../../functions/kube/list-reuse.ts';
import { createHttpsKube } from '../../functions/kube/https-kube.ts';
import { startApiServer } from '../../functions/cluster/index.ts';
import { objectKeys, withSafeKeys } from '../support/json-key-bug.ts';

const text = fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('},{"metadata":{', '"items":[', ']', '\\', '"', 'é€😀', '{"metadata":{"uid":"u1"}}'));
/** Values that may hold anything, the cut text included, inside strings and as nested objects (keys: see json-key-bug.ts). */
const anything = withSafeKeys(fc.jsonValue({ maxDepth: 3 }));
const nested = fc.oneof(anything, fc.record({ metadata: fc.record({ name: text, uid: fc.constantFrom('u1', 'u2'), resourceVersion: fc.constantFrom('1', '2') }) }).map((o) => [o, o]));

interface Item { metadata: Record<string, unknown>; spec?: unknown; status?: unknown }

const item = (uids: string[]): fc.Arbitrary<Item> => fc.record({
  metadata: fc.record({
    name: text,
    generateName: fc.option(text, { nil: undefined }),
    namespace: fc.constantFrom('default', 'a'),
    uid: fc.constantFrom(...uids),
    resourceVersion: fc.constantFrom('1', '2', '3'),
    generation: fc.option(fc.nat(), { nil: undefined }),
    labels: fc.option(fc.dictionary(objectKeys(text), text, { maxKeys: 2 }), { nil: undefined }),
  }, { requiredKeys: ['name', 'uid', 'resourceVersion'] }),
  spec: fc.option(nested, { nil: undefined }),
  status: fc.option(anything, { nil: undefined }),
}, { requiredKeys: ['metadata'] });

const list = (items: unknown[], rv = '7'): string => JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: rv }, items });

describe('LIST items reused by uid and resourceVersion', () => {
  test('decode() is JSON.parse, or undefined: any answer, any order of answers, one cache', () => {
    // As in Kubernetes, one uid and resourceVersion is one content: items come from a pool
    // unique by both (the rule the reuse rests on; lists of changing pods are the next test).
    const picks = fc.array(fc.nat(), { maxLength: 5 });
    const recipe = fc.oneof(
      { arbitrary: picks.map((p) => ({ t: 'list' as const, p })), weight: 6 },
      { arbitrary: anything.map((v) => ({ t: 'json' as const, v })), weight: 1 },
      { arbitrary: fc.tuple(picks, fc.nat(400)).map(([p, n]) => ({ t: 'cut' as const, p, n })), weight: 1 },
      { arbitrary: picks.map((p) => ({ t: 'newline' as const, p })), weight: 1 },
      { arbitrary: picks.map((p) => ({ t: 'items-first' as const, p })), weight: 1 },
    );
    const pool = fc.uniqueArray(item(['u1', 'u2', 'u3', 'u4']), { selector: (x) => `${String(x.metadata.uid)}/${String(x.metadata.resourceVersion)}`, minLength: 1, maxLength: 8 });
    let lists = 0;
    let decoded = 0;
    fc.assert(fc.property(pool, fc.array(recipe, { minLength: 1, maxLength: 8 }), fc.constantFrom(0, 200, 1 << 20), (items, recipes, budget) => {
      const reuse = new ListReuse(budget);
      for (const r of recipes) {
        if (r.t === 'list' && budget > 200) lists++;
        const xs = r.t === 'json' ? [] : r.p.map((i) => items[i % items.length]);
        const b = r.t === 'json' ? JSON.stringify(r.v) : r.t === 'cut' ? list(xs).slice(0, r.n) : r.t === 'newline' ? `${list(xs)}\n` : r.t === 'items-first' ? JSON.stringify({ items: xs, metadata: { resourceVersion: '1' } }) : list(xs);
        const got = reuse.decode(Buffer.from(b));
        if (got === undefined) continue;
        if (r.t === 'list' && budget > 200) decoded++;
        assert.deepEqual(got, JSON.parse(b));
      }
    }), { numRuns: Number(process.env.LR_RUNS ?? 3000) });
    // Not a vacuous pass: most lists as kube-apiserver writes them are decoded (the rest hold
    // the cut text in a nested array, or a metadata key that is not plain).
    assert.ok(decoded > lists * 0.5, `${decoded} of ${lists} lists decoded`);
  });

  test('pods that change between answers: every answer decodes to what it says, unchanged pods are the same objects', () => {
    const pod = (i: number, rv: number, extra: string): Item => ({ metadata: { name: `web-${i}`, namespace: 'default', uid: `uid-${i}`, resourceVersion: String(rv), labels: { app: 'web' } }, spec: { containers: [{ name: 'app' }] }, status: { phase: 'Running', message: extra } });
    fc.assert(fc.property(fc.array(fc.record({ i: fc.nat(5), op: fc.constantFrom('change', 'delete', 'add'), extra: text }), { maxLength: 20 }), (ops) => {
      let rv = 10;
      const pods = new Map<number, Item>([0, 1, 2].map((i) => [i, pod(i, ++rv, '')]));
      const reuse = new ListReuse(1 << 20);
      let before: Map<string, unknown> = new Map();
      for (const { i, op, extra } of ops) {
        if (op === 'delete') pods.delete(i);
        else pods.set(i, pod(i, ++rv, extra));
        const body = list([...pods.values()], String(++rv));
        const got = reuse.decode(Buffer.from(body)) as { items: Item[] };
        assert.ok(got, 'an answer as kube-apiserver writes it is decoded');
        assert.deepEqual(got, JSON.parse(body));
        for (const p of got.items) {
          const old = before.get(p.metadata.uid as string) as Item | undefined;
          if (old && old.metadata.resourceVersion === p.metadata.resourceVersion) assert.equal(p, old, 'an unchanged pod is not parsed again');
        }
        before = new Map(got.items.map((p) => [p.metadata.uid as string, p]));
      }
    }), { numRuns: 500 });
  });

  test('kept items are frozen: a caller cannot change what the next answer shares', () => {
    const reuse = new ListReuse(1 << 20);
    const body = Buffer.from(list([{ metadata: { name: 'a', namespace: 'default', uid: 'u', resourceVersion: '1' }, status: { phase: 'Running' } }]));
    const first = reuse.decode(body) as { items: { status: { phase: string } }[] };
    assert.throws(() => { (first.items[0] as { status: { phase: string } }).status.phase = 'Failed'; }, TypeError);
    const second = reuse.decode(body) as { items: unknown[] };
    assert.equal(second.items[0], first.items[0]);
  });

  test('what is not reused: a changed resourceVersion, a different byte count, an answer over the budget, items of another shape', () => {
    const reuse = new ListReuse(1 << 20);
    const a = { metadata: { name: 'a', namespace: 'default', uid: 'u', resourceVersion: '1' }, status: { phase: 'Running' } };
    const first = (reuse.decode(Buffer.from(list([a]))) as { items: unknown[] }).items[0];
    const sameVersionOtherBytes = (reuse.decode(Buffer.from(list([{ ...a, status: { phase: 'Failed' } }]))) as { items: unknown[] }).items[0];
    assert.notEqual(sameVersionOtherBytes, first);
    assert.deepEqual(sameVersionOtherBytes, { ...a, status: { phase: 'Failed' } });
    assert.equal(new ListReuse(10).decode(Buffer.from(list([a]))), undefined, 'larger than the budget: parsed whole by the caller');
    assert.equal(reuse.decode(Buffer.from(list([{ apiVersion: 'v1', kind: 'Pod', ...a }]))), undefined, 'items with kind first (custom resources): parsed whole');
    assert.deepEqual(reuse.decode(Buffer.from(list([]))), { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '7' }, items: [] });
  });

  test('a kept item that comes back a few bytes longer as the last item is parsed, never read past the end (review: a RangeError)', () => {
    const a = { metadata: { name: 'a', namespace: 'default', uid: 'u-1', resourceVersion: '7' }, spec: { x: 1 } };
    const b = { metadata: { name: 'b', namespace: 'default', uid: 'u-2', resourceVersion: '8' }, spec: {} };
    let decodedWhole = 0;
    for (const extra of ['y', 'yy', 'abcdefgh', 'abcdefghijklmnop', 'abcdefghijklmnopqrstuvwxyz']) {
      const reuse = new ListReuse(1 << 20);
      reuse.decode(Buffer.from(list([a])));
      const body = list([b, { ...a, spec: { x: 1, [extra]: 2 } }]);
      const got = reuse.decode(Buffer.from(body));
      if (got !== undefined) assert.deepEqual(got, JSON.parse(body), `+${extra.length}`);
      else decodedWhole++;
    }
    // Giving up (parse the whole answer) is allowed, but not for every case: then nothing was checked.
    assert.ok(decodedWhole < 5, `${decodedWhole} of 5 answers were given up on`);
  });

  test('items are reused only within the scope (cluster) that answered them: uid and resourceVersion are unique per cluster only', () => {
    const reuse = new ListReuse(1 << 20);
    const pod = (phase: string): unknown => ({ metadata: { name: 'a', namespace: 'default', uid: 'u', resourceVersion: '9' }, status: { phase } });
    reuse.decode(Buffer.from(list([pod('Running')])), 'https://one');
    // Same uid, resourceVersion and byte count, another cluster (both restored from one etcd snapshot).
    assert.deepEqual((reuse.decode(Buffer.from(list([pod('Pending')])), 'https://two') as { items: unknown[] }).items, [pod('Pending')]);
  });

  test('identity() reads only the plain keys that open the metadata', () => {
    const id = (s: string): unknown => identity(Buffer.from(s));
    assert.deepEqual(id('{"metadata":{"name":"a","generateName":"a-","namespace":"d","uid":"u","resourceVersion":"5","creationTimestamp":"x"}}'), { uid: 'u', resourceVersion: '5' });
    assert.deepEqual(id('{"metadata":{"name":"a","generation":3,"resourceVersion":"5","uid":"u","labels":{}}}'), { uid: 'u', resourceVersion: '5' });
    assert.equal(id('{"metadata":{"name":"a","labels":{"uid":"x"},"uid":"u","resourceVersion":"5"}}'), undefined, 'not past a nested value');
    assert.equal(id('{"metadata":{"name":"a\\"b","uid":"u","resourceVersion":"5"}}'), undefined, 'not past an escape');
    assert.equal(id('{"metadata":{"name":"a","uid":"u"}}'), undefined, 'no resourceVersion');
  });
});

test('through real HTTP: a second LIST of 200 pods parses only the pod that changed, and reads the same as a client without reuse', async () => {
  const objects = Array.from({ length: 200 }, (_, i) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `web-${i}`, namespace: 'default', labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx' }] } }));
  const server = await startApiServer({ objects });
  try {
    const kube = createHttpsKube({ server: server.url });
    const plain = createHttpsKube({ server: server.url }, { listReuse: null });
    const first = await kube.list('v1', 'Pod', 'default', { labelSelector: 'app=web' });
    const pod = server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web-7' }) as Record<string, unknown>;
    server.store.put({ ...pod, status: { phase: 'Running' } } as never);
    const second = await kube.list('v1', 'Pod', 'default', { labelSelector: 'app=web' });
    assert.deepEqual(second, await plain.list('v1', 'Pod', 'default', { labelSelector: 'app=web' }));
    const same = second.items.filter((p, i) => p === first.items[i]).length;
    assert.equal(same, 199, 'every pod but web-7 is the object read before');
    assert.deepEqual((second.items[first.items.findIndex((p) => (p as { metadata: { name: string } }).metadata.name === 'web-7')] as { status: unknown }).status, { phase: 'Running' });
  } finally {
    await server.close();
  }
});

test('two clients sharing one ListReuse (one per process, several clusters): each reads its own server\'s pods', async () => {
  const make = (prefix: string): unknown[] => Array.from({ length: 20 }, (_, i) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `${prefix}-${i}`, namespace: 'default', labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx' }] } }));
  const [a, b] = await Promise.all([startApiServer({ objects: make('a') }), startApiServer({ objects: make('b') })]);
  try {
    const shared = new ListReuse(1 << 20);
    const ka = createHttpsKube({ server: a.url }, { listReuse: shared });
    const kb = createHttpsKube({ server: b.url }, { listReuse: shared });
    for (let round = 0; round < 2; round++) {
      const [la, lb] = await Promise.all([ka.list('v1', 'Pod', 'default'), kb.list('v1', 'Pod', 'default')]);
      assert.deepEqual(la, await createHttpsKube({ server: a.url }, { listReuse: null }).list('v1', 'Pod', 'default'));
      assert.deepEqual(lb, await createHttpsKube({ server: b.url }, { listReuse: null }).list('v1', 'Pod', 'default'));
      assert.ok(la.items.every((p) => (p as { metadata: { name: string } }).metadata.name.startsWith('a-')));
    }
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});
