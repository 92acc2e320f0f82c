// The watch stream is cut into lines from its bytes (relay/raw-list.ts). Property: however
// the server's writes split the body (inside a line, inside a multi-byte character), the
// relay sees exactly the events of the lines, in order, and each line that is not JSON once.
import fc from 'fast-check';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { watchRaw } from '../../relay/raw-list.ts';
import { objectKeys } from '../support/json-key-bug.ts';

let body: Buffer[] = [];
const server = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  const parts = body;
  const write = (i: number): void => {
    if (i === parts.length) return void res.end();
    // One write per part, each flushed on its own, so the client gets the parts as chunks.
    res.write(parts[i], () => setImmediate(() => write(i + 1)));
  };
  write(0);
});
const kc = new KubeConfig();

before(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const server_ = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  kc.loadFromOptions({ clusters: [{ name: 'c', server: server_, skipTLSVerify: true }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
});
after(() => new Promise<void>((r) => server.close(() => r())));

function watchOnce(): Promise<{ events: unknown[]; errors: number }> {
  return new Promise((resolve, reject) => {
    const events: unknown[] = [];
    let errors = 0;
    watchRaw(kc, '/api/v1/pods', {}, {
      idleMs: 5000,
      onEvent: (type, object) => events.push({ type, object }),
      onLineError: () => errors++,
      done: (err) => (err ? reject(err) : resolve({ events, errors })),
    });
  });
}

const event = fc.record({ type: fc.constantFrom('ADDED', 'MODIFIED', 'DELETED'), object: fc.record({ metadata: fc.record({ name: fc.string({ unit: 'grapheme', maxLength: 8 }), labels: fc.dictionary(objectKeys(fc.string({ maxLength: 3 })), fc.string({ unit: 'grapheme', maxLength: 4 }), { maxKeys: 2 }) }) }) });
const line = fc.oneof({ arbitrary: event.map((e) => ({ text: JSON.stringify(e), event: JSON.parse(JSON.stringify(e)) as unknown })), weight: 6 }, { arbitrary: fc.constant({ text: '{"type":"MODIFIED","obj', event: undefined }), weight: 1 }, { arbitrary: fc.constant({ text: '  ', event: undefined }), weight: 1 });

test('events are read whole however the stream is cut, bad lines are reported once each', async () => {
  await fc.assert(fc.asyncProperty(fc.array(line, { minLength: 1, maxLength: 6 }), fc.array(fc.nat(), { maxLength: 8 }), async (lines, cuts) => {
    const bytes = Buffer.from(lines.map((l) => `${l.text}\n`).join(''), 'utf8');
    const at = [...new Set(cuts.map((c) => c % bytes.length))].sort((a, b) => a - b);
    body = [0, ...at].map((from, i) => bytes.subarray(from, at[i] ?? bytes.length)).filter((b) => b.length > 0);
    const got = await watchOnce();
    assert.deepStrictEqual(got.events, lines.flatMap((l) => (l.event ? [l.event] : [])));
    assert.equal(got.errors, lines.filter((l) => !l.event && l.text.trim() !== '').length);
  }), { numRuns: 60 });
});
