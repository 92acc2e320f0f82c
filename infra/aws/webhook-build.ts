// The webhook's Lambda function URL entry (functions/runtime/lambda/lambda-url.ts):
// `npm run build:webhook` → dist/webhook/function.zip.
import { bundleLambda } from '../bundle.ts';

await bundleLambda('functions/runtime/lambda/lambda-url.ts', 'webhook');
