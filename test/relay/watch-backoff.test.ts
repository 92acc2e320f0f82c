// Watch restarts back off (client-go's reflector): only events that move the watch on
// (ADDED, MODIFIED, DELETED, BOOKMARK), or a quiet second, make a close routine; a watch
// closed at once with nothing in it, or ended by an ERROR event, is a failure, and each one
// in a row waits longer. The
// watches are answered over real HTTP by a scripted server (the embedded API server never
// sends a watch ERROR other than 410); the backoff has no jitter, so each wait is exact.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { silentLogger } from '../../functions/engine/logger.ts';
import { listRaw } from '../../relay/raw-list.ts';
import { Reflector } from '../../relay/reflector.ts';
import { decodePod } from '../../relay/trim.ts';
import type { Pod } from '../../functions/api/pod.ts';

/** How the server answers one watch request. */
type Answer = 'empty' | 'added' | 'bookmark' | 'error500' | 'quiet';

const podObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'd', uid: 'u', resourceVersion: '7' }, spec: { containers: [{ name: 'c' }] }, status: { phase: 'Running' } };
const lines: Record<Answer, string[]> = {
  empty: [],
  added: [JSON.stringify({ type: 'ADDED', object: podObject })],
  bookmark: [JSON.stringify({ type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '8' } } })],
  error500: [JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'etcdserver: leader changed', code: 500 } })],
  quiet: [],
};

let script: Answer[] = [];
let watches = 0;
/** When each watch request arrived (ms, monotonic). */
let arrivals: number[] = [];
let lastWatch: (() => void) | undefined;
const open = new Set<http.ServerResponse>();
const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  res.writeHead(200, { 'content-type': 'application/json' });
  if (url.searchParams.get('watch') !== 'true') return void res.end(JSON.stringify({ kind: 'PodList', metadata: { resourceVersion: '1' }, items: [] }));
  arrivals.push(performance.now());
  const answer = script[watches++];
  // Past the script: the watch stays open (until the test stops the reflector).
  if (answer === undefined) {
    open.add(res);
    return void lastWatch?.();
  }
  // A quiet watch runs its time (here 1.2 s) and closes with nothing in it.
  if (answer === 'quiet') return void setTimeout(() => res.end(), 1200);
  res.end(lines[answer].map((l) => `${l}\n`).join(''));
});
const kc = new KubeConfig();

before(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  kc.loadFromOptions({ clusters: [{ name: 'c', server: url, skipTLSVerify: true }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
});
after(() => new Promise<void>((r) => server.close(() => r())));

/**
 * Play `answers` to one reflector's watches: the restarts it reported, as [reason, wait ms],
 * and the pause before each watch that followed a reported restart (ms; a timer does not fire
 * early, so a pause is at least the wait whatever the machine's load, give or take the event
 * loop's millisecond clock).
 */
async function play(answers: Answer[]): Promise<{ restarts: [string, number][]; watches: number; pauses: number[] }> {
  script = answers;
  watches = 0;
  arrivals = [];
  const restartedAt: number[] = [];
  const restarts: [string, number][] = [];
  const reachedEnd = new Promise<void>((r) => (lastWatch = r));
  const r = new Reflector<Pod>({
    kind: 'Pod', path: '/api/v1/pods', kubeConfig: kc, logger: silentLogger,
    listPage: (cont, signal) => listRaw(kc, '/api/v1/pods', { limit: 500, continue: cont, timeoutMs: 5000, signal }),
    decode: decodePod,
    fromFingerprint: (fp) => JSON.parse(fp) as Pod,
    uid: (p) => p.metadata.uid,
    onEvent: () => undefined,
    onRestart: (reason, waitMs) => {
      restarts.push([reason, waitMs]);
      restartedAt.push(watches);
    },
    // 10 ms · 2^failures, no jitter: the n-th failure in a row waits 10·2^n ms.
    backoff: { minMs: 10, maxMs: 60_000, random: () => 1 },
  });
  r.start();
  await reachedEnd;
  await r.stop();
  for (const res of open) res.end();
  open.clear();
  // Restart i ended watch restartedAt[i]; the pause is from that watch's arrival to the next's.
  return { restarts, watches, pauses: restartedAt.map((n) => (arrivals[n] ?? NaN) - (arrivals[n - 1] ?? NaN)) };
}

/** The loop really waited what it reported before the next watch (the request's own time only adds; 2 ms: the loop clock's rounding). */
function assertPaused(got: { restarts: [string, number][]; pauses: number[] }): void {
  got.restarts.forEach(([, ms], i) => assert.ok((got.pauses[i] ?? 0) >= ms - 2, `watch after restart ${i + 1}: ${got.pauses[i]?.toFixed(1)} ms, not the ${ms} ms reported`));
}

describe('watch restarts back off', () => {
  test('a watch closed with no event is a failure: each one in a row waits twice as long', { timeout: 10_000 }, async () => {
    const got = await play(['empty', 'empty', 'empty', 'empty', 'empty']);
    assert.deepEqual(got.restarts.map(([, ms]) => ms), [20, 40, 80, 160, 320]);
    assert.ok(got.restarts.every(([reason]) => /closed at once, without an event/.test(reason)), JSON.stringify(got.restarts));
    assert.equal(got.watches, 6, 'one watch per reported restart, and the one left open');
    assertPaused(got);
  });

  test('a watch ERROR event other than 410 is an error, reported with its message, not progress', { timeout: 10_000 }, async () => {
    const got = await play(['error500', 'error500', 'error500']);
    assert.deepEqual(got.restarts, [
      ['watch ERROR 500: etcdserver: leader changed', 20],
      ['watch ERROR 500: etcdserver: leader changed', 40],
      ['watch ERROR 500: etcdserver: leader changed', 80],
    ]);
    assertPaused(got);
    assert.equal(got.watches, 4);
  });

  test('a quiet watch that ran a while and closed empty is routine (client-go: only a watch shorter than a second is "very short")', { timeout: 10_000 }, async () => {
    const got = await play(['empty', 'empty', 'quiet', 'empty']);
    assert.deepEqual(got.restarts.map(([, ms]) => ms), [20, 40, /* quiet */ 20]);
    assert.equal(got.watches, 5);
  });

  test('a close after an object event or a bookmark is routine: not reported, and the next failure starts over', { timeout: 10_000 }, async () => {
    const got = await play(['empty', 'error500', 'added', 'empty', 'empty', 'bookmark', 'error500']);
    assert.deepEqual(got.restarts.map(([, ms]) => ms), [20, 40, /* added */ 20, 40, /* bookmark */ 20]);
    assertPaused(got);
    assert.equal(got.watches, 8);
  });
});
