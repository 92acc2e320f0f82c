// A forward proxy for tests of proxied clients: HTTP CONNECT tunnels (https targets) and
// absolute-URI requests (http targets), every target host taken to be 127.0.0.1 (so a test
// can name a server `apiserver.test`, which only the proxy can reach), each request noted.
import { createServer, request } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

export interface TestProxy {
  url: string;
  /** `CONNECT host:port` or `GET http://host:port/path`, in order. */
  seen: string[];
  /** The Proxy-Authorization header of each request, '' if none. */
  auth: string[];
  close(): Promise<void>;
}

export async function startProxy(): Promise<TestProxy> {
  const seen: string[] = [];
  const auth: string[] = [];
  const tunnels = new Set<Socket>();
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    auth.push(req.headers['proxy-authorization'] ?? '');
    const target = new URL(req.url ?? '');
    const upstream = request({ host: '127.0.0.1', port: target.port, path: `${target.pathname}${target.search}`, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  server.on('connect', (req, socket, head) => {
    seen.push(`CONNECT ${req.url}`);
    auth.push(req.headers['proxy-authorization'] ?? '');
    const port = Number((req.url ?? '').split(':').at(-1));
    tunnels.add(socket as Socket);
    const upstream = connect(port, '127.0.0.1', () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    auth,
    close: () => {
      server.closeAllConnections();
      for (const t of tunnels) t.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
