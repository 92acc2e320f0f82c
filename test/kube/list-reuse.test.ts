// LIST items reused by uid and resourceVersion (functions/kube/list-reuse.ts): whatever the
// answer, decode() gives exactly what JSON.parse gives, or undefined (then the client parses
// the whole answer). Properties over random answers as kube-apiserver writes them (compact,
// items last, metadata opening with name, namespace, uid, resourceVersion), over lists of
// pods that change between answers (a new resourceVersion with each change, as the API
// server gives), and over arbitrary JSON and broken bodies. The same for an answer read as it
// arrives through a view (viewed(); review82 H2), at the end.
import fc from 'fast-check';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { identity, itemBlocks, ListReuse } from '../../functions/kube/list-reuse.ts';
import { ListStream, type ListBody } from '../../functions/kube/list-stream.ts';
import { KubeError } from '../../functions/kube/errors.ts';
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

  test('the budget drops the item reused longest ago, not the one kept first: a reuse counts as a use (review92 G7)', () => {
    const item = (name: string): unknown => ({ metadata: { name, namespace: 'default', uid: `u-${name}`, resourceVersion: '1' }, status: { phase: 'Running' } });
    const size = JSON.stringify(item('a')).length;
    const reuse = new ListReuse(2 * size + size / 2);
    const read = (name: string): unknown => (reuse.decode(Buffer.from(list([item(name)]))) as { items: unknown[] }).items[0];
    const a = read('a');
    read('b');
    assert.equal(read('a'), a, 'a reused: now the latest used');
    read('c');
    assert.equal(read('a'), a, 'c took b\'s place, not a\'s');
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

test('two clients sharing one ListReuse, listing through a view: each reads its own server\'s pod, even one a label apart from the other\'s with the same uid and resourceVersion (review92 G5)', async () => {
  // Items as kube-apiserver lists them, metadata first (only those are kept: list-reuse.ts).
  const pod = (team: string): unknown => ({ metadata: { name: 'a', namespace: 'default', uid: 'u', resourceVersion: '9', labels: { team } }, status: { phase: 'Running' } });
  const serve = async (team: string): Promise<{ server: http.Server; url: string }> => {
    const body = JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '10' }, items: [pod(team)] });
    const server = http.createServer((req, res) => {
      req.on('error', () => undefined);
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  };
  const [one, two] = await Promise.all([serve('red'), serve('blu')]);
  try {
    const shared = new ListReuse(1 << 20);
    const view = { name: 'test-scope/1', read: (raw: unknown): unknown => raw };
    const labels = async (url: string): Promise<unknown> => (await createHttpsKube({ server: url }, { listReuse: shared }).list('v1', 'Pod', 'default', { view })).items.map((p) => (p as { metadata: { labels: unknown } }).metadata.labels);
    assert.deepEqual(await labels(one.url), [{ team: 'red' }]);
    assert.deepEqual(await labels(two.url), [{ team: 'blu' }], 'not the pod kept from the other server');
    assert.deepEqual(await labels(one.url), [{ team: 'red' }]);
  } finally {
    for (const s of [one, two]) {
      s.server.closeAllConnections();
      s.server.close();
    }
  }
});

// A LIST read as it arrives through a view (list-reuse.ts viewed(), list-stream.ts, review82
// H2): the items are what the view makes of JSON.parse's items, however the answer is cut
// into chunks or blocks (itemBlocks), with the items kept from earlier answers taken without
// being read again.
describe('a LIST read as it arrives through a view, items kept between answers', () => {
  let reads = 0;
  const view = { name: 'test/1', read: (raw: unknown): { of: unknown } => (reads++, { of: raw }) };

  /** What the stream made of `body` cut at `cuts` (into blocks of `block` bytes when given), or the error it threw. */
  function streamed(reuse: ListReuse, body: Buffer, cut: { cuts: number[]; block: number | undefined }, scope = ''): ListBody<{ of: unknown }> | Error {
    const v = reuse.viewed(view, scope);
    const s = new ListStream(v.map, undefined, v.kept);
    const at = [...new Set(cut.cuts.map((c) => c % Math.max(1, body.length)))].sort((a, b) => a - b);
    const parts = [0, ...at].map((from, i) => body.subarray(from, at[i] ?? body.length)).filter((b) => b.length > 0);
    try {
      if (cut.block === undefined) for (const p of parts) s.write(Buffer.from(p));
      else {
        const blocks = itemBlocks(cut.block, (b) => s.write(b));
        for (const p of parts) blocks.add(Buffer.from(p));
        blocks.end();
      }
      return s.end();
    } catch (err) {
      return err as Error;
    }
  }

  /** What JSON.parse makes of `body` through the view: its items, or an error where the stream must throw one too. */
  function parsed(body: Buffer): ListBody<{ of: unknown }> | 'error' | 'not a list' {
    let o: unknown;
    try {
      o = JSON.parse(body.toString('utf8'));
    } catch {
      return 'error';
    }
    if (o === null || typeof o !== 'object' || Array.isArray(o)) return 'not a list';
    const l = o as { items?: unknown; metadata?: { resourceVersion?: unknown } };
    const rv = l.metadata?.resourceVersion;
    return { items: Array.isArray(l.items) ? l.items.map((x) => ({ of: x })) : l.items === null ? null : undefined, resourceVersion: typeof rv === 'string' ? rv : '', continue: undefined };
  }

  const cutting = fc.record({ cuts: fc.array(fc.nat(), { maxLength: 6 }), block: fc.option(fc.integer({ min: 1, max: 400 }), { nil: undefined }) });

  test('property: the view of JSON.parse\'s items, or an error where JSON.parse has one; any answer, any cuts, one cache', () => {
    const recipe = fc.oneof(
      { arbitrary: fc.array(fc.nat(), { maxLength: 6 }).map((p) => ({ t: 'list' as const, p })), weight: 6 },
      { arbitrary: anything.map((v) => ({ t: 'json' as const, v })), weight: 1 },
      { arbitrary: fc.tuple(fc.array(fc.nat(), { maxLength: 5 }), fc.nat(400)).map(([p, n]) => ({ t: 'cut' as const, p, n })), weight: 1 },
      { arbitrary: fc.array(fc.nat(), { maxLength: 5 }).map((p) => ({ t: 'newline' as const, p })), weight: 1 },
      { arbitrary: fc.array(fc.nat(), { maxLength: 5 }).map((p) => ({ t: 'items-first' as const, p })), weight: 1 },
    );
    // One uid and resourceVersion is one content, as in Kubernetes (the rule reuse rests on).
    const pool = fc.uniqueArray(item(['u1', 'u2', 'u3', 'u4']), { selector: (x) => `${String(x.metadata.uid)}/${String(x.metadata.resourceVersion)}`, minLength: 1, maxLength: 8 });
    let listed = 0;
    let read = 0;
    fc.assert(fc.property(pool, fc.array(fc.tuple(recipe, cutting), { minLength: 1, maxLength: 6 }), fc.constantFrom(0, 200, 1 << 20), (items, recipes, budget) => {
      const reuse = new ListReuse(budget);
      for (const [r, cut] of recipes) {
        const xs = r.t === 'json' ? [] : r.p.map((i) => items[i % items.length]);
        const b = Buffer.from(r.t === 'json' ? JSON.stringify(r.v) : r.t === 'cut' ? list(xs).slice(0, r.n) : r.t === 'newline' ? `${list(xs)}\n` : r.t === 'items-first' ? JSON.stringify({ items: xs, metadata: { resourceVersion: '1' } }) : list(xs));
        reads = 0;
        const got = streamed(reuse, b, cut);
        const want = parsed(b);
        if (want === 'error') assert.ok(got instanceof SyntaxError, 'an answer JSON.parse refuses is refused');
        else if (want === 'not a list') assert.ok(got instanceof Error ? got instanceof SyntaxError : !Array.isArray(got.items), 'no list read from what is none');
        else assert.deepEqual(got, want);
        if (r.t === 'list' && budget > 200 && cut.cuts.length === 0 && cut.block === undefined) {
          listed += xs.length;
          read += reads;
        }
      }
    }), { numRuns: Number(process.env.LR_RUNS ?? 3000) });
    // Not a vacuous pass: items were taken from the cache (answers in one chunk: read less often
    // than listed; the next test checks that every unchanged pod is).
    assert.ok(read < listed * 0.95, `${read} of ${listed} listed items read through the view`);
  });

  test('pods that change between answers: each answer is what it says through the view, and an unchanged pod is neither read again nor a new object', () => {
    const pod = (i: number, rv: number, extra: string): Item => ({ metadata: { name: `web-${i}`, namespace: 'default', uid: `uid-${i}`, resourceVersion: String(rv), labels: { app: 'web' } }, spec: { containers: [{ name: 'app' }] }, status: { phase: 'Running', message: extra } });
    fc.assert(fc.property(fc.array(fc.record({ i: fc.nat(5), op: fc.constantFrom('change', 'delete', 'add'), extra: text, cut: cutting }), { maxLength: 20 }), (ops) => {
      let rv = 10;
      const pods = new Map<number, Item>([0, 1, 2].map((i) => [i, pod(i, ++rv, '')]));
      const reuse = new ListReuse(1 << 20);
      let before = new Map<string, { of: unknown }>();
      for (const { i, op, extra, cut } of ops) {
        if (op === 'delete') pods.delete(i);
        else pods.set(i, pod(i, ++rv, extra));
        const body = Buffer.from(list([...pods.values()], String(++rv)));
        const got = streamed(reuse, body, { ...cut, block: cut.block === undefined ? undefined : cut.block + 2000 });
        assert.ok(!(got instanceof Error));
        assert.deepEqual(got, parsed(body));
        for (const p of got.items ?? []) {
          const m = (p.of as Item).metadata;
          const old = before.get(m.uid as string);
          if (old && (old.of as Item).metadata.resourceVersion === m.resourceVersion && cut.block !== undefined) assert.equal(p, old, 'in blocks cut between items, an unchanged pod is the object kept');
        }
        before = new Map((got.items ?? []).map((p) => [(p.of as Item).metadata.uid as string, p]));
      }
    }), { numRuns: 500 });
  });

  test('a kept item that comes back with its uid and resourceVersion but other bytes (longer, shorter, or as long) is read again', () => {
    const a = { metadata: { name: 'a', namespace: 'default', uid: 'u-1', resourceVersion: '7' }, spec: { x: 'abcdefgh' } };
    const b = { metadata: { name: 'b', namespace: 'default', uid: 'u-2', resourceVersion: '8' }, spec: {} };
    for (const x of ['abcdefghi', 'abcdefg', 'abcdefgX', 'Xbcdefgh']) {
      for (const order of [[a, b], [b, a]]) {
        const reuse = new ListReuse(1 << 20);
        assert.ok(!(streamed(reuse, Buffer.from(list(order)), { cuts: [], block: undefined }) instanceof Error));
        const body = Buffer.from(list(order.map((o) => (o === a ? { ...a, spec: { x } } : o))));
        reads = 0;
        assert.deepEqual(streamed(reuse, body, { cuts: [], block: undefined }), parsed(body), x);
      }
    }
  });

  test('items are kept per view and per scope (cluster)', () => {
    const reuse = new ListReuse(1 << 20);
    // Two clusters restored from one etcd snapshot: the same uid and resourceVersion, the same
    // length and last bytes, a label apart (review92 G5: a last-bytes difference hid the scope).
    const pod = (team: string): unknown => ({ metadata: { name: 'a', namespace: 'default', uid: 'u', resourceVersion: '9', labels: { team } }, status: { phase: 'Running' } });
    streamed(reuse, Buffer.from(list([pod('red')])), { cuts: [], block: undefined }, 'https://one');
    const other = streamed(reuse, Buffer.from(list([pod('blu')])), { cuts: [], block: undefined }, 'https://two') as ListBody<{ of: unknown }>;
    assert.deepEqual(other.items, [{ of: pod('blu') }]);
    // The same item read whole (decode) is not what a view kept of it.
    assert.deepEqual((reuse.decode(Buffer.from(list([pod('red')])), 'https://one') as { items: unknown[] }).items, [pod('red')]);
  });

  test('what a view makes of an item is frozen all the way down, as decode()\'s items are: a caller cannot change what the next answer shares (review92 G7)', () => {
    const reuse = new ListReuse(1 << 20);
    const body = Buffer.from(list([{ metadata: { name: 'a', namespace: 'default', uid: 'u', resourceVersion: '1' }, status: { phase: 'Running' } }]));
    const first = streamed(reuse, body, { cuts: [], block: undefined }) as ListBody<{ of: { status: { phase: string } } }>;
    const item = first.items![0]!;
    assert.throws(() => { item.of.status.phase = 'Failed'; }, TypeError);
    assert.ok(Object.isFrozen(item) && Object.isFrozen(item.of), 'the view\'s own object and what it holds');
    const second = streamed(reuse, body, { cuts: [], block: undefined }) as ListBody<unknown>;
    assert.equal(second.items![0], item, 'shared with the next answer');
  });

  test('the budget counts what the view kept, not the item: a trimmed pod costs its own bytes', () => {
    const big = (i: number): unknown => ({ metadata: { name: `p${i}`, namespace: 'default', uid: `u${i}`, resourceVersion: '1' }, spec: { blob: 'x'.repeat(2000) } });
    const small = { name: 'small/1', read: (raw: unknown): string => (raw as { metadata: { name: string } }).metadata.name };
    const reuse = new ListReuse(10 * 1024);
    const body = Buffer.from(list(Array.from({ length: 50 }, (_, i) => big(i))));
    const read = (): string[] => {
      const v = reuse.viewed(small);
      const s = new ListStream(v.map, undefined, v.kept);
      s.write(body);
      return s.end().items ?? [];
    };
    const first = read();
    let calls = 0;
    const counted = { name: small.name, read: (raw: unknown): string => (calls++, small.read(raw)) };
    const v = reuse.viewed(counted);
    const s = new ListStream(v.map, undefined, v.kept);
    s.write(body);
    assert.deepEqual(s.end().items, first);
    assert.equal(calls, 0, '100 KB of items, kept as 50 names within 10 KiB: none read again');
  });

  test('itemBlocks: the blocks are the answer, cut between items where it can, and each may be filled again once written', () => {
    fc.assert(fc.property(fc.array(item(['u1', 'u2', 'u3']), { maxLength: 12 }), fc.integer({ min: 1, max: 600 }), fc.array(fc.nat(), { maxLength: 8 }), (xs, size, cuts) => {
      const body = Buffer.from(list(xs));
      const blocks: Buffer[] = [];
      const b = itemBlocks(size, (block) => blocks.push(Buffer.from(block)));
      const at = [...new Set(cuts.map((c) => c % Math.max(1, body.length)))].sort((x, y) => x - y);
      for (const [i, from] of [0, ...at].entries()) b.add(body.subarray(from, at[i] ?? body.length));
      b.end();
      assert.deepEqual(Buffer.concat(blocks), body);
      let end = 0;
      for (const block of blocks.slice(0, -1)) {
        end += block.length;
        // Cut between two items, or (no item ends inside it) whole.
        assert.ok(body.toString('latin1', end - 1, end + 14) === '},{"metadata":{' || block.indexOf('},{"metadata":{', 1) < 0, 'cut after the last item that ends in it');
      }
    }), { numRuns: 1000 });
  });
});

test('through real HTTP, gzipped and not: a LIST through a view is the view of the items read whole, and a second LIST reads only the pod that changed', async () => {
  // 1 KB of annotations a pod: 200 pods pass 128 KiB, which the server gzips when asked.
  const objects = Array.from({ length: 200 }, (_, i) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `web-${i}`, namespace: 'default', labels: { app: 'web' }, annotations: { note: `${i}`.repeat(1000 / String(i).length) } }, spec: { containers: [{ name: 'app', image: 'nginx' }] } }));
  const server = await startApiServer({ objects });
  try {
    for (const compression of [false, true]) {
      let reads = 0;
      const view = { name: `names/${compression}`, read: (raw: unknown): string => (reads++, (raw as { metadata: { name: string } }).metadata.name) };
      const kube = createHttpsKube({ server: server.url }, { compression });
      const whole = await createHttpsKube({ server: server.url }, { listReuse: null, compression }).list('v1', 'Pod', 'default', { labelSelector: 'app=web' });
      const first = await kube.list('v1', 'Pod', 'default', { labelSelector: 'app=web', view });
      assert.deepEqual(first, { items: whole.items.map((p) => view.read(p)), resourceVersion: whole.resourceVersion });
      const pod = server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web-7' }) as Record<string, unknown>;
      server.store.put({ ...pod, status: { phase: compression ? 'Running' : 'Pending' } } as never);
      reads = 0;
      const second = await kube.list('v1', 'Pod', 'default', { labelSelector: 'app=web', view });
      assert.deepEqual(second.items, first.items);
      assert.equal(reads, 1, 'only web-7, which changed, is read again');
    }
  } finally {
    await server.close();
  }
});

test('a LIST through a view is read as it arrives: its first items are read before the rest of the answer is sent (review82 H2)', async () => {
  const pod = (i: number): string => JSON.stringify({ metadata: { name: `p${i}`, namespace: 'default', uid: `u${i}`, resourceVersion: '1' }, spec: { blob: 'x'.repeat(4000) } });
  const head = `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"3"},"items":[${Array.from({ length: 100 }, (_, i) => pod(i)).join(',')}`;
  const tail = `,${Array.from({ length: 100 }, (_, i) => pod(100 + i)).join(',')}]}`;
  let firstRead!: () => void;
  const readOne = new Promise<void>((resolve) => (firstRead = resolve));
  let readBeforeTail = 0;
  let tailSent = false;
  const srv = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(head);
    // Sent once the client has read an item of the head, or after a while if it never does
    // (a client that gathers the whole answer first): then the assertion below fails.
    const fallback = setTimeout(() => firstRead(), 3000);
    fallback.unref();
    void readOne.then(() => {
      clearTimeout(fallback);
      tailSent = true;
      res.end(tail);
    });
  });
  srv.on('clientError', () => {});
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  try {
    const view = { name: 'stream-probe', read: (raw: unknown): string => {
      if (!tailSent) readBeforeTail++;
      firstRead();
      return (raw as { metadata: { name: string } }).metadata.name;
    } };
    const got = await createHttpsKube({ server: `http://127.0.0.1:${(srv.address() as AddressInfo).port}` }).list('v1', 'Pod', 'default', { view });
    assert.equal(got.items.length, 200);
    assert.ok(readBeforeTail > 50, `${readBeforeTail} items were read before the rest of the answer was sent`);
  } finally {
    await new Promise<void>((resolve) => srv.close(() => resolve()));
  }
});

describe('the deadline of a LIST read through a view', () => {
  const pod = (i: number): string => JSON.stringify({ metadata: { name: `p${i}`, namespace: 'default', uid: `u${i}`, resourceVersion: '1' }, spec: { blob: 'x'.repeat(20_000) } });
  /** A server that writes the answer's head and 60 pods of 20 KB, 10 at a time 20 ms apart, then (unless `stall`) the rest. */
  async function serving(stall: boolean): Promise<{ url: string; close: () => Promise<void> }> {
    const srv = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"3"},"items":[');
      void (async () => {
        for (let k = 0; k < 6; k++) {
          res.write(`${k === 0 ? '' : ','}${Array.from({ length: 10 }, (_, i) => pod(k * 10 + i)).join(',')}`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        if (!stall) res.end(']}');
      })();
    });
    srv.on('clientError', () => {});
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, close: () => new Promise((resolve) => { srv.closeAllConnections(); srv.close(() => resolve()); }) };
  }

  test('the client\'s own reading is not counted: a view that takes three times the timeout to read the pods still gets them all', async () => {
    const srv = await serving(false);
    try {
      // 20 ms a pod, 1.2 s in all, against a 400 ms timeout (an answer read whole was parsed after it came, outside its timeout).
      const slow = { name: 'slow', read: (raw: unknown): string => {
        const until = performance.now() + 20;
        while (performance.now() < until) { /* busy: the client's CPU */ }
        return (raw as { metadata: { name: string } }).metadata.name;
      } };
      const got = await createHttpsKube({ server: srv.url }, { timeoutMs: 400 }).list('v1', 'Pod', 'default', { view: slow });
      assert.equal(got.items.length, 60);
    } finally {
      await srv.close();
    }
  });

  test('an answer that stops coming is still given up at the timeout, a transient error', async () => {
    const srv = await serving(true);
    try {
      const view = { name: 'names', read: (raw: unknown): string => (raw as { metadata: { name: string } }).metadata.name };
      await assert.rejects(createHttpsKube({ server: srv.url }, { timeoutMs: 300 }).list('v1', 'Pod', 'default', { view }), (err: unknown) => err instanceof KubeError && err.errorClass === 'transient' && /no answer within 300 ms/.test(err.message));
    } finally {
      await srv.close();
    }
  });
});
