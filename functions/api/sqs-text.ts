// The characters an SQS message body or attribute value may hold: #x9 | #xA | #xD |
// #x20–#xD7FF | #xE000–#xFFFD | #x10000–#x10FFFF (SendMessage; attribute values "have the
// same restrictions on the content as the message body"). Anything else and SQS refuses the
// message (InvalidMessageContents), for good. kube-apiserver takes U+FFFE and U+FFFF in
// annotation and env values, which reach the envelope through a pod's snapshot (review: such
// a pod's every event was dropped by the relay, so its sidecars were never ended).

/**
 * JSON text SQS takes, meaning the same: `JSON.stringify` escapes control characters and lone
 * surrogates but writes U+FFFE and U+FFFF as they are; those are escaped here (they can only
 * stand inside a JSON string, where `\uFFFE` is the same character).
 */
export function sqsJson(text: string): string {
  return text.replace(/[\uFFFE\uFFFF]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}

/** Text SQS takes as an attribute value: what it refuses becomes U+FFFD, cut at `max` code points (never inside a pair). */
export function sqsAttributeText(text: string, max: number): string {
  return Array.from(text.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD')).slice(0, max).join('');
}
