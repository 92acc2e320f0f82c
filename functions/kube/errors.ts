/**
 * How a failed API call should be treated. The engine decides retry/requeue/dead-letter
 * from this class alone (sqs-consumer style: a few classes, the original kept as cause).
 */
export const KUBE_ERROR_CLASSES = [
  'transient', // 408, 429, 5xx, timeouts, resets: retry with backoff, then requeue
  'conflict', // 409 Conflict on a fenced write: re-read and re-plan
  'already-exists', // 409 AlreadyExists on create
  'not-found', // 404
  'invalid', // 422: the request was understood and refused
  'terminal', // any other 4xx (400, 401, 403, …): will not succeed by retrying
] as const;
export type KubeErrorClass = (typeof KUBE_ERROR_CLASSES)[number];

/** A failed API call, classified. */
export class KubeError extends Error {
  readonly status: number;
  readonly reason: string;
  readonly errorClass: KubeErrorClass;
  readonly retryAfterSeconds: number | undefined;
  /** metav1.Status details.causes, for 422s (field, message, reason). */
  readonly causes: { field?: string; message?: string; reason?: string }[];

  constructor(init: {
    status: number;
    reason?: string;
    message: string;
    retryAfterSeconds?: number;
    causes?: { field?: string; message?: string; reason?: string }[];
    cause?: unknown;
  }) {
    super(init.message, { cause: init.cause });
    this.name = 'KubeError';
    this.status = init.status;
    this.reason = init.reason ?? '';
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.causes = init.causes ?? [];
    this.errorClass = classify(init.status, this.reason);
  }
}

function classify(status: number, reason: string): KubeErrorClass {
  // 408: the server gave up waiting for the request (a slow or stalled connection); the
  // same request may well succeed again, unlike the other 4xx.
  if (status === 0 || status === 408 || status === 429 || status >= 500) return 'transient';
  if (status === 409) return reason === 'AlreadyExists' ? 'already-exists' : 'conflict';
  if (status === 404) return 'not-found';
  if (status === 422) return 'invalid';
  return 'terminal';
}

/** True for KubeErrors of the given classes. */
export function isKubeError(err: unknown, ...classes: KubeErrorClass[]): err is KubeError {
  return err instanceof KubeError && (classes.length === 0 || classes.includes(err.errorClass));
}
