// The webhook's Lambda function URL entry (functions/runtime/lambda/lambda-url.ts):
// `node infra/aws/webhook-build.ts` → dist/webhook/function.zip.
import { bundleLambda } from '../bundle.ts';

await bundleLambda('functions/runtime/lambda/lambda-url.ts', 'webhook');
