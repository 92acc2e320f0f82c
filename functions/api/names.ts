// EphemeralJob's names and constants, free of any dependency, so the Worker bundle (the
// webhook) and the relay can import them without pulling in zod or the Kubernetes client.

/** Group, version and names of OpenKruise's EphemeralJob, kept identical so clusters can switch. */
export const EJOB = {
  group: 'apps.kruise.io',
  version: 'v1alpha1',
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'EphemeralJob',
  plural: 'ephemeraljobs',
  shortName: 'ejob',
} as const;

/** Env var that marks an ephemeral container as owned by a job (value: the job's uid). */
export const EJOB_ID_ENV = 'KRUISE_EJOB_ID';
/** OpenKruise's finalizer; ephemeral containers cannot be removed, so we only drop it. */
export const EJOB_CLEANUP_FINALIZER = 'apps.kruise.io/ephemeralcontainers-cleanup';
/** OpenKruise's default for an unset ttlSecondsAfterFinished. */
export const DEFAULT_TTL_AFTER_FINISHED_SECONDS = 1800;
/** Upper bound of spec.parallelism. */
export const MAX_PARALLELISM = 10;
