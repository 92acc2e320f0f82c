// Random schedules of several EphemeralJob engine instances against the embedded API server
// (see test/support/ejob-chaos.ts). CI runs a fixed number with a fixed seed; set
// EPHEMERA_CHAOS_RUNS (and EPHEMERA_CHAOS_SEED) for more, e.g. thousands before a release.
import { test } from 'node:test';
import fc from 'fast-check';
import { chaosSteps, chaosWorld, runSchedule } from '../support/ejob-chaos.ts';

const runs = Number(process.env.EPHEMERA_CHAOS_RUNS ?? 300);
const seed = Number(process.env.EPHEMERA_CHAOS_SEED ?? 20261123);

test(`${runs} random schedules: 4–8 instances, duplicated/reordered/concurrent events, crashes between writes, stalls past the claim window, 409/429/5xx/resets, writes refused for good (403/404/422), parallelism changed, the job paused, pods relabelled out and back — parallelism (of target pods), replicas, pause and single injection hold after every step; every job reaches a verdict matching its pods`, { timeout: 600_000 }, async () => {
  await fc.assert(fc.asyncProperty(chaosWorld, chaosSteps, (w, steps) => runSchedule(w, steps)), { numRuns: runs, seed, endOnFailure: true });
});
