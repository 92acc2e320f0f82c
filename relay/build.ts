// Bundles the `ephemera` CLI (relay, webhook, invoke, start) into one ESM file with
// esbuild: `npm run build:relay` → dist/ephemera.mjs. Production runs this bundle rather
// than TypeScript directly: Node's type stripping alone costs ~65 MiB of memory, which
// the relay's budget (10,000 pods under 150 MiB) cannot afford.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

/** Node flags the relay runs with (a small young generation; favour size over speed). */
export const RELAY_NODE_FLAGS = ['--optimize-for-size', '--max-semi-space-size=1'];

export async function buildBundle(outfile: string): Promise<void> {
  await build({
    entryPoints: [fileURLToPath(new URL('../functions/cli/ephemera.ts', import.meta.url))],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    minify: true,
    // Some CommonJS dependencies call require(); give the ESM bundle one.
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    logLevel: 'warning',
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = fileURLToPath(new URL('../dist/ephemera.mjs', import.meta.url));
  await buildBundle(out);
  process.stdout.write(`${out}\n`);
}
