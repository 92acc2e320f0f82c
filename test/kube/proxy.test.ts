// Proxies: which requests go through one (client-go's rules for the kubeconfig's proxy-url and
// for HTTPS_PROXY / NO_PROXY), and that the functions' client, the relay's LIST and the relay's
// SQS client really go through it: a real https API server named `apiserver.test`, which only
// the test proxy can reach, and fauxqs behind the name `sqs.test`.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { KubeConfig } from '@kubernetes/client-node';
import { startFauxqs } from 'fauxqs';
import { KubeError } from '../../functions/kube/errors.ts';
import { createHttpsKube } from '../../functions/kube/https-kube.ts';
import { prepareKubeConfig } from '../../functions/kube/kubeconfig-endpoint.ts';
import { proxyFor } from '../../functions/kube/proxy.ts';
import { CliError } from '../../functions/runtime/node/cli-error.ts';
import { loadCluster } from '../../functions/runtime/node/kubeconfig.ts';
import { sqsRequestHandler } from '../../relay/cli.ts';
import { listRaw } from '../../relay/raw-list.ts';
import { startProxy, type TestProxy } from '../support/connect-proxy.ts';
import { listenTls, makeCerts } from '../support/tls-certs.ts';

const decide = (server: string, env: Record<string, string>, proxyUrl?: string): string | undefined => proxyFor(new URL(server), proxyUrl, env)?.url.href;

describe('which requests go through a proxy (golang.org/x/net/http/httpproxy, as client-go)', () => {
  const P = { HTTPS_PROXY: 'http://proxy.corp:3128' };
  test('HTTPS_PROXY for an https server, HTTP_PROXY for an http one; the upper-case name first; none set: direct', () => {
    assert.equal(decide('https://api.corp:6443', P), 'http://proxy.corp:3128/');
    assert.equal(decide('http://api.corp:8080', P), undefined);
    assert.equal(decide('http://api.corp:8080', { HTTP_PROXY: 'http://h:1' }), 'http://h:1/');
    assert.equal(decide('https://api.corp', { HTTPS_PROXY: 'http://upper:1', https_proxy: 'http://lower:1' }), 'http://upper:1/');
    assert.equal(decide('https://api.corp', { https_proxy: 'http://lower:1' }), 'http://lower:1/');
    assert.equal(decide('https://api.corp', {}), undefined);
  });
  test('a proxy without a scheme is http://', () => {
    assert.equal(decide('https://api.corp', { HTTPS_PROXY: 'proxy.corp:3128' }), 'http://proxy.corp:3128/');
  });
  test('never for localhost or a loopback address, whatever NO_PROXY says', () => {
    for (const s of ['https://localhost:6443', 'https://127.0.0.1', 'https://127.8.9.1:6443', 'https://[::1]:6443', 'https://[0:0:0:0:0:0:0:1]', 'https://[::ffff:127.0.0.1]']) assert.equal(decide(s, P), undefined, s);
    assert.equal(decide('https://[::2]', P), 'http://proxy.corp:3128/');
  });
  test('NO_PROXY: *, CIDR, IP with or without port, domain and its subdomains, .domain and *.domain subdomains only', () => {
    const no = (NO_PROXY: string, server: string): boolean => decide(server, { ...P, NO_PROXY }) === undefined;
    assert.ok(no('*', 'https://api.corp'));
    assert.ok(no('10.0.0.0/8', 'https://10.100.0.1'), 'an in-cluster service IP in the service CIDR (Node itself ignores CIDRs)');
    assert.ok(!no('10.0.0.0/8', 'https://11.0.0.1'));
    assert.ok(!no('10.0.0.0/8', 'https://ten.corp'), 'a CIDR names addresses, not names');
    assert.ok(no('fd00::/8', 'https://[fd00::1]'));
    assert.ok(no('10.100.0.1', 'https://10.100.0.1:443'));
    assert.ok(no('10.100.0.1:443', 'https://10.100.0.1'), 'the default port counts');
    assert.ok(!no('10.100.0.1:6443', 'https://10.100.0.1'));
    assert.ok(no('corp', 'https://api.corp'), 'a domain matches its subdomains (Node matches only the name itself)');
    assert.ok(no('api.corp', 'https://api.corp'));
    assert.ok(no('.svc', 'https://kubernetes.default.svc'));
    assert.ok(!no('.corp', 'https://corp'), '.domain: subdomains only');
    assert.ok(!no('*.corp', 'https://corp'));
    assert.ok(no('*.corp', 'https://api.corp'));
    assert.ok(!no('pi.corp', 'https://api.corp'), 'a suffix that is not a whole label');
    assert.ok(no(' other , API.CORP:6443 ', 'https://api.corp:6443'), 'spaces and case');
    assert.ok(!no('api.corp:443', 'https://api.corp:6443'));
    assert.equal(decide('https://api.corp', { ...P, no_proxy: 'api.corp' }), undefined, 'no_proxy when NO_PROXY is not set');
  });
  test("the kubeconfig's proxy-url is used for every request of its cluster, loopback and NO_PROXY included", () => {
    assert.equal(decide('https://127.0.0.1:6443', { NO_PROXY: '*' }, 'http://p:1'), 'http://p:1/');
  });
  test('a proxy the client cannot use is an error naming it, without its credentials', () => {
    assert.throws(() => decide('https://api.corp', {}, 'socks5://user:secret@jump:1080'), (err: Error) => /proxy-url socks5:\/\/jump:1080: .*HTTP\(S\) proxy only/.test(err.message) && !err.message.includes('secret'));
    assert.throws(() => decide('https://api.corp', { HTTPS_PROXY: 'user:secret@::::' }), (err: Error) => /^HTTPS_PROXY: .* is not a proxy URL/.test(err.message) && !err.message.includes('secret'));
  });
});

describe('through a real proxy', () => {
  const certs = makeCerts();
  let server: { url: string; close(): void };
  let proxy: TestProxy;
  const served: string[] = [];
  const saved = { ...process.env };
  before(async () => {
    server = await listenTls(certs, (req, res, cn) => {
      served.push(`${req.url} ${cn} ${req.headers.authorization ?? ''}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.url?.startsWith('/api/v1/pods') ? JSON.stringify({ kind: 'PodList', metadata: { resourceVersion: '7' }, items: [] }) : JSON.stringify({ kind: 'Node', metadata: { name: 'n1' } }));
    });
    proxy = await startProxy();
  });
  after(async () => {
    process.env = saved;
    server.close();
    await proxy.close();
    certs.remove();
  });
  const port = (): string => new URL(server.url).port;
  const node = { apiVersion: 'v1', kind: 'Node', name: 'n1' };

  test("the functions' client tunnels through the kubeconfig's proxy-url, with the proxy's credentials, TLS to the API server end to end", async () => {
    const before = proxy.seen.length;
    const withAuth = proxy.url.replace('http://', 'http://ops:pa%3Ass@');
    const kube = createHttpsKube({ server: server.url, ca: certs.pem('ca.crt'), cert: certs.pem('client.crt'), key: certs.pem('client.key'), proxyUrl: withAuth }, { timeoutMs: 3000 });
    assert.notEqual(await kube.get(node), null);
    assert.deepEqual(proxy.seen.slice(before), [`CONNECT 127.0.0.1:${port()}`]);
    assert.equal(proxy.auth.at(-1), `Basic ${Buffer.from('ops:pa:ss').toString('base64')}`);
    assert.match(served.at(-1) ?? '', / ephemera /, 'the client certificate reached the API server through the tunnel');
  });

  test('HTTPS_PROXY sends a request through the proxy; NO_PROXY naming the server goes direct', async () => {
    process.env.HTTPS_PROXY = proxy.url;
    delete process.env.NO_PROXY;
    const before = proxy.seen.length;
    const named = `https://apiserver.test:${port()}`;
    const kube = createHttpsKube({ server: named, ca: certs.pem('ca.crt') }, { timeoutMs: 3000 });
    assert.notEqual(await kube.get(node), null, 'apiserver.test is reachable only through the proxy');
    assert.deepEqual(proxy.seen.slice(before), [`CONNECT apiserver.test:${port()}`]);
    process.env.NO_PROXY = '10.0.0.0/8,.test';
    const direct = createHttpsKube({ server: named, ca: certs.pem('ca.crt') }, { timeoutMs: 3000 });
    const err = await direct.get(node).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof KubeError && err.status === 0, `direct, the name does not resolve: ${String(err)}`);
    assert.equal(proxy.seen.length, before + 1, 'the proxy saw nothing more');
    delete process.env.NO_PROXY;
    delete process.env.HTTPS_PROXY;
  });

  test("the relay's LIST goes the same way: HTTPS_PROXY becomes its kubeconfig cluster's proxy-url", async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `https://apiserver.test:${port()}`, caData: Buffer.from(certs.pem('ca.crt')).toString('base64') }],
      users: [{ name: 'u', token: 'relay-token' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    prepareKubeConfig(kc, { HTTPS_PROXY: proxy.url, NO_PROXY: 'localhost' });
    const before = proxy.seen.length;
    const page = await listRaw(kc, '/api/v1/pods', { limit: 500, timeoutMs: 3000 });
    assert.equal(page.resourceVersion, '7');
    assert.deepEqual(proxy.seen.slice(before), [`CONNECT apiserver.test:${port()}`]);
    assert.match(served.at(-1) ?? '', /Bearer relay-token$/);
    const kept = new KubeConfig();
    kept.loadFromOptions({ clusters: [{ name: 'c', server: 'https://kubernetes.default.svc', proxyUrl: 'http://own:1' }, { name: 'd', server: 'https://10.96.0.1' }], users: [], contexts: [], currentContext: '' });
    prepareKubeConfig(kept, { HTTPS_PROXY: proxy.url, NO_PROXY: '10.96.0.0/12' });
    assert.deepEqual(kept.getClusters().map((c) => c.proxyUrl), ['http://own:1', undefined], "a cluster's own proxy-url is kept; NO_PROXY is honoured");
    // The current cluster is checked up front, not at the first request: a proxy-url the client
    // cannot use, and a CA with insecure-skip-tls-verify (review); another cluster of the file is not used, so not checked (kubectl does not either).
    const socksCluster = { name: 'socks', server: 'https://api.corp', proxyUrl: 'socks5://user:secret@jump:1080' };
    const bothCluster = { name: 'both', server: 'https://api.corp', skipTLSVerify: true, caData: Buffer.from('CA').toString('base64') };
    const using = (current: string): KubeConfig => {
      const kc = new KubeConfig();
      kc.loadFromOptions({ clusters: [socksCluster, bothCluster, { name: 'plain', server: 'https://api.corp' }], users: [{ name: 'u' }], contexts: ['socks', 'both', 'plain'].map((c) => ({ name: c, cluster: c, user: 'u' })), currentContext: current });
      return kc;
    };
    assert.throws(() => prepareKubeConfig(using('socks'), {}), (e: Error) => /^kubeconfig cluster "socks": proxy-url socks5:\/\/jump:1080: .*: give the cluster an HTTP proxy, or none$/.test(e.message) && !e.message.includes('secret'));
    assert.throws(() => prepareKubeConfig(using('both'), {}), /kubeconfig cluster "both": insecure-skip-tls-verify and a certificate authority together are refused/);
    assert.doesNotThrow(() => prepareKubeConfig(using('plain'), {}), 'the clusters not in use are not checked');
  });

  test("the relay's SQS client sends through HTTP_PROXY (the SDK reads no proxy variable itself)", async () => {
    const q = await startFauxqs({ port: 0, logger: false });
    const endpoint = `http://sqs.test:${q.port}`;
    const client = new SQSClient({ region: 'us-east-1', endpoint, credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, requestHandler: sqsRequestHandler(endpoint, 3000, { HTTP_PROXY: proxy.url }) });
    try {
      const { queueUrl } = q.createQueue('proxied');
      const before = proxy.seen.length;
      const sent = await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: '{}' }));
      assert.ok(sent.MessageId);
      assert.ok(proxy.seen.slice(before).some((s) => s.startsWith('POST http://')), proxy.seen.slice(before).join('; '));
    } finally {
      client.destroy();
      await q.stop();
    }
  });
});

test("the CLI's cluster takes HTTPS_PROXY as client-go would; a proxy it cannot use is a usage error naming the fix", () => {
  const dir = mkdtempSync(join(tmpdir(), 'ephemera-proxy-'));
  const saved = { ...process.env };
  try {
    const file = join(dir, 'config');
    writeFileSync(file, 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://api.corp:6443"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n');
    process.env.HTTPS_PROXY = 'http://proxy.corp:3128';
    process.env.NO_PROXY = 'localhost';
    assert.equal(loadCluster({ kubeconfig: file }).kc.getCurrentCluster()?.proxyUrl, 'http://proxy.corp:3128/');
    process.env.NO_PROXY = '.corp';
    assert.equal(loadCluster({ kubeconfig: file }).kc.getCurrentCluster()?.proxyUrl, undefined);
    process.env.HTTPS_PROXY = 'socks5://jump:1080';
    process.env.NO_PROXY = '';
    assert.throws(() => loadCluster({ kubeconfig: file }), (e: unknown) => e instanceof CliError && e.exitCode === 2 && /^kubeconfig cluster "c": HTTPS_PROXY socks5:\/\/jump:1080: .*: unset it, or add api\.corp to NO_PROXY$/.test(e.message));
  } finally {
    process.env = saved;
    rmSync(dir, { recursive: true, force: true });
  }
});
