// What the property tests share (test/ejob/planner-properties.test.ts and the others of
// review88): how many runs, which seed, and counts of what the runs covered.

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
