// The one esbuild recipe every deployable shares: a single minified ESM file for Node 24.
// Used by the Lambda assets (infra/aws/assets.ts) and the relay image (relay/build.ts).
import { build, type BuildOptions } from 'esbuild';
import { mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Options of bundleNode. */
export interface BundleOptions {
  sourcemap?: boolean;
  /** Packages left as imports, for a runtime that provides them (Lambda's AWS SDK v3). */
  external?: string[];
  /**
   * Dynamic imports become chunks next to `outfile`, loaded (and compiled) only when first
   * used: code a cold start does not run costs it nothing. Off for the relay's one-file image.
   */
  splitting?: boolean;
}

/** The esbuild options for `entry` (relative to the root): exported so tests inspect the very same build. */
export function nodeBuildOptions(entry: string, outfile: string, opts: BundleOptions = {}): BuildOptions {
  return {
    ...(opts.splitting
      ? { entryPoints: { [basename(outfile, '.mjs')]: join(ROOT, entry) }, outdir: dirname(outfile), splitting: true, chunkNames: 'chunks/[name]-[hash]', outExtension: { '.js': '.mjs' } }
      : { entryPoints: [join(ROOT, entry)], outfile }),
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    minify: true,
    sourcemap: opts.sourcemap ? 'linked' : false,
    external: opts.external ?? [],
    // Some CommonJS dependencies call require(); give the ESM bundle one.
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    logLevel: 'warning',
  };
}

/** Bundle `entry` (relative to the root) into `outfile`. */
export async function bundleNode(entry: string, outfile: string, opts: BundleOptions = {}): Promise<void> {
  mkdirSync(dirname(outfile), { recursive: true });
  await build(nodeBuildOptions(entry, outfile, opts));
}
