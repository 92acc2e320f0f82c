// The reconcilers on AWS: an SQS queue (+ dead-letter queue) feeding one Lambda through an
// event source mapping with partial batch responses and a concurrency cap, a role that can
// do exactly what the handler does, EKS access entries that map that role to a Kubernetes
// group, log retention and alarms. Credentials are never in the environment: only
// references to EKS clusters or Secrets Manager secrets (functions/kube/cluster-source.ts).
import { Annotations, Arn, ArnFormat, Aws, CfnCondition, CfnOutput, Duration, Fn, Stack, Token, type StackProps } from 'aws-cdk-lib';
import { Vpc, Subnet, SecurityGroup } from 'aws-cdk-lib/aws-ec2';
import { CfnAccessEntry } from 'aws-cdk-lib/aws-eks';
import { AccountPrincipal, ArnPrincipal, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Code, Function as LambdaFunction, RecursiveLoop, Runtime, type FunctionProps } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { FilterPattern, MetricFilter, type ILogGroup } from 'aws-cdk-lib/aws-logs';
import type { Metric } from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';
import { awsPartition } from '../../functions/kube/aws-partition.ts';
import { isWholeSecretArn, secretRegion } from '../../functions/kube/cluster-source.ts';
import { ALARM_CREDENTIALS, ALARM_REDELIVERY, ALARM_REFUSED, ALARM_THROTTLED } from '../../functions/engine/apply.ts';
import { ALARM_PERIOD, alarms } from './alarms.ts';
import { functionLogGroup } from './log-group.ts';
import { reconcilerEnvironment, type DeploySettings } from './settings.ts';

/** The Kubernetes group the functions' role is mapped to unless the settings' kubernetesGroup says another. */
export { FUNCTIONS_K8S_GROUP } from './settings.ts';
/** The id of the warning for an EKS cluster whose access entry the stack cannot make (acknowledgeable). */
export const ACCESS_ENTRY_BY_HAND = 'ephemera:accessEntryByHand';

/** Props: the settings and the directory of the built reconciler bundle. */
export interface FunctionsStackProps extends StackProps {
  settings: DeploySettings;
  codeDir: string;
}

/** Queue, dead-letter queue, reconciler Lambda, IAM, access entries, alarms. */
export class FunctionsStack extends Stack {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly fn: LambdaFunction;
  private logGroup!: ILogGroup;

  constructor(scope: Construct, id: string, props: FunctionsStackProps) {
    super(scope, id, props);
    const s = props.settings;
    const r = s.reconciler;
    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    this.queue = new Queue(this, 'EventQueue', {
      // AWS: at least 6 × the function timeout, so a batch being retried by Lambda's
      // poller is not handed out again while it still runs.
      visibilityTimeout: Duration.seconds(6 * r.timeoutSeconds),
      retentionPeriod: Duration.days(4),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: r.maxReceiveCount },
    });
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: 'ephemera reconcilers: read the event queue, requeue, dead-letter, log, authenticate to their clusters',
    });
    const logGroup = functionLogGroup(this, 'Logs', s.logRetentionDays);
    this.logGroup = logGroup;
    this.fn = new LambdaFunction(this, 'Reconciler', {
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      handler: 'index.handler',
      code: Code.fromAsset(props.codeDir),
      memorySize: r.memoryMiB,
      timeout: Duration.seconds(r.timeoutSeconds),
      role,
      logGroup,
      description: 'ephemera EphemeralJob and SidecarTerminator reconcilers (SQS)',
      // Every requeue (a deadline or TTL within 900 s, Retry-After, a sidecar that will not
      // stop, a job waiting on its pods) is a message this function sends to the queue that
      // invokes it, carrying the same trace: with Lambda's default (Terminate) the 17th link
      // of such a chain is stopped and its message dead-lettered. The loop is the design.
      recursiveLoop: RecursiveLoop.ALLOW,
      // Its size is checked against Lambda's 4 KB when the settings are read (settings.ts).
      environment: reconcilerEnvironment(s, { queueUrl: this.queue.queueUrl, deadLetterUrl: this.deadLetterQueue.queueUrl }),
      ...this.vpcProps(s),
    });
    this.fn.addEventSource(new SqsEventSource(this.queue, {
      batchSize: r.batchSize,
      maxBatchingWindow: Duration.seconds(1),
      reportBatchItemFailures: true,
      // The cap on instances the queue may start: a burst queues up instead of becoming
      // a crowd of clients on the API servers.
      maxConcurrency: r.maxConcurrency,
    }));
    this.grant(role, s, logGroup.logGroupArn);
    // A relay in another account needs the queue's own policy to let it send (review: only
    // the TLS Deny was there); its identity's policy still needs sqs:SendMessage on QueueArn.
    for (const p of s.relayPrincipals) this.queue.grantSendMessages(/^\d{12}$/.test(p) ? new AccountPrincipal(p) : new ArnPrincipal(p));
    this.accessEntries(role, s);
    this.alarms(s);
    new CfnOutput(this, 'QueueUrl', { value: this.queue.queueUrl, description: 'EPHEMERA_SQS_QUEUE_URL for the relays' });
    new CfnOutput(this, 'QueueArn', { value: this.queue.queueArn, description: 'what the relays\' IAM role may sqs:SendMessage to' });
    new CfnOutput(this, 'DeadLetterQueueUrl', { value: this.deadLetterQueue.queueUrl, description: 'where to read dead letters (aws sqs receive-message --message-attribute-names All)' });
    // The redrive command takes ARNs (review: only the URL was output).
    new CfnOutput(this, 'DeadLetterQueueArn', { value: this.deadLetterQueue.queueArn, description: 'aws sqs start-message-move-task --source-arn <DeadLetterQueueArn> --destination-arn <QueueArn>, once the cause is fixed' });
    new CfnOutput(this, 'FunctionsRoleArn', { value: role.roleArn, description: `mapped to Kubernetes group ${s.kubernetesGroup}` });
  }

  private vpcProps(s: DeploySettings): Partial<FunctionProps> {
    if (!s.vpc) return {};
    const v = s.vpc;
    const vpc = Vpc.fromVpcAttributes(this, 'Vpc', { vpcId: v.vpcId, availabilityZones: v.availabilityZones, privateSubnetIds: v.privateSubnetIds });
    return {
      vpc,
      vpcSubnets: { subnets: v.privateSubnetIds.map((id, i) => Subnet.fromSubnetId(this, `Subnet${i}`, id)) },
      securityGroups: v.securityGroupIds.map((id, i) => SecurityGroup.fromSecurityGroupId(this, `Sg${i}`, id, { mutable: false })),
      allowPublicSubnet: false,
    };
  }

  /** Least privilege: only the calls the handler makes, on only these resources. */
  private grant(role: Role, s: DeploySettings, logGroupArn: string): void {
    role.addToPolicy(new PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [`${logGroupArn}:log-stream:*`] }));
    // Requeue (delayed look again) and dead-letter with a reason; receive/delete come with the event source.
    this.queue.grantSendMessages(role);
    this.deadLetterQueue.grantSendMessages(role);
    const eks = Object.values(s.clusters).flatMap((c) => ('eks' in c ? [c.eks] : []));
    if (eks.length > 0) {
      role.addToPolicy(new PolicyStatement({
        actions: ['eks:DescribeCluster'],
        resources: eks.map((e) => this.formatArn({ service: 'eks', resource: 'cluster', resourceName: e.name, ...(e.region ? { region: e.region } : {}) })),
      }));
    }
    if (s.vpc) this.grantVpcAccess(role, s.vpc);
    const secrets = Object.values(s.clusters).flatMap((c) => ('secret' in c ? [c.secret] : []));
    if (secrets.length > 0) {
      role.addToPolicy(new PolicyStatement({
        actions: ['secretsmanager:GetSecretValue'],
        resources: secrets.map((x) => secretArn(this, x.secretId, secretRegion(x))),
      }));
    }
    this.grantSecretKeys(role, secrets.flatMap((x) => (x.kmsKeyArn ? [x.kmsKeyArn] : [])));
  }

  /**
   * A secret encrypted with a customer-managed key is read only if the role may also decrypt
   * with that key (GetSecretValue answers "Access to KMS is not allowed"; a secret in another
   * account always has such a key, review). Only through Secrets Manager in the key's region,
   * which is its secrets' (kms:ViaService, as AWSSecretsManagerClientReadOnlyAccess has it);
   * the secrets it decrypts are the ones the role may read. Keys in another account also need
   * their key policy to allow the role: the stack cannot write that.
   */
  private grantSecretKeys(role: Role, keys: string[]): void {
    const byRegion = new Map<string, string[]>();
    for (const key of new Set(keys)) {
      const region = Arn.split(key, ArnFormat.SLASH_RESOURCE_NAME).region ?? '';
      byRegion.set(region, [...(byRegion.get(region) ?? []), key]);
    }
    for (const [region, resources] of byRegion) {
      // The endpoint's name as the docs write it; in a partition with its own domain, that
      // domain's too (both name Secrets Manager in that region: not verified which KMS sees there).
      const via = [...new Set(['amazonaws.com', awsPartition(region).dnsSuffix])].map((d) => `secretsmanager.${region}.${d}`);
      role.addToPolicy(new PolicyStatement({ actions: ['kms:Decrypt'], resources, conditions: { StringEquals: { 'kms:ViaService': via.length === 1 ? via[0] : via } } }));
    }
  }

  /**
   * In a VPC, Lambda creates the function's network interfaces with the function's role
   * (what the AWSLambdaVPCAccessExecutionRole managed policy grants), narrowed here to the
   * configured subnets and security groups where EC2 allows resource-level permissions.
   */
  private grantVpcAccess(role: Role, vpc: NonNullable<DeploySettings['vpc']>): void {
    // Region and account as pseudo-parameters even where the stack knows them (`cdk deploy`):
    // cdk-nag names a finding by the ARN as written, and the justified wildcard on network
    // interfaces (nag-suppressions.ts) must be the same finding in every synth (review: a VPC
    // deployment passed `npm run synth` and failed at `cdk deploy`).
    const ec2 = (resource: string, name: string): string => this.formatArn({ service: 'ec2', resource, resourceName: name, region: Aws.REGION, account: Aws.ACCOUNT_ID });
    const eni = ec2('network-interface', '*');
    role.addToPolicy(new PolicyStatement({
      actions: ['ec2:CreateNetworkInterface'],
      resources: [eni, ...vpc.privateSubnetIds.map((id) => ec2('subnet', id)), ...vpc.securityGroupIds.map((id) => ec2('security-group', id))],
    }));
    role.addToPolicy(new PolicyStatement({ actions: ['ec2:DeleteNetworkInterface', 'ec2:AssignPrivateIpAddresses', 'ec2:UnassignPrivateIpAddresses'], resources: [eni] }));
    // Describe calls support no resource-level permissions: "*" is the only valid resource.
    role.addToPolicy(new PolicyStatement({ actions: ['ec2:DescribeNetworkInterfaces', 'ec2:DescribeSubnets'], resources: ['*'] }));
  }

  /**
   * EKS access entries: the role becomes the settings' kubernetesGroup. An access entry is a
   * resource of the cluster's region, so the stack makes it only for clusters in its own
   * (an eks source's cluster is always in the stack's account); any other is mapped by hand.
   */
  private accessEntries(role: Role, s: DeploySettings): void {
    for (const [name, c] of Object.entries(s.clusters)) {
      if (!('eks' in c) || !c.eks.accessEntry) continue;
      const { name: cluster, region } = c.eks;
      const byHand = `map the functions' role (output FunctionsRoleArn) to the Kubernetes group ${s.kubernetesGroup} in EKS cluster ${cluster} by hand: `
        + `aws eks create-access-entry --region ${region} --cluster-name ${cluster} --principal-arn <FunctionsRoleArn> --kubernetes-groups ${s.kubernetesGroup}`;
      const stackRegionKnown = !Token.isUnresolved(this.region);
      if (region && stackRegionKnown && region !== this.region) {
        Annotations.of(this).addWarningV2(ACCESS_ENTRY_BY_HAND, `cluster ${name} is in ${region}, not this stack's ${this.region}: no access entry is made; ${byHand}`);
        continue;
      }
      const entry = new CfnAccessEntry(this, `AccessEntry-${name}`, { clusterName: cluster, principalArn: role.roleArn, type: 'STANDARD', kubernetesGroups: [s.kubernetesGroup] });
      if (region && !stackRegionKnown) {
        // An environment-agnostic template (`npm run synth` without a region) learns its
        // region at deploy time: the entry is made there only if that is the cluster's.
        entry.cfnOptions.condition = new CfnCondition(this, `AccessEntry-${name}-InRegion`, { expression: Fn.conditionEquals(Aws.REGION, region) });
        Annotations.of(this).addWarningV2(ACCESS_ENTRY_BY_HAND, `cluster ${name} is in ${region}, this stack's region is only known at deploy time: the access entry is made only if it is deployed there; otherwise ${byHand}`);
      }
    }
  }

  private alarms(s: DeploySettings): void {
    const period = ALARM_PERIOD;
    // Counted from the handler's JSON log lines (their `alarm` field, engine/apply.ts): a write
    // refused for good and a message left for redelivery are results of a handled batch, which
    // Lambda's Errors never counts and which reach the dead-letter queue, if at all, half an
    // hour later (operability review). The lines are warn and error: a logLevel above warn
    // silences them (settings.ts refuses it). One namespace per stack, so two deployments in an
    // account (stackPrefix) do not count each other's lines (review).
    // HandlingFailures keeps counting every message left for redelivery, a refused credential's
    // included (it had alarm "redelivery" before it had its own value): a dashboard on it reads
    // as before.
    const fromLogs = (id: string, ...alarm: string[]): Metric => new MetricFilter(this, id, {
      logGroup: this.logGroup,
      metricNamespace: `ephemera/${this.stackName}`,
      metricName: id,
      filterPattern: FilterPattern.any(...alarm.map((a) => FilterPattern.stringValue('$.alarm', '=', a))),
      metricValue: '1',
    }).metric({ period, statistic: 'Sum' });
    alarms(this, [
      { id: 'DeadLetterAlarm', metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }), threshold: 1, description: 'ephemera: messages in the dead-letter queue (bad input, a refusal for good, a cluster not served, or a message that failed maxReceiveCount times). Those the consumer sent carry a reason attribute. For the others SQS moved, search the function\'s log for the body\'s id (the engine logs it as "event") or their messageId; if neither is there, the invocations failed as a whole: ErrorsAlarm, "Task timed out", "Runtime exited". Once fixed: aws sqs start-message-move-task --source-arn <DeadLetterQueueArn> --destination-arn <QueueArn> (this stack\'s outputs; every message is an idempotent "look at this key")' },
      { id: 'RefusedWritesAlarm', metric: fromLogs('RefusedWrites', ALARM_REFUSED), threshold: 1, description: 'ephemera: the API server refused writes for good (a missing RBAC right, Pod Security, an admission webhook): see the ActionRefused Warning Events on the jobs and pods, and the log lines with alarm "refused"' },
      { id: 'HandlingFailuresAlarm', metric: fromLogs('HandlingFailures', ALARM_REDELIVERY, ALARM_CREDENTIALS), threshold: 10, description: 'ephemera: messages failing and left for redelivery (the API server unreachable or answering 5xx/timeouts, credentials refused, the invocation out of time, the queue refusing a send): see the log lines with alarm "redelivery" or "credentials"' },
      // No retry cures a refused credential, and in a quiet cluster its messages come back only
      // once per visibility timeout: the first line pages, not the dead letters half an hour later.
      { id: 'CredentialsRefusedAlarm', metric: fromLogs('CredentialsRefused', ALARM_CREDENTIALS), threshold: 1, description: 'ephemera: a cluster refused the functions\' credential (an expired or revoked token in the secret, the role\'s EKS access entry removed, a secret or DescribeCluster unreadable): see the log lines with alarm "credentials", which name the cluster and the credential source; the messages wait on the queue and reach the dead-letter queue after maxReceiveCount' },
      // Each requeue after a Retry-After is a new message and the invocation succeeds: nothing
      // else sees a throttle that never ends (review). One key throttled throughout logs at
      // least 4 lines in 5 minutes even at the longest delay its copies wait (60 s, plus the
      // queue's pick-up: the delay grows from the Retry-After to at most that, review90 M1; a
      // chain ends 900 s after it began, and the resync's, every 600 s, overlap it), more
      // while a chain's delays are still short; a burst, however
      // wide (a resync meeting a busy API server), that is over within 5 minutes touches at
      // most two periods. So: 3 lines in each of 3 periods in a row, about 15 minutes of
      // throttling. (ThrottlesAlarm below is Lambda's own.)
      { id: 'ApiServerThrottledAlarm', metric: fromLogs('ApiServerThrottled', ALARM_THROTTLED), threshold: THROTTLED_PER_PERIOD, periods: THROTTLED_PERIODS, description: `ephemera: an API server has kept asking the functions to retry later (429/503 Retry-After): at least ${THROTTLED_PER_PERIOD} times in each of ${THROTTLED_PERIODS} periods of ${period.toMinutes()} minutes in a row. The keys it throttles are requeued again and again and never reconciled. See the log lines with alarm "throttled" (status, cluster, subject), and the API server's Priority and Fairness (apiserver_flowcontrol_rejected_requests_total) for the functions' user` },
      { id: 'OldestMessageAlarm', metric: this.queue.metricApproximateAgeOfOldestMessage({ period, statistic: 'Maximum' }), threshold: 900 + 6 * s.reconciler.timeoutSeconds, description: 'ephemera: events wait longer than the longest requeue delay: the reconcilers fall behind' },
      { id: 'ErrorsAlarm', metric: this.fn.metricErrors({ period, statistic: 'Sum' }), threshold: 1, description: 'ephemera: reconciler invocations failed as a whole (configuration, crash, timeout)' },
      { id: 'ThrottlesAlarm', metric: this.fn.metricThrottles({ period, statistic: 'Sum' }), threshold: 1, description: 'ephemera: reconciler invocations throttled (account concurrency exhausted)' },
    ], s.alarmTopicArn);
  }
}

/** Throttled lines per period, in each of THROTTLED_PERIODS periods in a row, that page (the reasoning is at the alarm). */
export const THROTTLED_PER_PERIOD = 3;
export const THROTTLED_PERIODS = 3;

/**
 * A secret's ARN pattern: a whole ARN as given; a partial ARN or a name with the random suffix
 * Secrets Manager adds, which IAM matches as `-??????` (review: a partial ARN was written as it
 * was, and IAM never matched the real ARN).
 */
function secretArn(stack: Stack, secretId: string, region: string | undefined): string {
  if (secretId.startsWith('arn:')) return isWholeSecretArn(secretId) ? secretId : `${secretId}-??????`;
  return stack.formatArn({ service: 'secretsmanager', resource: 'secret', resourceName: `${secretId}-??????`, arnFormat: ArnFormat.COLON_RESOURCE_NAME, ...(region ? { region } : {}) });
}
