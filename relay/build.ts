// Bundles the `ephemera` CLI (relay, webhook, invoke, start) with esbuild: `npm run
// build:relay` → dist/relay/ (ephemera.mjs and its chunks/). Production runs this bundle
// rather than TypeScript directly: Node's type stripping alone costs ~65 MiB of memory,
// which the relay's budget (10,000 pods under 150 MiB) cannot afford.
import { fileURLToPath } from 'node:url';
import { bundleNode } from '../infra/bundle.ts';

/** Node flags the relay runs with (a small young generation; favour size over speed). */
export const RELAY_NODE_FLAGS = ['--optimize-for-size', '--max-semi-space-size=1'];

/**
 * The CLI (what relay/Dockerfile ships): `outfile` and, beside it, `chunks/`. Each command,
 * and each relay sink, is a chunk loaded when it runs: as one file, V8 parsed and kept every
 * command's code (the embedded API server, the webhook, the AWS SDK…), ~13 MiB of an idle
 * relay's resident memory. zod with its English messages only, as the Lambda bundle has it:
 * the other ~40 locales were evaluated at start and held ~14 MiB more (issue 11; the CLI
 * configures no other locale).
 */
export async function buildBundle(outfile: string): Promise<void> {
  await bundleNode('functions/runtime/node/ephemera.ts', outfile, { zodEnglishOnly: true, splitting: true });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = fileURLToPath(new URL('../dist/relay/ephemera.mjs', import.meta.url));
  await buildBundle(out);
  process.stdout.write(`${out}\n`);
}
