import * as z from 'zod';
import { SIDECAR_STRATEGIES } from './sidecar/config.ts';

/** A namespace name (DNS-1123 label), as the API server checks one. */
export const NamespaceName = z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'a namespace name (DNS-1123 label)').max(63);

/**
 * An image reference as the kubelet parses it (distribution/reference): an optional registry
 * host, lower-case path components, an optional tag and digest. Anything else the kubelet
 * answers InvalidImageName for every signal container, and an ephemeral container, once
 * added, stays in the pod (review77 H3).
 */
const IMAGE_REFERENCE = /^(?:(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:.]+\])(?::[0-9]+)?\/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$/;

/** An AWS region name (us-east-1, us-gov-west-1, eusc-de-east-1). */
export const AwsRegion = z.string().regex(/^[a-z]{2,4}(-[a-z]+)+-\d+$/, 'an AWS region name, such as eu-west-1');

/**
 * The functions' configuration, from the environment. Every variable is optional with a
 * default; a bad value stops the process with the variable's name and what was expected.
 */
export const FunctionsConfig = z.object({
  EPHEMERA_LOCK_NAMESPACE: NamespaceName.default('ephemera-locks'),
  EPHEMERA_LEASE_SECONDS: z.coerce.number().int().min(1).max(300).default(15),
  // At least 2: a claim's injection must land within `skew − 1 s − latency` of its last
  // possible send (the Date header's 1 s resolution; ejob/README.md step 4), and each attempt
  // is answered or abandoned within `skew − 1.5 s` (engine/lock.ts landingMarginMs). With 0
  // or 1 that margin is gone, and parallelism can be exceeded (time review).
  EPHEMERA_LEASE_SKEW_SECONDS: z.coerce.number().int().min(2, 'at least 2 (seconds): 1 s of the Date header\'s resolution plus a request\'s latency, see functions/ejob/README.md step 4').max(60).default(5),
  // Per request; an injection's attempts get at most what is left of their deadline, which
  // the API server is sent too (engine/apply.ts; review87 F1): this need not fit the skew.
  EPHEMERA_API_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /** How sidecars are ended: OpenKruise CRRs (needs kruise-daemon) or an ephemeral container that signals them. */
  // The sidecar's defaults live in SidecarOptions; unset passes through to them.
  EPHEMERA_SIDECAR_STRATEGY: z.enum(SIDECAR_STRATEGIES).optional(),
  EPHEMERA_SIGNAL_IMAGE: z.string().trim().max(4096).regex(IMAGE_REFERENCE, 'an image reference, such as busybox:1.36 or registry.example.com/tools/busybox@sha256:…').optional(),
  EPHEMERA_CONTROLLERS: z.string().regex(/^(ejob|sidecar)(,(ejob|sidecar))*$/, 'a comma-separated list of: ejob, sidecar').default('ejob,sidecar'),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
});
export type FunctionsConfig = z.infer<typeof FunctionsConfig>;

/**
 * Where a server listens. `:PORT` is every interface, IPv6 and IPv4: no host is passed to
 * Node, which then binds `::` (dual stack) where the machine has IPv6 and 0.0.0.0 where it
 * has not, so a probe reaches the pod on an IPv6-only cluster too. `0.0.0.0:PORT` is IPv4
 * only, `[::1]:PORT` one IPv6 address. Port 0 picks any free port.
 */
export interface ListenAddress { host?: string; port: number }

/** `HOST:PORT`, `[IPv6]:PORT` or `:PORT`, port 0–65535; undefined for anything else. */
export function parseListen(value: string): ListenAddress | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(value);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) return undefined;
  const host = m[1] ?? m[2];
  return host ? { host, port } : { port };
}

/** An address as `parseListen` reads it back: `[::1]:8443`, `127.0.0.1:0`, `:8080`. */
export function formatListen(address: ListenAddress): string {
  const host = address.host === undefined ? '' : address.host.includes(':') ? `[${address.host}]` : address.host;
  return `${host}:${address.port}`;
}

/**
 * Why a listener whose address `variable` sets could not bind, in one line naming the
 * variable to change; `what` says what listens there (review: the relay's port in use was
 * "an address is already in use", naming no variable).
 */
export function bindFailure(variable: string, address: ListenAddress, what: string, err: unknown): string {
  const code = (err as { code?: string }).code;
  const why = code === 'EADDRINUSE' ? 'is already in use' : code === 'EACCES' ? 'is not ours to bind (EACCES)' : `cannot be bound (${code ?? (err as Error).message})`;
  return `${formatListen(address)} (${what}) ${why}; set ${variable} to a free HOST:PORT (${formatListen({ ...address, port: 0 })} picks any free port)`;
}

/** A listen address in a variable, checked where the variable is named. */
export const Listen = z.string().transform((value, ctx) => {
  const address = parseListen(value);
  if (address) return address;
  ctx.addIssue({ code: 'custom', message: 'expected HOST:PORT, [IPv6]:PORT or :PORT (every interface) with a port from 0 to 65535' });
  return z.NEVER;
});

/** A configuration problem, naming the variable. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * A variable's value as an error may show it: a short setting as it is; a long value, or one
 * whose name says it may hold a credential (EPHEMERA_CLUSTERS can carry a token), only its
 * length — configuration errors reach CloudWatch and the relay's log (security review).
 */
function shown(name: string, value: string | undefined): string {
  if (value === undefined) return 'undefined';
  if (value.length > 64 || /CLUSTERS|TOKEN|SECRET|PASSWORD|KEY|CREDENTIAL/.test(name)) return `${value.length} characters, not shown`;
  return JSON.stringify(value);
}

/**
 * Where in a structured value (EPHEMERA_CLUSTERS' JSON) an issue is, and what it says: a
 * record key's own rule, and of a union the branch that got furthest (its issue deepest in
 * the value), else the union's message. The value itself is not shown (it may hold a
 * credential), so "Invalid input" alone left the operator nothing to fix (review77 L1).
 */
function within(issue: z.core.$ZodIssue, at: PropertyKey[]): { at: string[]; message: string } {
  const path = at.map(String);
  if (issue.code === 'invalid_key' && issue.issues[0]) return { at: path, message: `the key: ${issue.issues[0].message}` };
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return { at: path, message: issue.message };
  const deepest = issue.errors.flat().reduce<z.core.$ZodIssue | undefined>((best, i) => (best === undefined || i.path.length > best.path.length ? i : best), undefined);
  if (deepest === undefined || deepest.path.length < 2) return { at: path, message: issue.message };
  return within(deepest, [...at, ...deepest.path]);
}

/** Parse a schema from an environment; errors read "EPHEMERA_LEASE_SECONDS: expected …, got "abc"". */
export function parseEnv<S extends z.ZodType>(schema: S, env: Record<string, string | undefined>): z.infer<S> {
  // An empty variable is an unset one, as a manifest's `value: ''` means: its default, never
  // 0 (z.coerce.number() took '' for 0: a hold or coalescing window of nothing, review), and
  // so is one of spaces alone (Number(' ') is 0 as well: review77 H3).
  const r = schema.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v === undefined || v.trim() !== '')));
  if (r.success) return r.data;
  const lines = r.error.issues.map((i) => {
    const name = String(i.path[0] ?? '?');
    const { at, message } = within(i, i.path.slice(1));
    return `${name}${at.length > 0 ? ` at ${at.join('.')}` : ''}: ${message} (got ${shown(name, env[name])})`;
  });
  throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
}
