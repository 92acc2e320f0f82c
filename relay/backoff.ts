/**
 * Exponential backoff for the relay's endless loops (watch restarts, queue outages): they
 * keep state between tries and never give up, so a per-operation retry helper does not fit.
 */
export function backoffMs(failures: number, minMs: number, maxMs: number): number {
  return Math.min(maxMs, minMs * 2 ** Math.min(Math.max(failures, 0), 20));
}
