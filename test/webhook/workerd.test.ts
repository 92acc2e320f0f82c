// The contract inside the real Workers runtime: `wrangler dev` (local mode, workerd from
// npm) with infra/cloudflare/wrangler.jsonc. It warns that it cannot reach Cloudflare to
// fetch `request.cf`; that is harmless. A second one runs with the secret
// EPHEMERA_WEBHOOK_TOKEN (from --env-file, which wrangler dev loads as it loads .dev.vars):
// only /<token>/… is served there (review79 #3).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runContract } from './contract.case.ts';
import type { Send } from './contract.case.ts';
import { freePort, start, stop, waitReady } from './processes.ts';
import { admissionReview, PATH } from './support.ts';

const root = new URL('../../', import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), 'ephemera-wrangler-'));
const TOKEN = '5ecret0path0segment0for0workerd';
const servers: ReturnType<typeof start>[] = [];
let base = '';
let gatedBase = '';

/** `wrangler dev` on a free port; resolves with its base URL once `readyPath` answers. */
async function wranglerDev(name: string, readyPath: string, extra: string[] = []): Promise<string> {
  const port = await freePort();
  // Each its own devtools port: two on wrangler's default 9229 clash.
  const inspectorPort = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = start(
    process.execPath,
    [join(root, 'node_modules/.bin/wrangler'), 'dev', '-c', join(root, 'infra/cloudflare/wrangler.jsonc'),
      '--ip', '127.0.0.1', '--port', String(port), '--persist-to', join(scratch, name, 'state'), '--log-level', 'warn',
      '--inspector-port', String(inspectorPort), ...extra],
    { WRANGLER_SEND_METRICS: 'false', WRANGLER_LOG_PATH: join(scratch, name, 'logs'), CI: 'true', NO_COLOR: '1' },
  );
  servers.push(server);
  await waitReady(`${url}${readyPath}`, server.child, server.output);
  return url;
}

before(async () => {
  const envFile = join(scratch, 'token.env');
  writeFileSync(envFile, `EPHEMERA_WEBHOOK_TOKEN="${TOKEN}"\n`);
  [base, gatedBase] = await Promise.all([
    wranglerDev('plain', '/healthz'),
    wranglerDev('gated', `/${TOKEN}/healthz`, ['--env-file', envFile]),
  ]);
});

after(async () => {
  for (const s of servers) await stop(s.child);
  rmSync(scratch, { recursive: true, force: true });
});

const send: Send = (path, init) => fetch(base + path, init);
runContract('Workers runtime (wrangler dev / workerd)', () => send);

describe('Workers runtime with the secret EPHEMERA_WEBHOOK_TOKEN', () => {
  const gated: Send = (path, init) => fetch(gatedBase + path, init);
  const review = (): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(admissionReview({ uid: 'u-gated' })) });

  test('/<token>/… serves the webhook and /healthz', async () => {
    const res = await gated(`/${TOKEN}${PATH}?timeout=5s`, review());
    assert.equal(res.status, 200);
    assert.deepEqual(((await res.json()) as { response: unknown }).response, { uid: 'u-gated', allowed: true });
    assert.equal(await (await gated(`/${TOKEN}/healthz`)).text(), 'ok');
  });

  test('without the token, or with a wrong one, a bare 404 that names no path', async () => {
    for (const [path, init] of [[PATH, review()], ['/healthz', undefined], [`/${TOKEN.slice(0, -1)}x${PATH}`, review()], [`/${TOKEN}/nothing`, undefined]] as const) {
      const res = await gated(path, init);
      assert.equal(res.status, 404, path);
      const text = await res.text();
      assert.equal(JSON.parse(text).message, 'not found', path);
      assert.doesNotMatch(text, /validate|healthz/, path);
    }
  });
});
