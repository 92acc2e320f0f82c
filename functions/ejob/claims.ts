import type { EphemeralJobSpec } from '../api/ephemeraljob.ts';
import { toDate } from '../api/meta.ts';
import type { Pod } from '../api/pod.ts';
import type { Action } from '../engine/plan.ts';
import { leaseWrite, type Claim, type LeaseConfig, type LeaseRecord, type LeaseView } from './lease-record.ts';
import { holdsSlot, isActive, ownedContainers } from './pod-state.ts';
import type { Target } from './targets.ts';

/** What the claim rules need: the job's pods (read after the Lease), its Lease, the server's time. */
export interface ClaimInput {
  spec: EphemeralJobSpec;
  jobUid: string;
  /** Every observed pod matching the selector, active or not. */
  pods: readonly Pod[];
  targets: readonly Target[];
  lease: LeaseView;
  /** The API server's time when the Lease was read (its Date header, advanced locally). */
  serverNow: Date;
  cfg: LeaseConfig;
  /** False when paused or past the deadline: nothing new is claimed. */
  mayClaim: boolean;
  /** Record the job's verdict on the Lease (nothing is claimed then, or ever after). */
  seal?: boolean;
}

/** The decision: which pods to inject now, the Lease write that claims them first, when to look again. */
export interface ClaimDecision {
  inject: Pod[];
  /** Claims and repairs, written before any injection; absent when nothing was decided. */
  write?: Action;
  requeueAfterSeconds?: number;
  notes: string[];
  /** Pods holding a slot: a non-terminal container of the job, or an unexpired claim. */
  slotsUsed: number;
}

/**
 * Decide new claims (DESIGN: never more than `parallelism` pods with a non-terminal
 * container of the job; never more than `replicas` pods). Slots are the union of pods that
 * show a non-terminal container of the job and claims not yet seen injected whose window
 * (claim time + leaseSeconds + skew, server time) has not passed. Pure.
 */
export function decideClaims(input: ClaimInput): ClaimDecision {
  const { spec, serverNow, cfg } = input;
  const base = baseRecord(input);
  const kept = keptClaims(base.record.claims, input);
  const inFlight = new Set(input.pods.filter((p) => isActive(p) && holdsSlot(p, input.jobUid)).map((p) => p.metadata.name));
  for (const c of kept.pending) inFlight.add(c.pod);
  // Never below what the pods show: a record that lags them must not let replicas be exceeded.
  const injectedVisible = input.pods.filter((p) => ownedContainers(p, input.jobUid).length > 0).length;
  const total = Math.max(base.record.total - kept.dropped, injectedVisible + kept.pending.length);
  const notes = [...base.notes, ...kept.notes];
  const holdUntil = toDate(base.record.holdUntil);
  const holding = holdUntil !== undefined && holdUntil.getTime() > serverNow.getTime();
  const sealed = input.seal === true || base.record.finished === true;
  const free = input.mayClaim && !holding && !sealed ? Math.max(0, (spec.parallelism ?? 1) - inFlight.size) : 0;
  const left = spec.replicas === undefined ? Number.POSITIVE_INFINITY : Math.max(0, spec.replicas - total);
  const claimed = new Set(kept.pending.map((c) => c.pod));
  const inject = input.targets.filter((t) => t.state === 'pending' && !claimed.has(t.pod.metadata.name)).slice(0, Math.min(free, left)).map((t) => t.pod);
  let requeue = kept.nextExpiry === undefined ? undefined : secondsUntil(kept.nextExpiry, serverNow);
  if (holding) {
    requeue = Math.min(requeue ?? Number.POSITIVE_INFINITY, secondsUntil(holdUntil, serverNow));
    notes.push(`no new claims until ${holdUntil.toISOString()} (an unreadable Lease record may have held live claims)`);
  }
  const decision: ClaimDecision = { inject, notes, slotsUsed: inFlight.size, ...(requeue !== undefined ? { requeueAfterSeconds: requeue } : {}) };
  if (inject.length === 0 && !base.repair && !needsSeal(input, base.record)) return decision;
  const at = serverNow.toISOString();
  const record: LeaseRecord = {
    v: 1,
    job: input.jobUid,
    total: total + inject.length,
    claims: [...kept.pending, ...inject.map((p): Claim => ({ pod: p.metadata.name, ...(p.metadata.uid ? { uid: p.metadata.uid } : {}), at }))],
    ...(holding ? { holdUntil: holdUntil.toISOString() } : {}),
    ...(sealed ? { finished: true } : {}),
  };
  const why = inject.length > 0 ? `claim ${inject.map((p) => p.metadata.name).join(', ')} for injection` : input.seal ? 'record the verdict: no claims after it' : `repair the Lease record (${base.notes.join('; ')})`;
  return { ...decision, write: leaseWrite({ cfg, view: input.lease, serverNow }, record, why) };
}

/**
 * The record to plan from. A record of ours is taken as it is. Absent: rebuilt from the
 * pods (only someone deleting the Lease by hand can lose a claim that way; see README). An
 * unreadable one may have held claims: no new claims until it is older than a claim's
 * window (renewTime + leaseSeconds + skew), written down as holdUntil in its repair.
 */
function baseRecord(input: ClaimInput): { record: LeaseRecord; repair: boolean; notes: string[] } {
  const { lease, jobUid, serverNow, cfg } = input;
  if (lease.kind === 'ours') return { record: lease.record, repair: false, notes: [] };
  const injected = input.pods.filter((p) => ownedContainers(p, jobUid).length > 0).length;
  const rebuilt: LeaseRecord = { v: 1, job: jobUid, total: injected, claims: [] };
  if (lease.kind === 'absent') return { record: rebuilt, repair: false, notes: [] };
  const windowMs = (cfg.leaseSeconds + cfg.skewSeconds) * 1000;
  // A record of an earlier job with this name holds no claim on this job's pods.
  const from = lease.otherJob ? undefined : (lease.renewedAt ?? serverNow);
  const holdUntil = from === undefined ? undefined : new Date(Math.max(from.getTime(), serverNow.getTime() - windowMs) + windowMs);
  const record = holdUntil && holdUntil.getTime() > serverNow.getTime() ? { ...rebuilt, holdUntil: holdUntil.toISOString() } : rebuilt;
  return { record, repair: true, notes: [`Lease record unreadable (${lease.why}): rebuilt from the pods`] };
}

/**
 * Claims still pending: not yet seen injected and within their window. A claim whose pod
 * shows the job's containers, is gone, replaced (other uid) or inactive is released; one
 * past its window is dropped (its claimer stopped injecting by then; the pod may be
 * claimed again).
 */
function keptClaims(claims: readonly Claim[], input: ClaimInput): { pending: Claim[]; dropped: number; nextExpiry: Date | undefined; notes: string[] } {
  const byName = new Map(input.pods.map((p) => [p.metadata.name, p]));
  const windowMs = (input.cfg.leaseSeconds + input.cfg.skewSeconds) * 1000;
  const out = { pending: [] as Claim[], dropped: 0, nextExpiry: undefined as Date | undefined, notes: [] as string[] };
  for (const c of claims) {
    const pod = byName.get(c.pod);
    if (!pod || (c.uid !== undefined && pod.metadata.uid !== c.uid) || !isActive(pod)) continue; // released: nothing to inject into
    if (ownedContainers(pod, input.jobUid).length > 0) continue; // released: injected, the pod itself now holds the slot
    const expires = (toDate(c.at)?.getTime() ?? 0) + windowMs;
    if (expires <= input.serverNow.getTime()) {
      out.dropped++;
      out.notes.push(`claim on pod ${c.pod} expired without an injection: dropped`);
      continue;
    }
    out.pending.push(c);
    if (out.nextExpiry === undefined || expires < out.nextExpiry.getTime()) out.nextExpiry = new Date(expires);
  }
  return out;
}

/** A verdict to record that the record does not hold yet. */
function needsSeal(input: ClaimInput, record: LeaseRecord): boolean {
  return input.seal === true && record.finished !== true;
}

function secondsUntil(t: Date, now: Date): number {
  return Math.max(1, Math.ceil((t.getTime() - now.getTime()) / 1000));
}
