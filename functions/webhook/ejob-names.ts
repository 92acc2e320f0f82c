// The EphemeralJob facts the webhook needs, from the dependency-free shared module (the
// Worker bundle must not pull in zod's classic API or the Kubernetes client).
import { EJOB } from '../api/names.ts';

export { EJOB_ID_ENV, MAX_PARALLELISM } from '../api/names.ts';
/** Group and kind the webhook validates. */
export const EJOB_GROUP = EJOB.group;
export const EJOB_KIND = EJOB.kind;
