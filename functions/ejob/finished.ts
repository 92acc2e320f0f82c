// Dependency-free: the relay's job view uses it too.
import { DEFAULT_TTL_AFTER_FINISHED_SECONDS } from '../api/names.ts';

/**
 * A completionTime: the job's verdict is final, whatever the phase says. ephemera writes one
 * only with Succeeded or Failed; OpenKruise, whose rule this is (`if job.Status.CompletionTime
 * != nil` sends a job to its TTL alone), also leaves Paused over a job that succeeded while
 * paused, and such a job, migrated, must still go at its TTL (review).
 */
export function jobFinished(status: { phase?: unknown; completionTime?: unknown } | undefined): boolean {
  return status?.completionTime !== undefined && status.completionTime !== null;
}

/**
 * A job's TTLs read from its raw spec, each on its own, as the planner acts on them and the
 * relay schedules their resync (so both say the same moment): an integer, one below 0 read
 * as 0 (OpenKruise deletes a job whose ttlSecondsAfterFinished is negative as soon as it
 * finishes: its time left is negative; api/spec-limits.ts, review72), or nothing is deleted
 * by it (undefined); an absent ttlSecondsAfterFinished is OpenKruise's default. A spec that
 * parses reads the same (parseEjobSpec runs such a TTL as 0 too).
 */
export function jobTtls(spec: unknown): { created: number | undefined; finished: number | undefined } {
  const raw = typeof spec === 'object' && spec !== null ? (spec as { ttlSecondsAfterCreated?: unknown; ttlSecondsAfterFinished?: unknown }) : {};
  return { created: count(raw.ttlSecondsAfterCreated), finished: raw.ttlSecondsAfterFinished === undefined ? DEFAULT_TTL_AFTER_FINISHED_SECONDS : count(raw.ttlSecondsAfterFinished) };
}

function count(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isSafeInteger(v) ? Math.max(0, v) : undefined;
}
