// The contract inside the real Workers runtime: `wrangler dev` (local mode, workerd from
// npm) with infra/cloudflare/wrangler.jsonc. It warns that it cannot reach Cloudflare to
// fetch `request.cf`; that is harmless.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { runContract } from './contract.case.ts';
import type { Send } from './contract.case.ts';
import { freePort, start, stop, waitReady } from './processes.ts';

const root = new URL('../../', import.meta.url).pathname;
let base = '';
let server: ReturnType<typeof start> | undefined;
const scratch = mkdtempSync(join(tmpdir(), 'ephemera-wrangler-'));

before(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = start(
    process.execPath,
    [join(root, 'node_modules/.bin/wrangler'), 'dev', '-c', join(root, 'infra/cloudflare/wrangler.jsonc'),
      '--ip', '127.0.0.1', '--port', String(port), '--persist-to', join(scratch, 'state'), '--log-level', 'warn'],
    { WRANGLER_SEND_METRICS: 'false', WRANGLER_LOG_PATH: join(scratch, 'logs'), CI: 'true', NO_COLOR: '1' },
  );
  await waitReady(`${base}/healthz`, server.child, server.output);
});

after(async () => {
  if (server) await stop(server.child);
  rmSync(scratch, { recursive: true, force: true });
});

const send: Send = (path, init) => fetch(base + path, init);
runContract('Workers runtime (wrangler dev / workerd)', () => send);
