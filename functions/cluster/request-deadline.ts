// A request's deadline, as kube-apiserver sets it from the `timeout` query parameter
// (apiserver endpoints/filters/request_deadline.go WithRequestDeadline) and what it answers
// when a request is still held at it (server/filters/timeout.go).
import { badRequest } from './status.ts';

/**
 * kube-apiserver's `--request-timeout` default, the longest deadline a client may ask for:
 * `timeout` at or above it, or at or below 0, means the server's own. The fake has no
 * request timeout of its own (a held request without a deadline waits until released), so
 * those, as a request without `timeout`, get none.
 */
export const REQUEST_TIMEOUT_MAXIMUM_MS = 60_000;

/**
 * The deadline a request asks for, in ms after it came; undefined when it asks for none this
 * fake keeps (no `timeout`, an empty one, ≤ 0 or ≥ 60 s) or is long-running (a watch: the
 * filter passes those by before it reads the parameter). A value Go's time.ParseDuration
 * refuses is kube-apiserver's 400 (`invalid timeout specified in the request URL - time:
 * invalid duration "x"`), before anything else is done with the request (the filter runs
 * ahead of authentication).
 */
export function requestDeadlineMs(timeout: string | null, watch: boolean): number | undefined {
  if (watch || timeout === null || timeout === '') return undefined;
  const parsed = parseGoDuration(timeout);
  if (typeof parsed === 'string') throw badRequest(`invalid timeout specified in the request URL - ${parsed}`);
  return parsed > 0 && parsed < REQUEST_TIMEOUT_MAXIMUM_MS ? parsed : undefined;
}

/**
 * The body of the 504 kube-apiserver answers when a request's deadline passes before its
 * handler answered (timeout.go WithTimeoutForNonLongRunningRequests): the Status of
 * apierrors.NewTimeoutError written with json.Encoder, so without kind or apiVersion and with
 * a trailing newline, as text/plain (net/http sniffs the type). The handler goes on, but with
 * its context done it starts no storage write, and the fake makes none. (FinishRequest races
 * it with a Status of its own, "Timeout: request did not complete within requested timeout -
 * context deadline exceeded"; the filter mostly wins, and clients read both alike: 504,
 * reason Timeout.)
 */
export const DEADLINE_EXCEEDED_BODY = `${JSON.stringify({ metadata: {}, status: 'Failure', message: 'Timeout: request did not complete within the allotted timeout', reason: 'Timeout', details: {}, code: 504 })}\n`;

const UNIT_NS: Record<string, number> = { ns: 1, us: 1e3, 'µs': 1e3, 'μs': 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };

/** Go's time.ParseDuration: the duration in ms, or its error message. */
export function parseGoDuration(orig: string): number | string {
  let s = orig;
  let neg = false;
  if (s[0] === '-' || s[0] === '+') {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0;
  const invalid = `time: invalid duration ${goQuote(orig)}`;
  if (s === '') return invalid;
  let ns = 0;
  while (s !== '') {
    const m = /^(\d*)(?:\.(\d*))?/.exec(s)!;
    const [whole, int = '', frac] = m;
    if (int === '' && (frac === undefined || frac === '')) return invalid;
    s = s.slice(whole.length);
    const unit = /^[^.0-9]*/.exec(s)![0];
    if (unit === '') return `time: missing unit in duration ${goQuote(orig)}`;
    s = s.slice(unit.length);
    const scale = UNIT_NS[unit];
    if (scale === undefined) return `time: unknown unit ${goQuote(unit)} in duration ${goQuote(orig)}`;
    ns += Number(int || '0') * scale + (frac ? Number(`0.${frac}`) * scale : 0);
    // Go's Duration is an int64 of nanoseconds.
    if (ns > 2 ** 63 - 1) return invalid;
  }
  return (neg ? -ns : ns) / 1e6;
}

/** Go's time.quote: in double quotes, `"` and `\` escaped, bytes outside printable ASCII as \xNN. */
function goQuote(s: string): string {
  let out = '"';
  for (const byte of Buffer.from(s, 'utf8')) {
    if (byte >= 0x80 || byte < 0x20) out += `\\x${byte.toString(16).padStart(2, '0')}`;
    else out += (byte === 0x22 || byte === 0x5c ? '\\' : '') + String.fromCharCode(byte);
  }
  return `${out}"`;
}
