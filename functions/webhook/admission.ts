// AdmissionReview v1 (admission.k8s.io/v1): the one definition of the webhook's wire format.
// Requests are read leniently (unknown fields pass, so a newer API server still works);
// responses are strict, so we never send a field the API server would reject.
// zod/mini, not classic zod: same schemas, but tree-shakeable, which keeps the Worker
// bundle at a few dozen KiB instead of half a megabyte.
import * as z from 'zod/mini';
import { en } from 'zod/locales';
import { formatZodIssues } from '../api/field-path.ts';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';
export const ADMISSION_KIND = 'AdmissionReview';

const GroupVersionKind = z.looseObject({ group: z.string(), version: z.string(), kind: z.string() });
const GroupVersionResource = z.looseObject({ group: z.string(), version: z.string(), resource: z.string() });
const nonEmpty = z.string().check(z.minLength(1));

/** request of an AdmissionReview; object and oldObject stay raw for the validator to judge. */
export const AdmissionRequest = z.looseObject({
  uid: nonEmpty,
  kind: GroupVersionKind,
  resource: GroupVersionResource,
  subResource: z.optional(z.string()),
  requestKind: z.optional(GroupVersionKind),
  requestResource: z.optional(GroupVersionResource),
  requestSubResource: z.optional(z.string()),
  name: z.optional(z.string()),
  namespace: z.optional(z.string()),
  // CREATE, UPDATE, DELETE or CONNECT today; any other value is let through, not refused.
  operation: nonEmpty,
  userInfo: z.optional(z.unknown()),
  object: z.optional(z.unknown()),
  oldObject: z.optional(z.unknown()),
  dryRun: z.optional(z.boolean()),
  options: z.optional(z.unknown()),
});
export type AdmissionRequest = z.infer<typeof AdmissionRequest>;

/** The AdmissionReview the API server POSTs. */
export const AdmissionReviewRequest = z.looseObject({
  apiVersion: z.literal(ADMISSION_API_VERSION),
  kind: z.literal(ADMISSION_KIND),
  request: AdmissionRequest,
});
export type AdmissionReviewRequest = z.infer<typeof AdmissionReviewRequest>;

/** metav1.StatusCause: one field error, in the form clients such as kubectl understand. */
export const StatusCause = z.strictObject({ reason: z.string(), message: z.string(), field: z.string() });

/** metav1.Status as an AdmissionResponse carries it. */
export const Status = z.strictObject({
  status: z.optional(z.enum(['Success', 'Failure'])),
  code: z.number().check(z.int()),
  reason: z.optional(z.string()),
  message: z.string(),
  details: z.optional(z.strictObject({
    name: z.optional(z.string()),
    group: z.optional(z.string()),
    kind: z.optional(z.string()),
    causes: z.optional(z.array(StatusCause)),
  })),
});
export type Status = z.infer<typeof Status>;

/** Kubernetes recommends warnings of at most 120 characters. */
export const MAX_WARNING_LENGTH = 120;

/** response of an AdmissionReview (a validating webhook: no patch). */
export const AdmissionResponse = z.strictObject({
  uid: nonEmpty,
  allowed: z.boolean(),
  status: z.optional(Status),
  warnings: z.optional(z.array(z.string().check(z.maxLength(MAX_WARNING_LENGTH)))),
});
export type AdmissionResponse = z.infer<typeof AdmissionResponse>;

/** The AdmissionReview the webhook answers with. */
export const AdmissionReviewResponse = z.strictObject({
  apiVersion: z.literal(ADMISSION_API_VERSION),
  kind: z.literal(ADMISSION_KIND),
  response: AdmissionResponse,
});
export type AdmissionReviewResponse = z.infer<typeof AdmissionReviewResponse>;

const english = en().localeError;

/** Parse an AdmissionReview request; on failure, one line naming each bad field. */
export function parseAdmissionReview(json: unknown): { ok: true; review: AdmissionReviewRequest } | { ok: false; message: string } {
  const r = z.safeParse(AdmissionReviewRequest, json, { error: english });
  if (r.success) return { ok: true, review: r.data };
  return { ok: false, message: formatZodIssues(r.error.issues, '') };
}
