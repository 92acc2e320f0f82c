// Watch restarts back off (client-go's reflector): only events that move the watch on
// (ADDED, MODIFIED, DELETED, BOOKMARK), or a quiet second, make a close routine; a watch
// closed at once with nothing in it, or ended by an ERROR event, is a failure, and each one
// in a row waits longer. A watch answered 404 or 403 (a deleted CRD, a revoked right) goes
// back to the list, which tells what happened as it does at start. The lists and
// watches are answered over real HTTP by a scripted server (the embedded API server never
// sends a watch ERROR other than 410); the backoff has no jitter, so each wait is exact.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { silentLogger } from '../../functions/engine/logger.ts';
import { listRaw } from '../../relay/raw-list.ts';
import { Reflector, type Absent } from '../../relay/reflector.ts';
import { decodePod } from '../../relay/trim.ts';
import type { Pod } from '../../functions/api/pod.ts';

/** How the server answers one watch request. */
type Answer = 'empty' | 'added' | 'bookmark' | 'error500' | 'quiet' | 'http404' | 'http403' | 'addedThenBroken' | 'addedThenError' | 'gone410' | 'apf429' | 'cache429' | 'error429';
/** How the server answers one list request (past its script: 'empty'). */
type ListAnswer = 'empty' | 'pod' | 'http404' | 'http403' | 'http500' | 'apf429';

const podObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'd', uid: 'u', resourceVersion: '7' }, spec: { containers: [{ name: 'c' }] }, status: { phase: 'Running' } };
const lines: Record<Answer, string[]> = {
  empty: [],
  added: [JSON.stringify({ type: 'ADDED', object: podObject })],
  bookmark: [JSON.stringify({ type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '8' } } })],
  error500: [JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'etcdserver: leader changed', code: 500 } })],
  quiet: [],
  http404: [],
  http403: [],
  addedThenBroken: [],
  addedThenError: [JSON.stringify({ type: 'ADDED', object: podObject }), JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'etcdserver: leader changed', code: 500 } })],
  gone410: [JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'too old resource version', code: 410 } })],
  apf429: [],
  cache429: [],
  error429: [JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'storage is (re)initializing', reason: 'TooManyRequests', details: { retryAfterSeconds: 1 }, code: 429 } })],
};
/** An error status as the API server answers it (metav1.Status). */
const statuses: Record<string, [number, string]> = {
  http404: [404, 'the server could not find the requested resource'],
  http403: [403, 'pods is forbidden: User "u" cannot watch resource "pods"'],
  http500: [500, 'etcdserver: request timed out'],
};

let script: Answer[] = [];
let listScript: ListAnswer[] = [];
let watches = 0;
/** Every request in order: 'list <answer>' or 'watch <answer>'. */
let requests: string[] = [];
/** When each watch request arrived (ms, monotonic). */
let arrivals: number[] = [];
/** When each list request arrived (ms, monotonic). */
let listArrivals: number[] = [];
let lastWatch: (() => void) | undefined;
const open = new Set<http.ServerResponse>();
const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  if (url.searchParams.get('watch') !== 'true') return answerList(res, listScript[requests.filter((r) => r.startsWith('list')).length] ?? 'empty');
  arrivals.push(performance.now());
  const answer = script[watches++];
  requests.push(`watch ${answer ?? 'open'}`);
  if (answer && answer in statuses) return answerStatus(res, answer);
  if (answer === 'apf429') return answerApf(res);
  // The watch cache while it (re)initialises (1.31+): errors.NewTooManyRequests, its wait in the header and the Status.
  if (answer === 'cache429') {
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
    return void res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'storage is (re)initializing', reason: 'TooManyRequests', details: { retryAfterSeconds: 1 }, code: 429 }));
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  // Past the script: the watch stays open (until the test stops the reflector).
  if (answer === undefined) {
    open.add(res);
    return void lastWatch?.();
  }
  // A quiet watch runs its time (here 1.2 s) and closes with nothing in it.
  if (answer === 'quiet') return void setTimeout(() => res.end(), 1200);
  // A watch that brings an event and, over a second later, loses its connection (a proxy or NAT reset).
  if (answer === 'addedThenBroken') {
    res.write(`${lines.added[0]}\n`);
    return void setTimeout(() => res.socket?.destroy(), 1100);
  }
  res.end(lines[answer].map((l) => `${l}\n`).join(''));
});
const kc = new KubeConfig();

function answerList(res: http.ServerResponse, answer: ListAnswer): void {
  requests.push(`list ${answer}`);
  listArrivals.push(performance.now());
  if (answer in statuses) return answerStatus(res, answer);
  if (answer === 'apf429') return answerApf(res);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ kind: 'PodList', metadata: { resourceVersion: '1' }, items: answer === 'pod' ? [podObject] : [] }));
}

/** API Priority and Fairness sheds a request: 429, a plain-text body, the wait only in Retry-After (priority-and-fairness.go tooManyRequests). */
function answerApf(res: http.ServerResponse): void {
  res.writeHead(429, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff', 'retry-after': '1' });
  res.end('Too many requests, please try again later.\n');
}

function answerStatus(res: http.ServerResponse, answer: string): void {
  const [code, message] = statuses[answer] ?? [500, '?'];
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message, code }));
}

before(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  kc.loadFromOptions({ clusters: [{ name: 'c', server: url, skipTLSVerify: true }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
});
after(() => new Promise<void>((r) => server.close(() => r())));

/** What one reflector did against the script. */
interface Played {
  restarts: [string, number][];
  watches: number;
  pauses: number[];
  requests: string[];
  /** Its events, as "TYPE key". */
  events: string[];
  /** What it reported through `absent.onChange` (the relay's gauge and log line), as the status or 'present'. */
  absent: (number | 'present')[];
}

/**
 * Play `answers` to one reflector's watches (and `lists` to its lists): the restarts it
 * reported, as [reason, wait ms], and the pause before each watch that followed a reported
 * restart (ms; a timer does not fire early, so a pause is at least the wait whatever the
 * machine's load, give or take the event loop's millisecond clock). The reflector treats 404
 * and 403 lists as "absent", as the relay's EphemeralJob reflectors do.
 */
async function play(answers: Answer[], lists: ListAnswer[] = []): Promise<Played> {
  script = answers;
  listScript = lists;
  watches = 0;
  requests = [];
  arrivals = [];
  listArrivals = [];
  const events: string[] = [];
  const absent: (number | 'present')[] = [];
  const restartedAt: number[] = [];
  const restarts: [string, number][] = [];
  const reachedEnd = new Promise<void>((r) => (lastWatch = r));
  const r = new Reflector<Pod>({
    kind: 'Pod', path: '/api/v1/pods', kubeConfig: kc, logger: silentLogger,
    listPage: (cont, signal, map) => listRaw(kc, '/api/v1/pods', { limit: 500, continue: cont, timeoutMs: 5000, signal, map }),
    decode: decodePod,
    fromFingerprint: (fp) => JSON.parse(fp) as Pod,
    uid: (p) => p.metadata.uid,
    onEvent: (type, d) => void events.push(`${type} ${d.key}`),
    absent: { statuses: [403, 404], retryMs: 10, onChange: (a: Absent | undefined) => void absent.push(a?.status ?? 'present') },
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
  return { restarts, watches, pauses: restartedAt.map((n) => (arrivals[n] ?? NaN) - (arrivals[n - 1] ?? NaN)), requests, events, absent };
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

describe('a watch answered 404 or 403 lists again', () => {
  for (const [answer, status, why] of [['http404', 404, 'the CRD deleted'], ['http403', 403, 'the right revoked']] as const) {
    test(`${status} on the watch (${why}): the list that follows reports the resource absent, as at start, and the cache empties`, { timeout: 10_000 }, async () => {
      const got = await play([answer], ['pod', answer, 'pod']);
      assert.deepEqual(got.requests, ['list pod', `watch ${answer}`, `list ${answer}`, 'list pod', 'watch open'], 'back to the list, not the watch');
      assert.deepEqual(got.absent, [status, 'present'], 'absent while the list said so, present again once it lists');
      assert.deepEqual(got.events, ['RESYNC d/p', 'DELETED d/p', 'RESYNC d/p'], 'an absent resource has no objects');
      assert.equal(got.restarts.length, 1);
      assert.match(got.restarts[0]?.[0] ?? '', new RegExp(`HTTP ${status}`));
      assert.equal(got.restarts[0]?.[1], 20, 'the usual backoff before the list');
      assertPaused(got);
    });
  }

  test('after lists that failed, a list that works starts the count over: the next watch failure waits the first step, not the eighth (review)', { timeout: 10_000 }, async () => {
    const got = await play(['error500'], ['http500', 'http500', 'http500', 'http500', 'http500', 'http500', 'empty']);
    assert.deepEqual(got.requests.slice(-3), ['list empty', 'watch error500', 'watch open']);
    assert.deepEqual(got.restarts.map(([, ms]) => ms), [20]);
    assertPaused(got);
  });

  test('a watch that brought events for a while and then lost its connection moved on: each such end waits the first step (review: they added up to 30 s)', { timeout: 15_000 }, async () => {
    const got = await play(['addedThenBroken', 'addedThenBroken', 'addedThenBroken']);
    assert.deepEqual(got.restarts.map(([, ms]) => ms), [20, 20, 20]);
    assertPaused(got);
  });

  test('but a watch that errs right after an event, every time, waits longer each time (review)', { timeout: 10_000 }, async () => {
    const got = await play(['addedThenError', 'addedThenError', 'addedThenError', 'addedThenError']);
    assert.deepEqual(got.restarts.map(([, ms]) => ms), [20, 40, 80, 160]);
    assertPaused(got);
  });

  test('a 410 right after every list: each list and watch waits longer, no LIST every few hundred ms (review)', { timeout: 10_000 }, async () => {
    const got = await play(['gone410', 'gone410', 'gone410', 'gone410']);
    assert.deepEqual(got.requests, ['list empty', 'watch gone410', 'list empty', 'watch gone410', 'list empty', 'watch gone410', 'list empty', 'watch gone410', 'list empty', 'watch open']);
    assert.deepEqual(got.restarts.map(([, ms]) => ms), [20, 40, 80, 160]);
    assertPaused(got);
  });

  test('a refused watch, then an outage of failed lists, then a list that works: the outage is over, the count starts over (review)', { timeout: 10_000 }, async () => {
    const got = await play(['http403', 'error500'], ['empty', 'http500', 'http500', 'http500', 'http500', 'http500', 'empty']);
    assert.deepEqual(got.restarts.map(([, ms]) => ms), [20, 20]);
  });

  test('a watch refused again and again beside a list that works: each list and watch waits longer (no LIST every few hundred ms)', { timeout: 10_000 }, async () => {
    const got = await play(['http403', 'http403', 'http403']);
    assert.deepEqual(got.requests, ['list empty', 'watch http403', 'list empty', 'watch http403', 'list empty', 'watch http403', 'list empty', 'watch open']);
    assert.deepEqual(got.restarts.map(([, ms]) => ms), [20, 40, 80], 'a list after a refused watch does not start the count over');
    assert.deepEqual(got.absent, [], 'the list works: nothing is absent');
    assertPaused(got);
  });
});

describe('the server\'s Retry-After', () => {
  for (const [answer, form] of [['apf429', 'API Priority and Fairness: plain text, the header only'], ['cache429', 'the watch cache initialising: a Status and the header'], ['error429', 'an ERROR event whose Status asks for it']] as const) {
    test(`a watch refused with 429 (${form}) waits the second asked, not the backoff`, { timeout: 10_000 }, async () => {
      const got = await play([answer, 'error500']);
      assert.deepEqual(got.restarts.map(([, ms]) => ms), [1000, 40], 'the wait asked for, then the backoff goes on counting');
      assertPaused(got);
    });
  }

  test('a list refused with 429 is sent again after the Retry-After, once, not every backoff step meanwhile', { timeout: 10_000 }, async () => {
    const got = await play([], ['apf429', 'pod']);
    assert.deepEqual(got.requests, ['list apf429', 'list pod', 'watch open']);
    const pause = (listArrivals[1] ?? NaN) - (listArrivals[0] ?? NaN);
    assert.ok(pause >= 998, `the second list came ${pause.toFixed(1)} ms after the first, not after the 1 s asked`);
  });
});
