// Deployment figures (issue 13): the reconciler Lambda bundle's size, its cold start
// (import + first SQS event against a local fake API server) as a ratio to `node -e 0`
// measured side by side, and the webhook Worker's gzipped size as `wrangler deploy` uploads it.
import { execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { startFauxqs } from 'fauxqs';
import { startApiServer } from '../../functions/cluster/index.ts';
import { buildLambdaAssets, LAMBDA_ENTRIES } from '../../infra/aws/assets.ts';
import { bundleNode } from '../../infra/bundle.ts';
import { envelopeFor } from '../support/ejob-world.ts';
import { job, pod } from '../support/relay-world.ts';
import { figure } from './report.ts';

const root = new URL('../../', import.meta.url).pathname;
// Under the repository (dist/ is ignored): the bundle leaves @aws-sdk/* to the Lambda
// runtime, and here those imports resolve from the project's node_modules instead.
mkdirSync(join(root, 'dist'), { recursive: true });
const dir = mkdtempSync(join(root, 'dist', 'deploy-bench-'));
const RUNS = 11;

/** Run node under /usr/bin/time: wall time, and the child's user+system CPU (load-independent, 10 ms resolution). */
function run(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ ms: number; cpuMs: number; out: string; code: number }> {
  const times = join(dir, 'time.txt');
  const t = performance.now();
  const child = spawn('/usr/bin/time', ['-f', '%U %S', '-o', times, process.execPath, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => {
    const ms = performance.now() - t;
    const [user = NaN, sys = NaN] = readFileSync(times, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number);
    resolve({ ms, cpuMs: (user + sys) * 1000, out, code: code ?? 1 });
  }));
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Secrets Manager's GetSecretValue as a deployed Lambda's "secret" cluster source reads it
 * (AWS JSON 1.1 over HTTP, AWS_ENDPOINT_URL_SECRETS_MANAGER): the answer holds `secret()`.
 * A Lambda cannot use a kubeconfig (infra/aws/settings.ts), so its first event loads the
 * Secrets Manager client and the credential chain where the kubeconfig run loads YAML.
 */
async function secretsManager(secret: () => object): Promise<{ url: string; reads: () => number; close: () => void }> {
  let reads = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      if (target !== 'secretsmanager.GetSecretValue') {
        res.writeHead(400, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify({ __type: 'InvalidRequestException', message: `unexpected ${target}` }));
        return;
      }
      reads++;
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify({ ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:ephemera/bench-AbCdEf', Name: 'ephemera/bench', VersionId: 'v1', SecretString: JSON.stringify(secret()) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, reads: () => reads, close: () => server.close() };
}

try {
  // 1. Bundle size: what Code.fromAsset uploads (index.mjs and chunks/, no source map).
  const assets = await buildLambdaAssets(join(dir, 'assets'));
  const bundle = join(assets.reconciler, 'index.mjs');
  const files = readdirSync(assets.reconciler, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.mjs'));
  const bytes = files.reduce((n, f) => n + statSync(join(assets.reconciler, f)).size, 0);
  figure({ name: 'reconciler bundle', value: Math.round(bytes / 1024), unit: 'KiB', what: `dist/lambda/reconciler/ (${files.length} files: index.mjs + lazily loaded chunks): esbuild minified ESM, no source map, @aws-sdk/* left to the nodejs24.x runtime`, goal: { op: '<=', bound: 976, source: 'issue 13 (1 MB = 976 KiB)' } });
  // esbuild puts code shared by the entry and a lazy chunk in a chunk of its own that index.mjs
  // imports statically: a cold start compiles that closure.
  const eager = new Set<string>();
  const visit = (file: string): void => {
    if (eager.has(file)) return;
    eager.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(/(?:^|[;\n])import\s*(?:\{[^}]*\}\s*from\s*|[\w$]+\s*from\s*)?"(\.\/[^"]+)"/g)) visit(join(dirname(file), m[1]!));
  };
  visit(bundle);
  const eagerBytes = [...eager].reduce((n, f) => n + statSync(f).size, 0);
  figure({ name: 'reconciler entry chunk', value: Math.round(eagerBytes / 1024), unit: 'KiB', what: `index.mjs and the ${eager.size - 1} chunks it imports statically: the code every cold start compiles (YAML, the EKS signer, the AWS SDK and the SidecarTerminator's observe and plan load on first use)` });
  const withSdk = join(dir, 'with-sdk.mjs');
  await bundleNode(LAMBDA_ENTRIES.reconciler, withSdk, { zodEnglishOnly: true, noPinoTransports: true });
  figure({ name: 'reconciler bundle with AWS SDK', value: Math.round(statSync(withSdk).size / 1024), unit: 'KiB', what: 'the same entry as one file with @aws-sdk/* bundled too (for a runtime without the SDK)' });

  // 2. Cold start: a fresh process imports the bundle and handles one SQS event for an
  // EphemeralJob (route, Lease, observe, inject, status) against the embedded API server.
  const objects = [pod('web-1', { app: 'web' }), { ...job('check', { app: 'web' }), metadata: { name: 'check', namespace: 'default', uid: 'job-uid-1' }, spec: { selector: { matchLabels: { app: 'web' } }, parallelism: 1, template: { ephemeralContainers: [{ name: 'probe', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'main' }] } } }];
  const q = await startFauxqs({ port: 0, logger: false });
  const { queueUrl } = q.createQueue('ephemera-events');
  const kubeconfig = join(dir, 'kubeconfig');
  const probe = join(dir, 'probe.mjs');
  const event = { Records: [{ messageId: 'm1', body: JSON.stringify(envelopeFor('EphemeralJob', 'default', 'check')), attributes: {}, messageAttributes: {} }] };
  writeFileSync(probe, `const { handler } = await import(${JSON.stringify(pathToFileURL(bundle).href)});
const end = Date.now() + 60000;
const r = await handler(${JSON.stringify(event)}, { getRemainingTimeInMillis: () => end - Date.now() });
process.stdout.write(JSON.stringify(r));`);
  const env = {
    ...process.env, KUBECONFIG: kubeconfig, EPHEMERA_QUEUE_URL: queueUrl, EPHEMERA_LOCK_NAMESPACE: 'ephemera-locks', LOG_LEVEL: 'silent',
    AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 't', AWS_SECRET_ACCESS_KEY: 't', AWS_ENDPOINT_URL_SQS: `http://127.0.0.1:${q.port}`,
  };
  let apiUrl = '';
  const sm = await secretsManager(() => ({ server: apiUrl, token: 'bench-service-account-token' }));
  const secretEnv = {
    ...env, KUBECONFIG: join(dir, 'no-kubeconfig'), AWS_ENDPOINT_URL_SECRETS_MANAGER: sm.url,
    EPHEMERA_CLUSTERS: JSON.stringify({ bench: { secret: { secretId: 'ephemera/bench' } } }), EPHEMERA_DEFAULT_CLUSTER: 'bench',
  };
  const secretCold: number[] = [];
  const base: number[] = [];
  const cold: number[] = [];
  const importOnly: number[] = [];
  const cpu = { base: 0, cold: 0 };
  let requests = 0;
  for (let i = 0; i < RUNS; i++) {
    // A fresh cluster each run, so every run does the same first event's work.
    const server = await startApiServer({ objects });
    writeFileSync(kubeconfig, server.kubeconfigYaml());
    const b = await run(['-e', '0']);
    base.push(b.ms);
    cpu.base += b.cpuMs;
    importOnly.push((await run(['-e', `await import(${JSON.stringify(pathToFileURL(bundle).href)})`], env)).ms);
    const r = await run([probe], env);
    if (r.code !== 0 || r.out !== '{"batchItemFailures":[]}') throw new Error(`cold start probe failed (${r.code}): ${r.out.slice(0, 500)}`);
    if ((server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web-1' }) as unknown as { spec: { ephemeralContainers?: unknown[] } }).spec.ephemeralContainers?.length !== 1) throw new Error('the first event injected nothing');
    requests = server.requests.entries.length;
    cold.push(r.ms);
    cpu.cold += r.cpuMs;
    await server.close();
    // The same first event as a deployed Lambda makes it: the cluster from a "secret" source.
    const again = await startApiServer({ objects });
    apiUrl = again.url;
    const s = await run([probe], secretEnv);
    if (s.code !== 0 || s.out !== '{"batchItemFailures":[]}') throw new Error(`cold start probe with a secret source failed (${s.code}): ${s.out.slice(0, 500)}`);
    if (again.requests.entries.length !== requests) throw new Error(`the secret source's first event made ${again.requests.entries.length} API requests, the kubeconfig's ${requests}`);
    secretCold.push(s.ms);
    await again.close();
  }
  sm.close();
  if (sm.reads() !== RUNS) throw new Error(`Secrets Manager was read ${sm.reads()} times in ${RUNS} cold starts`);
  process.stdout.write(`node -e 0: median ${median(base).toFixed(0)} ms; import only: median ${median(importOnly).toFixed(0)} ms; import + first event: median ${median(cold).toFixed(0)} ms (${requests} API requests, one injection), ${RUNS} runs each, interleaved\n`);
  figure({ name: 'Lambda cold start vs node -e 0', value: median(cold) / median(base), unit: 'ratio', what: `median wall time of a fresh node process importing the reconciler bundle and handling one EphemeralJob SQS event against the embedded API server (${requests} requests), over median of node -e 0; ${RUNS} interleaved runs`, goal: { op: '<=', bound: 5, source: 'issue 13' } });
  figure({ name: 'Lambda cold start with a secret source vs node -e 0', value: median(secretCold) / median(base), unit: 'ratio', what: `the same first event with the cluster from a "secret" source, as a deployed Lambda has it (a kubeconfig it cannot have): the Secrets Manager client and the credential chain load (from node_modules, as from the runtime's) and one GetSecretValue from a local stand-in, where the run above loads YAML; ${RUNS} interleaved runs` });
  figure({ name: 'Lambda cold start CPU vs node -e 0', value: cpu.cold / cpu.base, unit: 'ratio', what: `user+system CPU of the same cold-start processes over that of node -e 0, summed over ${RUNS} runs (/usr/bin/time): the ratio without the shared machine's scheduling noise` });
  figure({ name: 'Lambda bundle import vs node -e 0', value: median(importOnly) / median(base), unit: 'ratio', what: `median wall time of node importing the reconciler bundle only, over median of node -e 0; ${RUNS} interleaved runs` });
  await q.stop();

  // 3. The webhook Worker as `wrangler deploy` would upload it.
  const out = join(dir, 'worker');
  execFileSync(process.execPath, [join(root, 'node_modules/.bin/wrangler'), 'deploy', '--dry-run', '--outdir', out, '-c', join(root, 'infra/cloudflare/wrangler.jsonc')], {
    stdio: 'pipe', env: { ...process.env, WRANGLER_SEND_METRICS: 'false', WRANGLER_LOG_PATH: join(dir, 'logs'), CI: 'true' },
  });
  const gz = gzipSync(readFileSync(join(out, 'worker.js'))).length;
  figure({ name: 'webhook Worker gzip', value: Math.round(gz / 102.4) / 10, unit: 'KiB', what: 'worker.js from wrangler deploy --dry-run (infra/cloudflare/wrangler.jsonc), gzip -9 default level', goal: { op: '<=', bound: 100, source: 'issue 13' } });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
