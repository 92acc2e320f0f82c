// The reconciler Lambda bundle talks to the API server through the lean node:https client:
// @kubernetes/client-node (~1 MB minified) and its HTTP stack must not be in it, and the
// AWS SDK is left to the Lambda runtime. Checked on the very build the asset uses.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { SQSEvent } from 'aws-lambda';
import { build } from 'esbuild';
import { LAMBDA_BUNDLE, LAMBDA_ENTRIES } from '../../infra/aws/assets.ts';
import { bundleNode, nodeBuildOptions, ROOT } from '../../infra/bundle.ts';
import { startApiServer } from '../../functions/cluster/index.ts';
import type { AwsLookups } from '../../functions/kube/credentials.ts';
import type { buildConsumer as BuildConsumer } from '../../functions/runtime/lambda/lambda.ts';
import type { SqsSender } from '../../functions/runtime/lambda/sqs-queue.ts';
import { envelopeFor } from '../support/ejob-world.ts';
import { job, pod } from '../support/relay-world.ts';

test('the reconciler bundle holds no client-node, undici, node-fetch or pino; @aws-sdk stays an import; YAML and the EKS signer load lazily', async () => {
  const r = await build({ ...nodeBuildOptions(LAMBDA_ENTRIES.reconciler, '/tmp/ephemera-bundle-test/index.mjs', LAMBDA_BUNDLE), write: false, metafile: true, logLevel: 'silent' });
  const inputs = Object.keys(r.metafile.inputs);
  assert.ok(inputs.some((i) => i.endsWith('functions/kube/https-kube.ts')), 'the metafile lists the lean client');
  assert.deepEqual(inputs.filter((i) => /@kubernetes\/client-node|node_modules\/(undici|node-fetch|openid-client|jsonpath-plus)\/|node_modules\/@aws-sdk\//.test(i)), []);
  const entry = Object.entries(r.metafile.outputs).find(([, o]) => o.entryPoint)![1];
  const eager = Object.keys(entry.inputs);
  assert.ok(eager.some((i) => i.includes('node_modules/zod/')), 'the entry chunk is the one compiled at a cold start');
  assert.deepEqual(eager.filter((i) => /node_modules\/(yaml|@smithy\/signature-v4)\//.test(i)), [], 'only a kubeconfig source or an EKS token pays for these');
  assert.deepEqual(eager.filter((i) => /^(?!zod-en:).*zod\/v4\/locales\/(?!en\.js)/.test(i)), [], 'zod in English only (zod-en: is the one-locale index)');
  // `import * as z`, not `import { z }` (lint enforces it): esbuild keeps only the zod used, not
  // z.compile's code generator nor the JSON Schema reader (~90 KiB a cold start would compile).
  assert.deepEqual(eager.filter((i) => /zod\/v4\/(core\/compile|classic\/from-json-schema)\.js$/.test(i)), [], 'zod tree-shaken');
  // The Lambda logs with runtime/lambda/json-logger.ts (pino's lines): pino, sonic-boom and
  // thread-stream, with the node:assert and node:worker_threads they load, are not in it.
  assert.deepEqual(inputs.filter((i) => /node_modules\/(pino|sonic-boom|thread-stream|safe-stable-stringify)\//.test(i)), [], 'no pino');
  const imports = Object.values(r.metafile.outputs).flatMap((o) => o.imports.filter((i) => i.external).map((i) => i.path));
  assert.ok(imports.includes('@aws-sdk/client-sqs'), `SQS client imported from the runtime, got ${imports.join(', ')}`);
});

test('the built reconciler handles an event for an EKS cluster: its lazily loaded chunks (the token signer) work bundled', async () => {
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, 'dist', 'bundle-test-')); // under the repo: @aws-sdk/* resolves from node_modules
  const server = await startApiServer({ objects: [pod('web-1', { app: 'web' }), { ...job('check', { app: 'web' }), metadata: { name: 'check', namespace: 'default', uid: 'u1' } }] });
  try {
    await bundleNode(LAMBDA_ENTRIES.reconciler, join(dir, 'index.mjs'), LAMBDA_BUNDLE);
    const { buildConsumer } = (await import(pathToFileURL(join(dir, 'index.mjs')).href)) as { buildConsumer: typeof BuildConsumer };
    // zod's English messages survive the English-only locale bundle.
    assert.throws(() => buildConsumer({ EPHEMERA_QUEUE_URL: 'not a url' }), /EPHEMERA_QUEUE_URL: Invalid URL/);
    const described: string[] = [];
    const aws = (): AwsLookups => ({
      region: 'eu-west-1',
      credentials: async () => ({ accessKeyId: 'AKID', secretAccessKey: 'secret' }),
      describeCluster: async (name) => (described.push(name), { endpoint: server.url, certificateAuthorityData: '' }),
      getSecret: () => Promise.reject(new Error('unused')),
    });
    const sqs = { send: () => Promise.resolve({}) } as unknown as SqsSender;
    const consume = buildConsumer({ EPHEMERA_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/1/q', EPHEMERA_CLUSTERS: '{"prod":{"eks":{"name":"prod-eks"}}}', EPHEMERA_LOCK_NAMESPACE: 'ephemera-locks', LOG_LEVEL: 'silent' }, { aws, sqs });
    const body = JSON.stringify(envelopeFor('EphemeralJob', 'default', 'check'));
    const r = await consume({ Records: [{ messageId: 'm1', body, attributes: {}, messageAttributes: {} }] } as unknown as SQSEvent);
    assert.deepEqual(r, { batchItemFailures: [] });
    assert.deepEqual(described, ['prod-eks']);
    assert.ok(server.requests.entries.some((e) => e.verb === 'patch' && e.path.endsWith('/ephemeralcontainers')), 'the job was acted on');
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
