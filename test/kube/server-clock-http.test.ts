// The API server's clock through real HTTP: an answer's Date is of when its headers came.
import assert from 'node:assert/strict';
import http from 'node:http';
import type net from 'node:net';
import { test } from 'node:test';
import { createHttpsKube } from '../../functions/kube/https-kube.ts';

/** How long the LIST's body takes after its headers (ms): more than a Date header's second. */
const BODY_AFTER_MS = 2500;

test("a LIST whose body comes seconds after its headers: the server's time read after it is of now, not of when the headers were written (review98 L1)", async () => {
  // The server's clock is this one; its Date headers are what any server sends (IMF-fixdate, a second's resolution).
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', date: new Date().toUTCString() });
    res.write('{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},');
    setTimeout(() => res.end('"items":[]}'), BODY_AFTER_MS).unref();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const kube = createHttpsKube({ server: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}` });
    const listed = await kube.list('v1', 'Pod', 'ns');
    assert.deepEqual(listed.items, []);
    const told = kube.serverNow()?.getTime();
    assert.ok(told !== undefined, 'the Date header was seen');
    // Taken as of the body's end, the header's time was BODY_AFTER_MS (and up to a second
    // more) behind: a clock that reads 2.5-3.5 s behind the server's, which review95's rule
    // then follows as a step back. Of the headers' arrival, it is behind by the header's
    // rounding (under a second) and the time to hand the headers on.
    const behind = Date.now() - told;
    assert.ok(behind < BODY_AFTER_MS - 500, `the server's time read after the LIST is ${behind} ms behind this clock, the server's own`);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
