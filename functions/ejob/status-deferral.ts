import { toDate } from '../api/meta.ts';
import type { ContainerStatus, Pod } from '../api/pod.ts';
import { ownedContainers } from './pod-state.ts';
import type { Counts } from './status.ts';
import type { Target } from './targets.ts';

/** What deciding a deferral needs: the status before, what the planner would write, the targets, the clock. */
export interface DeferralInput {
  /** The phase and counts the job's status shows now (phase undefined: never written). */
  previous: { phase?: string } & Partial<Counts>;
  phase: string;
  counts: Counts;
  /** True when the planned status differs from the current one in `running`/`waiting` only. */
  onlyRunningWaiting: boolean;
  jobUid: string;
  targets: readonly Target[];
  now: Date;
  /** How long a start may go unreported (the claim window: leaseSeconds + skewSeconds). */
  windowSeconds: number;
}

/**
 * When a status write may wait: its only change is pods moving from waiting to running
 * (same phase, nothing finished, nothing new injected), and each of those containers started
 * within the window. Short checks (pidof, curl) usually exit within it, and the exit's status
 * write then carries the whole change — at parallelism 1 one status write per pod instead of
 * two. Completions, failures, injections and phase changes are never deferred, and a long
 * runner is shown running once the window has passed (the returned requeue brings that look).
 * Status is never read for safety (slots come from pods and the Lease), so deferring it only
 * delays what users see. Returns the seconds until the deferral ends, or undefined: write now.
 */
export function statusDeferral(input: DeferralInput): number | undefined {
  const { previous, counts, now } = input;
  if (previous.phase === undefined || previous.phase !== input.phase || !input.onlyRunningWaiting) return undefined;
  if (counts.running <= (previous.running ?? 0)) return undefined;
  const windowMs = input.windowSeconds * 1000;
  let until = 0;
  for (const t of input.targets) {
    if (t.state !== 'running') continue;
    for (const started of startTimes(t.pod, input.jobUid)) {
      // A start we cannot date, or one older than the window, is shown now.
      if (started === undefined || started.getTime() + windowMs <= now.getTime()) return undefined;
      until = Math.max(until, started.getTime() + windowMs);
    }
  }
  return until === 0 ? undefined : Math.max(1, Math.ceil((until - now.getTime()) / 1000));
}

/** When each of the job's running containers in the pod started (undefined when not said). */
function startTimes(pod: Pod, jobUid: string): (Date | undefined)[] {
  const names = new Set(ownedContainers(pod, jobUid).map((c) => c.name));
  const running = (pod.status?.ephemeralContainerStatuses ?? []).filter((s: ContainerStatus) => names.has(s.name) && s.state?.running !== undefined);
  return running.map((s) => toDate(s.state?.running?.startedAt));
}
