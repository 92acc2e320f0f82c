// The Worker's optional secret path segment (review79 #3), in-process: the module Worker's
// fetch with and without EPHEMERA_WEBHOOK_TOKEN in its env. test/webhook/workerd.test.ts runs
// the same in the real Workers runtime.
import assert from 'node:assert/strict';
import { describe, mock, test } from 'node:test';
import worker from '../../functions/runtime/workers/worker.ts';
import type { WorkerEnv } from '../../functions/runtime/workers/worker.ts';
import { createPathTokenGate, PATH_TOKEN_PATTERN, parsePathTokens } from '../../functions/webhook/path-token.ts';
import { runContract } from './contract.case.ts';
import type { Send } from './contract.case.ts';
import { admissionReview, PATH } from './support.ts';

// The Worker logs each decision and bad request to console: not into the test output.
mock.method(console, 'log', () => {});
mock.method(console, 'warn', () => {});

const TOKEN = 'c0ffee00c0ffee00c0ffee00c0ffee00';
const viaWorker = (env: WorkerEnv, prefix = ''): Send => (path, init) => worker.fetch(new Request(`https://ephemera-webhook.example.workers.dev${prefix}${path}`, init), env);
const review = (): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(admissionReview({ uid: 'u1' })) });

/** A bare 404 that says nothing about which paths exist. */
async function assertBare404(res: Response, what: string): Promise<void> {
  assert.equal(res.status, 404, what);
  const text = await res.text();
  assert.deepEqual(JSON.parse(text), { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound', message: 'not found' }, what);
  assert.doesNotMatch(text, /validate|healthz|token/i, what);
}

// Without the secret nothing changes: the whole contract, unknown paths named as before.
runContract('Worker without EPHEMERA_WEBHOOK_TOKEN (in-process)', () => viaWorker({}));
// With it, the same contract through /<token>/…, and other paths get a bare 404.
runContract('Worker behind EPHEMERA_WEBHOOK_TOKEN (in-process)', () => viaWorker({ EPHEMERA_WEBHOOK_TOKEN: TOKEN }, `/${TOKEN}`), /^not found$/);

describe('EPHEMERA_WEBHOOK_TOKEN: only /<token>/… is served', () => {
  const withToken = viaWorker({ EPHEMERA_WEBHOOK_TOKEN: TOKEN });

  test('the webhook and /healthz without the token, a wrong token or a near miss are a bare 404', async () => {
    const near = `${TOKEN.slice(0, -1)}1`;
    for (const path of [PATH, `/${near}${PATH}`, `/${TOKEN.toUpperCase()}${PATH}`, `/${TOKEN}x${PATH}`, `/${TOKEN.slice(1)}${PATH}`, `/${TOKEN}/${TOKEN}${PATH}`, `/${TOKEN}${PATH}/`, `/x/${TOKEN}${PATH}`]) {
      await assertBare404(await withToken(path, review()), path);
    }
    for (const path of ['/healthz', `/${near}/healthz`, `/${TOKEN}`, `/${TOKEN}/`, '/', '/favicon.ico', `/${TOKEN}/validate`]) {
      await assertBare404(await withToken(path), path);
    }
    // percent-encoding a character of the token does not get in either
    await assertBare404(await withToken(`/%63${TOKEN.slice(1)}${PATH}`, review()), 'encoded');
  });

  test('behind the token: a review with the API server\'s ?timeout, /healthz, and the 405 for another method', async () => {
    const res = await withToken(`/${TOKEN}${PATH}?timeout=5s`, review());
    assert.equal(res.status, 200);
    assert.deepEqual(((await res.json()) as { response: unknown }).response, { uid: 'u1', allowed: true });
    const health = await withToken(`/${TOKEN}/healthz`);
    assert.equal(health.status, 200);
    assert.equal(await health.text(), 'ok');
    const get = await withToken(`/${TOKEN}${PATH}`);
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');
  });

  test('an empty secret counts as unset: served as without one', async () => {
    const res = await viaWorker({ EPHEMERA_WEBHOOK_TOKEN: '' })(PATH, review());
    assert.equal(res.status, 200);
  });

  test('a token that is too short or not path-safe refuses every request with a 500 and logs why, rather than serving openly', async () => {
    const failed: unknown[] = [];
    const gate = createPathTokenGate(() => new Response('served'), { failed: (e) => failed.push(e) });
    for (const bad of ['short', 'has/a/slash-0123456789', 'has space 0123456789', 'percent%20encoded-0123', 'ü'.repeat(20), 'x'.repeat(257)]) {
      assert.doesNotMatch(bad, PATH_TOKEN_PATTERN);
      const res = await gate(new Request(`https://w/${bad}${PATH}`, review()), bad);
      assert.equal(res.status, 500, bad);
      assert.equal(((await res.json()) as { message: string }).message, 'internal error');
    }
    assert.equal(failed.length, 6);
    assert.match(String(failed[0]), /EPHEMERA_WEBHOOK_TOKEN must be a token of 16 to 256 letters, digits/);
    assert.match('0123456789abcdef', PATH_TOKEN_PATTERN);
    assert.match('A-Za-z0.9_~-xyzw', PATH_TOKEN_PATTERN);
  });

  test('while rotating, NEW,OLD serves both tokens and nothing else; then NEW alone refuses the old one', async () => {
    const next = 'feedface0feedface0feedface0feed';
    const rotating = viaWorker({ EPHEMERA_WEBHOOK_TOKEN: `${next},${TOKEN}` });
    for (const t of [TOKEN, next]) {
      assert.equal((await rotating(`/${t}${PATH}`, review())).status, 200, t);
      assert.equal((await rotating(`/${t}/healthz`)).status, 200, t);
    }
    for (const path of [PATH, `/${next},${TOKEN}${PATH}`, `/${TOKEN}${next}${PATH}`, `/${next.slice(1)}${PATH}`]) {
      await assertBare404(await rotating(path, review()), path);
    }
    const rotated = viaWorker({ EPHEMERA_WEBHOOK_TOKEN: next });
    assert.equal((await rotated(`/${next}${PATH}`, review())).status, 200);
    await assertBare404(await rotated(`/${TOKEN}${PATH}`, review()), 'the old token after the rotation');
  });

  test('more than two tokens, or an empty or malformed one beside a good one, refuses every request with a 500', async () => {
    const failed: unknown[] = [];
    const gate = createPathTokenGate(() => new Response('served'), { failed: (e) => failed.push(e) });
    const other = 'feedface0feedface0feedface0feed';
    for (const bad of [`${TOKEN},${other},${TOKEN}x`, `${TOKEN},`, `,${TOKEN}`, `${TOKEN}, ${other}`, `${TOKEN},short`]) {
      assert.equal(parsePathTokens(bad), undefined, bad);
      const res = await gate(new Request(`https://w/${TOKEN}${PATH}`, review()), bad);
      assert.equal(res.status, 500, bad);
    }
    assert.equal(failed.length, 5);
    assert.match(String(failed[0]), /or two joined by a comma while rotating/);
    assert.deepEqual(parsePathTokens(`${TOKEN},${other}`), [TOKEN, other]);
  });

  test('the inner app sees the path without the token, method, headers and body unchanged', async () => {
    let seen: Request | undefined;
    let body = '';
    const gate = createPathTokenGate(async (r) => {
      seen = r;
      body = await r.text();
      return new Response('ok');
    });
    const res = await gate(new Request(`https://w/${TOKEN}${PATH}?timeout=5s`, { ...review(), headers: { 'content-type': 'application/json', 'x-extra': '1' } }), TOKEN);
    assert.equal(res.status, 200);
    assert.equal(new URL(seen!.url).pathname + new URL(seen!.url).search, `${PATH}?timeout=5s`);
    assert.equal(seen!.method, 'POST');
    assert.equal(seen!.headers.get('x-extra'), '1');
    assert.equal(JSON.parse(body).request.uid, 'u1');
  });
});
