// Event names carry 64 bits of hash (events.ts eventHash): a job tells each failed pod in a
// Warning named by the pod's uid, and a name shared by two pods hides the second failure.
// Lease names keep their 32-bit hash: renaming a Lease would lose its claims record.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jobKey, jobLeaseName } from '../../functions/ejob/controller.ts';
import { eventAction, shortHash } from '../../functions/engine/events.ts';

/** uuid-like pod uids from a fixed seed (mulberry32): random enough to collide as real ones would. */
function uids(n: number): string[] {
  let a = 0x9e3779b9;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const hex = (k: number): string => Array.from({ length: k }, () => Math.floor(next() * 16).toString(16)).join('');
  return Array.from({ length: n }, () => `${hex(8)}-${hex(4)}-4${hex(3)}-8${hex(3)}-${hex(12)}`);
}

test('200,000 failed pods of one job: 200,000 Warning names (32 bits of hash shared some)', () => {
  const job = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'default', name: 'nightly-check', uid: 'job-uid' };
  const pods = uids(200_000);
  const names = new Set(pods.map((uid) => eventAction(job, { type: 'Warning', reason: 'EphemeralContainerFailed', message: 'exit 1', discriminator: uid }, new Date(0)).name));
  assert.equal(names.size, pods.length);
  // The control: the same inputs under one 32-bit hash do collide.
  const short = new Set(pods.map((uid) => shortHash(`job-uid/EphemeralContainerFailed/${uid}`)));
  assert.ok(short.size < pods.length, 'these uids collide in 32 bits, so the check above can fail');
});

test('Lease names are unchanged (their hash is 32-bit FNV-1a, as every earlier version named them)', () => {
  assert.equal(jobLeaseName(jobKey('default', 'hello-world-ephemeral-job')), 'ejob-ephemeraljob-default-hello-world-ephemeral-job-c6483aa3');
});
