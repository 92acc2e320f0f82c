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

  test('a very deeply nested change does not overflow the stack', () => {
    const nest = (leaf: string): unknown => {
      let deep: unknown = leaf;
      for (let i = 0; i < 100_000; i++) deep = { d: deep };
      return deep;
    };
    const out = update(
      spec({ template: { ephemeralContainers: [container()], deep: nest('a') } }),
      spec({ template: { ephemeralContainers: [container()], deep: nest('b') } }),
    );
    assert.equal(out.length, 1);
    assert.match(out[0] as string, /^spec\.template: Forbidden: .*changed: spec\.template\.deep(\.d)+\)$/);
  });
});
