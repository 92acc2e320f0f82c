// The predicate the relay's filter shares with the functions must not drag in the
// functions' heavy dependencies: bundle what the relay imports for filtering and list
// every input esbuild pulled in.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { build } from 'esbuild';
import { ROOT } from '../../infra/bundle.ts';

async function inputsOf(entry: string): Promise<string[]> {
  const r = await build({ entryPoints: [`${ROOT}/${entry}`], bundle: true, write: false, metafile: true, platform: 'node', format: 'esm', logLevel: 'silent' });
  return Object.keys(r.metafile.inputs);
}

for (const entry of ['functions/sidecar/predicate.ts', 'relay/filter.ts', 'relay/trim.ts']) {
  test(`${entry} imports no Kubernetes client, engine, AWS SDK or logger`, async () => {
    const inputs = await inputsOf(entry);
    assert.ok(inputs.some((i) => i.endsWith('functions/sidecar/env.ts')), 'the metafile lists the sidecar marks');
    const banned = inputs.filter((i) => /@kubernetes\/client-node|@aws-sdk|node_modules\/pino|functions\/(kube|engine|runtime)\//.test(i));
    assert.deepEqual(banned, []);
  });
}
