import { z } from 'zod';
import { SIDECAR_STRATEGIES } from './sidecar/config.ts';

/**
 * The functions' configuration, from the environment. Every variable is optional with a
 * default; a bad value stops the process with the variable's name and what was expected.
 */
export const FunctionsConfig = z.object({
  EPHEMERA_LOCK_NAMESPACE: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'a namespace name (DNS-1123 label)').default('ephemera-locks'),
  EPHEMERA_LEASE_SECONDS: z.coerce.number().int().min(1).max(300).default(15),
  EPHEMERA_LEASE_SKEW_SECONDS: z.coerce.number().int().min(0).max(60).default(5),
  EPHEMERA_API_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /** How sidecars are ended: OpenKruise CRRs (needs kruise-daemon) or an ephemeral container that signals them. */
  // The sidecar's defaults live in SidecarOptions; unset passes through to them.
  EPHEMERA_SIDECAR_STRATEGY: z.enum(SIDECAR_STRATEGIES).optional(),
  EPHEMERA_SIGNAL_IMAGE: z.string().trim().min(1, 'an image reference').optional(),
  EPHEMERA_CONTROLLERS: z.string().regex(/^(ejob|sidecar)(,(ejob|sidecar))*$/, 'a comma-separated list of: ejob, sidecar').default('ejob,sidecar'),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
});
export type FunctionsConfig = z.infer<typeof FunctionsConfig>;

/** A configuration problem, naming the variable. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Parse a schema from an environment; errors read "EPHEMERA_LEASE_SECONDS: expected …, got "abc"". */
export function parseEnv<S extends z.ZodType>(schema: S, env: Record<string, string | undefined>): z.infer<S> {
  const r = schema.safeParse(env);
  if (r.success) return r.data;
  const lines = r.error.issues.map((i) => {
    const name = String(i.path[0] ?? '?');
    return `${name}: ${i.message} (got ${JSON.stringify(env[name])})`;
  });
  throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
}
