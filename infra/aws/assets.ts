// The Lambda code assets: each entry bundled with the shared esbuild recipe into a
// directory of its own (index.mjs only: no source map uploaded, so the 1 MB budget is the
// code). CDK hashes the directory's content, so a changed bundle is a new asset key and a
// new deployment; an unchanged one deploys nothing.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { bundleNode, ROOT } from '../bundle.ts';

/** The deployable entry points, by asset name. */
export const LAMBDA_ENTRIES = {
  reconciler: 'functions/runtime/lambda/lambda.ts',
  webhook: 'functions/runtime/lambda/lambda-url.ts',
} as const;
export type LambdaAsset = keyof typeof LAMBDA_ENTRIES;

/** Where the bundles go (under dist/, never committed). */
export const ASSET_ROOT = join(ROOT, 'dist', 'lambda');

/** Bundle every Lambda entry; returns each asset's directory. */
export async function buildLambdaAssets(root: string = ASSET_ROOT): Promise<Record<LambdaAsset, string>> {
  const out = {} as Record<LambdaAsset, string>;
  for (const [name, entry] of Object.entries(LAMBDA_ENTRIES) as [LambdaAsset, string][]) {
    const dir = join(root, name);
    rmSync(dir, { recursive: true, force: true });
    await bundleNode(entry, join(dir, 'index.mjs'));
    out[name] = dir;
  }
  return out;
}

// `npm run build:lambda`: the bundles alone (npm run synth builds them too).
if (import.meta.main) {
  for (const [name, dir] of Object.entries(await buildLambdaAssets())) process.stdout.write(`${name}: ${dir}/index.mjs\n`);
}
