import type { EphemeralJobSpec } from '../api/ephemeraljob.ts';
import { toDate } from '../api/meta.ts';
import type { Pod } from '../api/pod.ts';
import type { Action } from '../engine/plan.ts';
import { leaseWrite, type Claim, type LeaseConfig, type LeaseRecord, type LeaseView } from './lease-record.ts';
import { isActive, ownedContainers, slotHolders } from './pod-state.ts';
import type { Target } from './targets.ts';

/** What the claim rules need: the job's pods (read after the Lease), its Lease, the server's time. */
export interface ClaimInput {
  spec: EphemeralJobSpec;
  jobUid: string;
  /** Every observed pod matching the selector, active or not. */
  pods: readonly Pod[];
  targets: readonly Target[];
  lease: LeaseView;
  /** The API server's time when the Lease was read (its Date header, advanced locally; when not read, when the pods were). */
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
  /**
   * Set when the Lease was not read and this decision would have written it (what it would
   * have done): then nothing is claimed, and the planner plans nothing (planner.ts).
   */
  needsLease?: string;
}

/**
 * Decide new claims (DESIGN: never more than `parallelism` pods with a non-terminal
 * container of the job; never more than `replicas` pods). Slots are the union of pods that
 * show a non-terminal container of the job and claims not yet seen injected whose window
 * (claim time + leaseSeconds + skew, server time) has not passed. The Lease is written only
 * when something is decided: a claim, the verdict's seal, or a hold on new claims that needs
 * a fixed end (see baseRecord); an unreadable record is repaired by that write. Pure.
 */
export function decideClaims(input: ClaimInput): ClaimDecision {
  const { serverNow } = input;
  const base = baseRecord(input);
  const kept = keptClaims(base.record.claims, input);
  const inFlight = new Set(slotHolders(input.pods, input.jobUid).map((p) => p.metadata.name));
  for (const c of kept.pending) inFlight.add(c.pod);
  // Never below what the pods show: a record that lags them must not let replicas be exceeded.
  const injectedVisible = input.pods.filter((p) => ownedContainers(p, input.jobUid).length > 0).length;
  const total = Math.max(base.record.total - kept.dropped, injectedVisible + kept.pending.length);
  const notes = [...base.notes, ...kept.notes];
  const holdUntil = toDate(base.record.holdUntil);
  const holding = holdUntil !== undefined && holdUntil.getTime() > serverNow.getTime();
  const sealed = input.seal === true || base.record.finished === true;
  // What would be claimed but for a hold: a hold is written down only when it stops a claim.
  const candidates = input.mayClaim && !sealed ? claimable(input, { inFlight: inFlight.size, total, pending: kept.pending }) : [];
  const inject = holding ? [] : candidates;
  let requeue = kept.nextExpiry === undefined ? undefined : secondsUntil(kept.nextExpiry, serverNow);
  if (holding) {
    requeue = Math.min(requeue ?? Number.POSITIVE_INFINITY, secondsUntil(holdUntil, serverNow));
    notes.push(`no new claims until ${holdUntil.toISOString()} (an unreadable Lease record may have held live claims)`);
  }
  const decision: ClaimDecision = { inject, notes, slotsUsed: inFlight.size, ...(requeue !== undefined ? { requeueAfterSeconds: requeue } : {}) };
  const pinHold = holding && candidates.length > 0 && base.undated;
  if (inject.length === 0 && !pinHold && !needsSeal(input, base.record)) return decision;
  // Nothing is ever decided from a Lease that was not read: say what would have been.
  if (input.lease.kind === 'not-read') return { ...decision, inject: [], needsLease: writeReason(input, inject, base) };
  const at = serverNow.toISOString();
  const record: LeaseRecord = {
    v: 1,
    job: input.jobUid,
    total: total + inject.length,
    claims: [...kept.pending, ...inject.map((p): Claim => ({ pod: p.metadata.name, ...(p.metadata.uid ? { uid: p.metadata.uid } : {}), at }))],
    ...(holding ? { holdUntil: holdUntil.toISOString() } : {}),
    ...(sealed ? { finished: true } : {}),
  };
  return { ...decision, write: leaseWrite({ cfg: input.cfg, view: input.lease, serverNow }, record, writeReason(input, inject, base)) };
}

/** The pods to claim now if nothing holds claims back: free slots, replicas left, oldest pending targets first. */
function claimable(input: ClaimInput, used: { inFlight: number; total: number; pending: readonly Claim[] }): Pod[] {
  const free = Math.max(0, (input.spec.parallelism ?? 1) - used.inFlight);
  const left = input.spec.replicas === undefined ? Number.POSITIVE_INFINITY : Math.max(0, input.spec.replicas - used.total);
  const claimed = new Set(used.pending.map((c) => c.pod));
  return input.targets.filter((t) => t.state === 'pending' && !claimed.has(t.pod.metadata.name)).slice(0, Math.min(free, left)).map((t) => t.pod);
}

function writeReason(input: ClaimInput, inject: readonly Pod[], base: { repair: boolean; notes: string[] }): string {
  const repair = base.repair ? ` (and repair the Lease record: ${base.notes.join('; ')})` : '';
  if (inject.length > 0) return `claim ${inject.map((p) => p.metadata.name).join(', ')} for injection${repair}`;
  if (input.seal === true) return `record the verdict: no claims after it${repair}`;
  return `hold new claims: the Lease record is unreadable and does not say when it was written${repair}`;
}

/**
 * The record to plan from. A record of ours is taken as it is. Absent: rebuilt from the
 * pods (only someone deleting the Lease by hand can lose a claim that way; see README). An
 * unreadable one may have held claims: no new claims until it is older than a claim's
 * window (renewTime + leaseSeconds + skew). That end is the same for every reader, so the
 * record is repaired only by the next write that decides something (a claim after the hold,
 * or the verdict's seal). A Lease that says nothing of when it was written (`undated`) gets
 * a hold counted from now, which moves with every reader: it is written down (`holdUntil`)
 * when it first stops a claim.
 */
function baseRecord(input: ClaimInput): { record: LeaseRecord; repair: boolean; undated: boolean; notes: string[] } {
  const { lease, jobUid, serverNow, cfg } = input;
  if (lease.kind === 'ours') return { record: lease.record, repair: false, undated: false, notes: [] };
  const injected = input.pods.filter((p) => ownedContainers(p, jobUid).length > 0).length;
  const rebuilt: LeaseRecord = { v: 1, job: jobUid, total: injected, claims: [] };
  // Not read: planned as if rebuilt from the pods, only to tell what would be decided (never written).
  if (lease.kind === 'absent' || lease.kind === 'not-read') return { record: rebuilt, repair: false, undated: false, notes: [] };
  const windowMs = (cfg.leaseSeconds + cfg.skewSeconds) * 1000;
  // A record of an earlier job with this name holds no claim on this job's pods.
  const from = lease.otherJob ? undefined : (lease.renewedAt ?? serverNow);
  const holdUntil = from === undefined ? undefined : new Date(Math.max(from.getTime(), serverNow.getTime() - windowMs) + windowMs);
  const record = holdUntil && holdUntil.getTime() > serverNow.getTime() ? { ...rebuilt, holdUntil: holdUntil.toISOString() } : rebuilt;
  return { record, repair: true, undated: !lease.otherJob && lease.renewedAt === undefined, notes: [`Lease record unreadable (${lease.why}): rebuilt from the pods`] };
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
