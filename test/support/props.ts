// What the property tests share (test/ejob/planner-properties.test.ts and the others of
// review88): how many runs, which seed, the runner over named arbitraries, and counts of what
// the runs covered.
import { after } from 'node:test';
import fc from 'fast-check';

/**
 * How many runs a property makes, and its seed. `EPHEMERA_PROPS_RUNS=4` makes four times as
 * many, to look longer (never fewer: the checks of what the runs covered count on these). The
 * seed is fast-check's, new at every run, unless `EPHEMERA_PROPS_SEED` pins it: a failure
 * prints the seed and path that replay it.
 */
export function propsRuns(runs: number): { numRuns: number; seed?: number } {
  const scale = Math.max(1, Number(process.env.EPHEMERA_PROPS_RUNS ?? 1) || 1);
  const seed = process.env.EPHEMERA_PROPS_SEED;
  return { numRuns: Math.max(1, Math.round(runs * scale)), ...(seed ? { seed: Number(seed) } : {}) };
}

/** Counts of what the generated inputs covered, for the non-vacuity checks. */
export class Seen {
  readonly n: Record<string, number> = {};
  add(key: string, by = 1): void {
    this.n[key] = (this.n[key] ?? 0) + by;
  }
  get(key: string): number {
    return this.n[key] ?? 0;
  }
}

/** Run `check` over each named arbitrary, `runs` times each; a failure names the arbitrary. */
export function checkEach<T>(arbs: readonly (readonly [string, fc.Arbitrary<T>])[], runs: number, check: (x: T) => void): void {
  for (const [name, arb] of arbs) {
    try {
      fc.assert(fc.property(arb, check), propsRuns(runs));
    } catch (e) {
      throw new Error(`[${name}] ${(e as Error).message}`, { cause: e });
    }
  }
}

/** A Seen whose counts are printed after the file's tests with EPHEMERA_DEBUG=1 (what the runs covered). */
export function reportedSeen(): Seen {
  const seen = new Seen();
  after(() => {
    if (process.env.EPHEMERA_DEBUG) console.log(seen.n);
  });
  return seen;
}

/**
 * What `run` returns with the global clock (Date, Date.now) stopped at `at` ms and
 * Math.random returning `rnd`: a planner that reads neither gives the same for any two.
 */
export function withFrozenWorld(at: number, rnd: number, run: () => string): string {
  const RealDate = Date;
  const realRandom = Math.random;
  class FakeDate extends RealDate {
    constructor(...a: unknown[]) {
      if (a.length === 0) super(at);
      else super(...(a as [string]));
    }
    static override now(): number {
      return at;
    }
  }
  globalThis.Date = FakeDate as DateConstructor;
  Math.random = () => rnd;
  try {
    return run();
  } finally {
    globalThis.Date = RealDate;
    Math.random = realRandom;
  }
}
