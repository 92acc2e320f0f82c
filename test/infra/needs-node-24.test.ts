// infra/needs-node-24.cjs (review81 L2): with install scripts off, or when no Node 24 build of
// the `node` package exists for the platform, npm scripts run on whatever Node is on PATH. An
// older one then failed with ERR_UNKNOWN_FILE_EXTENSION; the guard says what is wrong instead.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const GUARD = 'infra/needs-node-24.cjs';

function runGuard(...args: string[]): { status: number | null; stderr: string; stdout: string } {
  const r = spawnSync(process.execPath, [GUARD, ...args], { encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr, stdout: r.stdout };
}

test('an older Node is refused with one line: what is needed, what was found, how to get it', () => {
  const r = runGuard('20.20.2');
  assert.equal(r.status, 1);
  assert.equal(r.stdout, '');
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0]!, /needs Node 24/);
  assert.ok(lines[0]!.includes(`found Node v20.20.2 at ${process.execPath}`), lines[0]);
  assert.match(lines[0]!, /run `npm ci` with install scripts allowed/);
  assert.match(lines[0]!, /install Node 24/);
});

test('a v-prefixed version and an old major both count as older', () => {
  assert.equal(runGuard('v23.11.0').status, 1);
  assert.equal(runGuard('8.17.0').status, 1);
  assert.equal(runGuard('not-a-version').status, 1);
});

test('Node 24 and later pass silently', () => {
  for (const v of ['24.0.0', 'v24.21.0', '25.1.0']) {
    const r = runGuard(v);
    assert.equal(r.status, 0, v);
    assert.equal(r.stderr + r.stdout, '', v);
  }
  // and with no argument it checks the Node that runs it, the one the tests run on
  assert.equal(runGuard().status, 0);
});

test('every npm script that runs TypeScript with node starts with the guard', () => {
  const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
  const needing = Object.entries(scripts).filter(([, cmd]) => /\bnode\b[^&|;]*\.ts\b/.test(cmd) || /\bnpm (test|run)\b/.test(cmd));
  assert.ok(needing.length >= 10, 'the filter still finds the scripts');
  for (const [name, cmd] of needing) {
    assert.ok(cmd.startsWith(`node ${GUARD} && `), `script ${name} should start with the Node 24 guard: ${cmd}`);
  }
});
