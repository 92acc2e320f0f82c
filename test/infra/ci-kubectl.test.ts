// .ci/kubectl.sh (review81 M1): .ci/run checked only that some kubectl was there, and on
// Debian 12 its fallback installed kubectl 1.20, with which 6 kubectl tests fail. It now
// checks the client's version and stops early naming the one it found. A fake kubectl on PATH
// answers `kubectl version --client -o json` as each release does; the fetch is off.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubectlShortfall, kubectlVersion, skipOutsideCi } from '../support/kubectl.ts';

const dir = mkdtempSync(join(tmpdir(), 'ephemera-ci-kubectl-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

/** A folder whose `kubectl` prints this client version, as `kubectl version --client -o json` does. */
function fakeKubectl(name: string, minor: string, gitVersion: string): string {
  const bin = join(dir, name);
  mkdirSync(bin, { recursive: true });
  const json = JSON.stringify({ clientVersion: { major: '1', minor, gitVersion, platform: 'linux/amd64' } }, null, 2);
  writeFileSync(join(bin, 'kubectl'), `#!/bin/sh\ncat <<'EOF'\n${json}\nEOF\n`);
  chmodSync(join(bin, 'kubectl'), 0o755);
  return bin;
}

function ensure(bin: string): { status: number | null; stderr: string } {
  const r = spawnSync('bash', ['-c', 'set -euo pipefail; source .ci/kubectl.sh; ensure_kubectl'], {
    encoding: 'utf8',
    env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, EPHEMERA_CI_FETCH_KUBECTL: '0' },
  });
  return { status: r.status, stderr: r.stderr };
}

test('.ci/run stops early on a kubectl older than 1.32, naming it', () => {
  for (const [minor, git] of [['20', 'v1.20.2'], ['31', 'v1.31.9']] as const) {
    const r = ensure(fakeKubectl(`k${minor}`, minor, git));
    assert.equal(r.status, 1, git);
    assert.equal(r.stderr, `.ci/run: the tests need kubectl 1.32 or later on PATH; found: ${git}\n`);
  }
});

test('.ci/run goes on with kubectl 1.32 or later, also a vendor build ("32+")', () => {
  for (const [minor, git] of [['32+', 'v1.32.4-dispatcher'], ['33', 'v1.33.9'], ['40', 'v1.40.0']] as const) {
    const r = ensure(fakeKubectl(`k${minor}`, minor, git));
    assert.equal(r.status, 0, `${git}: ${r.stderr}`);
  }
});

test('the tests read the same version, and skip only outside CI', () => {
  const bin = fakeKubectl('k31t', '31', 'v1.31.9');
  const found = kubectlVersion({ ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` });
  assert.deepEqual(found, { gitVersion: 'v1.31.9', minor: 31 });
  const why = kubectlShortfall(found, 32, 'the reason');
  assert.equal(why, 'kubectl v1.31.9 is older than 1.32: the reason');
  assert.equal(kubectlShortfall(found, 29), undefined);
  assert.equal(kubectlShortfall(undefined, 29), 'kubectl is not installed (1.29 or later is needed)');
  assert.equal(kubectlShortfall(undefined, 0), 'kubectl is not installed');
  assert.equal(skipOutsideCi(why, {}), 'kubectl v1.31.9 is older than 1.32: the reason; README "Setup and test"');
  assert.equal(skipOutsideCi(why, { CI: 'false' }), 'kubectl v1.31.9 is older than 1.32: the reason; README "Setup and test"');
  assert.equal(skipOutsideCi(why, { CI: 'true' }), false, 'under CI the test runs, and fails');
  assert.equal(skipOutsideCi(undefined, {}), false);
  assert.equal(kubectlVersion({ ...process.env, PATH: join(dir, 'nowhere') }), undefined);
});
