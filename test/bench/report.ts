// One figure of a benchmark, as `npm run bench` tabulates it. A bench module calls
// `figure(...)` for each measured number; run.ts collects the lines it prints and ends with
// one table: figure, value, goal, met. Counts are taken at the API server or the queue;
// times are given as ratios to a baseline measured in the same run (timings here are noisy).

/** How a goal compares: the value must be at most (`<=`) or at least (`>=`) the bound. */
export type GoalOp = '<=' | '>=';

/** A goal from an issue, e.g. `{ op: '<=', bound: 3, source: 'issue 10' }`. */
export interface Goal {
  op: GoalOp;
  bound: number;
  /** Where the goal comes from ("issue 10"). */
  source: string;
}

/** One measured figure. `what` says exactly what was counted and where. */
export interface Figure {
  /** Short name, unique within the bench ("ejob writes/injected pod, p=1, N=100"). */
  name: string;
  value: number;
  /** "writes", "requests", "bytes", "MiB", "ratio", "events/CPU-s", … */
  unit: string;
  /** What was counted, where, and with which inputs. */
  what: string;
  goal?: Goal;
}

/** The marker run.ts looks for at the start of a line of a bench's output. */
export const FIGURE_PREFIX = 'BENCH-FIGURE ';

/** Whether a figure meets its goal (true when it has none). */
export function met(f: Figure): boolean {
  if (!f.goal) return true;
  return f.goal.op === '<=' ? f.value <= f.goal.bound : f.value >= f.goal.bound;
}

/** Print one figure for run.ts to collect (and a readable line for a bench run on its own). */
export function figure(f: Figure): void {
  process.stdout.write(`${FIGURE_PREFIX}${JSON.stringify(f)}\n`);
}

/** Parse a line printed by `figure`; null for any other line. */
export function parseFigureLine(line: string): Figure | null {
  if (!line.startsWith(FIGURE_PREFIX)) return null;
  try {
    const f = JSON.parse(line.slice(FIGURE_PREFIX.length)) as Figure;
    return typeof f.name === 'string' && typeof f.value === 'number' ? f : null;
  } catch {
    return null;
  }
}

/** The closing table: one row per figure with its goal and whether it is met. */
export function table(rows: { bench: string; figure: Figure }[]): string {
  const fmt = (v: number): string => (Number.isInteger(v) ? String(v) : v >= 100 ? v.toFixed(0) : v.toFixed(2));
  const lines = rows.map(({ bench, figure: f }) => [
    bench,
    f.name,
    `${fmt(f.value)} ${f.unit}`,
    f.goal ? `${f.goal.op} ${fmt(f.goal.bound)} (${f.goal.source})` : '—',
    f.goal ? (met(f) ? 'met' : 'NOT MET') : '',
  ]);
  const header = ['bench', 'figure', 'value', 'goal', ''];
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const row = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [row(header), row(widths.map((w) => '-'.repeat(w))), ...lines.map(row)].join('\n');
}
