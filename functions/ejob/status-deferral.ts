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
  /**
   * True when the planned status, with the counts `running`/`waiting` the status shows now
   * and the phase that follows from those, is the current status: what differs is only what
   * pods starting change (the two counts, and Waiting → Running).
   */
  onlyStarts: boolean;
  jobUid: string;
  targets: readonly Target[];
  now: Date;
  /** How long a start may go unreported (the claim window: leaseSeconds + skewSeconds). */
  windowSeconds: number;
}

/**
 * When a status write may wait: its only change is pods moving from waiting to running
 * (nothing finished, failed or newly injected), with the phase Waiting → Running that the
 * first start brings, and each of those containers started within the window. Short checks
 * (pidof, curl) usually exit within it, and the exit's status write then carries the whole
 * change — at parallelism 1 one status write per pod instead of two, and no write of its own
 * for the job's first start. The job's first status write (it sets startTime, which the
 * deadline counts from), completions, failures, injections and any other phase change are
 * never deferred, and a long runner is shown running once the window has passed (the
 * returned requeue brings that look). Status is never read for safety (slots come from pods
 * and the Lease), so deferring it only delays what users see. Returns the seconds until the
 * deferral ends, or undefined: write now.
 */
export function statusDeferral(input: DeferralInput): number | undefined {
  const { previous, counts, now } = input;
  if (previous.phase === undefined || !input.onlyStarts) return undefined;
  if (previous.phase !== input.phase && !(previous.phase === 'Waiting' && input.phase === 'Running')) return undefined;
  // Pods moved from waiting to running, and nothing else moved in or out of the two counts.
  const started = counts.running - (previous.running ?? 0);
  if (started <= 0 || counts.waiting !== (previous.waiting ?? 0) - started) return undefined;
  const windowMs = input.windowSeconds * 1000;
  let until = 0;
  for (const t of input.targets) {
    if (t.state !== 'running') continue;
    for (const startedAt of startTimes(t.pod, input.jobUid)) {
      // A start we cannot date, or one older than the window, is shown now.
      if (startedAt === undefined || startedAt.getTime() + windowMs <= now.getTime()) return undefined;
      until = Math.max(until, startedAt.getTime() + windowMs);
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
