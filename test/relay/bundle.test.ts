import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildBundle, RELAY_NODE_FLAGS } from '../../relay/build.ts';
import { runCli } from '../support/cli.ts';

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
