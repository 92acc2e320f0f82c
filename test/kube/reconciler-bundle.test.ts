// The reconciler Lambda bundle talks to the API server through the lean node:https client:
// @kubernetes/client-node (~1 MB minified) and its HTTP stack must not be in it, and the
// AWS SDK is left to the Lambda runtime. Checked on the very build the asset uses.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { SQSEvent } from 'aws-lambda';
import { build, type Metafile } from 'esbuild';
import { buildLambdaAsset, LAMBDA_BUNDLE, LAMBDA_ENTRIES } from '../../infra/aws/assets.ts';
import { nodeBuildOptions, ROOT } from '../../infra/bundle.ts';
import { startApiServer } from '../../functions/cluster/index.ts';
import type { AwsLookups } from '../../functions/kube/credentials.ts';
import type { buildConsumer as BuildConsumer } from '../../functions/runtime/lambda/lambda.ts';
import type { SqsSender } from '../../functions/runtime/lambda/sqs-queue.ts';
import { envelopeFor } from '../support/ejob-world.ts';
import { job, pod } from '../support/relay-world.ts';

/** The inputs a cold start compiles: the entry chunk's and those of the chunks it imports statically (esbuild puts code shared with a lazy chunk in one). */
function eagerInputs(meta: Metafile): string[] {
  const seen = new Set<string>();
  const visit = (out: string): void => {
    if (seen.has(out)) return;
    seen.add(out);
    for (const i of meta.outputs[out]!.imports) if (i.kind === 'import-statement' && !i.external) visit(i.path);
  };
  visit(Object.entries(meta.outputs).find(([, o]) => o.entryPoint)![0]);
  return [...seen].flatMap((o) => Object.keys(meta.outputs[o]!.inputs));
}

test('the reconciler bundle holds no client-node, undici, node-fetch or pino transports; @aws-sdk stays an import; YAML and the EKS signer load lazily', async () => {
  const r = await build({ ...nodeBuildOptions(LAMBDA_ENTRIES.reconciler, '/tmp/ephemera-bundle-test/index.mjs', LAMBDA_BUNDLE), write: false, metafile: true, logLevel: 'silent' });
  const inputs = Object.keys(r.metafile.inputs);
  assert.ok(inputs.some((i) => i.endsWith('functions/kube/https-kube.ts')), 'the metafile lists the lean client');
  assert.deepEqual(inputs.filter((i) => /@kubernetes\/client-node|node_modules\/(undici|node-fetch|openid-client|jsonpath-plus)\/|node_modules\/@aws-sdk\//.test(i)), []);
  const eager = eagerInputs(r.metafile);
  assert.ok(eager.some((i) => i.includes('node_modules/zod/')), 'the entry chunk is the one compiled at a cold start');
  assert.deepEqual(eager.filter((i) => /node_modules\/(yaml|@smithy\/signature-v4)\//.test(i)), [], 'only a kubeconfig source or an EKS token pays for these');
  assert.deepEqual(eager.filter((i) => /^(?!zod-en:).*zod\/v4\/locales\/(?!en\.js)/.test(i)), [], 'zod in English only (zod-en: is the one-locale index)');
  // `import * as z`, not `import { z }` (lint enforces it): esbuild keeps only the zod used, not
  // z.compile's code generator nor the JSON Schema reader (~90 KiB a cold start would compile).
  assert.deepEqual(eager.filter((i) => /zod\/v4\/(core\/compile|classic\/from-json-schema)\.js$/.test(i)), [], 'zod tree-shaken');
  // The Lambda logs with pino to stdout; pino's transports (a worker thread each: thread-stream)
  // are a stub that throws (infra/bundle.ts pinoWithoutTransports), so a cold start does not compile them.
  assert.ok(eager.some((i) => /node_modules\/pino\/pino\.js$/.test(i)), 'pino logs');
  assert.deepEqual(inputs.filter((i) => /node_modules\/thread-stream\/|node_modules\/pino\/lib\/transport\.js$/.test(i)), [], 'no pino transports');
  // The SidecarTerminator's observe and plan are a chunk of their own, loaded on its first due pod.
  assert.deepEqual(eager.filter((i) => /functions\/sidecar\/(controller|planner|actions)\.ts$/.test(i)), [], 'the sidecar controller loads lazily');
  assert.ok(eager.some((i) => i.endsWith('functions/sidecar/route.ts')), 'its route is in the entry');
  const imports = Object.values(r.metafile.outputs).flatMap((o) => o.imports.filter((i) => i.external).map((i) => i.path));
  assert.ok(imports.includes('@aws-sdk/client-sqs'), `SQS client imported from the runtime, got ${imports.join(', ')}`);
});

/** A pod whose main container has exited while its sidecar runs: due for the SidecarTerminator. */
const duePod = {
  apiVersion: 'v1', kind: 'Pod', metadata: { name: 'side-1', namespace: 'default' },
  spec: { restartPolicy: 'Never', nodeName: 'node-a', containers: [{ name: 'main', image: 'job:1' }, { name: 'shipper', image: 'fluent-bit:3', env: [{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' }] }] },
  status: { phase: 'Running', containerStatuses: [{ name: 'main', state: { terminated: { exitCode: 0 } } }, { name: 'shipper', state: { running: {} } }] },
};

test('the built reconciler asset handles an EKS cluster\'s events: its lazily loaded chunks (the token signer, the sidecar controller) are in the directory CDK uploads and work', async () => {
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, 'dist', 'bundle-test-')); // under the repo: @aws-sdk/* resolves from node_modules
  const server = await startApiServer({ objects: [pod('web-1', { app: 'web' }), { ...job('check', { app: 'web' }), metadata: { name: 'check', namespace: 'default', uid: 'u1' } }, duePod, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a' } }] });
  try {
    const asset = await buildLambdaAsset('reconciler', dir); // the directory Code.fromAsset uploads
    const { buildConsumer } = (await import(pathToFileURL(join(asset, 'index.mjs')).href)) as { buildConsumer: typeof BuildConsumer };
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
    // A due pod: the sidecar controller's chunk loads and observes it (its node is read only then).
    const r2 = await consume({ Records: [{ messageId: 'm2', body: JSON.stringify(envelopeFor('Pod', 'default', 'side-1')), attributes: {}, messageAttributes: {} }] } as unknown as SQSEvent);
    assert.deepEqual(r2, { batchItemFailures: [] });
    assert.ok(server.requests.entries.some((e) => e.verb === 'get' && e.path === '/api/v1/nodes/node-a'), 'the sidecar controller observed the pod');
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
