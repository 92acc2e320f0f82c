// Decisions as JSON lines on console: what Workers (`wrangler tail`, Workers Logs) and
// Lambda (CloudWatch) collect without any logging library in the bundle.
import type { WebhookLog } from './app.ts';

/** A WebhookLog that writes one JSON object per line to console. */
export const consoleWebhookLog: WebhookLog = {
  decision: (e) => console.log(JSON.stringify({ msg: e.allowed ? 'allowed' : 'denied', ...e })),
  rejected: (e) => console.warn(JSON.stringify({ msg: 'bad request', ...e })),
  failed: (err) => console.error(JSON.stringify({ msg: 'webhook failed', error: String((err as Error)?.stack ?? err) })),
};
