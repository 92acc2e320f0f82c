// The Lambda code assets: each entry bundled with the shared esbuild recipe into a
// directory of its own (index.mjs and its lazily loaded chunks/; no source map uploaded,
// so the 1 MB budget is the code). CDK hashes the directory's content, so a changed bundle is a new asset key and a
// new deployment; an unchanged one deploys nothing. The AWS SDK v3 is left out: the
// nodejs24.x runtime provides it (as CDK's NodejsFunction assumes by default), and it is
// a third of the reconciler bundle otherwise; locally the imports resolve from node_modules.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { bundleNode, ROOT } from '../bundle.ts';

/** The deployable entry points, by asset name. */
export const LAMBDA_ENTRIES = {
  reconciler: 'functions/runtime/lambda/lambda.ts',
  webhook: 'functions/runtime/lambda/lambda-url.ts',
} as const;
export type LambdaAsset = keyof typeof LAMBDA_ENTRIES;

/** Imports the Lambda runtime satisfies (nodejs24.x ships AWS SDK v3 under /var/runtime/node_modules). */
export const LAMBDA_EXTERNALS = ['@aws-sdk/*'];

/** How the Lambda entries are bundled: the SDK left to the runtime, lazily used code in chunks (index.mjs + chunks/), zod in English only, no pino transports. */
export const LAMBDA_BUNDLE = { external: LAMBDA_EXTERNALS, splitting: true, zodEnglishOnly: true, noPinoTransports: true };

/** Where the bundles go (under dist/, never committed). */
export const ASSET_ROOT = join(ROOT, 'dist', 'lambda');

/** Bundle one Lambda entry into its own directory; returns the directory. */
export async function buildLambdaAsset(name: LambdaAsset, root: string = ASSET_ROOT): Promise<string> {
  const dir = join(root, name);
  rmSync(dir, { recursive: true, force: true });
  await bundleNode(LAMBDA_ENTRIES[name], join(dir, 'index.mjs'), LAMBDA_BUNDLE);
  return dir;
}

/** Bundle every Lambda entry; returns each asset's directory. */
export async function buildLambdaAssets(root: string = ASSET_ROOT): Promise<Record<LambdaAsset, string>> {
  return { reconciler: await buildLambdaAsset('reconciler', root), webhook: await buildLambdaAsset('webhook', root) };
}

// `npm run build:lambda` (both bundles) or `npm run build:webhook` (`assets.ts webhook`, the
// webhook's alone); npm run synth builds them too.
if (import.meta.main) {
  const names = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(LAMBDA_ENTRIES);
  for (const name of names) {
    if (!(name in LAMBDA_ENTRIES)) {
      process.stderr.write(`unknown Lambda asset '${name}': expected ${Object.keys(LAMBDA_ENTRIES).join(' or ')}\n`);
      process.exit(2);
    }
    process.stdout.write(`${name}: ${await buildLambdaAsset(name as LambdaAsset)}/index.mjs\n`);
  }
}
