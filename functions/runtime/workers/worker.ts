// Cloudflare Workers entry for the validating webhook: the hono app's fetch is the whole
// Worker. It must stay free of @kubernetes/client-node (Workers stub the https.Agent it
// needs, and the 1 s startup budget wants a small bundle): test/webhook/bundle.test.ts checks.
import { createWebhookApp } from '../../webhook/app.ts';
import { consoleWebhookLog } from '../../webhook/console-log.ts';
import { createPathTokenGate } from '../../webhook/path-token.ts';
import { warmUp } from '../../webhook/warm-up.ts';

const app = createWebhookApp({ log: consoleWebhookLog });
// At global scope: a fresh isolate's first review costs its startup budget (1 s), not the request's CPU time.
warmUp();
const gate = createPathTokenGate((request) => app.fetch(request), consoleWebhookLog);

/** The Worker's bindings: the optional secret set with `wrangler secret put EPHEMERA_WEBHOOK_TOKEN`. */
export interface WorkerEnv {
  EPHEMERA_WEBHOOK_TOKEN?: string;
}

/** The module Worker: `export default { fetch }`. With the secret, only /<token>/… is served. */
export default {
  fetch: (request: Request, env: WorkerEnv = {}): Promise<Response> => gate(request, env.EPHEMERA_WEBHOOK_TOKEN),
};
