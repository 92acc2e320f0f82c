// The one esbuild recipe every deployable shares: a single minified ESM file for Node 24.
// Used by the Lambda builds (infra/aws/*-build*.ts) and the relay image (relay/build.ts).
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Bundle `entry` (relative to the root) into `outfile`. */
export async function bundleNode(entry: string, outfile: string, opts: { sourcemap?: boolean } = {}): Promise<void> {
  mkdirSync(dirname(outfile), { recursive: true });
  await build({
    entryPoints: [join(ROOT, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    minify: true,
    sourcemap: opts.sourcemap ? 'linked' : false,
    // Some CommonJS dependencies call require(); give the ESM bundle one.
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    logLevel: 'warning',
  });
}

/** A Lambda deployment package: dist/<name>/index.mjs (+ map) zipped as function.zip. */
export async function bundleLambda(entry: string, name: string): Promise<void> {
  const out = join(ROOT, 'dist', name);
  rmSync(out, { recursive: true, force: true });
  await bundleNode(entry, join(out, 'index.mjs'), { sourcemap: true });
  execFileSync('zip', ['-qj', join(out, 'function.zip'), join(out, 'index.mjs'), join(out, 'index.mjs.map')]);
  process.stdout.write(`dist/${name}/function.zip: ${(statSync(join(out, 'function.zip')).size / 1024).toFixed(0)} KiB\n`);
}
