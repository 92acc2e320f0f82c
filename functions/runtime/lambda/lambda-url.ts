// AWS Lambda function URL entry for the validating webhook, through hono's aws-lambda
// adapter (function URLs send API Gateway payload v2 events). The API server calls the URL
// directly, so AuthType is NONE: it cannot sign requests with SigV4 (infra/aws/webhook-stack.ts).
// `hono/aws-lambda` is deprecated in favour of `@hono/aws-lambda` for hono 5; same API.
import { handle } from 'hono/aws-lambda';
import { createWebhookApp } from '../../webhook/app.ts';
import type { WebhookAppOptions } from '../../webhook/app.ts';
import { consoleWebhookLog } from '../../webhook/console-log.ts';

/** A Lambda handler around a webhook app built with these options. */
export function createLambdaUrlHandler(options: WebhookAppOptions = {}): ReturnType<typeof handle> {
  return handle(createWebhookApp(options));
}

/** The Lambda handler (runtime nodejs24.x, handler `index.handler` in the bundle). */
export const handler = createLambdaUrlHandler({ log: consoleWebhookLog });
