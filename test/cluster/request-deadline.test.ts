// A request's deadline, as kube-apiserver sets it from `?timeout=` (request_deadline.go) and
// answers it (timeout.go): a request a fault holds past it is answered 504 and not carried
// out; one without a deadline is carried out when released, whenever that is.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEADLINE_EXCEEDED_BODY, parseGoDuration, requestDeadlineMs } from '../../functions/cluster/request-deadline.ts';
import { eventually, harness, pod } from './support.ts';

const PATCH_HEADERS = { 'content-type': 'application/merge-patch+json' };
const label = (value: string): string => JSON.stringify({ metadata: { labels: { a: value } } });

/** A hold the test releases, and the fault that holds the next PATCH with it. */
function heldPatch(server: Awaited<ReturnType<typeof harness>>['server']): { release: () => void; hits: () => number } {
  let release = (): void => undefined;
  const fault = server.faults.add({ method: 'PATCH', hold: new Promise<void>((r) => (release = r)), label: 'held' });
  return { release, hits: () => fault.hits };
}

const labels = (server: Awaited<ReturnType<typeof harness>>['server']): unknown => server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web' })?.metadata.labels;

describe('a request\'s deadline (?timeout=), as kube-apiserver', () => {
  test('held past it: answered 504 at the deadline with the timeout filter\'s Status, and never carried out, even once released', async () => {
    const { server } = await harness({ objects: [pod('web')] });
    const held = heldPatch(server);
    const res = await fetch(`${server.url}/api/v1/namespaces/default/pods/web?timeout=100ms`, { method: 'PATCH', headers: PATCH_HEADERS, body: label('late') });
    // Answered while the hold still holds it.
    assert.equal(res.status, 504);
    assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8');
    assert.equal(await res.text(), DEADLINE_EXCEEDED_BODY);
    assert.deepEqual(JSON.parse(DEADLINE_EXCEEDED_BODY), { metadata: {}, status: 'Failure', message: 'Timeout: request did not complete within the allotted timeout', reason: 'Timeout', details: {}, code: 504 });
    held.release();
    // A request after the release is handled after it: the held one had its turn by then.
    await fetch(`${server.url}/api/v1/namespaces/default/pods/web`);
    assert.equal(labels(server), undefined, 'not carried out');
    assert.deepEqual(server.history.writes.filter((w) => w.verb === 'patch'), []);
    assert.equal(server.requests.entries[0]?.status, 504);
    assert.deepEqual(server.faults.fired(), { held: 1, 'held past its ?timeout=: 504, not carried out': 1 });
  });

  test('without ?timeout= (or one released within it) the held write is carried out when released, however late', async () => {
    const { server } = await harness({ objects: [pod('web')] });
    for (const [query, value] of [['', 'none'], ['?timeout=30s', 'within']] as const) {
      const held = heldPatch(server);
      const res = fetch(`${server.url}/api/v1/namespaces/default/pods/web${query}`, { method: 'PATCH', headers: PATCH_HEADERS, body: label(value) });
      await eventually(() => held.hits() > 0, 'the PATCH is held');
      assert.notDeepEqual(labels(server), { a: value });
      held.release();
      assert.equal((await res).status, 200);
      assert.deepEqual(labels(server), { a: value });
    }
  });

  test('a deadline passes by the server\'s clock too: a world that moves its clock moves the deadline', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const { server } = await harness({ objects: [pod('web')], clock: () => new Date(now) });
    const held = heldPatch(server);
    const res = fetch(`${server.url}/api/v1/namespaces/default/pods/web?timeout=30s`, { method: 'PATCH', headers: PATCH_HEADERS, body: label('late') });
    await eventually(() => held.hits() > 0, 'the PATCH is held');
    now += 30_000;
    held.release();
    assert.equal((await res).status, 504);
    assert.equal(labels(server), undefined);
  });

  test('an invalid timeout is a 400 before anything else (authentication included); a watch does not read it', async () => {
    const { server } = await harness({ objects: [pod('web')], authorization: { users: {}, rbac: [] } });
    for (const [value, why] of [
      ['abc', 'time: invalid duration "abc"'],
      ['5', 'time: missing unit in duration "5"'],
      ['5x', 'time: unknown unit "x" in duration "5x"'],
    ] as const) {
      const res = await fetch(`${server.url}/api/v1/namespaces/default/pods/web?timeout=${value}`, { method: 'PATCH', headers: PATCH_HEADERS, body: label('x') });
      assert.equal(res.status, 400);
      assert.deepEqual(await res.json(), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `invalid timeout specified in the request URL - ${why}`, reason: 'BadRequest', code: 400 });
    }
    const ctl = new AbortController();
    const watch = await fetch(`${server.url}/api/v1/pods?watch=true&timeout=abc`, { signal: ctl.signal });
    assert.equal(watch.status, 403, 'a watch goes on to authorization (no token: system:anonymous, refused)');
    ctl.abort();
  });

  test('Go\'s time.ParseDuration, and which values give the fake a deadline', () => {
    for (const [s, ms] of [['3500ms', 3500], ['1.5s', 1500], ['1h2m3s', 3_723_000], ['-1s', -1000], ['+5ms', 5], ['0', 0], ['.5s', 500], ['5.s', 5000], ['1500us', 1.5], ['1000µs', 1], ['1000μs', 1], ['2000000ns', 2]] as const) {
      assert.equal(parseGoDuration(s), ms, s);
    }
    for (const [s, err] of [
      ['', 'time: invalid duration ""'],
      ['.s', 'time: invalid duration ".s"'],
      ['-', 'time: invalid duration "-"'],
      ['1e3s', 'time: unknown unit "e" in duration "1e3s"'],
      ['3 s', 'time: unknown unit " s" in duration "3 s"'],
      ['9999999999h', 'time: invalid duration "9999999999h"'],
      ['1é', 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"'],
    ] as const) {
      assert.equal(parseGoDuration(s), err, s);
    }
    // At or past kube-apiserver's 60 s maximum, or 0 and less, the server's own timeout
    // applies, which the fake does not keep.
    assert.deepEqual(['59s', '60s', '0s', '-1s', ''].map((t) => requestDeadlineMs(t, false)), [59_000, undefined, undefined, undefined, undefined]);
    assert.equal(requestDeadlineMs(null, false), undefined);
    assert.equal(requestDeadlineMs('abc', true), undefined);
  });
});
