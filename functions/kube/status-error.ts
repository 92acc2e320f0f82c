// An API server's error answer (a metav1.Status body, or whatever a proxy put there) as a
// classified KubeError; shared by both Kube implementations so they fail alike.
import { isRecord } from '../api/json-equal.ts';
import { KubeError } from './errors.ts';

type Cause = { field?: string; message?: string; reason?: string };

interface StatusBody {
  reason?: string;
  message?: string;
  name?: string;
  kind?: string;
  causes?: Cause[];
}

/** The longest Retry-After taken, in seconds (a proxy's day-long one must not park a key for a day). */
export const MAX_RETRY_AFTER_SECONDS = 60;

/**
 * A Retry-After of whole seconds (what kube-apiserver sends: API Priority and Fairness' 429,
 * the watch cache's 429 while it initialises, 503, 504, a watch ERROR's retryAfterSeconds),
 * at most MAX_RETRY_AFTER_SECONDS; undefined if none (an HTTP date, "1e9", "-1").
 */
export function retryAfterSeconds(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
  return Number.isFinite(n) && n >= 0 ? Math.min(n, MAX_RETRY_AFTER_SECONDS) : undefined;
}

/** The KubeError for an HTTP error answer: code, its body (text or parsed) and its Retry-After header. */
export function statusError(code: number, body: unknown, retryAfterHeader: string | undefined, cause: unknown): KubeError {
  const status = parseStatus(body);
  const retryAfter = retryAfterSeconds(retryAfterHeader);
  return new KubeError({
    status: code,
    reason: status.reason,
    message: conciseMessage(status.message, status.causes) ?? `HTTP ${code}`,
    causes: status.causes,
    objectName: status.name,
    objectKind: status.kind,
    retryAfterSeconds: retryAfter,
    cause,
  });
}

/**
 * kube-apiserver's answer to a patch under fieldValidation=Strict that names a field it does
 * not know quotes the whole patch first, as Go prints a map (` "" is invalid: patch: Invalid
 * value: "map[…]": strict decoding error: unknown field "spec.x"`, handlers/patch.go): the
 * field, which is what a reader needs, came after a template's every value and was cut from
 * a 1 KiB Event. Kept: the cause's field and the decoding error.
 */
function conciseMessage(message: string | undefined, causes: Cause[] | undefined): string | undefined {
  const at = message?.lastIndexOf('strict decoding error: ') ?? -1;
  if (message === undefined || at < 0 || !message.includes('Invalid value: ')) return message;
  const field = causes?.length === 1 ? causes[0]?.field : undefined;
  return `${field ? `${field}: ` : ''}${message.slice(at)}`;
}

/**
 * The answer to a read (GET, LIST) that was 404: null when it names the object read, as
 * kube-apiserver's NotFound does; anything else (a path not served: class `unserved`) says
 * nothing of the object and is thrown, never taken for "gone" (review: a live job's Lease
 * was deleted that way, and replicas exceeded).
 */
export function readNotFound(err: KubeError, name: string | undefined): null {
  if (name !== undefined && err.errorClass === 'not-found' && err.objectName === name) return null;
  throw err;
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
  return body && typeof body === 'object' ? checked(body as Record<string, unknown>) : {};
}

/** Only the fields of a Status that have their types: a proxy's odd body must not break the callers that read them (review). */
function checked(body: Record<string, unknown>): StatusBody {
  const details = isRecord(body['details']) ? body['details'] : {};
  const causes = Array.isArray(details['causes']) ? details['causes'].filter(isRecord).map(cause) : undefined;
  return {
    ...text('reason', body['reason']),
    ...text('message', body['message']),
    ...text('name', details['name']),
    ...text('kind', details['kind']),
    ...(causes ? { causes } : {}),
  };
}

function cause(c: Record<string, unknown>): Cause {
  return { ...text('field', c['field']), ...text('message', c['message']), ...text('reason', c['reason']) };
}

function text<K extends string>(key: K, v: unknown): Partial<Record<K, string>> {
  return typeof v === 'string' && v !== '' ? ({ [key]: v } as Partial<Record<K, string>>) : {};
}

