// Bundles the `ephemera` CLI (relay, webhook, invoke, start) into one ESM file with
// esbuild: `npm run build:relay` → dist/ephemera.mjs. Production runs this bundle rather
// than TypeScript directly: Node's type stripping alone costs ~65 MiB of memory, which
// the relay's budget (10,000 pods under 150 MiB) cannot afford.
import { fileURLToPath } from 'node:url';
import { bundleNode } from '../infra/bundle.ts';

/** Node flags the relay runs with (a small young generation; favour size over speed). */
export const RELAY_NODE_FLAGS = ['--optimize-for-size', '--max-semi-space-size=1'];

/**
 * The CLI as one file (what relay/Dockerfile ships). With zod's English messages only, as
 * the Lambda bundle has them: the other ~40 locales were evaluated at start and held ~14 MiB
 * of the relay's resident memory for nothing (issue 11; the CLI configures no other locale).
 */
export async function buildBundle(outfile: string): Promise<void> {
  await bundleNode('functions/runtime/node/ephemera.ts', outfile, { zodEnglishOnly: true });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = fileURLToPath(new URL('../dist/ephemera.mjs', import.meta.url));
  await buildBundle(out);
  process.stdout.write(`${out}\n`);
}
