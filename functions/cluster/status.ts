// metav1.Status answers and field errors, shaped like the real API server's
// (k8s.io/apimachinery/pkg/api/errors and pkg/util/validation/field).

/** A metav1.StatusCause: one field error inside an Invalid status. */
export interface StatusCause {
  reason: string;
  message: string;
  field: string;
}

/** A metav1.Status body. */
export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: { name?: string; group?: string; kind?: string; uid?: string; causes?: StatusCause[]; retryAfterSeconds?: number };
  code: number;
}

const REASON_BY_CODE: Record<number, string> = {
  400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 405: 'MethodNotAllowed',
  406: 'NotAcceptable', 409: 'Conflict', 410: 'Expired', 415: 'UnsupportedMediaType', 422: 'Invalid',
  429: 'TooManyRequests', 500: 'InternalError', 503: 'ServiceUnavailable', 504: 'Timeout',
};

/** The metav1.StatusReason the API server uses for an HTTP code ('Unknown' when it has none). */
export function reasonForCode(code: number): string {
  return REASON_BY_CODE[code] ?? 'Unknown';
}

/** An API error: thrown inside the fake server, written to the client as a metav1.Status. */
export class ApiError extends Error {
  readonly status: StatusBody;
  readonly headers: Record<string, string>;
  /** What the answer does not say but a run's history should (a JSON Patch's own error). */
  readonly detail: string | undefined;

  constructor(status: Omit<StatusBody, 'kind' | 'apiVersion' | 'metadata' | 'status'>, headers: Record<string, string> = {}, detail?: string) {
    super(status.message ?? status.reason ?? `HTTP ${status.code}`);
    this.name = 'ApiError';
    this.status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', ...status };
    this.headers = headers;
    this.detail = detail;
  }

  get code(): number {
    return this.status.code;
  }
}

/** Names the object an error is about: plural resource, group, name. */
export interface Subject {
  resource: string;
  group: string;
  name: string;
}

function qualified(s: Subject): string {
  return s.group ? `${s.resource}.${s.group}` : s.resource;
}

/** 404 NotFound: `pods "x" not found`. */
export function notFound(s: Subject): ApiError {
  return new ApiError({ message: `${qualified(s)} "${s.name}" not found`, reason: 'NotFound', details: { name: s.name, group: s.group || undefined, kind: s.resource }, code: 404 });
}

/** 409 AlreadyExists. */
export function alreadyExists(s: Subject): ApiError {
  return new ApiError({ message: `${qualified(s)} "${s.name}" already exists`, reason: 'AlreadyExists', details: { name: s.name, group: s.group || undefined, kind: s.resource }, code: 409 });
}

/** 409 Conflict: `Operation cannot be fulfilled on pods "x": <why>`. */
export function conflict(s: Subject, why: string): ApiError {
  return new ApiError({ message: `Operation cannot be fulfilled on ${qualified(s)} "${s.name}": ${why}`, reason: 'Conflict', details: { name: s.name, group: s.group || undefined, kind: s.resource }, code: 409 });
}

/** The stale-resourceVersion conflict every optimistic-concurrency client knows. */
export function staleConflict(s: Subject): ApiError {
  return conflict(s, 'the object has been modified; please apply your changes to the latest version and try again');
}

/** 400 BadRequest. */
export function badRequest(message: string): ApiError {
  return new ApiError({ message, reason: 'BadRequest', code: 400 });
}

/** 410 Expired, as a watch or continue on a compacted resourceVersion gets. */
export function expired(message: string): ApiError {
  return new ApiError({ message, reason: 'Expired', code: 410 });
}

/** Any status code with its usual reason. */
export function statusError(code: number, message?: string, reason?: string): ApiError {
  const r = reason ?? reasonForCode(code);
  return new ApiError({ message: message ?? r, reason: r, code });
}

/** One field.Error: type (its cause reason), path, message as the API server renders it. */
export interface FieldError {
  type: 'FieldValueRequired' | 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueDuplicate' | 'FieldValueNotFound' | 'FieldValueNotSupported' | 'FieldValueTooLong';
  field: string;
  /** The detail after the type, e.g. `Duplicate value: "x"`. */
  message: string;
}

const q = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v) ?? 'null');

/** field.Required. */
export const required = (field: string, detail = ''): FieldError => ({ type: 'FieldValueRequired', field, message: detail ? `Required value: ${detail}` : 'Required value' });
/** field.Invalid. */
export const invalid = (field: string, value: unknown, detail: string): FieldError => ({ type: 'FieldValueInvalid', field, message: `Invalid value: ${q(value)}: ${detail}` });
/** field.Forbidden. */
export const forbidden = (field: string, detail: string): FieldError => ({ type: 'FieldValueForbidden', field, message: `Forbidden: ${detail}` });
/** field.Duplicate. */
export const duplicate = (field: string, value: unknown): FieldError => ({ type: 'FieldValueDuplicate', field, message: `Duplicate value: ${q(value)}` });
/** field.NotFound. */
export const fieldNotFound = (field: string, value: unknown): FieldError => ({ type: 'FieldValueNotFound', field, message: `Not found: ${q(value)}` });
/** field.NotSupported. */
export const notSupported = (field: string, value: unknown, valid: string[]): FieldError =>
  ({ type: 'FieldValueNotSupported', field, message: `Unsupported value: ${q(value)}: supported values: ${valid.map((v) => q(v)).join(', ')}` });
/** field.TooLong: the value is not shown. */
export const tooLong = (field: string, detail: string): FieldError => ({ type: 'FieldValueTooLong', field, message: `Too long: ${detail}` });

/**
 * 422 Invalid: `Pod "x" is invalid: [a, b]` with one cause per field error, as
 * apierrors.NewInvalid renders it (the kind here is the Kind, not the resource).
 */
export function invalidError(kind: string, group: string, name: string, errs: FieldError[]): ApiError {
  const rendered = errs.map((e) => `${e.field}: ${e.message}`);
  const list = rendered.length === 1 ? rendered[0] : `[${rendered.join(', ')}]`;
  const prefix = group ? `${kind}.${group}` : kind;
  return new ApiError({
    message: `${prefix} "${name}" is invalid: ${list}`,
    reason: 'Invalid',
    details: { name, group: group || undefined, kind, causes: errs.map((e) => ({ reason: e.type, message: e.message, field: e.field })) },
    code: 422,
  });
}
