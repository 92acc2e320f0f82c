// The cost model's parts that need no measurement: what a month costs whatever the traffic,
// and what each Secrets Manager cluster secret adds, its reads included (review: the price of
// a call was written down and never used). The README's example prints the same line.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { CONNECTION_REFRESH_MS } from '../../functions/kube/credentials.ts';
import { monthlyCost, monthlyLine, PRICES, secretReadsPerMonth } from './aws-prices.ts';

/** The default stacks' shape: 11 alarms and 4 log metric filters (cost-model.bench.ts counts them from the synthesized templates), 5 pollers, maxConcurrency 5. */
const shape = { alarms: 11, metricFilters: 4, idlePollers: 5, pollWaitSeconds: 20, maxConcurrency: 5 };

test('a secret is read by each warm instance every connection refresh: 8,640 reads a month each, priced per 10,000 calls', () => {
  assert.equal(CONNECTION_REFRESH_MS, 5 * 60_000);
  assert.equal(secretReadsPerMonth({ maxConcurrency: 1 }), 12 * 24 * 30);
  assert.equal(secretReadsPerMonth(shape), 43_200);
  const { secret } = monthlyCost(shape);
  assert.equal(secret.stored, PRICES.secretPerMonth);
  assert.ok(Math.abs(secret.reads - 43_200 / 10_000 * PRICES.secretsPerTenThousandCalls) < 1e-9);
  assert.equal((secret.stored + secret.reads).toFixed(3), '0.616');
});

test('the month without traffic: alarms and the event source\'s long polling, as before', () => {
  const m = monthlyCost(shape);
  assert.equal(m.pollRequests, 648_000);
  assert.equal(m.total.toFixed(2), '1.36');
  assert.match(monthlyLine(shape), /= \$1\.36; plus per Secrets Manager cluster secret \$0\.400, and while messages arrive up to \$0\.216 for its reads \(5 warm instances each read it every 5 minutes: 43,200 GetSecretValue calls\) = \$0\.616 \(EKS clusters: none\)$/);
});

test('the README\'s example output ends with the line the model prints', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  assert.ok(readme.includes(`${monthlyLine(shape)}\n\`\`\``), 'README "Cost": the example block\'s idle line');
});
