// The webhook's public surface.
export { createWebhookApp, parseReview, WEBHOOK_PATH, MAX_BODY_BYTES } from './app.ts';
export type { WebhookAppOptions, WebhookLog } from './app.ts';
export * from './admission.ts';
export { review, invalidStatus, BadReviewError } from './review.ts';
export { validateEphemeralJob } from './validate.ts';
export type { Operation } from './validate.ts';
export { warningsFor } from './warnings.ts';
export * from './field-errors.ts';
