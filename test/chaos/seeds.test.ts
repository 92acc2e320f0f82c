// CI's chaos run: a fixed set of seeds through the same runner as `npm run chaos`, each a
// seeded world run by 2–4 real ephemera processes against the embedded API server with
// faults and SIGKILLs (about a minute in all on 2 cores).
//
// Every invariant must hold on every seed: any violation fails the run, prints the seed and
// keeps the schedule's files for `npm run chaos -- --seed S`.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { describe, test } from 'node:test';
import { runSchedule } from './runner.ts';
import { generate } from './world.ts';

/**
 * Seeds that between them have one and two namespaces, 2, 3 and 4 processes, 7 to 39 pods,
 * one to three jobs, two-container templates with an invalid image, replicas, every sidecar
 * strategy (CRR, signal container, virtual-kubelet swap, ignore-exit-code) under Never and
 * OnFailure, late pods and jobs, a paused job raised, and kills right after injections; all but
 * 104 also delete jobs mid-run (with and without OpenKruise's finalizer, some re-created); 109
 * and 122 have the API server hold injections for 9–16 s (world.ts heldInjections: from right
 * after the first injection in 109, the second in 122).
 */
const SEEDS = [101, 104, 105, 109, 114, 122];
describe('chaos seeds', () => {
  for (const seed of SEEDS) {
    test(`seed ${seed}`, async () => {
      const r = await runSchedule(generate(seed), { limitMs: 60_000 });
      assert.deepEqual(r.violations, [], `seed ${seed} broke invariants; files kept in ${r.dir}; re-run with npm run chaos -- --seed ${seed}`);
      if (r.dir) rmSync(r.dir, { recursive: true, force: true });
      // The schedule really ran: writes by the processes, and faults fired.
      assert.ok(r.writes > 20, `only ${r.writes} writes`);
      assert.ok(Object.values(r.faults).reduce((a, b) => a + b, 0) > 0, 'no fault fired');
    });
  }
});
