import { hostname } from 'node:os';
import * as z from 'zod';
import { AwsRegion, FunctionsConfig, Listen, NamespaceName } from '../functions/config.ts';
import type { LockConfig } from '../functions/engine/lock.ts';

const bool = z.enum(['true', 'false']).transform((v) => v === 'true');
/** The relay's configuration, from the environment (validated at start). */
export const RelayConfig = z.object({
  /** Comma-separated namespaces to watch; empty: all namespaces. */
  EPHEMERA_RELAY_NAMESPACES: z.string().regex(/^([a-z0-9-]+(,[a-z0-9-]+)*)?$/, 'comma-separated namespace names').default(''),
  EPHEMERA_RELAY_RESYNC_SECONDS: z.coerce.number().int().min(10).max(86_400).default(600),
  EPHEMERA_RELAY_COALESCE_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  /**
   * How long a pod change that only starts ephemeral containers may wait for the pod's next
   * change (seconds; 0: not held). Unset: EPHEMERA_LEASE_SECONDS + EPHEMERA_LEASE_SKEW_SECONDS,
   * the functions' own wait before they show a start (holdSeconds()).
   */
  EPHEMERA_RELAY_HOLD_SECONDS: z.coerce.number().int().min(0).max(600).optional(),
  EPHEMERA_RELAY_BUFFER_MAX: z.coerce.number().int().min(2).max(1_000_000).default(50_000),
  /** /readyz fails while the sink has taken nothing for longer than this. */
  EPHEMERA_RELAY_DELIVERY_GRACE_SECONDS: z.coerce.number().int().min(1).max(86_400).default(120),
  /** Deadline of one send to the queue (SendMessageBatch with its retries; one in-process handling). */
  EPHEMERA_RELAY_SEND_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(900).default(10),
  EPHEMERA_RELAY_LISTEN: Listen.prefault(':8080'),
  EPHEMERA_RELAY_ID: z.string().min(1).default(hostname()),
  /** This cluster's name, stamped on every envelope so one function deployment can serve many. */
  EPHEMERA_RELAY_CLUSTER: z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'a cluster name (lower-case letters, digits, "-" and ".")').max(100).optional(),
  /**
   * Whether to compete for the leader Lease. Unset: per sink (leaderElection()): on for sqs
   * and memory, off for record, which records beside the relay that leads (review75 H1).
   */
  EPHEMERA_RELAY_LEADER_ELECTION: bool.optional(),
  EPHEMERA_RELAY_LEASE_NAMESPACE: NamespaceName.default('ephemera-system'),
  /**
   * The functions' lock namespace, the same variable with the same default: where the
   * EphemeralJobs' claims Leases are, which the relay lists at each resync (lease-sweep.ts).
   */
  EPHEMERA_LOCK_NAMESPACE: FunctionsConfig.shape.EPHEMERA_LOCK_NAMESPACE,
  /** The leader Lease's duration and clock allowance: the functions' variables, one meaning. */
  EPHEMERA_LEASE_SECONDS: FunctionsConfig.shape.EPHEMERA_LEASE_SECONDS,
  EPHEMERA_LEASE_SKEW_SECONDS: FunctionsConfig.shape.EPHEMERA_LEASE_SKEW_SECONDS,
  // The functions refuse a FIFO queue (no per-message delay: every "look again" would come
  // straight back), so a relay sending to one filled the dead letters while /readyz said
  // ready (review70 L1): refused here, before anything is sent.
  EPHEMERA_SQS_QUEUE_URL: z.url().refine((u) => URL.parse(u)?.pathname.endsWith('.fifo') !== true, 'a FIFO queue (.fifo): the functions need a standard queue, whose messages can each be delayed; use the queue the infra/aws stack makes').optional(),
  EPHEMERA_SQS_ENDPOINT: z.url().optional(),
  AWS_REGION: AwsRegion.default('us-east-1'),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
});
export type RelayConfig = z.infer<typeof RelayConfig>;

/** The relay's hold in seconds (EPHEMERA_RELAY_HOLD_SECONDS, else the functions' claim window). */
export function holdSeconds(config: RelayConfig): number {
  return config.EPHEMERA_RELAY_HOLD_SECONDS ?? config.EPHEMERA_LEASE_SECONDS + config.EPHEMERA_LEASE_SKEW_SECONDS;
}

/**
 * Whether this relay competes for the leader Lease, and why. EPHEMERA_RELAY_LEADER_ELECTION
 * when set; unset, on for the sqs and memory sinks (replicas of one deployment: one forwards)
 * and off for record: a recording relay on a laptop took part in production's election on the
 * same Lease, so it recorded nothing while production led, and took the lead (and every event)
 * from production when its Lease lapsed (review75 H1).
 */
export function leaderElection(config: RelayConfig, sink: 'sqs' | 'memory' | 'record'): { on: boolean; why: string } {
  const set = config.EPHEMERA_RELAY_LEADER_ELECTION;
  if (set !== undefined) return { on: set, why: `EPHEMERA_RELAY_LEADER_ELECTION=${String(set)}` };
  if (sink === 'record') return { on: false, why: 'the record sink records beside the relay that leads and never takes its Lease (EPHEMERA_RELAY_LEADER_ELECTION=true to join the election)' };
  return { on: true, why: `the ${sink} sink (EPHEMERA_RELAY_LEADER_ELECTION unset)` };
}

/** The leader-election Lease this relay competes for (EPHEMERA_RELAY_LEASE_NAMESPACE, EPHEMERA_LEASE_*). */
export function leaderLock(config: RelayConfig): LockConfig {
  return { namespace: config.EPHEMERA_RELAY_LEASE_NAMESPACE, holder: config.EPHEMERA_RELAY_ID, leaseSeconds: config.EPHEMERA_LEASE_SECONDS, skewSeconds: config.EPHEMERA_LEASE_SKEW_SECONDS };
}
