// The webhook on Node: plain HTTP, or HTTPS when given a certificate. Certificates are
// re-read when their files change, because cert-manager and kubelet rotate mounted
// Secrets in place and a webhook that keeps a stale certificate starts failing closed.
import { serve } from '@hono/node-server';
import { unwatchFile, watchFile } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer as createHttpsServer } from 'node:https';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { createWebhookApp } from '../../webhook/app.ts';
import type { WebhookLog } from '../../webhook/app.ts';

export interface TlsFiles {
  cert: string;
  key: string;
}

export interface WebhookServerOptions {
  /** Unset: every interface, IPv6 and IPv4 (`ListenAddress`). */
  host?: string;
  port: number;
  tls?: TlsFiles;
  logger: Logger;
  /** How often to check the certificate files for changes (ms). */
  certPollMs?: number;
}

export interface RunningWebhook {
  url: string;
  close(): Promise<void>;
}

/** Start serving; resolves once listening, with the address actually bound. */
export async function startWebhookServer(opts: WebhookServerOptions): Promise<RunningWebhook> {
  const app = createWebhookApp({ log: pinoWebhookLog(opts.logger) });
  const tlsOptions = opts.tls ? await readTls(opts.tls) : undefined;
  const info = await new Promise<{ server: ReturnType<typeof serve>; address: AddressInfo }>((resolve, reject) => {
    const server = serve(
      {
        fetch: app.fetch,
        hostname: opts.host,
        port: opts.port,
        ...(tlsOptions ? { createServer: createHttpsServer, serverOptions: tlsOptions } : {}),
      },
      (address) => resolve({ server, address }),
    );
    server.once('error', reject);
  });
  const stopWatching = opts.tls ? watchCertificates(info.server as HttpsServer, opts.tls, opts) : () => {};
  const host = info.address.family === 'IPv6' ? `[${info.address.address}]` : info.address.address;
  return {
    url: `${opts.tls ? 'https' : 'http'}://${host}:${info.address.port}`,
    close: () => {
      stopWatching();
      return closeServer(info.server as HttpsServer);
    },
  };
}

/**
 * Stop accepting, end idle keep-alive connections at once (the API server keeps them open,
 * and close() would otherwise wait for them), and cut the rest after a grace period.
 */
function closeServer(server: HttpsServer, graceMs = 5_000): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}

async function readTls(files: TlsFiles): Promise<{ cert: Buffer; key: Buffer }> {
  const [cert, key] = await Promise.all([readFile(files.cert), readFile(files.key)]);
  return { cert, key };
}

function watchCertificates(server: HttpsServer, files: TlsFiles, opts: WebhookServerOptions): () => void {
  const reload = (): void => {
    readTls(files)
      .then((tls) => {
        // Throws for a key that does not match the certificate (one file rotated, not yet the other).
        server.setSecureContext(tls);
        opts.logger.info({ cert: files.cert }, 'reloaded TLS certificate');
      })
      // Keep serving with the old certificate: better than no webhook at all.
      .catch((err: unknown) => opts.logger.error({ err }, 'could not reload TLS certificate; keeping the previous one'));
  };
  const options = { interval: opts.certPollMs ?? 30_000, persistent: false };
  watchFile(files.cert, options, reload);
  watchFile(files.key, options, reload);
  return () => {
    unwatchFile(files.cert, reload);
    unwatchFile(files.key, reload);
  };
}

/** The app's decisions as pino log lines. */
export function pinoWebhookLog(logger: Logger): WebhookLog {
  return {
    decision: (e) => logger.info(e, e.allowed ? 'allowed' : 'denied'),
    rejected: (e) => logger.warn(e, 'bad request'),
    failed: (err) => logger.error({ err }, 'webhook failed'),
  };
}
