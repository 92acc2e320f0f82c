import type { EjobPhase } from '../api/ephemeraljob.ts';
import { toDate } from '../api/meta.ts';
import type { Pod } from '../api/pod.ts';
import type { LeaseConfig, LeaseView } from './lease-record.ts';
import { ownedContainers } from './pod-state.ts';
import type { Target } from './targets.ts';

/** What deciding a deferral needs: the status before, the phase planned, the targets, this plan's injections and the Lease as read. */
export interface DeferralInput {
  /** The phase the job's status shows now (undefined: never written). */
  previousPhase: string | undefined;
  phase: EjobPhase;
  jobUid: string;
  targets: readonly Target[];
  /** Pods this plan injects (claimed by this plan's Lease write). */
  injecting: readonly Pod[];
  lease: LeaseView;
  serverNow: Date;
  cfg: LeaseConfig;
}

/**
 * When a status write may wait for the pod event that is certain to follow: the job's status
 * was written before, its phase does not change, and some target pod was just injected (by
 * this plan, or under a claim still in the Lease record and within its window) and its
 * kubelet has not reported the job's containers yet. The kubelet's first report is a pod
 * event, so the status is written then, with that change folded in (at parallelism 1: one
 * status write per pod instead of two). Bounded: once the claim's window ends the write is
 * no longer deferred, and the returned requeue brings a look by then. Status is never read
 * for safety (slots come from pods and the Lease), so deferring it only delays what users see.
 * Returns the seconds until the last deferral ends, or undefined when the write must go now.
 */
export function statusDeferral(input: DeferralInput): number | undefined {
  const { previousPhase, phase, serverNow, cfg } = input;
  if (previousPhase === undefined || previousPhase !== phase) return undefined;
  const windowMs = (cfg.leaseSeconds + cfg.skewSeconds) * 1000;
  let until: number | undefined;
  const note = (endsAt: number): void => {
    if (endsAt > serverNow.getTime()) until = Math.max(until ?? 0, endsAt);
  };
  if (input.injecting.length > 0) note(serverNow.getTime() + windowMs);
  const claims = input.lease.kind === 'ours' ? input.lease.record.claims : [];
  for (const t of input.targets) {
    if (!awaitsFirstReport(t.pod, input.jobUid)) continue;
    const claim = claims.find((c) => c.pod === t.pod.metadata.name && (c.uid === undefined || c.uid === t.pod.metadata.uid));
    const at = toDate(claim?.at);
    if (at) note(at.getTime() + windowMs);
  }
  return until === undefined ? undefined : Math.max(1, Math.ceil((until - serverNow.getTime()) / 1000));
}

/** The pod shows a container of the job that the kubelet has not reported on at all. */
function awaitsFirstReport(pod: Pod, jobUid: string): boolean {
  const reported = new Set((pod.status?.ephemeralContainerStatuses ?? []).map((s) => s.name));
  return ownedContainers(pod, jobUid).some((c) => !reported.has(c.name));
}
