// The watch stream is cut into lines from its bytes (relay/raw-list.ts). Property: however
// the server's writes split the body (inside a line, inside a multi-byte character), the
// relay sees exactly the events of the lines, in order, up to the first line that is not JSON:
// that one is reported once and ends the watch, nothing after it is applied (its event would be
// lost for good if the next one's resourceVersion were taken).
import fc from 'fast-check';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { listRaw, MAX_WATCH_LINE_BYTES, UnreadableWatchLine, watchRaw } from '../../relay/raw-list.ts';
import { Reflector } from '../../relay/reflector.ts';
import { decodePod } from '../../relay/trim.ts';
import type { Pod } from '../../functions/api/pod.ts';
import { silentLogger } from '../../functions/engine/logger.ts';
import { eventually, FAST_BACKOFF } from '../support/relay-world.ts';
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

function watchOnce(): Promise<{ events: unknown[]; errors: number; ended: Error | null }> {
  return new Promise((resolve) => {
    const events: unknown[] = [];
    let errors = 0;
    watchRaw(kc, '/api/v1/pods', {}, {
      idleMs: 5000,
      onEvent: (type, object) => events.push({ type, object }),
      onLineError: () => errors++,
      done: (ended) => resolve({ events, errors, ended }),
    });
  });
}

const event = fc.record({ type: fc.constantFrom('ADDED', 'MODIFIED', 'DELETED'), object: fc.record({ metadata: fc.record({ name: fc.string({ unit: 'grapheme', maxLength: 8 }), labels: fc.dictionary(objectKeys(fc.string({ maxLength: 3 })), fc.string({ unit: 'grapheme', maxLength: 4 }), { maxKeys: 2 }) }) }) });
const line = fc.oneof({ arbitrary: event.map((e) => ({ text: JSON.stringify(e), event: JSON.parse(JSON.stringify(e)) as unknown })), weight: 6 }, { arbitrary: fc.constant({ text: '{"type":"MODIFIED","obj', event: undefined }), weight: 1 }, { arbitrary: fc.constant({ text: '  ', event: undefined }), weight: 1 }, { arbitrary: fc.constant({ text: '{"object":{}}', event: undefined }), weight: 1 });

test('events are read whole however the stream is cut; the first bad line is reported once and ends the watch', async () => {
  await fc.assert(fc.asyncProperty(fc.array(line, { minLength: 1, maxLength: 6 }), fc.array(fc.nat(), { maxLength: 8 }), async (lines, cuts) => {
    const bytes = Buffer.from(lines.map((l) => `${l.text}\n`).join(''), 'utf8');
    const at = [...new Set(cuts.map((c) => c % bytes.length))].sort((a, b) => a - b);
    body = [0, ...at].map((from, i) => bytes.subarray(from, at[i] ?? bytes.length)).filter((b) => b.length > 0);
    const got = await watchOnce();
    const bad = lines.findIndex((l) => !l.event && l.text.trim() !== '');
    const read = bad < 0 ? lines : lines.slice(0, bad);
    assert.deepStrictEqual(got.events, read.flatMap((l) => (l.event ? [l.event] : [])));
    assert.equal(got.errors, bad < 0 ? 0 : 1);
    if (bad < 0) assert.equal(got.ended, null);
    else assert.ok(got.ended instanceof UnreadableWatchLine, String(got.ended));
  }), { numRuns: 60 });
});

test('a change on a line that cannot be read is not lost: the watch ends before the next line and the loop lists again', async () => {
  // A LIST at resourceVersion 10 shows a and b running; the watch from 10 brings a's Succeeded
  // (rv 11) cut short, then b's Succeeded (rv 12). Skipping the bad line would resume from 12
  // and keep a Running for good (the SidecarTerminator's replay reads that cache). Review.
  const pod = (name: string, rv: string, phase: string): unknown => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns', uid: `u-${name}`, resourceVersion: rv, creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'x' }] }, status: { phase } });
  const requests: string[] = [];
  let listed = 0;
  const api = http.createServer((req, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams;
    res.writeHead(200, { 'content-type': 'application/json' });
    if (q.get('watch') !== 'true') {
      requests.push('LIST');
      // The second list is after a's change: it shows it, as a consistent LIST does.
      const items = listed++ === 0 ? [pod('a', '9', 'Running'), pod('b', '10', 'Running')] : [pod('a', '11', 'Succeeded'), pod('b', '12', 'Succeeded')];
      return void res.end(JSON.stringify({ kind: 'PodList', metadata: { resourceVersion: listed === 1 ? '10' : '12' }, items }));
    }
    requests.push(`WATCH ${q.get('resourceVersion')}`);
    if (requests.filter((r) => r.startsWith('WATCH')).length > 1) return; // later watches stay quiet
    res.write(`${JSON.stringify({ type: 'MODIFIED', object: pod('a', '11', 'Succeeded') }).slice(0, 60)}\n`);
    res.write(`${JSON.stringify({ type: 'MODIFIED', object: pod('b', '12', 'Succeeded') })}\n`);
  });
  await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
  const kube = new KubeConfig();
  kube.loadFromOptions({ clusters: [{ name: 'c', server: `http://127.0.0.1:${(api.address() as AddressInfo).port}`, skipTLSVerify: true }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
  const seen: string[] = [];
  const unreadable: string[] = [];
  const r = new Reflector<Pod>({
    kind: 'Pod', path: '/api/v1/pods', kubeConfig: kube, logger: silentLogger, backoff: FAST_BACKOFF,
    listPage: (cont, signal, map) => listRaw(kube, '/api/v1/pods', { limit: 500, continue: cont, timeoutMs: 5000, signal, map }),
    decode: decodePod, fromFingerprint: (fp) => JSON.parse(fp) as Pod, uid: (p) => p.metadata.uid,
    onEvent: (type, d, changed) => void (changed && seen.push(`${type} ${d.key} ${d.object.status?.phase}`)),
    onUnreadable: (u) => void unreadable.push(u.error),
  });
  r.start();
  try {
    await eventually(() => assert.ok(seen.includes('RESYNC ns/a Succeeded'), seen.join(', ')));
    assert.deepEqual(requests.slice(0, 3), ['LIST', 'WATCH 10', 'LIST'], 'the bad line sends the loop back to the list');
    assert.deepEqual(seen, ['RESYNC ns/a Running', 'RESYNC ns/b Running', 'RESYNC ns/a Succeeded', 'RESYNC ns/b Succeeded'], 'b\'s line after the bad one was not applied: its change came with the list');
    assert.equal(unreadable.length, 1);
    assert.match(unreadable[0] ?? '', /not JSON/);
    await eventually(() => assert.equal(requests.at(-1), 'WATCH 12'));
  } finally {
    await r.stop();
    api.closeAllConnections();
    await new Promise<void>((done) => api.close(() => done()));
  }
});

test('a line longer than MAX_WATCH_LINE_BYTES, or a stream with no newline, ends the watch as unreadable instead of growing without bound', async () => {
  const start = Buffer.from('{"type":"ADDED","object":{"metadata":{"name":"');
  const filler = Buffer.alloc(1024 * 1024, 'x');
  body = [Buffer.from(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'before' } } })}\n`), start, ...Array.from({ length: MAX_WATCH_LINE_BYTES / filler.length + 1 }, () => filler)];
  const got = await watchOnce();
  assert.deepEqual(got.events, [{ type: 'ADDED', object: { metadata: { name: 'before' } } }], 'the line before it is read');
  assert.equal(got.errors, 1);
  assert.ok(got.ended instanceof UnreadableWatchLine && /longer than/.test(got.ended.message), String(got.ended));
});
