// The reconciler Lambda (functions/runtime/lambda/lambda.ts): `npm run build:lambda` → dist/lambda/function.zip.
import { bundleLambda } from '../bundle.ts';

await bundleLambda('functions/runtime/lambda/lambda.ts', 'lambda');
