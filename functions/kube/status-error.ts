// An API server's error answer (a metav1.Status body, or whatever a proxy put there) as a
// classified KubeError; shared by both Kube implementations so they fail alike.
import { KubeError } from './errors.ts';

interface StatusBody {
  reason?: string;
  message?: string;
  details?: { causes?: { field?: string; message?: string; reason?: string }[] };
}

/** The KubeError for an HTTP error answer: code, its body (text or parsed) and its Retry-After header. */
export function statusError(code: number, body: unknown, retryAfterHeader: string | undefined, cause: unknown): KubeError {
  const status = parseStatus(body);
  // Retry-After may also be an HTTP date; only the seconds form is used by the API server.
  const retryAfter = Number(retryAfterHeader);
  return new KubeError({
    status: code,
    reason: status.reason,
    message: status.message ?? `HTTP ${code}`,
    causes: status.details?.causes,
    retryAfterSeconds: retryAfterHeader !== undefined && Number.isFinite(retryAfter) ? retryAfter : undefined,
    cause,
  });
}

/** A request that got no answer (reset, refused, timed out): status 0, transient. */
export function networkError(err: unknown): KubeError {
  if (err instanceof KubeError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new KubeError({ status: 0, reason: 'NetworkError', message, cause: err });
}

function parseStatus(body: unknown): StatusBody {
  if (typeof body === 'string') {
    try {
      return parseStatus(JSON.parse(body));
    } catch {
      return { message: body.slice(0, 500) };
    }
  }
  return body && typeof body === 'object' ? (body as StatusBody) : {};
}
