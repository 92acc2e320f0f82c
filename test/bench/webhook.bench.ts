// Webhook figures: validations per second on one core, p50/p99 latency in-process and over
// loopback HTTP (the `ephemera webhook` server), and the Worker bundle size. Prints only.
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

const root = new URL('../../', import.meta.url).pathname;

function perSecond(label: string, fn: () => void, ms = 1000): void {
  for (let i = 0; i < 2000; i++) fn(); // warm up the JIT
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < ms) {
    for (let i = 0; i < 100; i++) fn();
    n += 100;
  }
  const rate = n / ((performance.now() - start) / 1000);
  process.stdout.write(`${label}: ${Math.round(rate).toLocaleString('en-US')} /s\n`);
}

async function latency(label: string, fn: () => Promise<unknown>, count: number): Promise<void> {
  for (let i = 0; i < 200; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await fn();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  const q = (p: number): string => (samples[Math.min(samples.length - 1, Math.floor(p * samples.length))] as number).toFixed(3);
  process.stdout.write(`${label}: p50 ${q(0.5)} ms, p99 ${q(0.99)} ms (${count} sequential requests)\n`);
}

const valid = job(spec({ template: { ephemeralContainers: [container({ env: [{ name: 'A', value: '1' }], volumeMounts: [{ name: 'd', mountPath: '/d' }] })] } }));
const invalid = job(spec({ parallelism: 20, template: { ephemeralContainers: [container({ image: '' }), container({ ports: [{ containerPort: 1 }] })] } }));
const updated = job({ ...(valid.spec as object), parallelism: 5 });

perSecond('validate CREATE, valid job (1 container)', () => validateEphemeralJob(valid, undefined, 'CREATE'));
perSecond('validate CREATE, invalid job (4 errors)', () => validateEphemeralJob(invalid, undefined, 'CREATE'));
perSecond('validate UPDATE (immutability + ratcheting)', () => validateEphemeralJob(updated, valid, 'UPDATE'));
const ten = job(spec({ template: { ephemeralContainers: Array.from({ length: 10 }, (_, i) => container({ name: `c${i}` })) } }));
perSecond('validate CREATE, 10 containers', () => validateEphemeralJob(ten, undefined, 'CREATE'));

const app = createWebhookApp();
const body = JSON.stringify(admissionReview({ object: valid }));
const denyBody = JSON.stringify(admissionReview({ object: invalid }));
const post = (b: string) => async (): Promise<unknown> => (await app.request(WEBHOOK_PATH, { method: 'POST', body: b })).text();
await latency('in-process app.request, allowed', post(body), 20_000);
await latency('in-process app.request, denied', post(denyBody), 20_000);

const server = await startWebhookServer({ host: '127.0.0.1', port: 0, logger: pino({ level: 'silent' }) });
try {
  await latency('Node server over loopback HTTP (fetch, keep-alive), allowed', async () => (await fetch(server.url + WEBHOOK_PATH, { method: 'POST', body })).text(), 5_000);
  const started = performance.now();
  let done = 0;
  // 8 concurrent clients for 2 s: the server's throughput on its single event loop.
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (performance.now() - started < 2000) {
      await (await fetch(server.url + WEBHOOK_PATH, { method: 'POST', body })).text();
      done++;
    }
  }));
  process.stdout.write(`Node server throughput, 8 concurrent clients: ${Math.round(done / ((performance.now() - started) / 1000)).toLocaleString('en-US')} reviews/s (client in the same process)\n`);
} finally {
  await server.close();
}

const out = mkdtempSync(join(tmpdir(), 'ephemera-bench-worker-'));
try {
  execFileSync(process.execPath, [join(root, 'node_modules/.bin/wrangler'), 'deploy', '--dry-run', '--outdir', out, '-c', join(root, 'infra/cloudflare/wrangler.jsonc')], {
    stdio: 'pipe', env: { ...process.env, WRANGLER_SEND_METRICS: 'false', WRANGLER_LOG_PATH: join(out, 'logs') },
  });
  const code = readFileSync(join(out, 'worker.js'));
  process.stdout.write(`Worker bundle (wrangler deploy --dry-run): ${(code.length / 1024).toFixed(1)} KiB, ${(gzipSync(code).length / 1024).toFixed(1)} KiB gzip\n`);
} finally {
  rmSync(out, { recursive: true, force: true });
}
