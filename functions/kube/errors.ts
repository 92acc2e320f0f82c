/**
 * How a failed API call should be treated. The engine decides retry/requeue/dead-letter
 * from this class alone (sqs-consumer style: a few classes, the original kept as cause).
 */
export const KUBE_ERROR_CLASSES = [
  'transient', // 408, 429, 5xx, timeouts, resets: retry with backoff, then requeue
  'conflict', // 409 Conflict on a fenced write: re-read and re-plan
  'already-exists', // 409 AlreadyExists on create
  'not-found', // 404 naming an object (metav1.Status details.name): that object is absent
  // 404 naming nothing: a path the server does not serve (a CRD not installed, or not served
  // yet after a restart: kubernetes#71218; a subresource an older server lacks). Says nothing
  // of any object: never "absent"; a write there is refused.
  'unserved',
  'invalid', // 422: the request was understood and refused
  'terminal', // any other 4xx (400, 401, 403, …): will not succeed by retrying (401: unless a fresh credential cures it; callers handle it apart)
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
  /** metav1.Status details.name: the object the answer is about, if it names one. */
  readonly objectName: string | undefined;
  /** metav1.Status details.kind: the resource (plural, `namespaces`) of the object it names, if it names one. */
  readonly objectKind: string | undefined;

  constructor(init: {
    status: number;
    reason?: string;
    message: string;
    retryAfterSeconds?: number;
    causes?: { field?: string; message?: string; reason?: string }[];
    objectName?: string;
    objectKind?: string;
    cause?: unknown;
    /** How to treat it, when the status and reason alone would mislead. */
    errorClass?: KubeErrorClass;
  }) {
    super(init.message, { cause: init.cause });
    this.name = 'KubeError';
    this.status = init.status;
    this.reason = init.reason ?? '';
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.causes = init.causes ?? [];
    this.objectName = init.objectName;
    this.objectKind = init.objectKind;
    this.errorClass = init.errorClass ?? classify(init.status, this.reason, init.objectName, init.message);
  }
}

function classify(status: number, reason: string, name: string | undefined, message: string): KubeErrorClass {
  // etcd refusing an object over its request limit (1.5 MiB): kube-apiserver answers 500
  // "etcdserver: request is too large" (kubernetes#112152). Sending it again cannot help: an
  // injection into a pod grown that large is refused for good, told on the pod and the job
  // (review: retried, then redelivered until dead-lettered, with nothing on the job).
  // (its gRPC form, "trying to send message larger than max", too: kube-apiserver's storage
  // takes both for too large).
  if (status === 500 && (message.includes('request is too large') || message.includes('trying to send message larger than max'))) return 'terminal';
  // 408: the server gave up waiting for the request (a slow or stalled connection); the
  // same request may well succeed again, unlike the other 4xx.
  if (status === 0 || status === 408 || status === 429 || status >= 500) return 'transient';
  if (status === 409) return reason === 'AlreadyExists' ? 'already-exists' : 'conflict';
  // kube-apiserver's NotFound for an object names it (details.name); a 404 that names
  // nothing is a path it does not serve (a CRD not installed or not served yet, a subresource
  // an older server lacks: kubernetes#71218), which says nothing of any object (review).
  if (status === 404) return name ? 'not-found' : 'unserved';
  if (status === 422) return 'invalid';
  return 'terminal';
}

/** core/v1 NamespaceTerminatingCause: the cause NamespaceLifecycle gives a create refused in a namespace being deleted. */
export const NAMESPACE_TERMINATING_CAUSE = 'NamespaceTerminating';

/**
 * Whether `err` refused a write in `namespace` because that namespace is being deleted or
 * is gone, as kube-apiserver's NamespaceLifecycle admission answers every create there
 * (staging/src/k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle/admission.go):
 * - while it is Terminating, 403 Forbidden with a StatusCause of type NamespaceTerminating
 *   (serialised as `reason`) on `metadata.namespace`. The cause decides, not the message,
 *   as client-go's apierrors.HasStatusCause does: a 403 of RBAC, Pod Security or a webhook
 *   carries no such cause;
 * - once it is gone, the namespace's own NotFound: 404 naming it (details.name the
 *   namespace, details.kind `namespaces`), not the object written.
 */
export function namespaceEnding(err: KubeError, namespace: string): boolean {
  if (err.status === 403) return err.causes.some((c) => c.reason === NAMESPACE_TERMINATING_CAUSE);
  return err.status === 404 && err.objectKind === 'namespaces' && err.objectName === namespace;
}

/**
 * The KubeError of a refusal no retry can change, if that is what `err` is: the first
 * KubeError in its cause chain decides (its own cause is the client's business), and a 401
 * is not one (a fresh credential may cure it; callers handle it apart). One judgement for
 * the engine, the SQS consumer and the memory sink.
 */
export function refusedForGood(err: unknown): KubeError | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof KubeError) return (e.errorClass === 'terminal' || e.errorClass === 'invalid' || e.errorClass === 'unserved') && e.status !== 401 ? e : undefined;
  }
  return undefined;
}

/**
 * The wait the API server asked for (its Retry-After, whole seconds) with the first KubeError
 * in `err`'s cause chain, when it asked for one (a 429 or 503 throttle); undefined otherwise.
 */
export function askedRetrySeconds(err: unknown): number | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof KubeError) return e.retryAfterSeconds !== undefined && e.retryAfterSeconds > 0 ? e.retryAfterSeconds : undefined;
  }
  return undefined;
}

/** True for KubeErrors of the given classes. */
export function isKubeError(err: unknown, ...classes: KubeErrorClass[]): err is KubeError {
  return err instanceof KubeError && (classes.length === 0 || classes.includes(err.errorClass));
}
