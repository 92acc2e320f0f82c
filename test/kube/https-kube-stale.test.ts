// A kept-alive connection the server closed meanwhile: the next request sent on it is reset
// before any answer. https-kube sends a GET again on a new connection (as Go's transport
// does for idempotent requests); a write is not sent twice by the client (the engine decides).
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { test } from 'node:test';
import { createHttpsKube } from '../../functions/kube/https-kube.ts';
import { KubeError } from '../../functions/kube/errors.ts';

const POD = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' } });

/**
 * A raw HTTP/1.1 server: the first request on a connection is answered (keep-alive); a
 * second request on that same connection is reset without an answer — the race where the
 * server closes an idle connection just as the client reuses it.
 */
async function resettingServer(): Promise<{ url: string; connections: () => number; close: () => Promise<void> }> {
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    let answered = 0;
    let buffered = '';
    socket.on('data', (chunk) => {
      buffered += chunk.toString('latin1');
      while (buffered.includes('\r\n\r\n')) {
        const end = buffered.indexOf('\r\n\r\n') + 4;
        const head = buffered.slice(0, end);
        const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length < end + length) return;
        buffered = buffered.slice(end + length);
        if (answered++ > 0) {
          socket.resetAndDestroy();
          return;
        }
        socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${POD.length}\r\nconnection: keep-alive\r\n\r\n${POD}`);
      }
    });
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => connections,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

test('a GET reset on a reused connection is sent again on a new one, once', async () => {
  const srv = await resettingServer();
  try {
    const kube = createHttpsKube({ server: srv.url });
    const ref = { apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'p' };
    assert.deepEqual(await kube.get(ref), JSON.parse(POD));
    assert.deepEqual(await kube.get(ref), JSON.parse(POD), 'the second GET went out on the kept-alive connection, was reset, and was sent again');
    assert.equal(srv.connections(), 2, 'the retry opened a new connection');
  } finally {
    await srv.close();
  }
});

test('a write reset on a reused connection is not sent again by the client: a transient NetworkError for the engine', async () => {
  const srv = await resettingServer();
  try {
    const kube = createHttpsKube({ server: srv.url });
    await kube.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'p' });
    const write = kube.perform({ verb: 'patch', apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'p', patchType: 'merge', body: { metadata: { labels: { a: 'b' } } }, reason: 'test' });
    await assert.rejects(write, (err: unknown) => err instanceof KubeError && err.reason === 'NetworkError' && /ECONNRESET|socket hang up/.test(err.message));
    assert.equal(srv.connections(), 1, 'no second connection: the write was not repeated');
  } finally {
    await srv.close();
  }
});

/**
 * An HTTP server that can forget every connection it has (a Lambda thawed after the server
 * closed them, unseen), and, given `idleMs`, forgets each one idle for longer (kube-apiserver's
 * 90 s): bytes then sent on a forgotten one are answered with a reset. Answers are held a
 * little so that concurrent requests each take a connection of their own.
 */
async function forgettingServer(idleMs = Infinity): Promise<{ url: string; forget: () => void; resets: () => number; connections: () => number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const forgotten = new WeakSet<net.Socket>();
  const lastUse = new WeakMap<net.Socket, number>();
  let resets = 0;
  let connections = 0;
  const server = http.createServer((_req, res) => {
    setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(POD), 20);
  });
  server.keepAliveTimeout = 600_000;
  server.on('connection', (socket: net.Socket) => {
    connections++;
    sockets.add(socket);
    lastUse.set(socket, Date.now());
    socket.on('close', () => sockets.delete(socket));
    socket.prependListener('data', () => {
      if (Date.now() - (lastUse.get(socket) ?? 0) > idleMs) forgotten.add(socket);
      lastUse.set(socket, Date.now());
      if (!forgotten.has(socket)) return;
      resets++;
      socket.resetAndDestroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    forget: () => { for (const s of sockets) forgotten.add(s); },
    resets: () => resets,
    connections: () => connections,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const REF = { apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'p' };
const PATCH = { verb: 'patch', apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'p', patchType: 'merge', body: { metadata: { labels: { a: 'b' } } }, reason: 'test' } as const;

test('a pool of dead connections (a thaw): the first reset closes them all, the GET is answered on a new one, and the write after it too', async () => {
  const srv = await forgettingServer();
  try {
    const kube = createHttpsKube({ server: srv.url });
    await Promise.all(Array.from({ length: 5 }, () => kube.get(REF)));
    assert.equal(srv.connections(), 5, 'five kept-alive connections');
    srv.forget();
    assert.deepEqual(await kube.get(REF), JSON.parse(POD));
    await kube.perform(PATCH);
    assert.equal(srv.resets(), 1, 'one dead connection met, not one per request (it was five: the GET failed twice, the write met the rest)');
  } finally {
    await srv.close();
  }
});

test('connections idle for longer than idleMs are closed before the next request, so a write after a thaw meets none of them', async () => {
  const srv = await forgettingServer();
  try {
    const kube = createHttpsKube({ server: srv.url }, { idleMs: 50 });
    await Promise.all(Array.from({ length: 3 }, () => kube.get(REF)));
    srv.forget();
    await new Promise((resolve) => setTimeout(resolve, 120));
    await kube.perform(PATCH);
    assert.equal(srv.resets(), 0, 'no request was sent on a kept connection after the idle gap');
    assert.equal(srv.connections(), 4, 'the write dialled a new connection');
  } finally {
    await srv.close();
  }
});

test('each connection\'s own idle time counts: those a burst left idle are closed though another was used all along', async () => {
  // The server forgets a connection idle for 300 ms ("kube-apiserver's 90 s", unseen by a frozen client).
  const srv = await forgettingServer(300);
  const kube = createHttpsKube({ server: srv.url }, { idleMs: 200 });
  try {
    await Promise.all(Array.from({ length: 4 }, () => kube.get(REF)));
    // One request at a time, each within idleMs of the last: one connection is reused (the agent hands out the last freed).
    for (let i = 0; i < 6; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      await kube.get(REF);
    }
    const results = await Promise.allSettled(Array.from({ length: 4 }, () => kube.perform(PATCH)));
    assert.deepEqual(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason)), []);
    assert.equal(srv.resets(), 0, 'no request was sent on a connection idle past idleMs');
  } finally {
    await srv.close();
  }
});
