// The few EphemeralJob facts the webhook needs, without zod's classic API: importing
// functions/api/ephemeraljob.ts would pull all of zod (with every locale, ~450 KB) into the
// Worker. test/webhook/ejob-names.test.ts keeps these equal to the shared definitions.

/** Group and kind the webhook validates. */
export const EJOB_GROUP = 'apps.kruise.io';
export const EJOB_KIND = 'EphemeralJob';
/** Upper bound of spec.parallelism. */
export const MAX_PARALLELISM = 10;
/** The env var the controller sets on each injected container (value: the job's uid). */
export const EJOB_ID_ENV = 'KRUISE_EJOB_ID';
