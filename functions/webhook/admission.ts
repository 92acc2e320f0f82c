// AdmissionReview v1 (admission.k8s.io/v1): the one definition of the webhook's wire format.
// Requests are read leniently (unknown fields pass, so a newer API server still works);
// responses are strict, so we never send a field the API server would reject.
import { z } from 'zod';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';
export const ADMISSION_KIND = 'AdmissionReview';

const GroupVersionKind = z.looseObject({ group: z.string(), version: z.string(), kind: z.string() });
const GroupVersionResource = z.looseObject({ group: z.string(), version: z.string(), resource: z.string() });

/** request of an AdmissionReview; object and oldObject stay raw for the validator to judge. */
export const AdmissionRequest = z.looseObject({
  uid: z.string().min(1),
  kind: GroupVersionKind,
  resource: GroupVersionResource,
  subResource: z.string().optional(),
  requestKind: GroupVersionKind.optional(),
  requestResource: GroupVersionResource.optional(),
  requestSubResource: z.string().optional(),
  name: z.string().optional(),
  namespace: z.string().optional(),
  // CREATE, UPDATE, DELETE or CONNECT today; any other value is let through, not refused.
  operation: z.string().min(1),
  userInfo: z.unknown().optional(),
  object: z.unknown().optional(),
  oldObject: z.unknown().optional(),
  dryRun: z.boolean().optional(),
  options: z.unknown().optional(),
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
  status: z.enum(['Success', 'Failure']).optional(),
  code: z.number().int(),
  reason: z.string().optional(),
  message: z.string(),
  details: z.strictObject({
    name: z.string().optional(),
    group: z.string().optional(),
    kind: z.string().optional(),
    causes: z.array(StatusCause).optional(),
  }).optional(),
});
export type Status = z.infer<typeof Status>;

/** response of an AdmissionReview (a validating webhook: no patch). */
export const AdmissionResponse = z.strictObject({
  uid: z.string().min(1),
  allowed: z.boolean(),
  status: Status.optional(),
  warnings: z.array(z.string().max(120)).optional(),
});
export type AdmissionResponse = z.infer<typeof AdmissionResponse>;

/** The AdmissionReview the webhook answers with. */
export const AdmissionReviewResponse = z.strictObject({
  apiVersion: z.literal(ADMISSION_API_VERSION),
  kind: z.literal(ADMISSION_KIND),
  response: AdmissionResponse,
});
export type AdmissionReviewResponse = z.infer<typeof AdmissionReviewResponse>;
