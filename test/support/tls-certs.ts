// Certificates made by openssl for tests of TLS: a CA, a server certificate for 127.0.0.1
// (and apiserver.test, a name only a test proxy reaches)
// and a client certificate (CN=ephemera), all signed by the CA, in a directory of their own.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';

export interface TestCerts {
  dir: string;
  /** The PEM text of a file made here: ca.crt, server.crt/key, client.crt/key. */
  pem(file: string): string;
  remove(): void;
}

export function makeCerts(): TestCerts {
  const dir = mkdtempSync(join(tmpdir(), 'ephemera-tls-'));
  const ssl = (...args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=test-ca');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:apiserver.test\n');
  for (const [name, cn] of [['server', 'kube-apiserver'], ['client', 'ephemera']] as const) {
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
    ssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.crt`, '-days', '1', ...(name === 'server' ? ['-extfile', 'san.ext'] : []));
  }
  return { dir, pem: (f) => readFileSync(join(dir, f), 'utf8'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A node:https server of these certificates on 127.0.0.1 that asks for a client certificate; `handle` gets the client's CN. */
export async function listenTls(certs: TestCerts, handle: (req: IncomingMessage, res: ServerResponse, clientCn: string) => void): Promise<{ url: string; close(): void }> {
  const server = createServer({ key: certs.pem('server.key'), cert: certs.pem('server.crt'), ca: certs.pem('ca.crt'), requestCert: true, rejectUnauthorized: false }, (req, res) => {
    handle(req, res, String((req.socket as TLSSocket).getPeerCertificate().subject?.CN ?? ''));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
