import type { FunctionsConfig } from '../config.ts';
import type { Controller } from '../engine/controller.ts';

/** Placeholder until the sidecar controller lands: routes nothing. */
export function sidecarControllerFromConfig(_config: FunctionsConfig): Controller<unknown> {
  return {
    name: 'sidecar',
    route: async () => ({ keys: [], skipped: 'sidecar controller not built yet' }),
    observe: async () => null,
    plan: () => ({ actions: [] }),
  };
}
