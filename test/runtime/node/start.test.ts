import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI, runCli } from '../../support/cli.ts';

test('`ephemera start` without a kubeconfig runs the embedded demo visibly to its end, then stops cleanly on SIGTERM', async () => {
  const home = mkdtempSync(join(tmpdir(), 'ephemera-home-'));
  const env = { ...process.env, HOME: home, KUBECONFIG: '', KUBERNETES_SERVICE_HOST: '', LOG_LEVEL: 'warn', EPHEMERA_DEMO_TICK_MS: '20', EPHEMERA_WEBHOOK_LISTEN: '127.0.0.1:0', EPHEMERA_RELAY_LISTEN: '127.0.0.1:0' };
  const child = spawn(process.execPath, [CLI, 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  try {
    const finished = new Promise<void>((resolve, reject) => {
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        if (err.includes('the demo job has finished')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`exited early (${code}): ${err}`)));
    });
    await finished;
    assert.match(err, /embedded demo/);
    assert.match(err, /hello-world-ephemeral-job\s+Failed\s+4\s+2\s+2\s+0\s+0/, 'kubectl-like line: MATCH 4, SUCCEED 2, FAILED 2');
    child.removeAllListeners('exit');
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  } finally {
    child.kill('SIGKILL');
    rmSync(home, { recursive: true, force: true });
  }
});

test('`ephemera start` with a bad listen variable names it and exits 2', async () => {
  for (const [name, value] of [['EPHEMERA_WEBHOOK_LISTEN', 'nope'], ['EPHEMERA_RELAY_LISTEN', 'host:99999']] as const) {
    const r = await runCli(['start'], { KUBECONFIG: '', [name]: value });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`${name}: expected HOST:PORT`));
    assert.doesNotMatch(r.stderr, /--listen|\n\s+at /);
  }
});
