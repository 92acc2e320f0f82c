// The image's bundle (relay/Dockerfile: ephemera.mjs and its chunks, run with the relay's
// Node flags) does what the source does: invoke, the webhook contract, and the relay sending
// to SQS (the sink whose chunk loads the AWS SDK, a CommonJS package, lazily).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { startFauxqs } from 'fauxqs';
import { Envelope } from '../../functions/api/envelope.ts';
import { startApiServer } from '../../functions/cluster/index.ts';
import { buildBundle, RELAY_NODE_FLAGS } from '../../relay/build.ts';
import { runCli } from '../support/cli.ts';
import { eventually, job, pod } from '../support/relay-world.ts';
import { runContract, type Send } from '../webhook/contract.case.ts';
import { freePort, start, stop, waitReady } from '../webhook/processes.ts';

const dir = mkdtempSync(join(tmpdir(), 'ephemera-bundle-'));
const bundle = join(dir, 'ephemera.mjs');
before(() => buildBundle(bundle));
after(() => rmSync(dir, { recursive: true, force: true }));

test('the image bundle (relay/Dockerfile) runs with the relay flags and answers invoke like the source', async () => {
  const args = ['invoke', '--state', 'test/fixtures/stories/story1-state.yaml', '--now', '2026-01-01T00:20:30Z', '--output', 'json'];
  const fromBundle = spawnSync(process.execPath, [...RELAY_NODE_FLAGS, bundle, ...args], { encoding: 'utf8' });
  assert.equal(fromBundle.status, 0, fromBundle.stderr);
  const fromSource = await runCli(args);
  const actions = (out: string) => (JSON.parse(out) as { actions: { verb: string; name: string; subresource?: string }[] }).actions.map((a) => `${a.verb} ${a.name} ${a.subresource ?? ''}`);
  assert.deepEqual(actions(fromBundle.stdout), actions(fromSource.stdout));
});

test('the image bundle answers --version with no package.json beside it (the image has none under /app)', () => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
  const r = spawnSync(process.execPath, [...RELAY_NODE_FLAGS, bundle, '--version'], { encoding: 'utf8', cwd: dir });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, `ephemera ${pkg.version} (node ${process.versions.node})\n`);
});

describe('the image bundle serves the webhook as the source does (zod with its English messages only)', () => {
  let base = '';
  let server: ReturnType<typeof start> | undefined;
  before(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = start(process.execPath, [...RELAY_NODE_FLAGS, bundle, 'webhook', '--listen', `127.0.0.1:${port}`, '--log-level', 'warn']);
    await waitReady(`${base}/healthz`, server.child, server.output);
  });
  after(async () => {
    if (server) assert.equal(await stop(server.child), 0);
  });
  const send: Send = (path, init) => fetch(base + path, init);
  runContract('image bundle (ephemera webhook)', () => send);
});

test('the image bundle\'s relay sends to SQS', async () => {
  const q = await startFauxqs({ port: 0, logger: false });
  const { queueUrl } = q.createQueue('bundle-relay');
  const server = await startApiServer({ objects: [job('j', { app: 'web' })] });
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, server.kubeconfigYaml());
  const port = await freePort();
  const relay = start(process.execPath, [...RELAY_NODE_FLAGS, bundle, 'relay', '--sink', 'sqs'], {
    KUBECONFIG: kubeconfig, EPHEMERA_RELAY_LISTEN: `127.0.0.1:${port}`, EPHEMERA_RELAY_LEADER_ELECTION: 'false', EPHEMERA_RELAY_COALESCE_MS: '10',
    EPHEMERA_SQS_QUEUE_URL: queueUrl, EPHEMERA_SQS_ENDPOINT: `http://127.0.0.1:${q.port}`, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test',
  });
  const sqs = new SQSClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${q.port}`, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
  try {
    const got: string[] = [];
    const receive = async (): Promise<void> => {
      const r = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
      for (const m of r.Messages ?? []) {
        got.push(Envelope.parse(JSON.parse(m.Body ?? '')).subject);
        await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }));
      }
    };
    await eventually(async () => {
      await receive();
      assert.deepEqual(got, ['EphemeralJob/default/j'], relay.output());
    }, 20_000);
    // A pod created once it runs: a live event (the first list sends the job, not its pods).
    server.store.put(pod('web-1', { app: 'web' }));
    await eventually(async () => {
      await receive();
      assert.deepEqual(got.sort(), ['EphemeralJob/default/j', 'Pod/default/web-1'], relay.output());
    }, 20_000);
  } finally {
    const code = await stop(relay.child);
    sqs.destroy();
    await server.close();
    await q.stop();
    assert.equal(code, 0, relay.output());
  }
});
