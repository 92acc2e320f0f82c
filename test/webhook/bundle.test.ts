// The Worker bundle, as `wrangler deploy` would upload it (--dry-run, offline): small, and
// free of the Kubernetes client and of Node built-ins (Workers run it without nodejs_compat).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { gzipSync } from 'node:zlib';

const root = new URL('../../', import.meta.url).pathname;
const out = mkdtempSync(join(tmpdir(), 'ephemera-worker-bundle-'));
/** Budget for the gzipped Worker: ~31 KiB with the warm-up and the path token; classic zod alone would add ~90 KiB. */
const MAX_GZIP_BYTES = 48 * 1024;
let code = '';
let sources: string[] = [];

before(() => {
  execFileSync(process.execPath, [join(root, 'node_modules/.bin/wrangler'), 'deploy', '--dry-run', '--outdir', out, '-c', join(root, 'infra/cloudflare/wrangler.jsonc')], {
    stdio: 'pipe',
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', WRANGLER_LOG_PATH: join(out, 'logs'), CI: 'true' },
  });
  code = readFileSync(join(out, 'worker.js'), 'utf8');
  sources = (JSON.parse(readFileSync(join(out, 'worker.js.map'), 'utf8')) as { sources: string[] }).sources;
});
after(() => rmSync(out, { recursive: true, force: true }));

test(`the Worker bundle is under ${MAX_GZIP_BYTES / 1024} KiB gzipped`, () => {
  const size = gzipSync(code).length;
  assert.ok(size < MAX_GZIP_BYTES, `worker.js is ${size} bytes gzipped`);
});

test('the Worker bundle contains no Kubernetes client, AWS SDK, logger or classic zod', () => {
  assert.ok(sources.some((s) => s.includes('functions/webhook/validate.ts')), 'the source map lists the bundled files');
  for (const banned of ['@kubernetes/client-node', '@aws-sdk', 'node_modules/pino', 'zod/v4/classic', 'zod/v4/locales/de.js']) {
    assert.deepEqual(sources.filter((s) => s.includes(banned)), [], `${banned} is bundled`);
  }
  // Of the shared API modules only the dependency-free ones may come along, and the container
  // types, on zod/mini (which the webhook's own parsing already carries).
  // go-json, go-types and quantity (the update rule compares in Go's terms) import nothing.
  assert.deepEqual(sources.filter((s) => s.includes('functions/api/') && !/functions\/api\/(names|field-path|name-formats|container-rules|container-types|container-fields|go-json|go-types|quantity)\.ts$/.test(s)), [], 'a classic-zod API module is bundled');
  assert.doesNotMatch(code, /KubeConfig|CoreV1Api/);
});

test('the Worker bundle imports nothing at run time (no node: built-ins)', () => {
  assert.doesNotMatch(code, /\bimport\s*[^(]*?from\s*["']|\brequire\(\s*["']|\bimport\(\s*["']/);
});
