// The proposal's limits on a job's counts, which ephemera's webhook (and CRD) apply to new
// and changed values, and what a stored job outside them runs as. OpenKruise applies none
// of them — not in its webhook (which checks only the containers), its CRD or its controller
// (pkg/controller/ephemeraljob, read 2026-12 at 07169cf) — so a cluster that ran it can hold
// jobs with any of these; until review72 the planner put each in phase Error, stopping jobs
// that were running mid-flight, where DESIGN keeps Error for a template that cannot run.
// Now each runs as OpenKruise runs it, and the planner tells the user (planner.ts: a JobError
// condition False with reason SpecOutsideLimits, and a Warning Event of that reason):
// - parallelism above 10: as many at once (`parallelism := int(*job.Spec.Parallelism)`);
//   below 0: none (`diff := parallelism - running` is negative: nothing is created);
// - selector with nothing in it: every pod of the namespace (util.ValidatedLabelSelectorAsSelector
//   gives labels.Everything() for an empty one). Dangerous, and honoured anyway: OpenKruise
//   ran such a job on every pod, and a job taken over mid-flight should go on as it went;
//   the webhook refuses it on create, and pausing the job stops it;
// - replicas below 0: no target (`len(targetPods) < int(*Replicas)` never holds), so the
//   job waits, as with 0;
// - activeDeadlineSeconds 0 or below: past at once (`time.Since(start) >= deadline`);
// - ttlSecondsAfterFinished below 0: deleted as soon as it finishes (its `leftTime` is
//   negative). ttlSecondsAfterCreated is ephemera's own: below 0 reads the same way.
import { MAX_PARALLELISM } from './names.ts';

/** The spec fields these limits concern, as the planner's schema reads them (integers). */
export interface LimitedFields {
  selector: { matchLabels?: Record<string, string> | undefined; matchExpressions?: readonly unknown[] | undefined };
  replicas?: number | undefined;
  parallelism?: number | undefined;
  activeDeadlineSeconds?: number | undefined;
  ttlSecondsAfterFinished?: number | undefined;
  ttlSecondsAfterCreated?: number | undefined;
}

/** The reason of the JobError condition (False) and of the Warning that tell of them. */
export const OUTSIDE_LIMITS_REASON = 'SpecOutsideLimits';

/**
 * The spec as it runs (counts below 0 as 0: what OpenKruise's comparisons make of them; a
 * deadline and a selector need nothing, their own arithmetic and matching give OpenKruise's
 * meaning), and a note for each value outside the webhook's limits saying what it runs as.
 */
export function runAsStored<S extends LimitedFields>(spec: S): { spec: S; outside: string[] } {
  const outside: string[] = [];
  const { parallelism: p, replicas: r, activeDeadlineSeconds: d, ttlSecondsAfterFinished: tf, ttlSecondsAfterCreated: tc } = spec;
  if (p !== undefined && p > MAX_PARALLELISM) outside.push(`spec.parallelism ${p} is above ${MAX_PARALLELISM}: up to ${p} pods at once`);
  if (p !== undefined && p < 0) outside.push(`spec.parallelism ${p} is below 0: nothing is injected, as with 0`);
  if (Object.keys(spec.selector.matchLabels ?? {}).length + (spec.selector.matchExpressions?.length ?? 0) === 0) {
    outside.push('spec.selector is empty: every pod of the namespace is a target (pause the job to stop it)');
  }
  if (r !== undefined && r < 0) outside.push(`spec.replicas ${r} is below 0: no pod is targeted, as with 0`);
  if (d !== undefined && d <= 0) outside.push(`spec.activeDeadlineSeconds ${d} is not above 0: the deadline is past at once`);
  if (tf !== undefined && tf < 0) outside.push(`spec.ttlSecondsAfterFinished ${tf} is below 0: deleted as soon as it finishes`);
  if (tc !== undefined && tc < 0) outside.push(`spec.ttlSecondsAfterCreated ${tc} is below 0: deleted at once`);
  if (outside.length === 0) return { spec, outside };
  const counts = Object.entries({ parallelism: p, replicas: r, ttlSecondsAfterFinished: tf, ttlSecondsAfterCreated: tc });
  const below0 = Object.fromEntries(counts.filter(([, n]) => n !== undefined && n < 0).map(([k]) => [k, 0]));
  return { spec: { ...spec, ...below0 }, outside };
}

/** The notes in one message, as the condition and the Warning say it. */
export function outsideLimitsMessage(outside: readonly string[]): string {
  return `values the webhook refuses on create, run as OpenKruise runs them: ${outside.join('; ')}`;
}
