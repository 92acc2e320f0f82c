import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { CliError } from '../../../functions/runtime/node/cli-error.ts';
import { explain } from '../../../functions/runtime/node/explain-error.ts';
import { runCli } from '../../support/cli.ts';

describe('the ephemera command', () => {
  test('--version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    for (const flag of ['--version', '-v']) {
      const r = await runCli([flag]);
      assert.equal(r.code, 0);
      assert.match(r.stdout, new RegExp(`^ephemera ${version.replace(/\./g, '\\.')} \\(node \\d+\\.`));
    }
  });

  test('every subcommand answers --help with its usage, exit 0, touching nothing', async () => {
    for (const command of ['invoke', 'relay', 'webhook', 'start']) {
      const r = await runCli([command, '--help'], { KUBECONFIG: '/nonexistent' });
      assert.equal(r.code, 0, `${command}: ${r.stderr}`);
      assert.match(r.stdout, new RegExp(`^usage: ephemera ${command}`), command);
      assert.equal(r.stderr, '', command);
    }
    const top = await runCli(['--help']);
    assert.equal(top.code, 0);
    assert.match(top.stdout, /--version/);
  });

  test('a flag given twice is a usage error naming it, in every command; a flag meant to repeat repeats (review77 M1)', async () => {
    const cases: [string[], string][] = [
      [['invoke', '--state', 'a.yaml', '--state', 'b.yaml'], '--state'],
      [['invoke', '--state', 'a.yaml', '-o', 'json', '--output', 'json'], '--output'],
      [['webhook', '--listen', '127.0.0.1:1', '--listen=127.0.0.1:2'], '--listen'],
      [['relay', '--sink', 'memory', '--sink', 'sqs'], '--sink'],
      [['start', '--kubeconfig', 'a', '--kubeconfig', 'b'], '--kubeconfig'],
    ];
    for (const [args, flag] of cases) {
      const r = await runCli(args, { KUBECONFIG: '/nonexistent' });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.ok(r.stderr.includes(`${flag} is given more than once; give it once`), r.stderr);
    }
    const help = await runCli(['start', '--embedded', '-n', 'a', '--namespace', 'b', '--help']);
    assert.equal(help.code, 0, help.stderr);
  });

  test('no command is a usage error: the usage on stderr, nothing on stdout, exit 2 (review)', async () => {
    const r = await runCli([]);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^usage: ephemera <command>/);
  });

  test('the usage shows webhook\'s flags as its --help does: --listen optional, --log-level listed (review)', async () => {
    const top = await runCli(['--help']);
    const webhook = await runCli(['webhook', '--help']);
    const flags = /^usage: ephemera webhook (.*)$/m.exec(webhook.stdout)?.[1];
    assert.ok(flags, webhook.stdout);
    assert.match(top.stdout, new RegExp(`^  webhook  ${flags.replace(/[[\]]/g, '\\$&')}$`, 'm'));
    assert.match(flags, /^\[--listen HOST:PORT\] .*\[--log-level LEVEL\]$/);
  });

  test('an unknown command exits 2 with the usage', async () => {
    const r = await runCli(['frobnicate']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^ephemera: unknown command "frobnicate"\n\nusage: ephemera <command>/);
  });
});

describe('errors that reach the dispatcher', () => {
  test('are one line naming the fix', () => {
    const refused = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' }) });
    assert.equal(explain(refused), 'cannot reach the API server (connect ECONNREFUSED 127.0.0.1:6443); check that the cluster is running and that the kubeconfig\'s server address is right');
    assert.match(explain(new Error('No active cluster!')), /^no cluster configured: .*kubectl config use-context NAME/);
    assert.equal(explain(new CliError('already one line')), 'already one line');
    const other = explain(new Error('something\nelse'));
    assert.equal(other, 'something (LOG_LEVEL=debug shows the stack)');
  });
});

test('a bad variable of the functions is told before the cluster is looked for: invoke --kubeconfig, relay --sink memory (review77 L5)', async () => {
  for (const args of [['invoke', '--kubeconfig', '/nonexistent'], ['relay', '--sink', 'memory']]) {
    const r = await runCli(args, { EPHEMERA_API_TIMEOUT_MS: '5', KUBECONFIG: '/nonexistent', HOME: '/nonexistent' });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /EPHEMERA_API_TIMEOUT_MS: /, args.join(' '));
  }
});
