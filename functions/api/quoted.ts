// Messages of others (the kubelet's, a container's, a user's annotation) quoted in ours, bounded.

/**
 * The most of a kubelet's or container's message a failure quotes, in characters. A
 * termination message may hold 4 KiB (80 log lines under FallbackToLogsOnError), a runtime's
 * error as much. core/v1 Events set no limit on a message (kube-apiserver's
 * legacyValidateEvent checks none without eventTime), but events.k8s.io caps a note at 1024
 * characters, and this keeps the whole Warning (pod and job names up to 253 each) under it.
 */
export const QUOTED_MAX = 400;

/**
 * A message on one line (kubectl's tables and `describe` show Events a line each), at most
 * `max` characters: the start (what failed) and the end (where a runtime's error and a log
 * tail say why), cut in the middle. Cut between code points, never inside a surrogate pair.
 */
export function quoted(message: string, max = QUOTED_MAX): string {
  const line = message.replace(/\s+/g, ' ').trim();
  if (line.length <= max) return line;
  const chars = Array.from(line);
  if (chars.length <= max) return line;
  const head = Math.floor(max / 3);
  return `${chars.slice(0, head).join('').trimEnd()} … ${chars.slice(chars.length - (max - head - 3)).join('').trimStart()}`;
}
