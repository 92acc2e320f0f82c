// The relay skips zod for pods whose read fields plainly fit the schema, and trims them in
// one pass (relay/pod-shape.ts). Property: for any raw pod, well-formed or not, the shortcut
// decides exactly what zod decides: same key, same error text, same trimmed object, same
// fingerprint. And every pod zod accepts takes the shortcut (otherwise it would only cost time).
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EJOB_ID_ENV } from '../../functions/api/names.ts';
import { Pod } from '../../functions/api/pod.ts';
import { IGNORE_EXIT_CODE_ENV, TERMINATE_SIDECAR_ENV, TERMINATE_WITH_IMAGE_ENV } from '../../functions/sidecar/env.ts';
import { STRATEGY_ANNOTATION } from '../../functions/sidecar/strategy.ts';
import { trimPlainPod } from '../../relay/pod-shape.ts';
import { decodePod, decodePodWithZod, pickPod } from '../../relay/trim.ts';

/**
 * Raw pods. `rough`: every field usually good, sometimes absent, sometimes any JSON value
 * (the wrong type, mostly), so nearly every pod is broken somewhere. Otherwise required
 * fields are present and a field goes wrong rarely, so most pods are ones zod accepts and
 * the trimmed pods and fingerprints of both roads are compared, not only their errors.
 */
function pods(rough: boolean): fc.Arbitrary<unknown> {
  const bad = rough ? 1 : 0.05;
  const field = <T>(good: fc.Arbitrary<T>): fc.Arbitrary<T | fc.JsonValue | undefined> =>
    fc.oneof({ arbitrary: good, weight: 8 * 20 }, { arbitrary: fc.constant(undefined), weight: bad * 20 }, { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: bad * 20 });
  const record = <T extends Record<string, fc.Arbitrary<unknown>>>(shape: T, required: (keyof T)[]): fc.Arbitrary<unknown> => fc.record(shape, { requiredKeys: (rough ? [] : required) as never });
  const str = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('', 'Always', 'Never', '__proto__', TERMINATE_SIDECAR_ENV, TERMINATE_WITH_IMAGE_ENV, IGNORE_EXIT_CODE_ENV, EJOB_ID_ENV, 'true'));
  const envVar = record({ name: field(str), value: field(str), valueFrom: field(fc.constant({ fieldRef: { fieldPath: 'x' } })) }, ['name']);
  const rules = field(fc.constantFrom([{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }], [{ action: 'RestartAllContainers', exitCodes: { operator: 'In', values: [42] } }], []));
  const container = record({ name: field(str), image: field(str), env: field(fc.array(field(envVar), { maxLength: 4 })), restartPolicy: field(str), restartPolicyRules: rules }, ['name']);
  const containers = field(fc.array(field(container), { maxLength: 3 }));
  const timeish = field(fc.constantFrom('2026-01-01T00:00:00Z', 'x'));
  const state = record({
    waiting: field(record({ reason: field(str), message: field(str) }, [])),
    running: field(record({ startedAt: timeish }, [])),
    terminated: field(record({ exitCode: field(fc.integer({ min: -2, max: 255 })), reason: field(str), message: field(str), startedAt: timeish, finishedAt: timeish }, ['exitCode'])),
  }, []);
  const statuses = field(fc.array(field(record({ name: field(str), state: field(state), restartCount: field(fc.nat()) }, ['name'])), { maxLength: 3 }));
  const labels = field(fc.dictionary(str, field(str), { maxKeys: 3 }));
  const metadata = record({ name: field(fc.oneof(str, fc.constant('pod-1'))), namespace: field(str), uid: field(str), labels, annotations: field(fc.dictionary(fc.oneof(str, fc.constant(STRATEGY_ANNOTATION)), field(str), { maxKeys: 2 })), creationTimestamp: timeish, deletionTimestamp: timeish, resourceVersion: field(str) }, ['name']);
  const spec = record({ nodeName: field(str), restartPolicy: field(str), containers, initContainers: containers, ephemeralContainers: containers }, ['containers']);
  // The predicate reads AllContainersRestarting (review71); the other types must be dropped alike.
  const condition = record({ type: field(fc.constantFrom('AllContainersRestarting', 'Ready', 'PodScheduled')), status: field(fc.constantFrom('True', 'False')), reason: field(str) }, ['type', 'status']);
  const status = record({ phase: field(str), podIP: field(str), conditions: field(fc.array(field(condition), { maxLength: 3 })), containerStatuses: statuses, ephemeralContainerStatuses: statuses }, []);
  return record({ apiVersion: field(fc.constant('v1')), metadata: field(metadata), spec: field(spec), status: field(status) }, ['metadata', 'spec']);
}

/** As the relay gets it: JSON text parsed (own `__proto__` keys stay plain data). */
const wire = (v: unknown): unknown => JSON.parse(JSON.stringify(v) ?? 'null');

/** Both roads on one raw pod; whether zod accepted it. */
function sameDecision(raw: unknown): boolean {
  assert.deepStrictEqual(decodePod(raw), decodePodWithZod(raw));
  // Only ever a shortcut for what zod accepts, and taken for all of it but `__proto__` keys.
  const shortcut = trimPlainPod(raw) !== undefined;
  const zod = Pod.safeParse(pickPod(raw)).success;
  if (shortcut) assert.ok(zod);
  else if (!JSON.stringify(raw)?.includes('"__proto__":')) assert.equal(zod, false);
  return zod;
}

test('the zod shortcut decides exactly what zod decides, for well-formed and broken pods alike', () => {
  fc.assert(fc.property(fc.oneof(pods(true), fc.jsonValue({ maxDepth: 3 })), (gen) => void sameDecision(wire(gen))), { numRuns: 3000 });
});

test('…and builds the same trimmed pod and fingerprint for pods zod accepts (most of these)', () => {
  let accepted = 0;
  fc.assert(fc.property(pods(false), (gen) => void (accepted += sameDecision(wire(gen)) ? 1 : 0)), { numRuns: 3000 });
  assert.ok(accepted > 1000, `only ${accepted} of 3000 generated pods were valid: the property would say little`);
});

test('a pod with odd keys (__proto__, constructor) is decoded as zod decodes it', () => {
  const raw = JSON.parse('{"metadata":{"name":"p","namespace":"n","labels":{"__proto__":"x","constructor":"y"}},"spec":{"containers":[{"name":"c","env":[{"name":"KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT","__proto__":{"value":"true"}}]}]}}') as unknown;
  assert.deepStrictEqual(decodePod(raw), decodePodWithZod(raw));
  assert.equal(trimPlainPod(raw), undefined, 'left to zod');
});

test('a broken pod is still unreadable with its key and zod\'s reason', () => {
  const raw = wire({ metadata: { name: 'p', namespace: 'n' }, spec: { containers: [{ name: 3 }] } });
  const d = decodePod(raw);
  assert.ok('error' in d);
  assert.equal(d.key, 'n/p');
  assert.match(d.error, /containers/);
});
