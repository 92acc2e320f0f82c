// `npm run bench`: runs every test/bench/*.bench.ts in turn (or the ones named on the
// command line), passes their output through, and ends with one table of every figure
// they reported (test/bench/report.ts): value, goal from the issues, met or not.
// Benchmarks measure; they do not fail on a missed goal (the table says so).
import { readdirSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { parseFigureLine, table, type Figure } from './report.ts';

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w)))
  .sort();

/** Run one bench; echo its output, collect its figures; resolve to its exit code. */
function runBench(file: string, into: { bench: string; figure: Figure }[]): Promise<number> {
  const child = spawn(process.execPath, ['--expose-gc', join(here, file)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  lines.on('line', (line) => {
    const f = parseFigureLine(line);
    if (f) into.push({ bench: file.replace(/\.bench\.ts$/, ''), figure: f });
    else process.stdout.write(`${line}\n`);
  });
  return new Promise((resolve) => child.on('close', (code) => resolve(code ?? 1)));
}

const figures: { bench: string; figure: Figure }[] = [];
let failed = 0;
for (const f of files) {
  process.stdout.write(`\n=== ${f}\n`);
  if ((await runBench(f, figures)) !== 0) failed++;
}
process.stdout.write(`\n=== figures\n${table(figures)}\n`);
for (const { figure: f } of figures) process.stdout.write(`  ${f.name}: ${f.what}\n`);
process.exitCode = failed === 0 ? 0 : 1;
