import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { jsonPatch, mergePatch, strategicMergePatch } from '../../functions/cluster/patch.ts';
import { matchLabels, parseLabelSelector } from '../../functions/cluster/selectors.ts';

describe('patch functions', () => {
  test('merge patch: RFC 7386 examples', () => {
    assert.deepEqual(mergePatch({ a: 'b' }, { a: 'c' }), { a: 'c' });
    assert.deepEqual(mergePatch({ a: 'b' }, { b: 'c' }), { a: 'b', b: 'c' });
    assert.deepEqual(mergePatch({ a: 'b' }, { a: null }), {});
    assert.deepEqual(mergePatch({ a: [{ b: 'c' }] }, { a: [1] }), { a: [1] });
    assert.deepEqual(mergePatch({ a: { b: 'c' } }, { a: { b: 'd', c: null } }), { a: { b: 'd' } });
    assert.deepEqual(mergePatch({ e: null }, { a: 1 }), { e: null, a: 1 });
  });

  test('merge patch never mutates its input', () => {
    fc.assert(fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
      const before = JSON.stringify(a);
      mergePatch(a, b);
      assert.equal(JSON.stringify(a), before);
    }));
  });

  test('JSON patch: move, copy, remove from arrays, and errors', () => {
    const doc = { a: [1, 2, 3], b: { c: 'x' } };
    assert.deepEqual(jsonPatch(doc, [{ op: 'move', from: '/b/c', path: '/d' }]), { a: [1, 2, 3], b: {}, d: 'x' });
    assert.deepEqual(jsonPatch(doc, [{ op: 'copy', from: '/a/0', path: '/a/-' }]), { a: [1, 2, 3, 1], b: { c: 'x' } });
    assert.deepEqual(jsonPatch(doc, [{ op: 'remove', path: '/a/1' }]), { a: [1, 3], b: { c: 'x' } });
    assert.deepEqual(jsonPatch({ 'a/b': { '~': 1 } }, [{ op: 'replace', path: '/a~1b/~0', value: 2 }]), { 'a/b': { '~': 2 } });
    assert.throws(() => jsonPatch(doc, [{ op: 'replace', path: '/nope', value: 1 }]), (e: { code?: number }) => e.code === 422);
    assert.throws(() => jsonPatch(doc, [{ op: 'remove', path: '/a/9' }]), (e: { code?: number }) => e.code === 422);
    assert.throws(() => jsonPatch(doc, { op: 'add' }), (e: { code?: number }) => e.code === 400);
    assert.throws(() => jsonPatch(doc, [{ op: 'frobnicate', path: '/a' }]), (e: { code?: number }) => e.code === 400);
    assert.deepEqual(doc, { a: [1, 2, 3], b: { c: 'x' } }, 'input untouched');
  });

  test('strategic merge: merge keys, $patch directives, atomic lists, $setElementOrder ignored', () => {
    const pod = {
      spec: {
        containers: [{ name: 'a', image: 'a:1', ports: [{ containerPort: 80, name: 'http' }] }, { name: 'b', image: 'b:1' }],
        tolerations: [{ key: 'x' }],
      },
    };
    assert.deepEqual(strategicMergePatch(pod, { spec: { containers: [{ name: 'a', ports: [{ containerPort: 80, protocol: 'TCP' }, { containerPort: 443 }] }] } }), {
      spec: {
        containers: [{ name: 'a', image: 'a:1', ports: [{ containerPort: 80, name: 'http', protocol: 'TCP' }, { containerPort: 443 }] }, { name: 'b', image: 'b:1' }],
        tolerations: [{ key: 'x' }],
      },
    });
    assert.deepEqual(strategicMergePatch(pod, { spec: { containers: [{ name: 'b', $patch: 'delete' }], tolerations: [{ key: 'y' }] } }), {
      spec: { containers: [{ name: 'a', image: 'a:1', ports: [{ containerPort: 80, name: 'http' }] }], tolerations: [{ key: 'y' }] },
    });
    assert.deepEqual(strategicMergePatch(pod, { spec: { containers: [{ $patch: 'replace' }, { name: 'c', image: 'c:1' }] } }), {
      spec: { containers: [{ name: 'c', image: 'c:1' }], tolerations: [{ key: 'x' }] },
    });
    assert.deepEqual(strategicMergePatch(pod, { spec: { '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }], tolerations: null } }), { spec: { containers: pod.spec.containers } });
    assert.throws(() => strategicMergePatch(pod, { spec: { containers: [{ image: 'no-name' }] } }), (e: { code?: number }) => e.code === 400);
  });
});

describe('label selector parsing', () => {
  test('an equality selector built from any valid labels matches exactly those labels', () => {
    const name = fc.stringMatching(/^[a-z0-9]([a-z0-9.-]{0,10}[a-z0-9])?$/);
    fc.assert(fc.property(fc.dictionary(name, name, { minKeys: 1, maxKeys: 4 }), (labels) => {
      const sel = parseLabelSelector(Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(','));
      assert.equal(matchLabels(sel, labels), true);
      const [k, v] = Object.entries(labels)[0]!;
      assert.equal(matchLabels(sel, { ...labels, [k]: `${v}x` }), false);
    }));
  });
});
