// The EphemeralJob validating webhook as a Lambda function URL. The API server cannot sign
// requests with SigV4, so the URL's auth type is NONE; what may invoke the function is
// still narrowed: the resource policy allows lambda:InvokeFunctionUrl for NONE URLs and
// lambda:InvokeFunction only when invoked through the URL (lambda:InvokedViaFunctionUrl),
// never a direct Invoke. A reserved concurrency bounds what a flood can take (and cost);
// with failurePolicy Fail the price of a flood is refused EphemeralJob writes, nothing more.
// reservedConcurrency 0 leaves the reservation out, for accounts too small to reserve any.
import { CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { Role, ServicePrincipal, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Architecture, Code, Function as LambdaFunction, FunctionUrlAuthType, Runtime } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { ALARM_PERIOD, alarms } from './alarms.ts';
import { functionLogGroup } from './log-group.ts';
import type { DeploySettings } from './settings.ts';

/** Props: the settings and the directory of the built webhook bundle. */
export interface WebhookStackProps extends StackProps {
  settings: DeploySettings;
  codeDir: string;
}

/** Webhook Lambda + function URL + its narrowed permissions. */
export class WebhookStack extends Stack {
  readonly fn: LambdaFunction;

  constructor(scope: Construct, id: string, props: WebhookStackProps) {
    super(scope, id, props);
    const s = props.settings;
    const role = new Role(this, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com'), description: 'ephemera webhook: log only' });
    const logGroup = functionLogGroup(this, 'Logs', s.logRetentionDays);
    role.addToPolicy(new PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [`${logGroup.logGroupArn}:log-stream:*`] }));
    this.fn = new LambdaFunction(this, 'Webhook', {
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      handler: 'index.handler',
      code: Code.fromAsset(props.codeDir),
      memorySize: 256,
      // Under the API server's timeoutSeconds (5, infra/webhook/validating-webhook-public.yaml),
      // so a stuck call ends here first, with the function's own error in its log (the
      // webhook README said 4 s; the stack had 5: operability review).
      timeout: Duration.seconds(4),
      role,
      logGroup,
      // Lambda reads a reservation of 0 as "never run": 0 in the settings means none at all.
      ...(s.webhook.reservedConcurrency > 0 ? { reservedConcurrentExecutions: s.webhook.reservedConcurrency } : {}),
      description: 'ephemera EphemeralJob validating webhook (function URL)',
    });
    // For a NONE URL, CDK (2.276) adds exactly the two grants to "*" AWS wants: InvokeFunctionUrl
    // with FunctionUrlAuthType NONE, and InvokeFunction with InvokedViaFunctionUrl true
    // (required beside it for URLs since October 2025). A direct Invoke stays refused; a test checks.
    const url = this.fn.addFunctionUrl({ authType: FunctionUrlAuthType.NONE });
    alarms(this, [
      { id: 'WebhookErrorsAlarm', metric: this.fn.metricErrors({ period: ALARM_PERIOD, statistic: 'Sum' }), threshold: 1, description: 'ephemera webhook: invocations failed as a whole (a crash, a timeout, a failed start; EphemeralJob writes refused meanwhile)' },
      // A bug on the request path is an exception hono turns into a 500 answer: the invocation
      // succeeds, so Errors stays 0 (review). The URL's own count of 5xx answers sees it (and
      // failed invocations and timeouts too, AWS says). FunctionName: the URL of $LATEST.
      { id: 'WebhookUrl5xxAlarm', metric: this.fn.metric('Url5xxCount', { period: ALARM_PERIOD, statistic: 'Sum' }), threshold: 1, description: 'ephemera webhook: the function URL answered 5xx, so the API server refused EphemeralJob writes (failurePolicy Fail). A 500 the webhook answers itself is a bug on its path: search its log for "webhook failed"' },
      { id: 'WebhookThrottlesAlarm', metric: this.fn.metricThrottles({ period: ALARM_PERIOD, statistic: 'Sum' }), threshold: 1, description: 'ephemera webhook: reserved concurrency (or, with none, the account\'s) exhausted: a flood, or too low a limit' },
    ], s.alarmTopicArn);
    new CfnOutput(this, 'WebhookUrl', { value: url.url, description: 'WEBHOOK_URL in infra/webhook/validating-webhook-public.yaml (without the trailing slash)' });
  }
}
