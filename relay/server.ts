import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

/** /healthz (alive), /readyz (listed every kind once and delivering), /metrics (Prometheus). `why` explains a 503. */
export async function startOpsServer(opts: { host?: string; port: number; ready: () => boolean; why?: () => string; registry: Registry }): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    if (path === '/readyz') {
      const ok = opts.ready();
      return void res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end(ok ? 'ready\n' : `${opts.why?.() ?? 'not ready'}\n`);
    }
    if (path === '/metrics') {
      opts.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': opts.registry.contentType }).end(text),
        (err: unknown) => res.writeHead(500).end(String(err)),
      );
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  return { server, port, close: () => new Promise((r) => server.close(() => r())) };
}
