// Cloudflare Workers entry for the validating webhook: the hono app's fetch is the whole
// Worker. It must stay free of @kubernetes/client-node (Workers stub the https.Agent it
// needs, and the 1 s startup budget wants a small bundle): test/webhook/bundle.test.ts checks.
import { createWebhookApp } from '../../webhook/app.ts';
import { consoleWebhookLog } from '../../webhook/console-log.ts';
import { warmUp } from '../../webhook/warm-up.ts';

const app = createWebhookApp({ log: consoleWebhookLog });
// At global scope: a fresh isolate's first review costs its startup budget (1 s), not the request's CPU time.
warmUp();

/** The module Worker: `export default { fetch }`. */
export default { fetch: app.fetch };
