// A selector or template has one canonical form per Go value (functions/api/go-json.ts): two
// JSON values compare equal iff Go decodes them to semantically equal structs. The webhook's
// update rule rests on it (review72): a typed client's re-encoding is never a change, and
// every change Go sees is one. Checked here against a model of the Go values themselves —
// every field present, nil pointers null, a quantity its value in nanos — and a model of
// encoding/json that writes them back (omitempty as the tags say, structs never omitted).
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { ephemeralContainerFields, type FieldTree } from '../../functions/api/container-fields.ts';
import { goCanonical, type GoType } from '../../functions/api/go-json.ts';
import { EPHEMERAL_CONTAINER, SPEC_FIELD_TYPES } from '../../functions/api/go-types.ts';
import { quantityNanos } from '../../functions/api/quantity.ts';
import { jsonEqual } from '../../functions/webhook/json.ts';
import { validateImmutable } from '../../functions/webhook/immutability.ts';

const NANO = 10n ** 9n;
/** Quantities by value (nanos), each with JSON forms ParseQuantity reads as that value; the first is Go's own. */
const QUANTITIES: readonly (readonly [bigint, readonly unknown[]])[] = [
  [0n, ['0', 0, '0m', '0Ki', '+0', '0.0', '0e3', null]],
  [NANO, ['1', 1, '1000m', '1e0', '0.001k', '1.0', ' 1 ', '1000000000n']],
  [1024n * NANO, ['1Ki', '1024', 1024, '1.024k', '1024e0']],
  [5n * 10n ** 8n, ['500m', '0.5', '.5', '5e-1', 0.5, '500000u']],
  [-(10n ** 6n), ['-1m', '-0.001', '-1e-3']],
  // ParseQuantity rounds up to a whole nano.
  [1n, ['1n', '0.000000001', '0.0000000001', '1e-10']],
  [2n ** 63n * NANO - NANO, ['9223372036854775807', '8Ei', '16Ei']],
];

test('quantityNanos reads what ParseQuantity reads, and nothing else', () => {
  for (const [nanos, forms] of QUANTITIES) {
    for (const f of forms) if (f !== null) assert.equal(quantityNanos(f), nanos, `${JSON.stringify(f)}`);
  }
  assert.equal(quantityNanos('1.5Gi'), 3n * 2n ** 29n * NANO);
  for (const bad of ['', '.', '1e', '1 Ki', '1KiB', 'one', true, [], {}, '1e99999']) assert.equal(quantityNanos(bad), undefined, JSON.stringify(bad));
});

// ---- A model of Go values of a type, and of encoding/json writing them. ----

function modelOf(t: GoType): fc.Arbitrary<unknown> {
  switch (t.kind) {
    case 'string': return fc.constantFrom('', 'a', 'b');
    case 'bool': return fc.boolean();
    case 'int': return fc.constantFrom(0, 1, -1, 80);
    case 'quantity': return fc.constantFrom(...QUANTITIES.map(([n]) => n));
    // An IntOrString keeps its kind: 0 (Go's zero), 80, "" and "80" are four values.
    case 'intOrString': return fc.constantFrom(0, 80, '', '80');
    case 'pointer': return fc.option(modelOf(t.to), { nil: null, freq: 2 });
    case 'slice': return fc.array(modelOf(t.of), { maxLength: 2 });
    case 'map': return fc.dictionary(fc.constantFrom('cpu', 'memory'), modelOf(t.of), { maxKeys: 2, noNullPrototype: true });
    case 'struct': return fc.record(Object.fromEntries(Object.entries(t.fields).map(([k, f]) => [k, modelOf(f.type)])), { noNullPrototype: true });
  }
}

/** encoding/json's isEmptyValue, for omitempty: a struct (quantity, IntOrString too) is never empty. */
function emptyForOmitempty(m: unknown, t: GoType): boolean {
  switch (t.kind) {
    case 'string': return m === '';
    case 'bool': return m === false;
    case 'int': return m === 0;
    case 'pointer': return m === null;
    case 'slice': return (m as unknown[]).length === 0;
    case 'map': return Object.keys(m as object).length === 0;
    default: return false;
  }
}

/** What a typed client writes back. */
function goEncode(m: unknown, t: GoType): unknown {
  switch (t.kind) {
    case 'quantity': return QUANTITIES.find(([n]) => n === m)?.[1][0];
    case 'pointer': return m === null ? null : goEncode(m, t.to);
    case 'slice': return (m as unknown[]).map((x) => goEncode(x, t.of));
    case 'map': return Object.fromEntries(Object.entries(m as object).map(([k, v]) => [k, goEncode(v, t.of)]));
    case 'struct': {
      const out: [string, unknown][] = [];
      for (const [k, f] of Object.entries(t.fields)) {
        const v = (m as Record<string, unknown>)[k];
        if (!(f.omitempty && emptyForOmitempty(v, f.type))) out.push([k, goEncode(v, f.type)]);
      }
      return Object.fromEntries(out);
    }
    default: return m;
  }
}

/** A Go zero value (what decoding null or nothing leaves). */
function isZero(m: unknown, t: GoType): boolean {
  if (t.kind === 'quantity') return m === 0n;
  if (t.kind === 'intOrString') return m === 0;
  if (t.kind === 'struct') return Object.entries(t.fields).every(([k, f]) => isZero((m as Record<string, unknown>)[k], f.type));
  return emptyForOmitempty(m, t);
}

/** Any JSON a person or tool might send for the same Go value: zeros written, omitted or null, other quantity forms, keys Go does not know. */
function anyEncoding(m: unknown, t: GoType, r: () => number): unknown {
  switch (t.kind) {
    case 'quantity': {
      const forms = QUANTITIES.find(([n]) => n === m)?.[1] ?? [];
      return forms[Math.floor(r() * forms.length)];
    }
    case 'pointer': return m === null ? null : anyEncoding(m, t.to, r);
    case 'slice': return (m as unknown[]).length === 0 && r() < 0.5 ? null : (m as unknown[]).map((x) => anyEncoding(x, t.of, r));
    case 'map': return Object.keys(m as object).length === 0 && r() < 0.5 ? null : Object.fromEntries(Object.entries(m as object).map(([k, v]) => [k, anyEncoding(v, t.of, r)]));
    case 'struct': {
      const out: [string, unknown][] = [];
      for (const [k, f] of Object.entries(t.fields)) {
        const v = (m as Record<string, unknown>)[k];
        const p = r();
        if (isZero(v, f.type) && p < 0.5) continue;
        out.push([k, isZero(v, f.type) && p < 0.6 ? null : anyEncoding(v, f.type, r)]);
      }
      if (r() < 0.2) out.push(['notAField', { any: ['thing', 1] }]);
      if (r() < 0.1) out.push(['Image', 'case matters']);
      return Object.fromEntries(out);
    }
    default: return m;
  }
}

/**
 * `a` with values (at any depth) taken from `b`: each with probability `p`, or (`one`) only
 * the one visited `one`-th — a near miss one field apart, such as a nil pointer against one
 * to its zero value — or `a` itself.
 */
function mix(a: unknown, b: unknown, t: GoType, o: { r: () => number; p: number; one?: { left: number } }): unknown {
  if (o.one ? o.one.left-- === 0 : o.r() < o.p) return b;
  if (t.kind === 'struct') {
    return Object.fromEntries(Object.entries(t.fields).map(([k, f]) => [k, mix((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], f.type, o)]));
  }
  if (t.kind === 'pointer' && a !== null && b !== null) return mix(a, b, t.to, o);
  if (t.kind === 'slice') {
    const [x, y] = [a as unknown[], b as unknown[]];
    return x.map((v, i) => (i < y.length ? mix(v, y[i], t.of, o) : v));
  }
  return a;
}

/** A near miss of `a`: as many values from `b` as `p` draws, or (p < 0) exactly one, the `-p`-th visited (mod their count). */
function nearMiss(a: unknown, b: unknown, t: GoType, o: { r: () => number; p: number }): unknown {
  if (o.p >= 0) return mix(a, b, t, o);
  const count = { left: Number.MAX_SAFE_INTEGER };
  mix(a, b, t, { ...o, one: count });
  const visited = Number.MAX_SAFE_INTEGER - count.left;
  return mix(a, b, t, { ...o, one: { left: -o.p % visited } });
}

/** Near misses of every distance: the chance each value is taken from the other model, or (negative) which one value is. */
const nearness = fc.oneof(fc.constantFrom(0, 0.01, 0.3), fc.integer({ min: 1, max: 10_000 }).map((n) => -n));

/** A small deterministic PRNG (mulberry32), so a shrunk counterexample replays. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let x = Math.imul(s ^ (s >>> 15), 1 | s);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

for (const [name, type] of Object.entries(SPEC_FIELD_TYPES)) {
  test(`spec.${name}: what Go writes back, and any other JSON of the same Go value, is one canonical form`, () => {
    fc.assert(fc.property(modelOf(type), fc.integer(), fc.integer(), (m, s1, s2) => {
      const forms = [goEncode(m, type), anyEncoding(m, type, prng(s1)), anyEncoding(m, type, prng(s2))];
      const [go, ...others] = forms.map((f) => goCanonical(f, type));
      for (const o of others) assert.ok(jsonEqual(go, o), JSON.stringify(forms, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)));
    }), { numRuns: 300 });
  });

  test(`spec.${name}: two values have one canonical form iff Go's structs are equal`, () => {
    fc.assert(fc.property(modelOf(type), modelOf(type), fc.integer(), nearness, (a, b, seed, p) => {
      const r = prng(seed);
      const near = nearMiss(a, b, type, { r, p });
      const same = jsonEqual(goCanonical(anyEncoding(a, type, r), type), goCanonical(anyEncoding(near, type, r), type));
      assert.equal(same, isDeepStrictEqual(a, near));
    }), { numRuns: 1000 });
  });
}

/** Every struct type under these types, each once: deep ones (a probe's port) get as many runs as the top. */
function structsUnder(types: readonly GoType[]): GoType[] {
  const seen = new Set<GoType>();
  const walk = (t: GoType): void => {
    if (t.kind === 'pointer') return walk(t.to);
    if (t.kind === 'slice' || t.kind === 'map') return walk(t.of);
    if (t.kind !== 'struct' || seen.has(t)) return;
    seen.add(t);
    for (const f of Object.values(t.fields)) walk(f.type);
  };
  types.forEach(walk);
  return [...seen];
}

test("every struct type under them, on its own: one canonical form iff Go's structs are equal", () => {
  const structs = structsUnder(Object.values(SPEC_FIELD_TYPES));
  assert.ok(structs.length > 30, `${structs.length} struct types`);
  for (const type of structs) {
    fc.assert(fc.property(modelOf(type), modelOf(type), fc.integer(), nearness, (a, b, seed, p) => {
      const r = prng(seed);
      const near = nearMiss(a, b, type, { r, p });
      assert.equal(jsonEqual(goCanonical(anyEncoding(a, type, r), type), goCanonical(anyEncoding(near, type, r), type)), isDeepStrictEqual(a, near));
      assert.ok(jsonEqual(goCanonical(goEncode(a, type), type), goCanonical(anyEncoding(a, type, r), type)));
    }), { numRuns: 200 });
  }
});

test('the update rule: a template Go writes back is never a change, and any change Go sees is one', () => {
  const template = SPEC_FIELD_TYPES.template as GoType;
  fc.assert(fc.property(modelOf(template), modelOf(template), fc.integer(), nearness, (a, b, seed, p) => {
    const r = prng(seed);
    const near = nearMiss(a, b, template, { r, p });
    const stored = { spec: { template: anyEncoding(a, template, r) } };
    const written = { spec: { paused: true, template: goEncode(near, template) } };
    assert.equal(validateImmutable(stored, written).length === 0, isDeepStrictEqual(a, near));
  }), { numRuns: 300 });
});

test('every field kube-apiserver knows of an ephemeral container is a field of the Go type (none is dropped as unknown)', () => {
  const missing: string[] = [];
  const walk = (tree: FieldTree, t: GoType, at: string): void => {
    let s = t;
    while (s.kind === 'pointer' || s.kind === 'slice') s = s.kind === 'pointer' ? s.to : s.of;
    if (s.kind !== 'struct') return void missing.push(`${at} (not a struct)`);
    for (const [k, sub] of tree) {
      const f = Object.hasOwn(s.fields, k) ? s.fields[k] : undefined;
      if (f === undefined) missing.push(`${at}.${k}`);
      else if (sub !== undefined) walk(sub, f.type, `${at}.${k}`);
    }
  };
  walk(ephemeralContainerFields(), EPHEMERAL_CONTAINER, 'ephemeralContainers[]');
  assert.deepEqual(missing, []);
});
