// What one AWS deployment needs to know, validated with zod: the clusters it serves (by
// reference only: an EKS cluster name or a Secrets Manager secret, never a credential),
// sizes, the optional VPC and where alarms go. Read from a JSON file so a deployment is
// reviewable and repeatable: `EPHEMERA_DEPLOY_SETTINGS=ops/prod.json npm run deploy:aws`.
import { readFileSync } from 'node:fs';
import * as z from 'zod';
import { ClusterSources } from '../../functions/kube/cluster-source.ts';
import { FunctionsConfig } from '../../functions/config.ts';
import { DEFAULT_SIDECAR_OPTIONS, SIDECAR_STRATEGIES } from '../../functions/sidecar/config.ts';

const Vpc = z.object({
  vpcId: z.string().regex(/^vpc-[0-9a-f]+$/, 'a VPC id (vpc-…)'),
  availabilityZones: z.array(z.string().min(1)).min(1),
  /** Private subnets with a route to the API servers (and to SQS/STS/EKS, by NAT or endpoints). */
  privateSubnetIds: z.array(z.string().regex(/^subnet-[0-9a-f]+$/, 'a subnet id (subnet-…)')).min(1),
  securityGroupIds: z.array(z.string().regex(/^sg-[0-9a-f]+$/, 'a security group id (sg-…)')).min(1),
});

/** An account id, or the ARN of an IAM role, user or account root. */
const RELAY_PRINCIPAL = /^(\d{12}|arn:aws[a-z-]*:iam::\d{12}:(root|role\/.+|user\/.+))$/;

/** A Lambda has neither KUBECONFIG nor a service account: a kubeconfig source could never connect. */
function noKubeconfig(clusters: ClusterSources, ctx: z.RefinementCtx): void {
  for (const [name, source] of Object.entries(clusters)) {
    if ('kubeconfig' in source) ctx.addIssue({ code: 'custom', path: [name, 'kubeconfig'], message: 'a Lambda has no kubeconfig: use eks or secret' });
  }
}

/**
 * Two clusters whose access entries would get one CloudFormation logical id: it keeps only a
 * construct id's letters and digits, so `prod-1` and `prod1` collide, and the synth died in a
 * CDK stack trace (review). The ids are not changed (existing entries would be replaced).
 */
function distinctEntryIds(clusters: ClusterSources, ctx: z.RefinementCtx): void {
  const seen = new Map<string, string>();
  for (const [name, source] of Object.entries(clusters)) {
    if (!('eks' in source) || source.eks.accessEntry === false) continue;
    const id = name.replace(/[^A-Za-z0-9]/g, '');
    const other = seen.get(id);
    if (other !== undefined) ctx.addIssue({ code: 'custom', path: [name], message: `clusters ${other} and ${name} differ only in "-" or ".", which the access entries' CloudFormation ids drop: rename one` });
    seen.set(id, name);
  }
}

/** The Kubernetes group the functions' role is mapped to by default; infra/kubernetes/functions-rbac-eks.yaml binds it. */
export const FUNCTIONS_K8S_GROUP = 'ephemera:functions';

/** The deployment settings (every field has a default except the clusters). */
export const DeploySettings = z.object({
  /** Prefix of the stack names: <prefix>Functions, <prefix>Webhook. */
  stackPrefix: z.string().regex(/^[A-Za-z][A-Za-z0-9-]*$/).default('Ephemera'),
  /** The clusters one deployment serves; envelopes name theirs (relay's EPHEMERA_RELAY_CLUSTER). */
  clusters: ClusterSources.superRefine(noKubeconfig).superRefine(distinctEntryIds),
  /** Which cluster an envelope without a name belongs to (default: the only one). */
  defaultCluster: z.string().min(1).optional(),
  /**
   * The Kubernetes group the EKS access entries map the functions' role to, which the RBAC
   * binds (review94 L3): one of its own per stack lets each stack of a group of namespaces be
   * bound to those namespaces alone (infra/kubernetes/namespaced.ts --group). Not a system:
   * group, which Kubernetes gives meaning to (system:masters may do anything).
   */
  kubernetesGroup: z.string().trim().min(1).refine((g) => !g.startsWith('system:'), 'a group of your own, not a system: group (Kubernetes\' own: system:masters may do anything)').default(FUNCTIONS_K8S_GROUP),
  /** Namespace of the functions' per-job claim Leases in every cluster (the manifests' namespace). */
  // The functions' own checks, so a typo fails the synth instead of every invocation.
  lockNamespace: FunctionsConfig.shape.EPHEMERA_LOCK_NAMESPACE.unwrap().default('ephemera-locks'),
  /** Which controllers run: a comma-separated list of ejob, sidecar. */
  controllers: FunctionsConfig.shape.EPHEMERA_CONTROLLERS,
  /**
   * How sidecars are ended when a pod carries no strategy annotation: `crr` needs
   * OpenKruise's kruise-daemon on the nodes; `ephemeral-signal` works on any cluster.
   */
  sidecarStrategy: z.enum(SIDECAR_STRATEGIES).default(DEFAULT_SIDECAR_OPTIONS.defaultStrategy),
  /** Image of the ephemeral container that signals a sidecar (strategy `ephemeral-signal`). */
  signalImage: FunctionsConfig.shape.EPHEMERA_SIGNAL_IMAGE.unwrap().default(DEFAULT_SIDECAR_OPTIONS.signalImage),
  /** The reconciler's pino level. */
  // The alarms on refused writes and redeliveries count warn lines (functions-stack.ts).
  logLevel: FunctionsConfig.shape.LOG_LEVEL.refine((l) => !['error', 'fatal', 'silent'].includes(l), 'trace, debug, info or warn: the alarms on refused writes and messages left for redelivery count warn lines'),
  reconciler: z.object({
    memoryMiB: z.number().int().min(128).max(10240).default(256),
    timeoutSeconds: z.number().int().min(10).max(900).default(60),
    /** Most concurrent instances the queue may start: what the API servers see at worst. */
    maxConcurrency: z.number().int().min(2).max(1000).default(5),
    batchSize: z.number().int().min(1).max(10).default(10),
    maxReceiveCount: z.number().int().min(1).max(1000).default(5),
  }).prefault({}),
  webhook: z.object({
    enabled: z.boolean().default(true),
    /**
     * A flood can use at most this many instances; the account's other functions keep theirs.
     * 0: no reservation. AWS refuses one that leaves the account under 100 unreserved, which
     * is every account whose concurrency quota is still the new-account 10.
     */
    reservedConcurrency: z.number().int().min(0).max(1000).default(10),
  }).prefault({}),
  logRetentionDays: z.union([z.literal(7), z.literal(14), z.literal(30), z.literal(90), z.literal(365)]).default(30),
  /**
   * Who else may send to the event queue: relays whose IAM identity is in another account (an
   * account id, or a role's or user's ARN). Written into the queue's resource policy, which a
   * grant across accounts needs besides the sender's own policy; relays in this account need
   * only their own.
   */
  relayPrincipals: z.array(z.string().regex(RELAY_PRINCIPAL, 'an AWS account id (12 digits) or an IAM ARN (arn:<partition>:iam::<account>:role/<name>, user/<name> or root)')).default([]),
  /** An SNS topic the alarms notify (none: alarms only show in the console). */
  alarmTopicArn: z.string().startsWith('arn:').optional(),
  vpc: Vpc.optional(),
}).refine((s) => s.defaultCluster === undefined || s.defaultCluster in s.clusters, { message: 'defaultCluster must be one of clusters', path: ['defaultCluster'] })
  .superRefine(environmentFits);
export type DeploySettings = z.infer<typeof DeploySettings>;

/** The reconciler Lambda's environment (functions-stack.ts), given its two queue URLs. */
export function reconcilerEnvironment(s: DeploySettings, queues: { queueUrl: string; deadLetterUrl: string }): Record<string, string> {
  return {
    EPHEMERA_QUEUE_URL: queues.queueUrl,
    EPHEMERA_DLQ_URL: queues.deadLetterUrl,
    EPHEMERA_CLUSTERS: JSON.stringify(runtimeClusters(s.clusters)),
    ...(s.defaultCluster ? { EPHEMERA_DEFAULT_CLUSTER: s.defaultCluster } : {}),
    EPHEMERA_LOCK_NAMESPACE: s.lockNamespace,
    EPHEMERA_CONTROLLERS: s.controllers,
    EPHEMERA_SIDECAR_STRATEGY: s.sidecarStrategy,
    EPHEMERA_SIGNAL_IMAGE: s.signalImage,
    LOG_LEVEL: s.logLevel,
  };
}

/** The cluster map as the functions read it: `accessEntry` and `kmsKeyArn` are the deploy's alone (bytes of a 4 KB environment). */
function runtimeClusters(clusters: DeploySettings['clusters']): Record<string, unknown> {
  return Object.fromEntries(Object.entries(clusters).map(([name, source]) => {
    if ('secret' in source) {
      const { kmsKeyArn: _deployOnly, ...secret } = source.secret;
      return [name, { secret }];
    }
    if (!('eks' in source)) return [name, source];
    const { accessEntry: _deployOnly, ...eks } = source.eks;
    return [name, { eks }];
  }));
}

/** Lambda's quota on a function's environment: 4 KB, as the JSON text of the variables (its error prints the "String measured"). */
export const LAMBDA_ENVIRONMENT_BYTES = 4096;
/** The longest an SQS queue URL gets (https://sqs.<region>.amazonaws.com/<account>/<80-character name>). */
const QUEUE_URL_BYTES = 160;

/**
 * The environment must fit Lambda's 4 KB, or the deploy fails after a synth that passed: the
 * cluster map grows with every cluster (~100 bytes each; review: about 38 EKS clusters).
 */
function environmentFits(s: DeploySettings, ctx: z.RefinementCtx): void {
  const url = 'x'.repeat(QUEUE_URL_BYTES);
  const env = reconcilerEnvironment(s, { queueUrl: url, deadLetterUrl: url });
  const bytes = Buffer.byteLength(JSON.stringify(env));
  if (bytes <= LAMBDA_ENVIRONMENT_BYTES) return;
  ctx.addIssue({ code: 'custom', path: ['clusters'], message: `the reconciler's environment would take ${bytes} bytes (queue URLs counted at their longest), over Lambda's ${LAMBDA_ENVIRONMENT_BYTES}: EPHEMERA_CLUSTERS is ${Buffer.byteLength(env.EPHEMERA_CLUSTERS ?? '')} bytes; split the clusters over two deployments (stackPrefix), or shorten their names` });
}

/** Parse settings; a bad file names the field and what was expected. */
export function parseSettings(input: unknown, from = 'settings'): DeploySettings {
  const r = DeploySettings.safeParse(input);
  if (r.success) return r.data;
  const lines = r.error.issues.map((i) => {
    // A bad record key's own message (e.g. "a cluster name …") is nested one level down.
    const detail = i.code === 'invalid_key' ? ` (${i.issues.map((k) => k.message).join('; ')})` : '';
    return `${i.path.join('.') || '(root)'}: ${i.message}${detail}`;
  });
  throw new Error(`${from} is invalid:\n  ${lines.join('\n  ')}`);
}

/** Settings from the JSON file EPHEMERA_DEPLOY_SETTINGS names (default infra/aws/settings.example.json). */
export function loadSettings(path: string): DeploySettings {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`EPHEMERA_DEPLOY_SETTINGS: cannot read ${path} as JSON: ${(err as Error).message}`, { cause: err });
  }
  return parseSettings(raw, path);
}
