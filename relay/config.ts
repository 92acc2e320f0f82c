import { hostname } from 'node:os';
import { z } from 'zod';

const bool = z.enum(['true', 'false']).transform((v) => v === 'true');
const hostPort = z.string().regex(/^[^:]+:\d{1,5}$/, 'HOST:PORT');

/** The relay's configuration, from the environment (validated at start). */
export const RelayConfig = z.object({
  /** Comma-separated namespaces to watch; empty: all namespaces. */
  EPHEMERA_RELAY_NAMESPACES: z.string().regex(/^([a-z0-9-]+(,[a-z0-9-]+)*)?$/, 'comma-separated namespace names').default(''),
  EPHEMERA_RELAY_RESYNC_SECONDS: z.coerce.number().int().min(10).max(86_400).default(600),
  EPHEMERA_RELAY_COALESCE_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  EPHEMERA_RELAY_BUFFER_MAX: z.coerce.number().int().min(1).max(1_000_000).default(50_000),
  /** /readyz fails while the sink has taken nothing for longer than this. */
  EPHEMERA_RELAY_DELIVERY_GRACE_SECONDS: z.coerce.number().int().min(1).max(86_400).default(120),
  /** Deadline of one send to the queue (SendMessageBatch with its retries; one in-process handling). */
  EPHEMERA_RELAY_SEND_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(900).default(10),
  EPHEMERA_RELAY_LISTEN: hostPort.default('0.0.0.0:8080'),
  EPHEMERA_RELAY_ID: z.string().min(1).default(hostname()),
  /** This cluster's name, stamped on every envelope so one function deployment can serve many. */
  EPHEMERA_RELAY_CLUSTER: z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'a cluster name (lower-case letters, digits, "-" and ".")').max(100).optional(),
  EPHEMERA_RELAY_LEADER_ELECTION: bool.default(true),
  EPHEMERA_RELAY_LEASE_NAMESPACE: z.string().min(1).default('ephemera-system'),
  EPHEMERA_SQS_QUEUE_URL: z.url().optional(),
  EPHEMERA_SQS_ENDPOINT: z.url().optional(),
  AWS_REGION: z.string().min(1).default('us-east-1'),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
});
export type RelayConfig = z.infer<typeof RelayConfig>;
