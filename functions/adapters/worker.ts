// Cloudflare Workers entry for the validating webhook: the hono app's fetch is the whole
// Worker. It must stay free of @kubernetes/client-node (Workers stub the https.Agent it
// needs, and the 1 s startup budget wants a small bundle): test/webhook/bundle.test.ts checks.
import { createWebhookApp } from '../webhook/app.ts';

/** Workers log to the dashboard / `wrangler tail` through console. */
const app = createWebhookApp({
  log: {
    decision: (e) => console.log(JSON.stringify({ msg: e.allowed ? 'allowed' : 'denied', ...e })),
    rejected: (e) => console.warn(JSON.stringify({ msg: 'bad request', ...e })),
    failed: (err) => console.error('webhook failed', err),
  },
});

/** The module Worker: `export default { fetch }`. */
export default { fetch: app.fetch };
