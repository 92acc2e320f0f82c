// The reconciler Lambda bundle talks to the API server through the lean node:https client:
// @kubernetes/client-node (~1 MB minified) and its HTTP stack must not be in it, and the
// AWS SDK is left to the Lambda runtime. Checked on the very build the asset uses.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { build } from 'esbuild';
import { LAMBDA_ENTRIES, LAMBDA_EXTERNALS } from '../../infra/aws/assets.ts';
import { nodeBuildOptions } from '../../infra/bundle.ts';

test('the reconciler bundle holds no client-node, undici or node-fetch; @aws-sdk stays an import', async () => {
  const r = await build({ ...nodeBuildOptions(LAMBDA_ENTRIES.reconciler, '/dev/null/index.mjs', { external: LAMBDA_EXTERNALS }), write: false, metafile: true, logLevel: 'silent' });
  const inputs = Object.keys(r.metafile.inputs);
  assert.ok(inputs.some((i) => i.endsWith('functions/kube/https-kube.ts')), 'the metafile lists the lean client');
  assert.deepEqual(inputs.filter((i) => /@kubernetes\/client-node|node_modules\/(undici|node-fetch|openid-client|jsonpath-plus)\/|node_modules\/@aws-sdk\//.test(i)), []);
  const imports = Object.values(r.metafile.outputs).flatMap((o) => o.imports.filter((i) => i.external).map((i) => i.path));
  assert.ok(imports.includes('@aws-sdk/client-sqs'), `SQS client imported from the runtime, got ${imports.join(', ')}`);
});
