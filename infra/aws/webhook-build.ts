// Bundles the webhook's Lambda function URL entry (functions/adapters/lambda-url.ts) into one
// ESM file and zips it: `node infra/aws/webhook-build.ts` → dist/webhook/function.zip.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const out = join(root, 'dist', 'webhook');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(root, 'functions', 'adapters', 'lambda-url.ts')],
  outfile: join(out, 'index.mjs'),
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'esm',
  minify: true,
  sourcemap: 'linked',
  logLevel: 'warning',
});
execFileSync('zip', ['-qj', join(out, 'function.zip'), join(out, 'index.mjs'), join(out, 'index.mjs.map')]);
process.stdout.write(`dist/webhook/function.zip: ${(statSync(join(out, 'function.zip')).size / 1024).toFixed(0)} KiB\n`);
