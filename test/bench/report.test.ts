import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { FIGURE_PREFIX, met, parseFigureLine, table, type Figure } from './report.ts';

const f = (value: number, op: '<=' | '>=', bound: number): Figure => ({ name: 'x', value, unit: 'writes', what: 'counted', goal: { op, bound, source: 'issue 10' } });

test('a goal is met or not by its comparison', () => {
  assert.equal(met(f(3, '<=', 3)), true);
  assert.equal(met(f(3.1, '<=', 3)), false);
  assert.equal(met(f(20_000, '>=', 20_000)), true);
  assert.equal(met(f(7_700, '>=', 20_000)), false);
  assert.equal(met({ name: 'y', value: 1, unit: 'u', what: 'w' }), true);
});

test('figure lines round-trip and other lines are not figures', () => {
  const line = `${FIGURE_PREFIX}${JSON.stringify(f(2, '<=', 3))}`;
  assert.deepEqual(parseFigureLine(line), f(2, '<=', 3));
  assert.equal(parseFigureLine('N=100 noop events=20'), null);
  assert.equal(parseFigureLine(`${FIGURE_PREFIX}{not json`), null);
});

test('the table says NOT MET for a missed goal', () => {
  const out = table([{ bench: 'ejob-cost', figure: f(7, '<=', 3) }, { bench: 'ejob-cost', figure: { ...f(1, '<=', 3), name: 'z' } }]);
  assert.match(out, /x\s+7 writes\s+<= 3 \(issue 10\)\s+NOT MET/);
  assert.match(out, /z\s+1 writes\s+<= 3 \(issue 10\)\s+met/);
});
