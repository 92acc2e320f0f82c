// AWS Lambda function URL entry for the validating webhook, through hono's aws-lambda
// adapter (function URLs send API Gateway payload v2 events). The API server calls the URL
// directly; AuthType NONE because it cannot sign requests with SigV4 (see infra/aws/webhook.yaml).
import { handle } from 'hono/aws-lambda';
import { createWebhookApp } from '../webhook/app.ts';

const app = createWebhookApp({
  log: {
    decision: (e) => console.log(JSON.stringify({ msg: e.allowed ? 'allowed' : 'denied', ...e })),
    rejected: (e) => console.warn(JSON.stringify({ msg: 'bad request', ...e })),
    failed: (err) => console.error('webhook failed', err),
  },
});

/** The Lambda handler (runtime nodejs24.x, handler `index.handler` in the bundle). */
export const handler = handle(app);
