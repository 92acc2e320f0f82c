// Bundles the reconciler Lambda (functions/adapters/lambda.ts) into one ESM file with
// esbuild and zips it: `npm run build:lambda` → dist/lambda/function.zip.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const out = join(root, 'dist', 'lambda');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(root, 'functions', 'adapters', 'lambda.ts')],
  outfile: join(out, 'index.mjs'),
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'esm',
  minify: true,
  sourcemap: 'linked',
  // Some CommonJS dependencies call require(); give the ESM bundle one.
  banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
  logLevel: 'warning',
});
execFileSync('zip', ['-qj', join(out, 'function.zip'), join(out, 'index.mjs'), join(out, 'index.mjs.map')]);
process.stdout.write(`dist/lambda/function.zip: ${(statSync(join(out, 'function.zip')).size / 1024).toFixed(0)} KiB\n`);
