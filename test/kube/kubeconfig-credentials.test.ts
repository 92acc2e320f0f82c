// Credentials of a kubeconfig loaded by client-node (the CLI's --kubeconfig, the relay), as
// the functions' own client sends them — against a real https server that asks for a client
// certificate and checks bearer tokens, as kube-apiserver does (review: an exec plugin's
// certificate and a `tokenFile` were dropped, so such users' requests went out anonymous, and
// an exec token refused with 401 was sent again unchanged).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { createKube } from '../../functions/kube/client.ts';
import { useTokenFiles } from '../../functions/kube/token-files.ts';
import { loadCluster } from '../../functions/runtime/node/kubeconfig.ts';
import { listRaw } from '../../relay/raw-list.ts';
import { listenTls, makeCerts } from '../support/tls-certs.ts';

const certs = makeCerts();
const work = mkdtempSync(join(tmpdir(), 'ephemera-creds-'));
/** What each request presented: "CN=<client certificate> <Authorization>". */
const seen: string[] = [];
/** Tokens the server refuses with 401 (an expired or revoked one). */
const refused = new Set<string>();
let server: { url: string; close(): void };
let url = '';
const node = { apiVersion: 'v1', kind: 'Node', name: 'n1' };

before(async () => {
  server = await listenTls(certs, (req, res, cn) => {
    const authorization = req.headers.authorization ?? '';
    seen.push(`CN=${cn} ${authorization}`.trim());
    if (refused.has(authorization.replace(/^Bearer /, ''))) {
      res.writeHead(401, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 }));
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Node', apiVersion: 'v1', metadata: { name: 'n1' } }));
  });
  url = server.url;
});
after(() => {
  server.close();
  certs.remove();
  rmSync(work, { recursive: true, force: true });
});

/** A kubeconfig file whose user is `user` (YAML flow mappings), trusting the test CA. */
function kubeconfig(name: string, user: string): string {
  const file = join(work, `${name}.kubeconfig`);
  writeFileSync(file, [
    'apiVersion: v1', 'kind: Config', 'current-context: c',
    `clusters: [{ name: c, cluster: { server: "${url}", certificate-authority: "${join(certs.dir, 'ca.crt')}" } }]`,
    `users: [{ name: u, user: ${user} }]`,
    'contexts: [{ name: c, context: { cluster: c, user: u } }]', '',
  ].join('\n'));
  return file;
}

/** An exec plugin: a Node script printing an ExecCredential; `status` is its JSON, or a script expression. */
function execUser(name: string, status: string): string {
  const script = join(work, `${name}.mjs`);
  writeFileSync(script, `process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: ${status} }));\n`);
  return `{ exec: { apiVersion: client.authentication.k8s.io/v1, command: "${process.execPath}", args: ["${script}"], interactiveMode: Never } }`;
}

/** A kubeconfig whose exec plugin hands out `<name>-1`, `<name>-2`, … one token a run; the first is refused. */
function countingExec(name: string): { kc: KubeConfig; runs: () => number } {
  const counter = join(work, `${name}-runs`);
  writeFileSync(counter, '0');
  const status = `(() => { const fs = process.getBuiltinModule('node:fs'); const n = Number(fs.readFileSync(${JSON.stringify(counter)}, 'utf8')) + 1; fs.writeFileSync(${JSON.stringify(counter)}, String(n)); return { token: '${name}-' + n }; })()`;
  refused.add(`${name}-1`);
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig(name, execUser(name, status)));
  return { kc, runs: () => Number(readFileSync(counter, 'utf8')) };
}

describe('kubeconfig credentials through client-node', () => {
  test('an exec plugin that returns a client certificate (Teleport\'s tsh does): the certificate is presented', async () => {
    const status = JSON.stringify({ clientCertificateData: certs.pem('client.crt'), clientKeyData: certs.pem('client.key') });
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig('exec-cert', execUser('exec-cert', status)));
    seen.length = 0;
    await createKube(kc, { timeoutMs: 5000 }).get(node);
    assert.deepEqual(seen, ['CN=ephemera']);
  });

  test('an exec token refused with 401 is asked of the plugin again, as client-go does, and the call goes through', async () => {
    const { kc, runs } = countingExec('exec');
    seen.length = 0;
    await createKube(kc, { timeoutMs: 5000 }).get(node);
    assert.deepEqual(seen, ['CN= Bearer exec-1', 'CN= Bearer exec-2']);
    assert.equal(runs(), 2, 'the plugin ran again after the 401');
  });

  test('a user\'s `tokenFile` (kubectl\'s field, relative to the kubeconfig) is sent, without the file\'s newline', async () => {
    writeFileSync(join(work, 'token'), 'from-file\n');
    const { kc } = loadCluster({ kubeconfig: kubeconfig('token-file', '{ tokenFile: token }') });
    seen.length = 0;
    await createKube(kc, { timeoutMs: 5000 }).get(node);
    assert.deepEqual(seen, ['CN= Bearer from-file']);
  });
});

test('the relay\'s LIST reads a `tokenFile` user too, newline and all', async () => {
  writeFileSync(join(work, 'relay-token'), 'relay-file\n');
  const file = kubeconfig('relay-token-file', '{ tokenFile: relay-token }');
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  useTokenFiles(kc, file);
  seen.length = 0;
  await assert.rejects(listRaw(kc, '/api/v1/nodes', { limit: 10, timeoutMs: 5000 }), /no items array/, 'this server answers a Node, not a list');
  assert.deepEqual(seen, ['CN= Bearer relay-file']);
});

test('the relay\'s LIST refused with 401 asks the exec plugin anew for the next one (it is not sent the same token again)', async () => {
  const { kc } = countingExec('relay-exec');
  seen.length = 0;
  await assert.rejects(listRaw(kc, '/api/v1/nodes', { limit: 10, timeoutMs: 5000 }), /HTTP 401/);
  await assert.rejects(listRaw(kc, '/api/v1/nodes', { limit: 10, timeoutMs: 5000 }), /no items array/, 'this server answers a Node, not a list');
  assert.deepEqual(seen, ['CN= Bearer relay-exec-1', 'CN= Bearer relay-exec-2']);
});
