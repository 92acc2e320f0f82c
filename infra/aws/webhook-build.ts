// The webhook's Lambda function URL entry (functions/adapters/lambda-url.ts):
// `node infra/aws/webhook-build.ts` → dist/webhook/function.zip.
import { bundleLambda } from '../bundle.ts';

await bundleLambda('functions/adapters/lambda-url.ts', 'webhook');
