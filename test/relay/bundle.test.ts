import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildBundle, RELAY_NODE_FLAGS } from '../../relay/build.ts';
import { runCli } from '../support/cli.ts';
import { runContract, type Send } from '../webhook/contract.case.ts';
import { freePort, start, stop, waitReady } from '../webhook/processes.ts';

test('the image bundle (relay/Dockerfile) runs with the relay flags and answers invoke like the source', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ephemera-bundle-'));
  try {
    const bundle = join(dir, 'ephemera.mjs');
    await buildBundle(bundle);
    const args = ['invoke', '--state', 'test/fixtures/stories/story1-state.yaml', '--now', '2026-01-01T00:20:30Z', '--output', 'json'];
    const fromBundle = spawnSync(process.execPath, [...RELAY_NODE_FLAGS, bundle, ...args], { encoding: 'utf8' });
    assert.equal(fromBundle.status, 0, fromBundle.stderr);
    const fromSource = await runCli(args);
    const actions = (out: string) => (JSON.parse(out) as { actions: { verb: string; name: string; subresource?: string }[] }).actions.map((a) => `${a.verb} ${a.name} ${a.subresource ?? ''}`);
    assert.deepEqual(actions(fromBundle.stdout), actions(fromSource.stdout));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

describe('the image bundle serves the webhook as the source does (zod with its English messages only)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ephemera-bundle-webhook-'));
  let base = '';
  let server: ReturnType<typeof start> | undefined;
  before(async () => {
    const bundle = join(dir, 'ephemera.mjs');
    await buildBundle(bundle);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = start(process.execPath, [...RELAY_NODE_FLAGS, bundle, 'webhook', '--listen', `127.0.0.1:${port}`, '--log-level', 'warn']);
    await waitReady(`${base}/healthz`, server.child, server.output);
  });
  after(async () => {
    if (server) assert.equal(await stop(server.child), 0);
    rmSync(dir, { recursive: true, force: true });
  });
  const send: Send = (path, init) => fetch(base + path, init);
  runContract('image bundle (ephemera webhook)', () => send);
});
