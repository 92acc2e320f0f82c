// The CDK app: `npm run synth` writes the CloudFormation templates (and the hashed code
// assets) to dist/infra offline; `npm run deploy:aws` hands the same app to the CDK CLI.
// Settings: the JSON file EPHEMERA_DEPLOY_SETTINGS names. `npm run synth` without it uses
// infra/aws/settings.example.json and says so; under the CDK CLI (deploy, destroy) it is required.
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
export function defineStacks(app: App, settings: DeploySettings, code: { reconciler: string; webhook: string }, opts: { suppress?: boolean; env?: { account?: string | undefined; region?: string | undefined } } = {}): { functions: FunctionsStack; webhook?: WebhookStack } {
  const suppress = opts.suppress === false ? (): void => undefined : suppressJustified;
  // `cdk deploy` sets both (the account and region it deploys to); `npm run synth` neither.
  const env = opts.env ?? { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION };
  const functions = new FunctionsStack(app, `${settings.stackPrefix}Functions`, { settings, codeDir: code.reconciler, env, description: 'ephemera reconcilers: SQS queue, Lambda, IAM, alarms' });
  suppress(functions);
  if (!settings.webhook.enabled) return { functions };
  const webhook = new WebhookStack(app, `${settings.stackPrefix}Webhook`, { settings, codeDir: code.webhook, env, description: 'ephemera EphemeralJob validating webhook (Lambda function URL)' });
  suppress(webhook);
  return { functions, webhook };
}

/**
 * The settings file: EPHEMERA_DEPLOY_SETTINGS, else — only when synthesizing on its own — the
 * example. The CDK CLI runs the app with CDK_OUTDIR set: a deploy with the example's settings
 * would map the role into a cluster named `prod` (review), so there the variable is required.
 */
export function settingsPath(env: NodeJS.ProcessEnv, warn: (line: string) => void): string {
  if (env.EPHEMERA_DEPLOY_SETTINGS) return env.EPHEMERA_DEPLOY_SETTINGS;
  if (env.CDK_OUTDIR) {
    throw new Error('EPHEMERA_DEPLOY_SETTINGS is not set: copy infra/aws/settings.example.json, set your clusters in it, and run EPHEMERA_DEPLOY_SETTINGS=path/to/it.json npm run deploy:aws (the example names a cluster "prod" that is not yours)');
  }
  warn('EPHEMERA_DEPLOY_SETTINGS is not set: synthesizing with infra/aws/settings.example.json, an example (its clusters are not yours)\n');
  return join(ROOT, 'infra/aws/settings.example.json');
}

async function main(): Promise<void> {
  let settings: DeploySettings;
  try {
    settings = loadSettings(settingsPath(process.env, (line) => process.stderr.write(line)));
  } catch (err) {
    // A settings error is the user's to fix: the message, not a stack trace.
    process.stderr.write(`ephemera deploy settings: ${(err as Error).message}\n`);
    process.exit(2);
  }
  const code = await buildLambdaAssets();
  // The CDK CLI sets CDK_OUTDIR; run alone, the app writes to dist/infra.
  const app = new App({ outdir: process.env.CDK_OUTDIR ?? join(ROOT, 'dist/infra') });
  Validations.of(app).addPlugins(new nag.AwsSolutionsChecks(app, { verbose: true }));
  defineStacks(app, settings, code);
  const assembly = app.synth();
  for (const stack of assembly.stacks) process.stdout.write(`${stack.stackName}: ${join(assembly.directory, stack.templateFile)}\n`);
}

if (import.meta.main) await main();
