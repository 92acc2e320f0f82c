// UPDATE: only parallelism, replicas, paused and the TTLs may change; everything else is
// Forbidden at its own spec path. Errors in unchanged values are not held against an update.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { validateEphemeralJob } from '../../functions/webhook/validate.ts';
import { container, job, lines, spec } from './support.ts';
import type { Json } from './support.ts';

const IMMUTABLE = 'Forbidden: field is immutable; only spec.parallelism, spec.replicas, spec.paused and the two TTL fields may change';
const update = (oldSpec: Json, newSpec: Json): string[] => lines(validateEphemeralJob(job(newSpec), job(oldSpec), 'UPDATE'));

interface Case { name: string; old?: Json; new: Json; errors: string[] }

const cases: Case[] = [
  { name: 'no change', new: spec(), errors: [] },
  { name: 'parallelism may change', new: spec({ parallelism: 5 }), errors: [] },
  { name: 'replicas may change', new: spec({ replicas: 10 }), errors: [] },
  { name: 'replicas may be unset', new: spec({ replicas: undefined }), errors: [] },
  { name: 'paused may change', new: spec({ paused: true }), errors: [] },
  { name: 'ttlSecondsAfterFinished may change', new: spec({ ttlSecondsAfterFinished: 60 }), errors: [] },
  { name: 'ttlSecondsAfterCreated may be set', new: spec({ ttlSecondsAfterCreated: 3600 }), errors: [] },
  { name: 'all mutable fields at once', new: spec({ parallelism: 0, replicas: 1, paused: true, ttlSecondsAfterFinished: 0, ttlSecondsAfterCreated: 10 }), errors: [] },
  { name: 'a mutable field still has to be valid', new: spec({ parallelism: 11 }), errors: ['spec.parallelism: Invalid value: 11: must be less than or equal to 10'] },
  { name: 'negative replicas on update', new: spec({ replicas: -1 }), errors: ['spec.replicas: Invalid value: -1: must be greater than or equal to 0'] },
  {
    name: 'selector change',
    new: spec({ selector: { matchLabels: { app: 'other' } } }),
    errors: [`spec.selector: ${IMMUTABLE} (changed: spec.selector.matchLabels.app)`],
  },
  {
    name: 'image change names the container field',
    new: spec({ template: { ephemeralContainers: [container({ image: 'busybox:1.37' })] } }),
    errors: [`spec.template: ${IMMUTABLE} (changed: spec.template.ephemeralContainers[0].image)`],
  },
  {
    name: 'adding a container',
    new: spec({ template: { ephemeralContainers: [container(), container({ name: 'two' })] } }),
    errors: [`spec.template: ${IMMUTABLE} (changed: spec.template.ephemeralContainers)`],
  },
  { name: 'activeDeadlineSeconds set', new: spec({ activeDeadlineSeconds: 30 }), errors: [`spec.activeDeadlineSeconds: ${IMMUTABLE}`] },
  { name: 'activeDeadlineSeconds changed', old: spec({ activeDeadlineSeconds: 30 }), new: spec({ activeDeadlineSeconds: 60 }), errors: [`spec.activeDeadlineSeconds: ${IMMUTABLE}`] },
  { name: 'an unknown spec field added', new: spec({ extra: true }), errors: [`spec.extra: ${IMMUTABLE}`] },
  {
    name: 'several immutable changes, each at its path, plus an invalid mutable one',
    new: spec({ parallelism: -1, selector: { matchLabels: { app: 'x' } }, activeDeadlineSeconds: 5 }),
    errors: [
      `spec.selector: ${IMMUTABLE} (changed: spec.selector.matchLabels.app)`,
      `spec.activeDeadlineSeconds: ${IMMUTABLE}`,
      'spec.parallelism: Invalid value: -1: must be greater than or equal to 0',
    ],
  },
  {
    name: 'immutable change that is also invalid reports both',
    new: spec({ template: { ephemeralContainers: [container({ image: '' })] } }),
    errors: [
      `spec.template: ${IMMUTABLE} (changed: spec.template.ephemeralContainers[0].image)`,
      'spec.template.ephemeralContainers[0].image: Required value',
    ],
  },
  {
    name: 'many changed sub-fields are summarised',
    new: spec({ template: { ephemeralContainers: [container({ name: 'n', image: 'i', targetContainerName: 't', imagePullPolicy: 'Always' })] } }),
    errors: [`spec.template: ${IMMUTABLE} (changed: spec.template.ephemeralContainers[0].name, spec.template.ephemeralContainers[0].image, spec.template.ephemeralContainers[0].imagePullPolicy and 1 more)`],
  },
  { name: 'null and absent are the same (Go decodes both to nil)', old: spec({ activeDeadlineSeconds: null }), new: spec(), errors: [] },
  // review72: a typed Go client (kruise-api, controller-runtime; kruise-manager's own
  // finalizer Update) writes the selector and template back as Go encodes them. What it
  // changes in the JSON is no change of the job, and must not deny a pause or a scale.
  {
    name: 'a typed Update that pauses: Go writes resources: {} (a struct is never omitted)',
    new: spec({ paused: true, template: { ephemeralContainers: [container({ resources: {} })] } }),
    errors: [],
  },
  {
    name: "a typed Update drops Go's zero values: false, \"\", 0, empty lists and maps",
    old: spec({ template: { ephemeralContainers: [container({
      stdin: false, tty: false, workingDir: '', args: [], env: [{ name: 'DEBUG', value: '' }], envFrom: [], volumeMounts: [{ name: 'v', mountPath: '/v', readOnly: false }],
      resources: { limits: {}, requests: {} },
    })] } }),
    new: spec({ parallelism: 3, template: { ephemeralContainers: [container({ env: [{ name: 'DEBUG' }], volumeMounts: [{ name: 'v', mountPath: '/v' }], resources: {} })] } }),
    errors: [],
  },
  {
    name: 'a typed Update drops keys that are no field of the Go type, at any level',
    old: spec({ template: { ephemeralContainers: [container({ comand: ['x'], securityContext: { runAsNonRot: true } })], note: 'kept by no Go type' } }),
    new: spec({ paused: true, template: { ephemeralContainers: [container({ securityContext: {} })] } }),
    errors: [],
  },
  {
    name: 'a quantity is its value: an absent divisor is Go\'s "0", "1000m" is "1"',
    old: spec({ template: { ephemeralContainers: [container({ env: [
      { name: 'A', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } },
      { name: 'B', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1000m' } } },
      { name: 'C', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: 1048576 } } },
    ] })] } }),
    new: spec({ template: { ephemeralContainers: [container({ env: [
      { name: 'A', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '0' } } },
      { name: 'B', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1' } } },
      { name: 'C', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
    ] })] } }),
    errors: [],
  },
  {
    name: 'a selector with empty matchLabels and a missing values list is the same Go selector',
    old: spec({ selector: { matchLabels: { app: 'helloworld' }, matchExpressions: [{ key: 'tier', operator: 'Exists', values: [] }] } }),
    new: spec({ selector: { matchLabels: { app: 'helloworld' }, matchExpressions: [{ key: 'tier', operator: 'Exists' }] } }),
    errors: [],
  },
  {
    name: 'an invalid value Go drops on the way back is no change to hold against the update (ratcheting)',
    old: spec({ template: { ephemeralContainers: [container({ imagePullPolicy: '' })] } }),
    new: spec({ paused: true, template: { ephemeralContainers: [container({ imagePullPolicy: undefined, resources: {} })] } }),
    errors: [],
  },
  // What Go does see is still a change.
  {
    name: 'a pointer set to its zero value is set: runAsNonRoot: false dropped is a change',
    old: spec({ template: { ephemeralContainers: [container({ securityContext: { runAsNonRoot: false } })] } }),
    new: spec({ template: { ephemeralContainers: [container({ securityContext: {} })] } }),
    errors: [`spec.template: ${IMMUTABLE} (changed: spec.template.ephemeralContainers[0].securityContext.runAsNonRoot)`],
  },
  {
    name: 'a value that Go reads differently is a change: stdin true dropped, a divisor of another value',
    old: spec({ template: { ephemeralContainers: [container({ stdin: true, env: [{ name: 'A', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1m' } } }] })] } }),
    new: spec({ template: { ephemeralContainers: [container({ env: [{ name: 'A', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1' } } }] })] } }),
    errors: [`spec.template: ${IMMUTABLE} (changed: spec.template.ephemeralContainers[0].stdin, spec.template.ephemeralContainers[0].env[0].valueFrom.resourceFieldRef.divisor)`],
  },
  {
    name: 'an env entry with an empty value is still an entry: dropping it is a change',
    old: spec({ template: { ephemeralContainers: [container({ env: [{ name: 'A', value: '' }] })] } }),
    new: spec({ template: { ephemeralContainers: [container()] } }),
    errors: [`spec.template: ${IMMUTABLE} (changed: spec.template.ephemeralContainers[0].env)`],
  },
  {
    name: 'selector: {} (every pod) is not a selector unset (no pod)',
    old: spec({ selector: {} }),
    new: spec({ selector: undefined }),
    errors: [`spec.selector: ${IMMUTABLE}`, 'spec.selector: Required value'],
  },
  // Ratcheting: a job created before the webhook existed may hold invalid values.
  {
    name: 'an invalid value that did not change is not held against the update',
    old: spec({ template: { ephemeralContainers: [container({ imagePullPolicy: undefined })] } }),
    new: spec({ template: { ephemeralContainers: [container({ imagePullPolicy: undefined })] }, paused: true }),
    errors: [],
  },
  {
    name: 'an already invalid parallelism can be fixed',
    old: spec({ parallelism: 50 }),
    new: spec({ parallelism: 3 }),
    errors: [],
  },
  {
    name: 'an already invalid parallelism cannot be changed to another invalid value',
    old: spec({ parallelism: 50 }),
    new: spec({ parallelism: 40 }),
    errors: ['spec.parallelism: Invalid value: 40: must be less than or equal to 10'],
  },
];

describe('validateEphemeralJob on UPDATE', () => {
  for (const c of cases) {
    test(c.name, () => assert.deepEqual(update(c.old ?? spec(), c.new), c.errors));
  }

  test('metadata-only updates (finalizer removal) pass even for a job with an invalid spec', () => {
    const bad = job(spec({ selector: {}, template: { ephemeralContainers: [] } }));
    const deleting = { ...bad, metadata: { name: 'ejob-demo', deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: [] } };
    assert.deepEqual(validateEphemeralJob(deleting, bad, 'UPDATE'), []);
  });

  test('a spec replaced by a non-object is Forbidden at spec', () => {
    assert.deepEqual(lines(validateEphemeralJob(job('x'), job(spec()), 'UPDATE')), [
      `spec: ${IMMUTABLE}`,
      'spec: Invalid value: "x": must be an object',
    ]);
  });

  const nest = (leaf: string): unknown => {
    let deep: unknown = leaf;
    for (let i = 0; i < 100_000; i++) deep = { d: deep };
    return deep;
  };

  test('a very deeply nested change does not overflow the stack', () => {
    // `command` holding an object is no Go list (Go refuses it): it is compared as sent.
    const out = update(
      spec({ template: { ephemeralContainers: [container({ command: nest('a') })] } }),
      spec({ template: { ephemeralContainers: [container({ command: nest('b') })] } }),
    );
    assert.match(out[0] as string, /^spec\.template: Forbidden: .*changed: spec\.template\.ephemeralContainers\[0\]\.command(\.d)+\)$/);
  });

  test('a very deeply nested key that is no field, changed, is Forbidden without overflowing the stack; dropped, it passes', () => {
    const out = update(
      spec({ template: { ephemeralContainers: [container()], deep: nest('a') } }),
      spec({ template: { ephemeralContainers: [container()], deep: nest('b') } }),
    );
    assert.deepEqual(out, [`spec.template: ${IMMUTABLE} (changed: spec.template.deep: no field of the Kubernetes type, which the API server refuses in every injection)`]);
    assert.deepEqual(update(spec({ template: { ephemeralContainers: [container()], deep: nest('a') } }), spec()), []);
  });

  test('hand-written against core/v1 (not from the type table the property test shares): a pointer set to false is set, a value field set to false is unset (review73)', () => {
    const sc = (securityContext: Json): Json => spec({ template: { ephemeralContainers: [container({ securityContext })] } });
    // SecurityContext.Privileged is *bool: false overrides, so it is a change from unset.
    assert.equal(update(sc({ runAsUser: 1000 }), sc({ runAsUser: 1000, privileged: false })).length, 1, '*bool privileged: false is not unset');
    assert.equal(update(sc({ runAsUser: 1000 }), sc({ runAsUser: 1000, readOnlyRootFilesystem: false })).length, 1, '*bool readOnlyRootFilesystem: false is not unset');
    // VolumeMount.ReadOnly and EphemeralContainerCommon.Stdin are plain bools: false is Go's zero, as absent.
    const mounts = (m: Json): Json => spec({ template: { ephemeralContainers: [container({ volumeMounts: [m] })] } });
    assert.deepEqual(update(mounts({ name: 'data', mountPath: '/data' }), mounts({ name: 'data', mountPath: '/data', readOnly: false })), [], 'bool readOnly: false is unset');
    assert.deepEqual(update(spec(), spec({ template: { ephemeralContainers: [container({ stdin: false, tty: false })] } })), [], 'bool stdin/tty: false is unset');
  });

  test('a key that is no field of the Go type: dropped passes (a typed client drops it), added or changed is Forbidden, naming it (review73)', () => {
    // The CRD and the planner keep such a key and send it in every injection, which the API
    // server refuses (strict field validation): admitted, it stalled a running job.
    const typo = spec({ template: { ephemeralContainers: [container({ imagePulPolicy: 'Always' })] } });
    const unknown = (where: string): string => `spec.template: ${IMMUTABLE} (changed: ${where}: no field of the Kubernetes type, which the API server refuses in every injection)`;
    assert.deepEqual(update(spec(), typo), [unknown('spec.template.ephemeralContainers[0].imagePulPolicy')]);
    assert.deepEqual(update(spec({ template: { ephemeralContainers: [container({ securityContext: { runAsUser: 1000 } })] } }), spec({ template: { ephemeralContainers: [container({ securityContext: { runAsUser: 1000, runAsNonRot: true } })] } })), [unknown('spec.template.ephemeralContainers[0].securityContext.runAsNonRot')]);
    assert.deepEqual(update(spec(), spec({ selector: { matchLabels: { app: 'helloworld' }, matchLabel: { x: 'y' } } })), [], 'a selector is never sent to the API server: its stray key changes nothing');
    assert.deepEqual(update(typo, spec({ template: { ephemeralContainers: [container({ imagePulPolicy: 'Never' })] } })), [unknown('spec.template.ephemeralContainers[0].imagePulPolicy')], 'changed');
    assert.deepEqual(update(typo, typo), [], 'kept as it was');
    assert.deepEqual(update(typo, spec()), [], 'dropped, as a typed client does');
  });
});
