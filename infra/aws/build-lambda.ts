// The reconciler Lambda (functions/adapters/lambda.ts): `npm run build:lambda` → dist/lambda/function.zip.
import { bundleLambda } from '../bundle.ts';

await bundleLambda('functions/adapters/lambda.ts', 'lambda');
