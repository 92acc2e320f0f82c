// The lean client's TLS: the API server's CA, a client certificate, and
// insecure-skip-tls-verify, against a real https server with certificates made by openssl.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { KubeError } from '../../functions/kube/errors.ts';
import { createHttpsKube } from '../../functions/kube/https-kube.ts';
import { listenTls, makeCerts } from '../support/tls-certs.ts';

const certs = makeCerts();
const pem = certs.pem;

describe('lean Kube over TLS', () => {
  let server: { url: string; close(): void };
  let url: string;
  const clients: string[] = [];
  before(async () => {
    server = await listenTls(certs, (_req, res, cn) => {
      clients.push(cn);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Node', metadata: { name: 'n1' } }));
    });
    url = server.url;
  });
  after(() => {
    server.close();
    certs.remove();
  });
  const node = { apiVersion: 'v1', kind: 'Node', name: 'n1' };

  test('trusts the given CA and presents the client certificate', async () => {
    const kube = createHttpsKube({ server: url, ca: pem('ca.crt'), cert: pem('client.crt'), key: pem('client.key') }, { timeoutMs: 2000 });
    assert.equal(((await kube.get(node)) as { metadata: { name: string } }).metadata.name, 'n1');
    assert.equal(clients.at(-1), 'ephemera');
  });

  test('refuses a server its CA did not sign: a transient network error naming the cause', async () => {
    const kube = createHttpsKube({ server: url }, { timeoutMs: 2000 });
    const err = await kube.get(node).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof KubeError);
    assert.deepEqual([err.status, err.reason], [0, 'NetworkError']);
    assert.match(err.message, /certificate/);
  });

  test('insecure-skip-tls-verify accepts any certificate', async () => {
    const kube = createHttpsKube({ server: url, insecureSkipTlsVerify: true }, { timeoutMs: 2000 });
    assert.notEqual(await kube.get(node), null);
  });
});
