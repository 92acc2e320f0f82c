// The relay schedules a finished job's resync for the moment its TTL is due (relay/trim.ts);
// the planner decides the deletion. Both read the TTLs with jobTtls (functions/ejob/finished.ts),
// whatever the values: review found a relay sending a job due every resync, forever, for a
// TTL the planner would never act on (fractional, negative, null).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { EphemeralJobObject } from '../../functions/api/ephemeraljob.ts';
import { plan } from '../../functions/ejob/planner.ts';
import { trimJob } from '../../relay/trim.ts';

const CREATED = Date.parse('2026-01-01T00:00:00Z');
const COMPLETED = Date.parse('2026-01-01T00:10:00Z');
const odd = fc.oneof(fc.constant(undefined), fc.constant(null), fc.integer({ min: -5, max: 4000 }), fc.double({ min: -10, max: 4000, noNaN: true }), fc.string({ maxLength: 3 }), fc.constant(2 ** 60));

function job(spec: Record<string, unknown>, finished: boolean): EphemeralJobObject {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob',
    metadata: { name: 'j', namespace: 'ns', uid: 'u', resourceVersion: '3', creationTimestamp: new Date(CREATED).toISOString() },
    spec: { selector: { matchLabels: { app: 'x' } }, template: { ephemeralContainers: [{ name: 'ec', image: 'busybox' }] }, ...spec },
    ...(finished ? { status: { phase: 'Succeeded', completionTime: new Date(COMPLETED).toISOString(), match: 0 } } : {}),
  } as EphemeralJobObject;
}

const deletes = (j: EphemeralJobObject, at: number): boolean => plan({ job: j, pods: [] }, new Date(at)).actions.some((a) => a.verb === 'delete');

test('the relay\'s resync moment for a job is when the planner deletes it, for any TTL values; never, when the planner never does', () => {
  fc.assert(fc.property(odd, odd, fc.boolean(), fc.boolean(), (finishedTtl, createdTtl, finished, invalid) => {
    const spec: Record<string, unknown> = { ...(finishedTtl === undefined ? {} : { ttlSecondsAfterFinished: finishedTtl }), ...(createdTtl === undefined ? {} : { ttlSecondsAfterCreated: createdTtl }), ...(invalid ? { parallelism: 99 } : {}) };
    const j = job(spec, finished);
    const view = trimJob(j as unknown as Record<string, unknown>);
    assert.ok(view);
    if (view.expiresAt === undefined) {
      assert.equal(deletes(j, COMPLETED + 10 * 365 * 86_400_000), false);
      return;
    }
    assert.equal(deletes(j, view.expiresAt), true, `due at ${new Date(view.expiresAt).toISOString()}`);
    assert.equal(deletes(j, view.expiresAt - 1000), false);
  }), { numRuns: 500 });
});
