// Webhook figures (issue 4 asks for them; it sets no numeric goals): validations per CPU-second
// (process.cpuUsage, so other load on the machine does not count), each also as a ratio to
// JSON.parse of the same AdmissionReview measured in the same run; p50/p99 latency in-process
// and over loopback HTTP (the `ephemera webhook` server); the Worker bundle size.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { pino } from 'pino';
import { createWebhookApp, WEBHOOK_PATH } from '../../functions/webhook/app.ts';
import { startWebhookServer } from '../../functions/runtime/node/webhook-server.ts';
import { validateEphemeralJob } from '../../functions/webhook/validate.ts';
import { admissionReview, container, job, spec } from '../webhook/support.ts';
import { figure } from './report.ts';

const root = new URL('../../', import.meta.url).pathname;

/** Calls per CPU-second of this process (user + system), after a JIT warm-up. */
function perCpuSecond(fn: () => void, ms = 1000): number {
  for (let i = 0; i < 2000; i++) fn();
  let n = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  while (performance.now() - start < ms) {
    for (let i = 0; i < 100; i++) fn();
    n += 100;
  }
  const used = process.cpuUsage(cpu);
  return n / ((used.user + used.system) / 1e6);
}

async function latency(fn: () => Promise<unknown>, count: number): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 200; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await fn();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  const q = (p: number): number => samples[Math.min(samples.length - 1, Math.floor(p * samples.length))]!;
  return { p50: q(0.5), p99: q(0.99) };
}

const valid = job(spec({ template: { ephemeralContainers: [container({ env: [{ name: 'A', value: '1' }], volumeMounts: [{ name: 'd', mountPath: '/d' }] })] } }));
const invalid = job(spec({ parallelism: 20, template: { ephemeralContainers: [container({ image: '' }), container({ ports: [{ containerPort: 1 }] })] } }));
const updated = job({ ...(valid.spec as object), parallelism: 5 });

const baselineBody = JSON.stringify(admissionReview({ object: valid }));
const baseline = perCpuSecond(() => JSON.parse(baselineBody));
const ten = job(spec({ template: { ephemeralContainers: Array.from({ length: 10 }, (_, i) => container({ name: `c${i}` })) } }));
const cases: [string, () => unknown][] = [
  ['CREATE, valid job (1 container)', () => validateEphemeralJob(valid, undefined, 'CREATE')],
  ['CREATE, invalid job (4 errors)', () => validateEphemeralJob(invalid, undefined, 'CREATE')],
  ['UPDATE (immutability + ratcheting)', () => validateEphemeralJob(updated, valid, 'UPDATE')],
  ['CREATE, 10 containers', () => validateEphemeralJob(ten, undefined, 'CREATE')],
];
for (const [label, fn] of cases) {
  const rate = perCpuSecond(fn);
  figure({ name: `webhook validate ${label}`, value: Math.round(rate), unit: 'validations/CPU-s', what: 'validateEphemeralJob calls per CPU-second of the bench process (user + system time), one core, warm JIT' });
  figure({ name: `webhook validate ${label}, cost over JSON.parse`, value: baseline / rate, unit: 'ratio', what: 'CPU time of one validation divided by CPU time of JSON.parse of the AdmissionReview carrying the valid job, same run' });
}

const app = createWebhookApp();
const body = JSON.stringify(admissionReview({ object: valid }));
const denyBody = JSON.stringify(admissionReview({ object: invalid }));
const post = (b: string) => async (): Promise<unknown> => (await app.request(WEBHOOK_PATH, { method: 'POST', body: b })).text();
const report = (label: string, what: string, l: { p50: number; p99: number }): void => {
  figure({ name: `webhook ${label} p50`, value: l.p50, unit: 'ms', what });
  figure({ name: `webhook ${label} p99`, value: l.p99, unit: 'ms', what });
};
report('in-process allowed', '20,000 sequential app.request() calls (hono, no network) with an allowed AdmissionReview, wall time each', await latency(post(body), 20_000));
report('in-process denied', '20,000 sequential app.request() calls with a denied review (4 field errors), wall time each', await latency(post(denyBody), 20_000));

const server = await startWebhookServer({ host: '127.0.0.1', port: 0, logger: pino({ level: 'silent' }) });
try {
  const http = await latency(async () => (await fetch(server.url + WEBHOOK_PATH, { method: 'POST', body })).text(), 5_000);
  report('loopback HTTP allowed', '5,000 sequential POSTs to `ephemera webhook` over loopback (fetch, keep-alive, client in the same process), wall time each', http);
  const started = performance.now();
  const cpu = process.cpuUsage();
  let done = 0;
  // 8 concurrent clients for 2 s: the server's throughput on its single event loop.
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (performance.now() - started < 2000) {
      await (await fetch(server.url + WEBHOOK_PATH, { method: 'POST', body })).text();
      done++;
    }
  }));
  const used = process.cpuUsage(cpu);
  figure({ name: 'webhook Node server reviews/CPU-s, 8 clients', value: Math.round(done / ((used.user + used.system) / 1e6)), unit: 'reviews/CPU-s', what: 'AdmissionReviews answered over loopback HTTP per CPU-second of the process running both the server and 8 concurrent fetch clients (so a lower bound for the server alone)' });
} finally {
  await server.close();
}

const out = mkdtempSync(join(tmpdir(), 'ephemera-bench-worker-'));
try {
  execFileSync(process.execPath, [join(root, 'node_modules/.bin/wrangler'), 'deploy', '--dry-run', '--outdir', out, '-c', join(root, 'infra/cloudflare/wrangler.jsonc')], {
    stdio: 'pipe', env: { ...process.env, WRANGLER_SEND_METRICS: 'false', WRANGLER_LOG_PATH: join(out, 'logs') },
  });
  const code = readFileSync(join(out, 'worker.js'));
  figure({ name: 'webhook Worker bundle, gzip', value: Math.round((gzipSync(code).length / 1024) * 10) / 10, unit: 'KiB', what: `worker.js from \`wrangler deploy --dry-run\` (${(code.length / 1024).toFixed(1)} KiB raw), gzip level 6; no Kubernetes client inside` });
} finally {
  rmSync(out, { recursive: true, force: true });
}
