// AdmissionReview in → AdmissionReview out, pure. The HTTP layer only parses and encodes.
import { EJOB } from '../api/names.ts';
import { ADMISSION_API_VERSION, ADMISSION_KIND } from './admission.ts';
import type { AdmissionRequest, AdmissionResponse, AdmissionReviewResponse, Status } from './admission.ts';
import { errorBody, formatFieldError, formatFieldErrors, renderPath } from './field-errors.ts';
import type { FieldError } from './field-errors.ts';
import { isObject, own } from './json.ts';
import { validateEphemeralJob } from './validate.ts';
import { warningsFor } from './warnings.ts';

/** A structurally impossible review (e.g. CREATE without an object): the HTTP layer answers 400. */
export class BadReviewError extends Error {
  override name = 'BadReviewError';
}

/** Validate the request and build the response; throws BadReviewError for malformed requests. */
export function review(request: AdmissionRequest): AdmissionReviewResponse {
  return { apiVersion: ADMISSION_API_VERSION, kind: ADMISSION_KIND, response: respond(request) };
}

function respond(request: AdmissionRequest): AdmissionResponse {
  const allowed: AdmissionResponse = { uid: request.uid, allowed: true };
  const foreign = foreignKind(request);
  if (foreign) throw new BadReviewError(foreign);
  if (request.subResource) return allowed;
  const op = request.operation;
  if (op !== 'CREATE' && op !== 'UPDATE') return allowed;
  if (!isObject(request.object)) throw new BadReviewError(`request.object must be an object for ${op}`);
  if (op === 'UPDATE' && !isObject(request.oldObject)) throw new BadReviewError('request.oldObject must be an object for UPDATE');
  const errors = validateEphemeralJob(request.object, request.oldObject, op);
  const warnings = warningsFor(request.object);
  const response: AdmissionResponse = errors.length === 0
    ? allowed
    : { uid: request.uid, allowed: false, status: invalidStatus(objectName(request), errors) };
  return warnings.length > 0 ? { ...response, warnings } : response;
}

/**
 * A review for anything but an EphemeralJob means the ValidatingWebhookConfiguration's rules
 * point at the wrong resources: refused (400) rather than allowed, so the mistake shows up
 * in the API server's answer instead of silently admitting objects nobody validated.
 */
export function foreignKind(request: AdmissionRequest): string | undefined {
  const { kind, resource } = request;
  const kindOk = kind.group === EJOB.group && kind.version === EJOB.version && kind.kind === EJOB.kind;
  const resourceOk = resource.group === EJOB.group && resource.version === EJOB.version && resource.resource === EJOB.plural;
  if (kindOk && resourceOk) return undefined;
  const gv = (g: string, v: string): string => (g ? `${g}/${v}` : v);
  return `this webhook serves only ${EJOB.apiVersion} ${EJOB.kind} (resource ${EJOB.plural}); got kind ${gv(kind.group, kind.version)} ${kind.kind}, `
    + `resource ${gv(resource.group, resource.version)} ${resource.resource}: fix the rules of the ValidatingWebhookConfiguration`;
}

function objectName(request: AdmissionRequest): string {
  if (request.name) return request.name;
  const meta = own(request.object, 'metadata');
  const name = own(meta, 'name') ?? own(meta, 'generateName');
  return typeof name === 'string' ? name : '';
}

/**
 * The most field errors a denial lists. Every one is in the message and again in the causes,
 * and a job can have as many as it has env entries (a name of "1" is twelve bytes of request
 * and ~670 of answer): 30,000 of them made a 20 MiB answer that took the in-cluster webhook
 * past its memory limit, and more a stack overflow (review79). The first ones name the
 * problem as well as all of them would.
 */
const MAX_LISTED_ERRORS = 100;

/** A 422 Invalid status, worded as the API server's own (`EphemeralJob.apps.kruise.io "x" is invalid: …`); at most MAX_LISTED_ERRORS of the errors, and how many more. */
export function invalidStatus(name: string, errors: readonly FieldError[]): Status {
  const listed = errors.slice(0, MAX_LISTED_ERRORS);
  const more = errors.length - listed.length;
  // Said in the message only: a cause is a fault at a field, and none is at fault for this (review77).
  const notShown = more > 0 ? `${more} more error${more === 1 ? '' : 's'} not shown (${errors.length} in all; the first ${listed.length} are listed)` : undefined;
  return {
    status: 'Failure',
    code: 422,
    reason: 'Invalid',
    message: `${EJOB.kind}.${EJOB.group} ${JSON.stringify(name)} is invalid: ${notShown ? `[${[...listed.map(formatFieldError), notShown].join(', ')}]` : formatFieldErrors(errors)}`,
    details: { name, group: EJOB.group, kind: EJOB.kind, causes: listed.map((e) => ({ reason: e.type, message: errorBody(e), field: renderPath(e.path) })) },
  };
}
