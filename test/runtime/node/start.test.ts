import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { startApiServer } from '../../../functions/cluster/index.ts';
import { CLI, runCli } from '../../support/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'ephemera-start-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const QUIET = { LOG_LEVEL: 'warn', EPHEMERA_DEMO_TICK_MS: '20', EPHEMERA_WEBHOOK_LISTEN: '127.0.0.1:0', EPHEMERA_RELAY_LISTEN: '127.0.0.1:0', KUBECONFIG: '', KUBERNETES_SERVICE_HOST: '' };

/** `ephemera start …` as a child; `until` resolves once stderr matches. */
function start(args: string[], env: Record<string, string>): { child: ChildProcessWithoutNullStreams; stderr: () => string; until: (re: RegExp) => Promise<void>; stop: () => Promise<number | null>; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [CLI, 'start', ...args], { env: { ...process.env, ...QUIET, ...env }, stdio: 'pipe' });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return {
    child,
    stderr: () => err,
    until: (re) => new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (re.test(err)) resolve();
      };
      child.stderr.on('data', check);
      check();
      void exited.then((code) => reject(new Error(`exited (${code}) before ${re}: ${err}`)));
    }),
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
    exited,
  };
}

test('`ephemera start` without KUBECONFIG runs the embedded demo visibly to its end, and leaves a ~/.kube/config alone, naming it', async () => {
  const real = await startApiServer();
  const home = join(dir, 'home');
  mkdirSync(join(home, '.kube'), { recursive: true });
  writeFileSync(join(home, '.kube', 'config'), real.kubeconfigYaml());
  const s = start([], { HOME: home, KUBECONFIG: '', KUBERNETES_SERVICE_HOST: '' });
  try {
    await s.until(/every demo job has finished/);
    assert.match(s.stderr(), /acting on the embedded in-memory cluster \(no real cluster is touched\), all namespaces/);
    assert.ok(s.stderr().includes(`ephemera: ${join(home, '.kube', 'config')} is not used on its own; --kubeconfig ${join(home, '.kube', 'config')} acts on its cluster.`), s.stderr());
    assert.match(s.stderr(), /following every EphemeralJob/);
    assert.match(s.stderr(), /default\s+hello-world-ephemeral-job\s+Failed\s+4\s+2\s+2\s+0\s+0/, 'kubectl-like row: MATCH 4, SUCCEED 2, FAILED 2');
    const kubeconfig = /kubectl --kubeconfig (\S+) get/.exec(s.stderr())?.[1];
    assert.ok(kubeconfig && existsSync(kubeconfig), 'a kubeconfig for kubectl while it runs');
    assert.equal(await s.stop(), 0);
    assert.equal(existsSync(kubeconfig), false, 'the demo kubeconfig is removed on exit');
    assert.equal(real.requests.filter(() => true).length, 0, 'not one request to the cluster of ~/.kube/config');
  } finally {
    s.child.kill('SIGKILL');
    await real.close();
  }
});

test('`ephemera start` with KUBECONFIG acts on its cluster, as DESIGN\'s contract has it, and says so; --embedded runs the demo instead (review77 H1)', async () => {
  const real = await startApiServer();
  const kubeconfig = join(dir, 'env.kubeconfig');
  writeFileSync(kubeconfig, real.kubeconfigYaml());
  const s = start([], { KUBECONFIG: kubeconfig });
  try {
    await s.until(/--embedded runs the demo instead/);
    assert.ok(s.stderr().includes(`acting on the cluster at ${real.url} (context ephemera-fake, kubeconfig ${kubeconfig}), all namespaces`), s.stderr());
    assert.match(s.stderr(), /ephemera: the cluster of KUBECONFIG, as no flag named one; --embedded runs the demo instead\./);
    for (let i = 0; i < 100 && real.requests.filter((r) => r.watch).length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(real.requests.filter((r) => r.watch).length >= 2, 'it watches that cluster');
    assert.equal(await s.stop(), 0);
  } finally {
    s.child.kill('SIGKILL');
  }
  const before = real.requests.filter(() => true).length;
  const demo = start(['--embedded'], { KUBECONFIG: kubeconfig });
  try {
    await demo.until(/acting on the embedded in-memory cluster/);
    assert.equal(await demo.stop(), 0);
    assert.equal(real.requests.filter(() => true).length, before, '--embedded: not one request to the cluster of KUBECONFIG');
  } finally {
    demo.child.kill('SIGKILL');
    await real.close();
  }
});

test('`ephemera start --kubeconfig FILE --namespace a,b` says which cluster and namespaces it acts on, and acts only there', async () => {
  const real = await startApiServer();
  const kubeconfig = join(dir, 'real.kubeconfig');
  writeFileSync(kubeconfig, real.kubeconfigYaml());
  const s = start(['--kubeconfig', kubeconfig, '--namespace', 'a,b'], {});
  try {
    await s.until(/acting on/);
    assert.match(s.stderr(), new RegExp(`acting on the cluster at ${real.url.replace(/\./g, '\\.')} \\(context ephemera-fake, kubeconfig ${kubeconfig}\\), namespaces a, b; controllers ejob,sidecar; Leases in ephemera-locks`));
    const watched = async (): Promise<string[]> => {
      const swept = (): boolean => real.requests.filter((r) => r.verb === 'list' && r.path.endsWith('/leases')).length > 0;
      for (let i = 0; i < 100 && (real.requests.filter((r) => r.watch).length < 4 || !swept()); i++) await new Promise((r) => setTimeout(r, 50));
      return [...new Set(real.requests.filter((r) => r.path.startsWith('/api') && (r.verb === 'list' || r.watch)).map((r) => r.path))].sort();
    };
    assert.deepEqual(await watched(), [
      '/api/v1/namespaces/a/pods', '/api/v1/namespaces/b/pods',
      '/apis/apps.kruise.io/v1alpha1/namespaces/a/ephemeraljobs', '/apis/apps.kruise.io/v1alpha1/namespaces/b/ephemeraljobs',
      // The claims Lease sweep, in the lock namespace only (relay/lease-sweep.ts).
      '/apis/coordination.k8s.io/v1/namespaces/ephemera-locks/leases',
    ]);
    assert.equal(await s.stop(), 0);
  } finally {
    s.child.kill('SIGKILL');
    await real.close();
  }
});

test('`ephemera start` errors are one line naming the fix', async () => {
  const gone = await startApiServer();
  const goneConfig = join(dir, 'gone.kubeconfig');
  writeFileSync(goneConfig, gone.kubeconfigYaml());
  await gone.close();
  const busy = createServer();
  await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
  const port = (busy.address() as { port: number }).port;
  try {
    const cases: [string[], Record<string, string>, number, RegExp][] = [
      [['--kubeconfig', goneConfig], {}, 1, /^ephemera start: cannot reach the API server http:\/\/127\.0\.0\.1:\d+ \(context ephemera-fake, kubeconfig .*\): connect ECONNREFUSED/],
      [['--kubeconfig', join(dir, 'nope')], {}, 2, /^ephemera start: kubeconfig .*nope does not exist; pass --kubeconfig/],
      [['--in-cluster'], { KUBERNETES_SERVICE_HOST: '' }, 2, /^ephemera start: --in-cluster: KUBERNETES_SERVICE_HOST is not set/],
      [['--kubeconfig', goneConfig, '--in-cluster'], {}, 2, /--kubeconfig, --in-cluster and --embedded exclude each other/],
      [['--embedded', '--in-cluster'], {}, 2, /--kubeconfig, --in-cluster and --embedded exclude each other/],
      [[], { KUBECONFIG: goneConfig }, 1, /^ephemera start: cannot reach the API server http:\/\/127\.0\.0\.1:\d+ \(context ephemera-fake, kubeconfig .*\): .* \(the cluster of KUBECONFIG, as no flag named one; --embedded runs the demo instead\)\n$/],
      [[], { KUBECONFIG: `${goneConfig}:${join(dir, 'other')}` }, 2, /^ephemera start: KUBECONFIG names 2 files \(.*\); start acts on one cluster: pass --kubeconfig FILE, or --embedded for the demo/],
      [['--frob'], {}, 2, /^ephemera start: Unknown option '--frob'\nRun "ephemera start --help"/],
      [[], { EPHEMERA_WEBHOOK_LISTEN: `127.0.0.1:${port}` }, 1, new RegExp(`^ephemera start: 127\\.0\\.0\\.1:${port} \\(the webhook\\) is already in use; set EPHEMERA_WEBHOOK_LISTEN to a free HOST:PORT \\(127\\.0\\.0\\.1:0 picks any free port\\)\\n$`)],
      [[], { EPHEMERA_RELAY_LISTEN: `127.0.0.1:${port}` }, 1, new RegExp(`^ephemera start: 127\\.0\\.0\\.1:${port} \\(the relay's /healthz, /readyz, /metrics\\) is already in use; set EPHEMERA_RELAY_LISTEN to a free HOST:PORT`)],
      [[], { EPHEMERA_WEBHOOK_LISTEN: 'nope' }, 2, /EPHEMERA_WEBHOOK_LISTEN: expected HOST:PORT/],
      [[], { EPHEMERA_RELAY_LISTEN: 'host:99999' }, 2, /EPHEMERA_RELAY_LISTEN: expected HOST:PORT/],
    ];
    for (const [args, env, code, message] of cases) {
      const r = await runCli(['start', ...args], { ...QUIET, ...env });
      assert.equal(r.code, code, `${args.join(' ')} ${JSON.stringify(env)}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /\n\s+at |EADDRINUSE|fetch failed/, 'no stack trace, no raw error code');
    }
  } finally {
    busy.close();
  }
});

const SERVICE_ACCOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';
test('`ephemera start --in-cluster` in a pod without a mounted service account says so, not "cannot reach the API server" (review)', { skip: existsSync(SERVICE_ACCOUNT) && 'this machine has a service account mounted' }, async () => {
  const r = await runCli(['start', '--in-cluster'], { ...QUIET, KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: '1' });
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stderr, `ephemera start: --in-cluster: no service-account token or CA is mounted in this pod (${SERVICE_ACCOUNT}/ca.crt and ${SERVICE_ACCOUNT}/token missing); mount them (automountServiceAccountToken: true) or use --kubeconfig FILE\n`);
});

test('`ephemera start --help` names the flags and every variable start reads', async () => {
  const r = await runCli(['start', '--help']);
  assert.equal(r.code, 0);
  for (const word of ['--kubeconfig FILE', '--in-cluster', '--embedded', '--namespace NS', 'KUBECONFIG variable', '~/.kube/config is not used', 'EPHEMERA_WEBHOOK_LISTEN', 'EPHEMERA_RELAY_LISTEN', 'EPHEMERA_DEMO_TICK_MS']) {
    assert.ok(r.stdout.includes(word), word);
  }
});

/** A TMPDIR of its own, so the demo's folders of this run are the only ones in it. */
function ownTmp(): { env: { TMPDIR: string }; demoFolders: () => string[] } {
  const tmp = mkdtempSync(join(dir, 'tmp-'));
  return { env: { TMPDIR: tmp }, demoFolders: () => readdirSync(tmp).filter((f) => f.startsWith('ephemera-demo-')) };
}

const STOPS = [
  { name: 'SIGHUP (a closed terminal) stops it cleanly, and the demo kubeconfig\'s folder goes with it', signal: 'SIGHUP', after: /kubectl --kubeconfig (\S+) get/, folders: 1 },
  // Printed once the demo cluster is up, before the relay starts.
  { name: 'a Ctrl-C while it is still starting stops what was started and leaves no folder behind', signal: 'SIGINT', after: /acting on the embedded in-memory cluster/, folders: undefined },
] as const;

for (const c of STOPS) {
  test(`\`ephemera start\`: ${c.name}`, async () => {
    const tmp = ownTmp();
    const s = start([], tmp.env);
    try {
      await s.until(c.after);
      if (c.folders !== undefined) assert.equal(tmp.demoFolders().length, c.folders);
      s.child.kill(c.signal);
      assert.equal(await s.exited, 0, s.stderr());
      assert.deepEqual(tmp.demoFolders(), []);
    } finally {
      s.child.kill('SIGKILL');
    }
  });
}

test('`ephemera start`: a second Ctrl-C while it stops exits at once, and still removes the folder', async () => {
  const tmp = ownTmp();
  const s = start([], tmp.env);
  try {
    await s.until(/kubectl --kubeconfig (\S+) get/);
    s.child.kill('SIGINT');
    // The second while the first is being handled (two at once may arrive as one).
    await new Promise((r) => setTimeout(r, 10));
    s.child.kill('SIGINT');
    const code = await s.exited;
    assert.ok(code === 130 || code === 0, `exit ${code}: at once (130) or already stopped (0): ${s.stderr()}`);
    assert.deepEqual(tmp.demoFolders(), []);
  } finally {
    s.child.kill('SIGKILL');
  }
});

test('`ephemera start | head`: its output pipe closed, it exits and still removes the demo kubeconfig\'s folder (review)', async () => {
  const tmp = ownTmp();
  const s = start([], tmp.env);
  try {
    await s.until(/kubectl --kubeconfig (\S+) get/);
    assert.equal(tmp.demoFolders().length, 1);
    // What `head` does once it has its lines: the next write fails with EPIPE.
    s.child.stdout.destroy();
    s.child.stderr.destroy();
    await s.exited;
    assert.deepEqual(tmp.demoFolders(), []);
  } finally {
    s.child.kill('SIGKILL');
  }
});
