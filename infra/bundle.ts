// The one esbuild recipe every deployable shares: a single minified ESM file for Node 24.
// Used by the Lambda assets (infra/aws/assets.ts) and the relay image (relay/build.ts).
import { build } from 'esbuild';
import { mkdirSync } from 'node:fs';
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
