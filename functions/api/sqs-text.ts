// The characters an SQS message body or attribute value may hold: #x9 | #xA | #xD |
// #x20–#xD7FF | #xE000–#xFFFD | #x10000–#x10FFFF (SendMessage; attribute values "have the
// same restrictions on the content as the message body"). Anything else and SQS refuses the
// message (InvalidMessageContents), for good. kube-apiserver takes U+FFFE and U+FFFF in
// annotation and env values, which reach the envelope through a pod's snapshot (review: such
// a pod's every event was dropped by the relay, so its sidecars were never ended).

import { withoutSnapshot, type Envelope } from './envelope.ts';

/** SQS's message size limit, in UTF-8 bytes: a message's body and attributes together (and a SendMessageBatch's payload). */
export const SQS_MAX_BYTES = 1024 * 1024;

/**
 * JSON text SQS takes, meaning the same: `JSON.stringify` escapes control characters and lone
 * surrogates but writes U+FFFE and U+FFFF as they are; those are escaped here (they can only
 * stand inside a JSON string, where `\uFFFE` is the same character).
 */
export function sqsJson(text: string): string {
  return text.replace(/[\uFFFE\uFFFF]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}

/**
 * Text SQS takes as an attribute value: what it refuses becomes U+FFFD, cut at `max` code
 * points and `maxBytes` UTF-8 bytes (never inside a pair).
 */
export function sqsAttributeText(text: string, max: number, maxBytes = Infinity): string {
  const points = Array.from(text.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD')).slice(0, max);
  let bytes = 0;
  let end = 0;
  for (; end < points.length; end++) {
    bytes += Buffer.byteLength(points[end]!);
    if (bytes > maxBytes) break;
  }
  return points.slice(0, end).join('');
}

/**
 * An envelope's JSON text SQS takes (sqsJson), within `maxBytes`: whole, else without its
 * snapshot (the handlers then read the object), else without its job names too (the router
 * then lists the namespace's jobs). `json`: the envelope's text as it is at hand (the relay's
 * message body); `envelope` is read only when that does not fit. The relay's sends and the
 * functions' own (a requeue) fit the same way (review80 L1: a look-again copy of an envelope
 * the relay fitted could be a few bytes over, and SQS refused it at every receive).
 */
export function fitSqsJson(json: string, envelope: () => Envelope, maxBytes = SQS_MAX_BYTES): string {
  const whole = sqsJson(json);
  if (Buffer.byteLength(whole) <= maxBytes) return whole;
  const lean = withoutSnapshot(envelope());
  const body = sqsJson(JSON.stringify(lean));
  if (Buffer.byteLength(body) <= maxBytes) return body;
  const { jobs: _drop, ...data } = lean.data;
  return sqsJson(JSON.stringify({ ...lean, data }));
}
