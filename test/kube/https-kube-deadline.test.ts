// The injection's landing deadline in the lean client (https-kube.ts perform, and the request's
// `left`): a write sent again after a 401 gets only what is left of it, and the client gives up
// at it on its own, whatever the server does with ?timeout= (review92 G3). No wall-clock
// thresholds: the first case bounds ?timeout= by instants taken in this process, the second
// only asks that the client give up long before its own timeout.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { Action } from '../../functions/engine/plan.ts';
import { createHttpsKube } from '../../functions/kube/https-kube.ts';

const write: Action = { verb: 'patch', apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'p', patchType: 'merge', body: {}, reason: 'test' };

async function listening(handler: http.RequestListener): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer(handler);
  server.on('clientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const timeoutOf = (url: string | undefined): number => Number.parseInt(new URL(url ?? '/', 'http://x').searchParams.get('timeout') ?? 'NaN', 10);

test('a write answered 401 is sent again with a fresh token and only what is left of its deadline as ?timeout=, not the whole of it anew', async () => {
  const timeouts: number[] = [];
  let answered401At = Number.NaN;
  const { server, url } = await listening((req, res) => {
    req.on('error', () => undefined);
    timeouts.push(timeoutOf(req.url));
    if (timeouts.length > 1) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'Pod', apiVersion: 'v1', metadata: { name: 'p' } }));
      return;
    }
    // The first attempt is held a while, then refused: the resend starts after this instant.
    setTimeout(() => {
      answered401At = performance.now();
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Unauthorized', code: 401 }));
    }, 300).unref();
  });
  try {
    let n = 0;
    const kube = createHttpsKube({ server: url }, { auth: { header: async () => `Bearer t${++n}`, invalidate: () => undefined } });
    const timeoutMs = 2000;
    const done = kube.perform(write, { timeoutMs });
    // perform() counts the deadline from the call, so it runs out no later than this.
    const answerByAtMost = performance.now() + timeoutMs;
    await done;
    assert.equal(n, 2, 'a fresh token for the resend');
    assert.equal(timeouts.length, 2);
    assert.ok(timeouts[0]! <= timeoutMs, `first ?timeout=${timeouts[0]}ms`);
    const leftAtMost = Math.floor(answerByAtMost - answered401At);
    assert.ok(timeouts[1]! <= leftAtMost, `the resend's ?timeout=${timeouts[1]}ms, more than the ${leftAtMost} ms left after the 401`);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test('a write with a deadline to a server that never answers (?timeout= not honoured, a black-holed proxy) fails at the deadline, not at the client\'s own timeout', async () => {
  const held: http.ServerResponse[] = [];
  const { server, url } = await listening((req, res) => {
    req.on('error', () => undefined);
    held.push(res);
  });
  try {
    // The client's own timeout is 2 minutes; the write's deadline 200 ms. A client that waited
    // for its own timeout would still be waiting at the bound below (100× the deadline).
    const kube = createHttpsKube({ server: url }, { timeoutMs: 120_000 });
    const settled = kube.perform(write, { timeoutMs: 200 }).then(() => 'answered', (e: unknown) => e);
    let bound: NodeJS.Timeout | undefined;
    const late = new Promise<string>((resolve) => { bound = setTimeout(() => resolve('still waiting'), 20_000); bound.unref(); });
    const outcome = await Promise.race([settled, late]);
    clearTimeout(bound);
    assert.ok(outcome instanceof Error, `gave up with an error, not: ${String(outcome)}`);
    assert.equal(held.length, 1, 'sent once');
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
