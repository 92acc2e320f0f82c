// The relay's environment: what each variable becomes, and bad values named.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { startApiServer } from '../../functions/cluster/index.ts';
import { ConfigError, FunctionsConfig, parseEnv } from '../../functions/config.ts';
import { LambdaConfig } from '../../functions/runtime/lambda/lambda.ts';
import { holdSeconds, leaderLock, RelayConfig } from '../../relay/config.ts';
import { createMetrics } from '../../relay/metrics.ts';
import { startOpsServer } from '../../relay/server.ts';
import { ipv6Loopback } from '../support/ipv6.ts';
import { CLI, runCli } from '../support/cli.ts';
import { eventually } from '../support/relay-world.ts';

describe('RelayConfig', () => {
  test('the leader Lease follows EPHEMERA_LEASE_SECONDS and EPHEMERA_LEASE_SKEW_SECONDS (15 s and 5 s unset)', () => {
    const env = { EPHEMERA_RELAY_ID: 'relay-0', EPHEMERA_RELAY_LEASE_NAMESPACE: 'ops' };
    assert.deepEqual(leaderLock(parseEnv(RelayConfig, env)), { namespace: 'ops', holder: 'relay-0', leaseSeconds: 15, skewSeconds: 5 });
    const set = parseEnv(RelayConfig, { ...env, EPHEMERA_LEASE_SECONDS: '40', EPHEMERA_LEASE_SKEW_SECONDS: '2' });
    assert.deepEqual(leaderLock(set), { namespace: 'ops', holder: 'relay-0', leaseSeconds: 40, skewSeconds: 2 });
    assert.throws(() => parseEnv(RelayConfig, { EPHEMERA_LEASE_SECONDS: '0' }), (err: Error) => err instanceof ConfigError && /EPHEMERA_LEASE_SECONDS: /.test(err.message));
  });

  test('a FIFO queue is refused, naming the variable: the functions refuse its messages (review70 L1)', () => {
    assert.throws(() => parseEnv(RelayConfig, { EPHEMERA_SQS_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/events.fifo' }), (err: Error) => err instanceof ConfigError && /EPHEMERA_SQS_QUEUE_URL: a FIFO queue \(\.fifo\): the functions need a standard queue/.test(err.message));
    assert.equal(parseEnv(RelayConfig, { EPHEMERA_SQS_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/events' }).EPHEMERA_SQS_QUEUE_URL, 'https://sqs.eu-west-1.amazonaws.com/123456789012/events');
  });
});

describe('EPHEMERA_RELAY_HOLD_SECONDS', () => {
  const hold = (env: Record<string, string>): number => holdSeconds(parseEnv(RelayConfig, env));

  test('unset: the functions\' claim window, EPHEMERA_LEASE_SECONDS + EPHEMERA_LEASE_SKEW_SECONDS (15 + 5 unset)', () => {
    assert.equal(hold({}), 20);
    assert.equal(hold({ EPHEMERA_LEASE_SECONDS: '2', EPHEMERA_LEASE_SKEW_SECONDS: '2' }), 4);
    assert.throws(() => hold({ EPHEMERA_LEASE_SKEW_SECONDS: '1' }), /EPHEMERA_LEASE_SKEW_SECONDS: at least 2 \(seconds\)/, 'a skew that leaves no margin for the Date header\'s second is refused');
    assert.equal(hold({ EPHEMERA_LEASE_SECONDS: '40' }), 45);
  });

  test('set: taken as given, whatever the lease; 0 (never hold) and 600 accepted', () => {
    assert.equal(hold({ EPHEMERA_RELAY_HOLD_SECONDS: '7', EPHEMERA_LEASE_SECONDS: '2', EPHEMERA_LEASE_SKEW_SECONDS: '2' }), 7);
    assert.equal(hold({ EPHEMERA_RELAY_HOLD_SECONDS: '0' }), 0);
    assert.equal(hold({ EPHEMERA_RELAY_HOLD_SECONDS: '600' }), 600);
  });

  test('a bad value is refused, naming the variable', () => {
    for (const bad of ['-1', 'abc', '601', '1.5']) {
      assert.throws(() => parseEnv(RelayConfig, { EPHEMERA_RELAY_HOLD_SECONDS: bad }), (err: Error) => err instanceof ConfigError && err.message.includes(`EPHEMERA_RELAY_HOLD_SECONDS: `) && err.message.includes(`(got "${bad}")`), bad);
    }
  });
});

describe('EPHEMERA_RELAY_BUFFER_MAX', () => {
  test('at least 2, so a replay never takes the whole queue (at 1, every live event during a replay asked for another); a bad value is refused, naming it', () => {
    assert.equal(parseEnv(RelayConfig, { EPHEMERA_RELAY_BUFFER_MAX: '2' }).EPHEMERA_RELAY_BUFFER_MAX, 2);
    assert.equal(parseEnv(RelayConfig, {}).EPHEMERA_RELAY_BUFFER_MAX, 50_000);
    for (const bad of ['1', '0', 'many']) {
      assert.throws(() => parseEnv(RelayConfig, { EPHEMERA_RELAY_BUFFER_MAX: bad }), (err: Error) => err instanceof ConfigError && err.message.includes('EPHEMERA_RELAY_BUFFER_MAX: ') && err.message.includes(`(got "${bad}")`), bad);
    }
  });
});

describe('EPHEMERA_RELAY_LISTEN', () => {
  test('HOST:PORT and [IPv6]:PORT become host and port; :PORT (and unset, :8080) every interface, IPv6 and IPv4', () => {
    const listen = (v?: string): unknown => parseEnv(RelayConfig, v === undefined ? {} : { EPHEMERA_RELAY_LISTEN: v }).EPHEMERA_RELAY_LISTEN;
    assert.deepEqual(listen(), { port: 8080 });
    assert.deepEqual(listen('127.0.0.1:9090'), { host: '127.0.0.1', port: 9090 });
    assert.deepEqual(listen(':9090'), { port: 9090 });
    assert.deepEqual(listen('0.0.0.0:9090'), { host: '0.0.0.0', port: 9090 });
    assert.deepEqual(listen('[::1]:0'), { host: '::1', port: 0 });
  });

  test('unset, the probes reach the relay over IPv4 and IPv6 both (an IPv6-only cluster\'s kubelet too)', async (t) => {
    const ops = await startOpsServer({ ...parseEnv(RelayConfig, {}).EPHEMERA_RELAY_LISTEN, port: 0, ready: () => true, registry: createMetrics().registry });
    try {
      assert.equal((await fetch(`http://127.0.0.1:${ops.port}/healthz`)).status, 200);
      if (await ipv6Loopback()) assert.equal((await fetch(`http://[::1]:${ops.port}/healthz`)).status, 200);
      else t.diagnostic('this machine has no IPv6 loopback: IPv4 checked only');
    } finally {
      await ops.close();
    }
  });

  test('a port out of range or a malformed value is refused, naming the variable', () => {
    for (const bad of ['127.0.0.1:99999', '127.0.0.1:65536', 'nowhere', '127.0.0.1:', '::1:8080']) {
      assert.throws(() => parseEnv(RelayConfig, { EPHEMERA_RELAY_LISTEN: bad }), (err: Error) => err instanceof ConfigError && err.message.includes(`EPHEMERA_RELAY_LISTEN: expected HOST:PORT, [IPv6]:PORT or :PORT (every interface) with a port from 0 to 65535 (got "${bad}")`), bad);
    }
  });
});

describe('ephemera relay --help', () => {
  test('lists every variable the relay reads, the functions\' ones included (for --sink memory)', async () => {
    const r = await runCli(['relay', '--help'], {});
    assert.equal(r.code, 0);
    for (const name of [...Object.keys(RelayConfig.shape), ...Object.keys(FunctionsConfig.shape)]) assert.ok(r.stdout.includes(name), `${name} is missing from the help`);
  });
});

test('a configuration error shows a short setting as it is, never a long value or one that may hold a credential (security review)', () => {
  const err = (schema: typeof RelayConfig | typeof LambdaConfig, env: Record<string, string>): string => {
    try {
      parseEnv(schema, env);
    } catch (e) {
      return (e as Error).message;
    }
    return '';
  };
  assert.match(err(RelayConfig, { EPHEMERA_RELAY_BUFFER_MAX: 'lots' }), /EPHEMERA_RELAY_BUFFER_MAX: .*\(got "lots"\)/);
  const long = `${'s'.repeat(80)} is no URL`;
  assert.match(err(RelayConfig, { EPHEMERA_SQS_QUEUE_URL: long }), /EPHEMERA_SQS_QUEUE_URL: .*\(got 90 characters, not shown\)$/);
  const clusters = err(LambdaConfig, { EPHEMERA_QUEUE_URL: 'https://q', EPHEMERA_CLUSTERS: '{"a":{"tok":"x"' });
  assert.match(clusters, /EPHEMERA_CLUSTERS: .*\(got 15 characters, not shown\)$/);
});

describe('which cluster ephemera relay watches', () => {
  test('no KUBECONFIG, no ~/.kube/config and no service account: it stops and says so, instead of asking http://localhost:8080 for ever (review)', async () => {
    const home = mkdtempSync(join(tmpdir(), 'ephemera-relay-home-'));
    try {
      const r = await runCli(['relay', '--sink', `record:${join(home, 'out.jsonl')}`], { KUBECONFIG: '', HOME: home, EPHEMERA_RELAY_LISTEN: '127.0.0.1:0' });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /^ephemera relay: no cluster to watch: KUBECONFIG is not set, .*\.kube\/config does not exist, .*; set KUBECONFIG$/m);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test('a KUBECONFIG that names a missing file, or whose current-context names no context, is told as such, exit 2 (review)', async () => {
    const home = mkdtempSync(join(tmpdir(), 'ephemera-relay-home-'));
    try {
      const missing = await runCli(['relay'], { KUBECONFIG: join(home, 'nope.kc'), HOME: home, EPHEMERA_RELAY_LISTEN: '127.0.0.1:0' });
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /^ephemera relay: KUBECONFIG names .*nope\.kc, which does not exist; set KUBECONFIG to a kubeconfig file$/m);
      const file = join(home, 'bad.kc');
      writeFileSync(file, 'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "https://127.0.0.1:6443"}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\nusers:\n- name: u\n  user: {token: x}\ncurrent-context: zzz\n');
      const badContext = await runCli(['relay'], { KUBECONFIG: file, HOME: home, EPHEMERA_RELAY_LISTEN: '127.0.0.1:0' });
      assert.equal(badContext.code, 2);
      assert.match(badContext.stderr, /current-context "zzz" is not one of its contexts \(c\); choose one with: kubectl config use-context NAME/);
      assert.doesNotMatch(badContext.stderr, /usage:/, 'not a usage error');
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test('its start line names the server, the context and the kubeconfig it acts through', async () => {
    const server = await startApiServer();
    const home = mkdtempSync(join(tmpdir(), 'ephemera-relay-home-'));
    const kubeconfig = join(home, 'kubeconfig');
    writeFileSync(kubeconfig, server.kubeconfigYaml());
    const child = spawn(process.execPath, [CLI, 'relay', '--sink', `record:${join(home, 'out.jsonl')}`], { env: { ...process.env, KUBECONFIG: kubeconfig, HOME: home, EPHEMERA_RELAY_LISTEN: '127.0.0.1:0', EPHEMERA_RELAY_LEADER_ELECTION: 'false' }, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let out = '';
      child.stdout.on('data', (b: Buffer) => (out += b.toString()));
      await eventually(() => assert.match(out, /"msg":"relay running"/), 10_000);
      const line = JSON.parse(out.split('\n').find((l) => l.includes('"relay running"')) ?? '{}') as Record<string, unknown>;
      assert.equal(line.server, server.url);
      assert.equal(line.kubeconfig, kubeconfig);
      assert.equal(typeof line.context, 'string');
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('close', r));
      await server.close();
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('what stops ephemera relay before it runs', () => {
  /** A kubeconfig the relay accepts (nothing is asked of its server before these checks). */
  const withKubeconfig = async (body: (env: Record<string, string>, home: string) => Promise<void>): Promise<void> => {
    const home = mkdtempSync(join(tmpdir(), 'ephemera-relay-home-'));
    const kubeconfig = join(home, 'kubeconfig');
    writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "https://127.0.0.1:6443"}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\nusers:\n- name: u\n  user: {token: x}\ncurrent-context: c\n');
    try {
      await body({ KUBECONFIG: kubeconfig, HOME: home, EPHEMERA_RELAY_LEADER_ELECTION: 'false' }, home);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  };

  test('a port in use is one line naming EPHEMERA_RELAY_LISTEN, as ephemera start says it, exit 1 (review)', async () => {
    const busy = createNetServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const port = (busy.address() as { port: number }).port;
    try {
      await withKubeconfig(async (env, home) => {
        const r = await runCli(['relay', '--sink', `record:${join(home, 'out.jsonl')}`], { ...env, EPHEMERA_RELAY_LISTEN: `127.0.0.1:${port}` });
        assert.equal(r.code, 1, r.stderr);
        assert.equal(r.stderr, `ephemera relay: 127.0.0.1:${port} (the relay's /healthz, /readyz, /metrics) is already in use; set EPHEMERA_RELAY_LISTEN to a free HOST:PORT (127.0.0.1:0 picks any free port)\n`);
      });
    } finally {
      busy.close();
    }
  });

  test('--sink record:PATH that cannot be opened for append stops it naming the path, exit 2, instead of retrying for ever (review)', async () => {
    await withKubeconfig(async (env, home) => {
      const path = join(home, 'no-such-dir', 'out.jsonl');
      // Bounded: a relay that starts anyway would run until killed.
      const r = spawnSync(process.execPath, [CLI, 'relay', '--sink', `record:${path}`], { env: { ...process.env, ...env, EPHEMERA_RELAY_LISTEN: '127.0.0.1:0' }, encoding: 'utf8', timeout: 15_000 });
      assert.equal(r.status, 2, `${r.signal ?? ''} ${r.stderr}`);
      assert.ok(r.stderr.startsWith(`ephemera relay: --sink record:${path}: the file cannot be opened for append (ENOENT: no such file or directory`), r.stderr);
      assert.doesNotMatch(r.stdout, /relay running/);
    });
  });
});

test('an empty variable is an unset one: its default, never 0, never an error (review)', () => {
  const blank = parseEnv(RelayConfig, { EPHEMERA_RELAY_HOLD_SECONDS: '', EPHEMERA_RELAY_COALESCE_MS: '', EPHEMERA_RELAY_CLUSTER: '', EPHEMERA_SQS_QUEUE_URL: '', EPHEMERA_RELAY_NAMESPACES: '' });
  const unset = parseEnv(RelayConfig, {});
  assert.deepEqual(blank, unset);
  assert.equal(holdSeconds(blank), holdSeconds(unset));
  assert.ok(blank.EPHEMERA_RELAY_COALESCE_MS > 0);
});

test('a variable of spaces alone is an unset one too: Number(" ") is 0, which turned the hold and coalescing off (review77 H3)', () => {
  const unset = parseEnv(RelayConfig, {});
  for (const blank of [' ', '\t', '\n', '  \t ']) {
    assert.deepEqual(parseEnv(RelayConfig, { EPHEMERA_RELAY_HOLD_SECONDS: blank, EPHEMERA_RELAY_COALESCE_MS: blank, AWS_REGION: blank, EPHEMERA_RELAY_LEASE_NAMESPACE: blank }), unset, JSON.stringify(blank));
  }
});

test('the leader Lease\'s namespace, the signal image and the region are checked at start, naming the variable (review77 H3)', () => {
  const refused: [typeof RelayConfig | typeof FunctionsConfig | typeof LambdaConfig, Record<string, string>, RegExp][] = [
    [RelayConfig, { EPHEMERA_RELAY_LEASE_NAMESPACE: 'Bad_Value' }, /EPHEMERA_RELAY_LEASE_NAMESPACE: a namespace name \(DNS-1123 label\) \(got "Bad_Value"\)/],
    [RelayConfig, { AWS_REGION: 'Europe' }, /AWS_REGION: an AWS region name, such as eu-west-1 \(got "Europe"\)/],
    [LambdaConfig, { AWS_REGION: 'eu west 1' }, /AWS_REGION: an AWS region name/],
    [FunctionsConfig, { EPHEMERA_SIGNAL_IMAGE: 'Bad_Value' }, /EPHEMERA_SIGNAL_IMAGE: an image reference, such as busybox:1\.36/],
    [FunctionsConfig, { EPHEMERA_SIGNAL_IMAGE: 'busybox:' }, /EPHEMERA_SIGNAL_IMAGE: an image reference/],
    [FunctionsConfig, { EPHEMERA_SIGNAL_IMAGE: 'busybox@sha256:abc' }, /EPHEMERA_SIGNAL_IMAGE: an image reference/],
  ];
  for (const [schema, env, message] of refused) {
    assert.throws(() => parseEnv(schema as typeof RelayConfig, env), (err: Error) => err instanceof ConfigError && message.test(err.message), JSON.stringify(env));
  }
  for (const image of ['busybox', 'busybox:1.36', 'registry.example.com:5000/tools/busybox@sha256:' + 'a'.repeat(64), '[::1]:5000/x:y', 'public.ecr.aws/docker/library/busybox:stable']) {
    assert.equal(parseEnv(FunctionsConfig, { EPHEMERA_SIGNAL_IMAGE: image }).EPHEMERA_SIGNAL_IMAGE, image);
  }
  for (const region of ['us-east-1', 'us-gov-west-1', 'cn-north-1', 'eusc-de-east-1', 'ap-southeast-5']) {
    assert.equal(parseEnv(RelayConfig, { AWS_REGION: region }).AWS_REGION, region);
  }
});

test('EPHEMERA_CLUSTERS: an error says where in the JSON and what is wrong, still without its value (review77 L1)', () => {
  const err = (clusters: string): string => {
    try {
      parseEnv(LambdaConfig, { EPHEMERA_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/1/q', EPHEMERA_CLUSTERS: clusters });
    } catch (e) {
      return (e as Error).message;
    }
    return 'accepted';
  };
  assert.match(err('{"a":{"eks":{}}}'), /EPHEMERA_CLUSTERS at a\.eks\.name: Invalid input: expected string, received undefined \(got 16 characters, not shown\)/);
  assert.match(err('{"a":{"secret":{"secretId":""}}}'), /EPHEMERA_CLUSTERS at a\.secret\.secretId: Too small/);
  assert.match(err('{"Prod":{"kubeconfig":{}}}'), /EPHEMERA_CLUSTERS at Prod: the key: a cluster name \(lower-case letters, digits, "-" and "\."\)/);
  assert.match(err('{"a":{"nope":{}}}'), /EPHEMERA_CLUSTERS at a: a cluster source: exactly one of \{"eks":\{"name":…\}\}, \{"secret":\{"secretId":…\}\}, \{"kubeconfig":\{\}\}/);
  assert.match(err('{"a":{"eks":{"name":"x"},"kubeconfig":{}}}'), /EPHEMERA_CLUSTERS at a: a cluster source: exactly one of/);
  assert.doesNotMatch(err('{"a":{"secret":{"secretId":"","token":"s3cr3t"}}}'), /s3cr3t/);
});
