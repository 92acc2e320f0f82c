// CI's chaos run: a fixed set of seeds through the same runner as `npm run chaos`, each a
// seeded world run by 2–4 real ephemera processes against the embedded API server with
// faults and SIGKILLs (about a minute in all on 2 cores).
//
// Known to fail on the current core, and tolerated here unless EPHEMERA_CHAOS_STRICT=1
// (switch it on once issues 10 and 11 are merged; the violations are still printed):
//   parallelism         — a pod whose job outcome is already failed (one container
//                         InvalidImageName) is dropped from the in-flight ledger while its
//                         other container still runs, so the next pod is injected early
//                         (issue 10); also a crash between injection and ledger write.
//   no-unexpected-exit  — the relay exits when its first LIST fails (an injected 500 or
//                         reset while a process starts) instead of retrying (issue 11).
// Every other invariant must hold on every seed.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { Invariant } from './record.ts';
import { runSchedule } from './runner.ts';
import { generate } from './world.ts';

/**
 * Seeds that between them have one and two namespaces, 2, 3 and 4 processes, 7 to 39 pods,
 * one to three jobs, two-container templates with an invalid image, replicas, every sidecar
 * strategy (CRR, signal container, virtual-kubelet swap, ignore-exit-code) under Never and
 * OnFailure, late pods and jobs, a paused job raised, and kills right after injections.
 */
const SEEDS = [101, 104, 105, 109, 114, 122];
const KNOWN_ON_CURRENT_CORE: readonly Invariant[] = ['parallelism', 'no-unexpected-exit'];
const strict = process.env.EPHEMERA_CHAOS_STRICT === '1';

describe(`chaos seeds (${strict ? 'strict' : `tolerating ${KNOWN_ON_CURRENT_CORE.join(', ')}`})`, () => {
  for (const seed of SEEDS) {
    test(`seed ${seed}`, async (t) => {
      const r = await runSchedule(generate(seed), { limitMs: 60_000 });
      const known = r.violations.filter((v) => !strict && KNOWN_ON_CURRENT_CORE.includes(v.invariant));
      for (const v of known) t.diagnostic(`known on the current core: [${v.invariant}] ${v.message}`);
      const rest = r.violations.filter((v) => !known.includes(v));
      assert.deepEqual(rest, [], `seed ${seed} broke invariants; files kept in ${r.dir}; re-run with npm run chaos -- --seed ${seed}`);
      if (r.dir) rmSync(r.dir, { recursive: true, force: true });
      // The schedule really ran: writes by the processes, and faults fired.
      assert.ok(r.writes > 20, `only ${r.writes} writes`);
      assert.ok(Object.values(r.faults).reduce((a, b) => a + b, 0) > 0, 'no fault fired');
    });
  }
});
