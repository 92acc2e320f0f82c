// `npm run chaos -- [--schedules N] [--seed S] [--parallel K] [--keep] [--processes P] [--limit-ms MS] [--log-level L]`
// Runs N seeded schedules (seeds S, S+1, …), K at a time; prints one line per schedule,
// each failing one with its seed, violations and the directory holding its files, and ends
// with the totals: schedules, faults by kind, violations by invariant. Exit code 1 on any violation.
import { parseArgs } from 'node:util';
import { runSchedule, type ScheduleResult } from './runner.ts';
import { generate } from './world.ts';

const USAGE = 'usage: npm run chaos -- [--schedules N] [--seed S] [--parallel K] [--keep] [--processes 2..4] [--limit-ms MS] [--log-level LEVEL]';

function options(argv: string[]): { schedules: number; seed: number; parallel: number; keep: boolean; processes?: number; limitMs?: number; logLevel?: string } {
  const { values } = parseArgs({
    args: argv, strict: true,
    options: {
      schedules: { type: 'string', default: '1' }, seed: { type: 'string' }, parallel: { type: 'string', default: '1' }, keep: { type: 'boolean', default: false },
      processes: { type: 'string' }, 'limit-ms': { type: 'string' }, 'log-level': { type: 'string' },
    },
  });
  const num = (name: string, v: string | undefined, min: number, max: number): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer ${min}..${max}, got "${v}"`);
    return n;
  };
  return {
    schedules: num('schedules', values.schedules, 1, 1_000_000)!,
    seed: num('seed', values.seed, 0, 2 ** 31 - 1) ?? Math.floor(Math.random() * 2 ** 30),
    parallel: num('parallel', values.parallel, 1, 16)!,
    keep: values.keep ?? false,
    processes: num('processes', values.processes, 1, 8),
    limitMs: num('limit-ms', values['limit-ms'], 1000, 600_000),
    logLevel: values['log-level'],
  };
}

/** Adds one schedule's counts into the totals. */
function tally(into: Record<string, number>, from: Record<string, number>): void {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
}

function line(r: ScheduleResult): string {
  const faults = Object.values(r.faults).reduce((a, b) => a + b, 0);
  const head = `seed ${r.seed}: ${r.violations.length ? 'FAIL' : 'ok'} (${(r.durationMs / 1000).toFixed(1)} s of which ${(r.startupMs / 1000).toFixed(1)} s start-up, ${r.processes} processes, ${r.writes} writes, ${faults} faults)`;
  if (!r.violations.length) return head + (r.dir ? ` files: ${r.dir}` : '');
  return [head, ...r.violations.map((v) => `  [${v.invariant}] ${v.message}`), `  files kept in ${r.dir}`, `  re-run: npm run chaos -- --seed ${r.seed} --schedules 1 (same world and fault plan; process timing differs)`].join('\n');
}

async function main(argv: string[]): Promise<number> {
  let o: ReturnType<typeof options>;
  try {
    o = options(argv);
  } catch (err) {
    process.stderr.write(`chaos: ${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const faults: Record<string, number> = {};
  const byInvariant: Record<string, number> = {};
  const failing: number[] = [];
  let renewed = 0;
  const started = Date.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < o.schedules) {
      const r = await runSchedule(generate(o.seed + next++), o);
      tally(faults, r.faults);
      renewed += r.renewals;
      for (const v of r.violations) byInvariant[v.invariant] = (byInvariant[v.invariant] ?? 0) + 1;
      if (r.violations.length) failing.push(r.seed);
      process.stdout.write(`${line(r)}\n`);
    }
  };
  await Promise.all(Array.from({ length: o.parallel }, worker));
  failing.sort((a, b) => a - b);
  const total = Object.values(faults).reduce((a, b) => a + b, 0);
  process.stdout.write([
    '',
    `chaos: ${o.schedules} schedules (seeds ${o.seed}..${o.seed + o.schedules - 1}) in ${((Date.now() - started) / 1000).toFixed(0)} s; ${failing.length} failed${failing.length ? `: seeds ${failing.join(', ')}` : ''}`,
    `faults injected (${total}, counted by the API server):`,
    ...Object.entries(faults).sort(([, a], [, b]) => b - a).map(([k, v]) => `  ${String(v).padStart(6)}  ${k}`),
    `claims made again after their injection did not show (functions/ejob/README.md, step 8): ${renewed}`,
    `violations by invariant: ${Object.keys(byInvariant).length ? Object.entries(byInvariant).map(([k, v]) => `${k} ${v}`).join(', ') : 'none'}`,
    '',
  ].join('\n'));
  return failing.length ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
