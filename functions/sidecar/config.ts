import * as z from 'zod';
import type { FunctionsConfig } from '../config.ts';

/** How a sidecar is stopped on a normal node. */
export const SIDECAR_STRATEGIES = ['crr', 'ephemeral-signal'] as const;
export type SidecarStrategy = (typeof SIDECAR_STRATEGIES)[number];

/**
 * The sidecar controller's options. Passed in by the runtime (never read from the
 * environment here), validated once at start.
 */
export const SidecarOptions = z.object({
  /** Used when a pod has no strategy annotation. */
  defaultStrategy: z.enum(SIDECAR_STRATEGIES).default('crr'),
  /** Image of the ephemeral container that signals a sidecar; it must provide `command`. */
  signalImage: z.string().trim().min(1).default('busybox:1.36'),
  /** Run in the sidecar's process namespace; PID 1 there is the sidecar's main process. */
  signalCommand: z.array(z.string().min(1)).min(1).default(['kill', '-TERM', '1']),
  /**
   * After this long with a sidecar still running once termination was issued, record a
   * Warning Event on the pod saying so (kruise-daemon absent, SIGTERM ignored, …).
   */
  stuckAfterSeconds: z.number().int().min(1).max(86_400).default(120),
});
export type SidecarOptions = z.infer<typeof SidecarOptions>;

/** Options with every default, for tests and embedded use. */
export const DEFAULT_SIDECAR_OPTIONS: SidecarOptions = SidecarOptions.parse({});

/** The sidecar options from the functions' environment configuration. */
export function sidecarOptionsFromConfig(config: Pick<FunctionsConfig, 'EPHEMERA_SIDECAR_STRATEGY' | 'EPHEMERA_SIGNAL_IMAGE'>): SidecarOptions {
  return SidecarOptions.parse({ defaultStrategy: config.EPHEMERA_SIDECAR_STRATEGY, signalImage: config.EPHEMERA_SIGNAL_IMAGE });
}
