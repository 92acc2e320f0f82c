// The relay skips zod for pods whose read fields plainly fit the schema (relay/pod-shape.ts).
// Property: for any raw pod, well-formed or not, the shortcut decides exactly what zod
// decides: same key, same error text, same trimmed object, same fingerprint. And every pod
// zod accepts takes the shortcut (otherwise it would only cost time).
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Pod } from '../../functions/api/pod.ts';
import { plainPodShape } from '../../relay/pod-shape.ts';
import { decodePod, decodePodWithZod, pickPod } from '../../relay/trim.ts';

/** Usually `good`, sometimes absent, sometimes any JSON value (the wrong type, mostly). */
function field<T>(good: fc.Arbitrary<T>): fc.Arbitrary<T | fc.JsonValue | undefined> {
  return fc.oneof({ arbitrary: good, weight: 8 }, { arbitrary: fc.constant(undefined), weight: 1 }, { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 1 });
}

const str = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('', 'Always', '__proto__', 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', 'KRUISE_EPHEMERAL_JOB_ID', 'true'));
const envVar = fc.record({ name: field(str), value: field(str), valueFrom: field(fc.constant({ fieldRef: { fieldPath: 'x' } })) }, { requiredKeys: [] });
const container = fc.record({ name: field(str), image: field(str), env: field(fc.array(field(envVar), { maxLength: 3 })), restartPolicy: field(str) }, { requiredKeys: [] });
const containers = field(fc.array(field(container), { maxLength: 3 }));
const timeish = field(fc.constantFrom('2026-01-01T00:00:00Z', 'x'));
const state = fc.record({
  waiting: field(fc.record({ reason: field(str), message: field(str) }, { requiredKeys: [] })),
  running: field(fc.record({ startedAt: timeish }, { requiredKeys: [] })),
  terminated: field(fc.record({ exitCode: field(fc.integer({ min: -2, max: 255 })), reason: field(str), message: field(str), startedAt: timeish, finishedAt: timeish }, { requiredKeys: [] })),
}, { requiredKeys: [] });
const statuses = field(fc.array(field(fc.record({ name: field(str), state: field(state), restartCount: field(fc.nat()) }, { requiredKeys: [] })), { maxLength: 3 }));
const labels = field(fc.dictionary(str, field(str), { maxKeys: 3 }));
const metadata = fc.record({ name: field(str), namespace: field(str), uid: field(str), labels, annotations: field(fc.dictionary(str, str, { maxKeys: 2 })), creationTimestamp: timeish, deletionTimestamp: timeish, resourceVersion: field(str) }, { requiredKeys: [] });
const spec = fc.record({ nodeName: field(str), restartPolicy: field(str), containers, initContainers: containers, ephemeralContainers: containers }, { requiredKeys: [] });
const status = fc.record({ phase: field(str), podIP: field(str), containerStatuses: statuses, ephemeralContainerStatuses: statuses }, { requiredKeys: [] });
const podLike = fc.record({ apiVersion: field(fc.constant('v1')), metadata: field(metadata), spec: field(spec), status: field(status) }, { requiredKeys: [] });

/** As the relay gets it: JSON text parsed (own `__proto__` keys stay plain data). */
const wire = (v: unknown): unknown => JSON.parse(JSON.stringify(v) ?? 'null');

test('the zod shortcut decides exactly what zod decides, for well-formed and broken pods alike', () => {
  fc.assert(fc.property(fc.oneof(podLike, fc.jsonValue({ maxDepth: 3 })), (gen) => {
    const raw = wire(gen);
    assert.deepStrictEqual(decodePod(raw), decodePodWithZod(raw));
    // Only ever a shortcut for what zod accepts, and taken for all of it but `__proto__` keys.
    const shortcut = plainPodShape(pickPod(raw));
    const zod = Pod.safeParse(pickPod(raw)).success;
    if (shortcut) assert.ok(zod);
    else if (!JSON.stringify(raw)?.includes('"__proto__":')) assert.equal(zod, false);
  }), { numRuns: 3000 });
});

test('a pod with odd keys (__proto__, constructor) is decoded as zod decodes it', () => {
  const raw = JSON.parse('{"metadata":{"name":"p","namespace":"n","labels":{"__proto__":"x","constructor":"y"}},"spec":{"containers":[{"name":"c","env":[{"name":"KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT","__proto__":{"value":"true"}}]}]}}') as unknown;
  assert.deepStrictEqual(decodePod(raw), decodePodWithZod(raw));
  assert.equal(plainPodShape(pickPod(raw)), false, 'left to zod');
});

test('a broken pod is still unreadable with its key and zod\'s reason', () => {
  const raw = wire({ metadata: { name: 'p', namespace: 'n' }, spec: { containers: [{ name: 3 }] } });
  const d = decodePod(raw);
  assert.ok('error' in d);
  assert.equal(d.key, 'n/p');
  assert.match(d.error, /containers/);
});
