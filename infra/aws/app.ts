// The CDK app: `npm run synth` writes the CloudFormation templates (and the hashed code
// assets) to dist/infra offline; `npm run deploy:aws` hands the same app to the CDK CLI.
// Settings: the JSON file EPHEMERA_DEPLOY_SETTINGS names (default infra/aws/settings.example.json).
import { App, Validations } from 'aws-cdk-lib';
// cdk-nag is CommonJS without static export names: take its namespace object.
import nag from 'cdk-nag';
import { join } from 'node:path';
import { ROOT } from '../bundle.ts';
import { buildLambdaAssets } from './assets.ts';
import { FunctionsStack } from './functions-stack.ts';
import { suppressJustified } from './nag-suppressions.ts';
import { loadSettings, type DeploySettings } from './settings.ts';
import { WebhookStack } from './webhook-stack.ts';

/** The stacks of one deployment, in an app (tests pass their own App and code directories). */
export function defineStacks(app: App, settings: DeploySettings, code: { reconciler: string; webhook: string }, opts: { suppress?: boolean } = {}): { functions: FunctionsStack; webhook?: WebhookStack } {
  const suppress = opts.suppress === false ? (): void => undefined : suppressJustified;
  const env = { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION };
  const functions = new FunctionsStack(app, `${settings.stackPrefix}Functions`, { settings, codeDir: code.reconciler, env, description: 'ephemera reconcilers: SQS queue, Lambda, IAM, alarms' });
  suppress(functions);
  if (!settings.webhook.enabled) return { functions };
  const webhook = new WebhookStack(app, `${settings.stackPrefix}Webhook`, { settings, codeDir: code.webhook, env, description: 'ephemera EphemeralJob validating webhook (Lambda function URL)' });
  suppress(webhook);
  return { functions, webhook };
}

async function main(): Promise<void> {
  const settings = loadSettings(process.env.EPHEMERA_DEPLOY_SETTINGS ?? join(ROOT, 'infra/aws/settings.example.json'));
  const code = await buildLambdaAssets();
  // The CDK CLI sets CDK_OUTDIR; run alone, the app writes to dist/infra.
  const app = new App({ outdir: process.env.CDK_OUTDIR ?? join(ROOT, 'dist/infra') });
  Validations.of(app).addPlugins(new nag.AwsSolutionsChecks(app, { verbose: true }));
  defineStacks(app, settings, code);
  const assembly = app.synth();
  for (const stack of assembly.stacks) process.stdout.write(`${stack.stackName}: ${join(assembly.directory, stack.templateFile)}\n`);
}

if (import.meta.main) await main();
