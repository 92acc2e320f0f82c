import { quoted } from '../api/quoted.ts';
import type { Pod } from '../api/pod.ts';
import { SIDECAR_STRATEGIES, type SidecarOptions, type SidecarStrategy } from './config.ts';
import type { Due } from './predicate.ts';
import type { SidecarInfo } from './env.ts';

/** Per-pod choice of strategy, overriding the installation's default. */
export const STRATEGY_ANNOTATION = 'ephemera.io/sidecar-termination';

export type StrategyChoice = { ok: true; strategy: SidecarStrategy } | { ok: false; reason: string };

/**
 * The pod's strategy: its annotation, else the default. An unknown value is refused, not
 * guessed: it is a typo, and either guess could be the one the user did not want.
 */
export function podStrategy(pod: Pod, options: SidecarOptions): StrategyChoice {
  const value = pod.metadata.annotations?.[STRATEGY_ANNOTATION];
  if (value === undefined) return { ok: true, strategy: options.defaultStrategy };
  const known = SIDECAR_STRATEGIES.find((s) => s === value.trim());
  if (known) return { ok: true, strategy: known };
  return { ok: false, reason: `annotation ${STRATEGY_ANNOTATION}=${JSON.stringify(quoted(value, 64))} is not one of ${SIDECAR_STRATEGIES.join(', ')}` };
}

/** Which sidecars to stop now on a normal node, and as which stage. */
export interface Stage {
  stage: 'sidecars' | 'ignore-exit-code';
  sidecars: SidecarInfo[];
}

/**
 * Sidecars not marked KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE are stopped first. The
 * marked ones wait until every other sidecar has terminated; then the pod's phase is set
 * from the main containers alone (the first stage's exit codes do not count either, as in
 * OpenKruise's markJobPodTerminated) and they are stopped.
 */
export function currentStage(due: Due): Stage | null {
  const first = due.unterminated.filter((s) => !s.ignoreExitCode);
  if (first.length > 0) return { stage: 'sidecars', sidecars: first };
  const second = due.unterminated.filter((s) => s.ignoreExitCode);
  return second.length > 0 ? { stage: 'ignore-exit-code', sidecars: second } : null;
}
