// Whether this machine can bind IPv6's loopback (some laptops and containers have IPv4 only).
import { createServer } from 'node:net';

export async function ipv6Loopback(): Promise<boolean> {
  const srv = createServer();
  return new Promise((resolve) => {
    srv.once('error', () => resolve(false));
    srv.listen(0, '::1', () => srv.close(() => resolve(true)));
  });
}
