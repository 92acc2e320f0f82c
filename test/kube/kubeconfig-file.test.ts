// The Lambda's `kubeconfig` cluster source without client-node: a static kubeconfig file or
// the in-cluster service account becomes an endpoint and credentials that reach the
// embedded API server; what it cannot use is refused with the file and the reason.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { startApiServer } from '../../functions/cluster/index.ts';
import { clusterConnections, CredentialError, type AwsLookups } from '../../functions/kube/credentials.ts';
import { createHttpsKube } from '../../functions/kube/https-kube.ts';
import { kubeConfigConnection } from '../../functions/kube/kubeconfig-endpoint.ts';
import { loadKubeconfigConnection, tokenFileAuth } from '../../functions/kube/kubeconfig-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'ephemera-kubeconfig-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const write = (name: string, text: string): string => {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
};
const noAws = (): AwsLookups => assert.fail('no AWS call for a kubeconfig source');

function kubeconfig(user: string, cluster = 'server: https://k8s.example:6443\n    certificate-authority: ca.pem'): string {
  return `apiVersion: v1
kind: Config
current-context: c
contexts:
- name: c
  context: {cluster: k, user: u}
clusters:
- name: k
  cluster:
    ${cluster}
users:
- name: u
  user:
    ${user}
`;
}

describe('kubeconfig source (no client-node)', () => {
  test("the embedded server's own kubeconfig reaches it through the lean client", async () => {
    const server = await startApiServer({ objects: [{ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } }] });
    try {
      const file = write('fake.yaml', server.kubeconfigYaml());
      const conn = await clusterConnections({ local: { kubeconfig: {} } }, noAws, () => loadKubeconfigConnection({ KUBECONFIG: `${file}:/elsewhere` })).connect('local');
      assert.deepEqual(conn.endpoint, { server: server.url, insecureSkipTlsVerify: true });
      assert.notEqual(await createHttpsKube(conn.endpoint).get({ apiVersion: 'v1', kind: 'Node', name: 'n1' }), null);
    } finally {
      await server.close();
    }
  });

  test('CA, client certificate and token from files relative to the kubeconfig, or inline data', async () => {
    write('ca.pem', 'CA PEM');
    write('token', 'file-token\n');
    const viaFiles = await loadKubeconfigConnection({ KUBECONFIG: write('files.yaml', kubeconfig('tokenFile: token\n    client-certificate: ca.pem\n    client-key: ca.pem')) });
    assert.equal(viaFiles.endpoint.ca?.toString(), 'CA PEM');
    assert.equal(viaFiles.endpoint.cert?.toString(), 'CA PEM');
    assert.equal(await viaFiles.auth?.header(), 'Bearer file-token');
    const b64 = Buffer.from('INLINE').toString('base64');
    const inline = await loadKubeconfigConnection({ KUBECONFIG: write('inline.yaml', kubeconfig('token: abc', `server: https://k8s.example\n    certificate-authority-data: ${b64}\n    tls-server-name: api.internal`)) });
    assert.deepEqual([inline.endpoint.ca?.toString(), inline.endpoint.tlsServerName, await inline.auth?.header()], ['INLINE', 'api.internal', 'Bearer abc']);
    assert.equal(inline.endpoint.disableCompression, undefined, 'gzip is asked for unless the kubeconfig says otherwise');
    const plain = await loadKubeconfigConnection({ KUBECONFIG: write('plain.yaml', kubeconfig('token: abc', 'server: https://k8s.example\n    disable-compression: true')) });
    assert.equal(plain.endpoint.disableCompression, true, "kubeconfig's disable-compression");
    assert.equal(plain.endpoint.proxyUrl, undefined);
    const proxied = await loadKubeconfigConnection({ KUBECONFIG: write('proxied.yaml', kubeconfig('token: abc', 'server: https://k8s.example\n    proxy-url: http://proxy.corp:3128')) });
    assert.equal(proxied.endpoint.proxyUrl, 'http://proxy.corp:3128', "kubeconfig's proxy-url");
  });

  test('what it cannot use is refused naming the file and the fix; the connect error names the cluster', async () => {
    const exec = write('exec.yaml', kubeconfig('exec: {command: aws, apiVersion: client.authentication.k8s.io/v1}'));
    await assert.rejects(loadKubeconfigConnection({ KUBECONFIG: exec }), new RegExp(`kubeconfig ${exec}: user "u" authenticates with an exec plugin.*eks or secret cluster source`));
    const badCtx = write('ctx.yaml', kubeconfig('token: abc').replace('current-context: c', 'current-context: nope'));
    await assert.rejects(loadKubeconfigConnection({ KUBECONFIG: badCtx }), /current-context "nope" is not among its contexts/);
    // A token pasted with a colon in it breaks the YAML: the error names where, never quotes the line (security review).
    const pasted = write('pasted.yaml', kubeconfig('token: eyJhbGciOi.SECRETPAYLOAD.sig: pasted'));
    await assert.rejects(loadKubeconfigConnection({ KUBECONFIG: pasted }), (e: Error) => new RegExp(`^kubeconfig ${pasted} cannot be read: .*line \\d+`).test(e.message) && !e.message.includes('SECRETPAYLOAD'));
    const both = write('both.yaml', kubeconfig('token: abc', `server: https://k8s.example\n    certificate-authority-data: ${Buffer.from('CA').toString('base64')}\n    insecure-skip-tls-verify: true`));
    await assert.rejects(loadKubeconfigConnection({ KUBECONFIG: both }), new RegExp(`kubeconfig ${both}: cluster "k": insecure-skip-tls-verify and a certificate authority together are refused`));
    const bad = write('bad.yaml', 'clusters: 3');
    await assert.rejects(loadKubeconfigConnection({ KUBECONFIG: bad }), /is malformed: .*current-context/);
    await assert.rejects(loadKubeconfigConnection({}), /neither KUBECONFIG nor KUBERNETES_SERVICE_HOST is set/);
    const conns = clusterConnections({ local: { kubeconfig: {} } }, noAws, () => loadKubeconfigConnection({}));
    await assert.rejects(conns.connect('local'), (e: unknown) => e instanceof CredentialError && /^cluster "local": neither KUBECONFIG/.test(e.message));
  });

  test('a token file is read again after a minute or after invalidate (rotated service-account tokens)', async () => {
    const f = write('rotating', 'one');
    let now = 0;
    const auth = tokenFileAuth(f, () => now);
    assert.equal(await auth.header(), 'Bearer one');
    write('rotating', 'two');
    assert.equal(await auth.header(), 'Bearer one', 'cached');
    now = 61_000;
    assert.equal(await auth.header(), 'Bearer two');
    write('rotating', 'three');
    auth.invalidate();
    assert.equal(await auth.header(), 'Bearer three');
    rmSync(f);
    auth.invalidate();
    await assert.rejects(auth.header(), /cannot read the token file .*rotating/);
  });
});

describe('client-node KubeConfig → lean connection (the CLI)', () => {
  test('TLS material, impersonation and the Authorization header client-node would send', async () => {
    const kc = new KubeConfig();
    const caData = Buffer.from('CA').toString('base64');
    kc.loadFromClusterAndUser({ name: 'k', server: 'https://k8s.example', caData, skipTLSVerify: false, tlsServerName: 'api', proxyUrl: 'http://proxy.corp:3128' }, { name: 'u', token: 'tok', impersonateUser: 'alice' });
    const { endpoint, auth } = kubeConfigConnection(kc);
    assert.deepEqual([endpoint.server, endpoint.ca?.toString(), endpoint.tlsServerName, endpoint.headers, endpoint.proxyUrl], ['https://k8s.example', 'CA', 'api', { 'Impersonate-User': 'alice' }, 'http://proxy.corp:3128']);
    assert.equal(await auth?.header(), 'Bearer tok');
    const basic = new KubeConfig();
    basic.loadFromClusterAndUser({ name: 'k', server: 'https://k8s.example', skipTLSVerify: true }, { name: 'u', username: 'a', password: 'b' });
    assert.equal(await kubeConfigConnection(basic).auth?.header(), `Basic ${Buffer.from('a:b').toString('base64')}`);
    const both = new KubeConfig();
    both.loadFromClusterAndUser({ name: 'k', server: 'https://k8s.example', caData, skipTLSVerify: true }, { name: 'u', token: 'tok' });
    assert.throws(() => kubeConfigConnection(both), /kubeconfig cluster "k": insecure-skip-tls-verify and a certificate authority together are refused/);
    const none = new KubeConfig();
    none.loadFromClusterAndUser({ name: 'k', server: 'https://k8s.example', skipTLSVerify: true }, { name: 'u' });
    assert.deepEqual(kubeConfigConnection(none), { endpoint: { server: 'https://k8s.example', insecureSkipTlsVerify: true } });
  });
});
