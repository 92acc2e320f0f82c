// The contract against `ephemera webhook --listen` (the real CLI, in a child process),
// plus TLS with --tls-cert/--tls-key and certificate reload.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import type { TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../support/cli.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { parseListen } from '../../functions/config.ts';
import { startWebhookServer } from '../../functions/runtime/node/webhook-server.ts';
import { runContract } from './contract.case.ts';
import type { Send } from './contract.case.ts';
import { freePort, start, stop, waitReady } from './processes.ts';
import { ipv6Loopback } from '../support/ipv6.ts';
import { admissionReview, PATH } from './support.ts';

const CLI = new URL('../../functions/runtime/node/ephemera.ts', import.meta.url).pathname;

describe('ephemera webhook (plain HTTP)', () => {
  let base = '';
  let server: ReturnType<typeof start>;
  before(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = start(process.execPath, [CLI, 'webhook', '--listen', `127.0.0.1:${port}`, '--log-level', 'warn']);
    await waitReady(`${base}/healthz`, server.child, server.output);
  });
  after(async () => {
    // SIGTERM is a graceful shutdown: exit code 0.
    assert.equal(await stop(server.child), 0);
  });
  const send: Send = (path, init) => fetch(base + path, init);
  runContract('Node server (ephemera webhook)', () => send);
});

/** A self-signed certificate for 127.0.0.1, made with openssl. */
function makeCert(dir: string, cn: string): { cert: string; key: string } {
  const cert = join(dir, `${cn}.crt`);
  const key = join(dir, `${cn}.key`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1',
    '-subj', `/CN=${cn}`, '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  return { cert, key };
}

/** POST a review over HTTPS trusting `ca`; resolves with status, body and the server's CN. */
function postTls(url: string, ca: string): Promise<{ status: number; body: string; cn: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url + PATH, { method: 'POST', ca, agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      // Read the peer certificate now: once the response ends the socket may be detached.
      const cn = String((res.socket as TLSSocket).getPeerCertificate().subject?.CN ?? '');
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body, cn });
      });
    });
    req.on('error', reject);
    req.end(JSON.stringify(admissionReview({ uid: 'tls-uid' })));
  });
}

describe('ephemera webhook over TLS', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ephemera-tls-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('--tls-cert/--tls-key serve HTTPS', async () => {
    const { cert, key } = makeCert(dir, 'first');
    const port = await freePort();
    const server = start(process.execPath, [CLI, 'webhook', '--listen', `127.0.0.1:${port}`, '--tls-cert', cert, '--tls-key', key]);
    try {
      const ca = readFileSync(cert, 'utf8');
      let answer: { status: number; body: string; cn: string } | undefined;
      for (let i = 0; i < 120 && !answer; i++) {
        answer = await postTls(`https://127.0.0.1:${port}`, ca).catch(async () => { await sleep(250); return undefined; });
      }
      assert.ok(answer, server.output());
      assert.equal(answer.status, 200);
      assert.equal(JSON.parse(answer.body).response.uid, 'tls-uid');
    } finally {
      await stop(server.child);
    }
  });

  test('a rotated certificate is picked up without a restart', async () => {
    const first = makeCert(dir, 'rotate-a');
    const paths = { cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key') };
    writeFileSync(paths.cert, readFileSync(first.cert));
    writeFileSync(paths.key, readFileSync(first.key));
    const running = await startWebhookServer({ host: '127.0.0.1', port: 0, tls: paths, logger: pino({ level: 'silent' }), certPollMs: 50 });
    try {
      assert.equal((await postTls(running.url, readFileSync(first.cert, 'utf8'))).cn, 'rotate-a');
      const second = makeCert(dir, 'rotate-b');
      writeFileSync(paths.key, readFileSync(second.key));
      writeFileSync(paths.cert, readFileSync(second.cert));
      const ca = readFileSync(second.cert, 'utf8');
      let cn = '';
      for (let i = 0; i < 200 && cn !== 'rotate-b'; i++) {
        cn = await postTls(running.url, ca).then((r) => r.cn, () => '');
        if (cn !== 'rotate-b') await sleep(50);
      }
      assert.equal(cn, 'rotate-b');
    } finally {
      await running.close();
    }
  });
});

describe('ephemera webhook certificate reload, half done', () => {
  test('a new key without its certificate is refused and logged; the old certificate keeps serving', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ephemera-tls-half-'));
    const first = makeCert(dir, 'half-a');
    const paths = { cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key') };
    writeFileSync(paths.cert, readFileSync(first.cert));
    writeFileSync(paths.key, readFileSync(first.key));
    const logged: string[] = [];
    const logger = pino({ level: 'error' }, { write: (line: string) => void logged.push(line) });
    const running = await startWebhookServer({ host: '127.0.0.1', port: 0, tls: paths, logger, certPollMs: 50 });
    try {
      const second = makeCert(dir, 'half-b');
      writeFileSync(paths.key, readFileSync(second.key)); // the certificate has not followed yet
      for (let i = 0; i < 100 && logged.length === 0; i++) await sleep(50);
      assert.match(logged.join(''), /could not reload TLS certificate; keeping the previous one/);
      assert.equal((await postTls(running.url, readFileSync(first.cert, 'utf8'))).cn, 'half-a', 'still serving');
      writeFileSync(paths.cert, readFileSync(second.cert));
      let cn = '';
      for (let i = 0; i < 200 && cn !== 'half-b'; i++) {
        cn = await postTls(running.url, readFileSync(second.cert, 'utf8')).then((r) => r.cn, () => '');
        if (cn !== 'half-b') await sleep(50);
      }
      assert.equal(cn, 'half-b', 'the completed rotation is picked up');
    } finally {
      await running.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('ephemera webhook arguments', () => {
  test('--listen forms', () => {
    assert.deepEqual(parseListen('0.0.0.0:8443'), { host: '0.0.0.0', port: 8443 });
    assert.deepEqual(parseListen(':9443'), { port: 9443 });
    assert.deepEqual(parseListen('[::1]:8443'), { host: '::1', port: 8443 });
    for (const bad of ['8443', 'host:99999', '::1:8443', '127.0.0.1:']) assert.equal(parseListen(bad), undefined, bad);
  });

  test('--listen :PORT serves IPv4 and IPv6 both (a probe on an IPv6-only cluster reaches it); a bad one exits 2', async (t) => {
    const port = await freePort();
    const server = start(process.execPath, [CLI, 'webhook', '--listen', `:${port}`, '--log-level', 'warn']);
    try {
      await waitReady(`http://127.0.0.1:${port}/healthz`, server.child, server.output);
      if (await ipv6Loopback()) await waitReady(`http://[::1]:${port}/healthz`, server.child, server.output, 1);
      else t.diagnostic('this machine has no IPv6 loopback: IPv4 checked only');
    } finally {
      await stop(server.child);
    }
    const bad = await runCli(['webhook', '--listen', '0.0.0.0'], {});
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--listen must be HOST:PORT, \[IPv6\]:PORT or :PORT \(every interface, e\.g\. :8443\), got "0\.0\.0\.0"/);
  });

  test('bad arguments exit 2 with a message', () => {
    const run = (...args: string[]): { status: number | null; stderr: string } => {
      try {
        execFileSync(process.execPath, [CLI, 'webhook', ...args], { stdio: 'pipe' });
        return { status: 0, stderr: '' };
      } catch (err) {
        const e = err as { status: number | null; stderr: Buffer };
        return { status: e.status, stderr: e.stderr.toString() };
      }
    };
    const empty = run('--tls-cert=', '--tls-key=');
    assert.equal(empty.status, 2, 'not plain HTTP with no word');
    assert.match(empty.stderr, /--tls-cert and --tls-key each need a file/);
    const half = run('--tls-cert', 'x.pem');
    assert.equal(half.status, 2);
    assert.match(half.stderr, /--tls-cert and --tls-key go together/);
    const bad = run('--listen', 'nope');
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--listen must be HOST:PORT/);
    const unknown = run('--frob');
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /Unknown option '--frob'/);
    // TLS files are checked before listening: named by flag, not blamed on the address (review).
    const missing = run('--listen', '127.0.0.1:0', '--tls-cert', '/nonexistent/tls.crt', '--tls-key', '/nonexistent/tls.key');
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /^ephemera webhook: --tls-cert \/nonexistent\/tls\.crt cannot be read \(ENOENT\)/);
    const dir = mkdtempSync(join(tmpdir(), 'ephemera-webhook-tls-'));
    try {
      writeFileSync(join(dir, 'garbage.pem'), 'not a certificate\n');
      const garbage = run('--listen', '127.0.0.1:0', '--tls-cert', join(dir, 'garbage.pem'), '--tls-key', join(dir, 'garbage.pem'));
      assert.equal(garbage.status, 2);
      assert.match(garbage.stderr, /are not a PEM certificate and its private key/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a port in use is one line naming --listen, exit 1', async () => {
    const busy = createNetServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const port = (busy.address() as { port: number }).port;
    try {
      const r = await runCli(['webhook', '--listen', `127.0.0.1:${port}`]);
      assert.equal(r.code, 1);
      assert.equal(r.stderr, `ephemera webhook: 127.0.0.1:${port} is already in use; pass --listen with a free HOST:PORT\n`);
    } finally {
      busy.close();
    }
  });
});

