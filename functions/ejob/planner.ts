import {
  DEFAULT_TTL_AFTER_FINISHED_SECONDS,
  EJOB,
  EJOB_CLEANUP_FINALIZER,
  EJOB_ID_ENV,
  parseEjobSpec,
  type EjobPhase,
  type EphemeralJobObject,
  type EphemeralJobSpec,
} from '../api/ephemeraljob.ts';
import { omitEmpty } from '../api/container-rules.ts';
import { OUTSIDE_LIMITS_REASON, outsideLimitsMessage } from '../api/spec-limits.ts';
import { objectKey } from '../api/envelope.ts';
import { jsonEqual } from '../api/json-equal.ts';
import { rfc3339, toDate } from '../api/meta.ts';
import type { Pod } from '../api/pod.ts';
import { eventAction, type EventSpec } from '../engine/events.ts';
import { minRequeue, type Action, type Plan } from '../engine/plan.ts';
import { jobFinished, jobTtls } from './finished.ts';
import { decideClaims, renewAfterMs, replicaBudget, type ClaimDecision, type ClaimInput } from './claims.ts';
import { leaseDeletion, orphaned, type LeftLease } from './lease-cleanup.ts';
import type { LeaseConfig, LeaseView, Verdict } from './lease-record.ts';
import { failureReason, isTerminal, ownedContainers, slotHolders } from './pod-state.ts';
import { mergeConditions, normaliseStatus, type Counts, type NextStatus, type WantedCondition } from './status.ts';
import { countedTargets, selectTargets, type ReplicaBudget, type Target } from './targets.ts';

/** What the EphemeralJob planner needs: the job, its Lease, and the pods its selector matches. */
export interface EjobObserved {
  job: EphemeralJobObject;
  /** Pods in the job's namespace matching its selector, read after the Lease or just before it (controller.ts observe; the planner re-checks the selector). */
  pods: readonly Pod[];
  /**
   * The job's Lease (claims), the API server's time when it was read, and where it lives.
   * Omitted (pure tests, planning without a cluster): planned as a fresh, absent Lease.
   */
  lease?: ObservedLease;
  /**
   * The API server's time as the job's GET told it, when no Lease was observed (a finished
   * or invalid job): its TTLs are judged by the earlier of this and the planner's clock.
   */
  serverNow?: Date;
  /**
   * The names of the job's failure Warnings already written (controller.ts withTold), read
   * when some pod shows a failed container of the job; omitted: not read, or unknown.
   */
  told?: ReadonlySet<string>;
  /**
   * The LIST of those Warnings failed for now (429, 5xx, no answer): `told` is unknown. The
   * plan whose status write finishes the job then takes none as told and tells every recent
   * failure (a Warning already there is a 409, done); any other plan tells as the status
   * newly counts, as without the right to list, and the next look lists them again.
   */
  toldUnlisted?: true;
}

/**
 * A job being deleted, or gone, as observed to tidy up after it (controller.ts): the job of
 * that name as read last — after its Lease, when the Lease holds a record — and the Lease.
 */
export interface EjobDeparted {
  departed: true;
  /** Being deleted; null when gone; or a job created again under the name (left to its own events). */
  job: EphemeralJobObject | null;
  /** The job's Lease, when it holds a record (lease-cleanup.ts). */
  lease?: LeftLease;
}

/** The Lease part of an observation. */
export interface ObservedLease {
  view: LeaseView;
  serverNow: Date;
  cfg: LeaseConfig;
  /** Claimed pods the LIST did not show, as a GET found them (null: gone); see claims.ts ClaimInput.unlisted. */
  unlisted?: ReadonlyMap<string, Pod | null>;
}

/** How a planner without an observed Lease plans: a fresh Lease with the defaults. */
export const DEFAULT_LEASE: Omit<LeaseConfig, 'name' | 'key'> = { namespace: 'ephemera-locks', holder: 'ephemera', leaseSeconds: 15, skewSeconds: 5 };

/** After a TTL deletion, look again this soon: the job's Lease goes once the job is gone (planDeparted). */
const LOOK_AFTER_DELETION_SECONDS = 1;

/**
 * Plan one EphemeralJob. Pure: no I/O, the clock is `now`. Rules are DESIGN.md's
 * "EphemeralJob" section; the order below is the order they take precedence in.
 */
export function plan(observed: EjobObserved | EjobDeparted, now: Date): Plan {
  if ('departed' in observed) return planDeparted(observed);
  const { job } = observed;
  if (job.metadata.deletionTimestamp !== undefined) return planDeleting(job);
  const parsed = parseEjobSpec(job.spec);
  // The TTLs act whatever else the spec says: a finished job's verdict is final, so a spec
  // edited into one that does not parse neither reopens it (as Error, then Running once the
  // edit is undone: found by review) nor keeps it from its TTL.
  const ttl = jobTtls(job.spec);
  // A TTL deletes: it is judged by the earlier of the planner's clock and the API server's
  // (whose clock stamped creationTimestamp; the verdict's completionTime is the later of a
  // planner's and the server's, planStatus), so a planner clock ahead cannot delete a job early
  // (time review); one behind deletes it late.
  const server = observed.lease?.serverNow ?? observed.serverNow;
  const ttlNow = server && server.getTime() < now.getTime() ? server : now;

  const created = toDate(job.metadata.creationTimestamp) ?? ttlNow;
  const createdTtl = afterSeconds(created, ttl.created, ttlNow);
  if (createdTtl === 0) return deleteJob(job, `ttlSecondsAfterCreated (${ttl.created}s) has passed`);

  if (jobFinished(job.status)) return planFinished({ job, ttl: ttl.finished, createdTtl }, ttlNow);
  if (!parsed.ok) return planInvalid(job, parsed.message, { now, createdTtl });
  // Values outside the webhook's limits run as OpenKruise runs them, told in the status (api/spec-limits.ts).
  const outside = parsed.outside.length > 0 ? { outside: outsideLimitsMessage(parsed.outside) } : {};
  return planActive({ job, spec: parsed.spec, pods: observed.pods, createdTtl, lease: observed.lease ?? freshLease(job, now), told: observed.told, ...outside, ...(observed.toldUnlisted ? { toldUnlisted: true as const } : {}) }, now);
}

function freshLease(job: EphemeralJobObject, now: Date): ObservedLease {
  return { view: { kind: 'absent' }, serverNow: now, cfg: { ...DEFAULT_LEASE, name: `ejob-${job.metadata.namespace ?? ''}-${job.metadata.name}`, key: objectKey(EJOB.kind, job.metadata.namespace ?? '', job.metadata.name) } };
}

interface ActiveInput {
  job: EphemeralJobObject;
  spec: EphemeralJobSpec;
  pods: readonly Pod[];
  createdTtl: number | undefined;
  lease: ObservedLease;
  told: ReadonlySet<string> | undefined;
  toldUnlisted?: true;
  /** What the spec holds outside the webhook's limits, and what it runs as (api/spec-limits.ts). */
  outside?: string;
}

/** The id of a plan's Lease write (claims, seal, repair), which injections and a sealed verdict `require`. */
const LEASE_WRITE = 'lease';

/**
 * An active job: claim free slots on the Lease, inject only what was claimed, then the
 * status (only if a field changed) and Events. The order matters: the claim write is the
 * serialisation point, so a concurrent instance's 409 there stops it before any injection.
 */
function planActive(input: ActiveInput, now: Date): Plan {
  const { job, spec, pods, createdTtl, lease, told, toldUnlisted, outside } = input;
  const uid = job.metadata.uid ?? '';
  const sealed = lease.view.kind === 'ours' && lease.view.record.finished === true;
  const budget = replicasLeft(spec, uid, pods, lease);
  const candidates = targetCandidates(pods, uid, sealed);
  const { targets, skipped } = selectTargets(spec, uid, candidates, budget);
  // The targets the status counts until the verdict, the replicas left aside (statusView).
  const own = budget ? countedTargets(spec, uid, candidates, budget.claimed) : targets;
  // The deadline by the later of the planner's clock and the server's: claims are judged by
  // the server's, so a planner clock behind it must not inject past the server's deadline.
  const judged = lease.serverNow.getTime() > now.getTime() ? lease.serverNow : now;
  const deadlineIn = deadlineAfter(job, spec, judged);
  const deadlineExceeded = deadlineIn === 0;

  const claimInput = { spec, jobUid: uid, pods, targets, lease: lease.view, serverNow: lease.serverNow, cfg: lease.cfg, mayClaim: !spec.paused && !deadlineExceeded, ...(lease.unlisted ? { unlisted: lease.unlisted } : {}) };
  const claims = decideClaims(claimInput);
  const injecting = new Set(claims.inject.map((p) => p.metadata.name));
  // Past the deadline, targets that all had their result by then are judged by it (review88
  // F3); not while a claim on a pod the LIST does not show may still land (awaitingLateInjection).
  const late = (ts: readonly Target[]): boolean => deadlineExceeded && !(claims.unlistedInFlight === 0 && resultsBy(ts, deadlineAt(job, spec, judged), uid));
  const judge = (ts: Target[]): Outcome => outcome({ spec, targets: ts, deadlineExceeded: late(ts), gone: (c) => replicasGone(spec, budget, c, claims), recorded: () => recordedVerdict(lease.view, pods, uid) });
  const { claimed, shown, unclaimed } = statusView({ narrowed: targets, own, injecting, judge: (ts) => awaitingLateInjection(judge(ts), claims, deadlineExceeded) });
  const { counts, phase, failedBy, unfit } = claimed;

  const decided = leaseDecision(claimInput, claims, { phase, sealed, verdict: verdictOf(phase, counts, { failedBy, unfit }) });
  const undecided = claims.needsLease ?? decided.needsLease;
  if (undecided !== undefined) return notReadPlan(undecided, { createdTtl, untilRead: deadlineIn === 0 ? untilLeaseRead(deadlineAt(job, spec, judged), lease) : undefined });
  const actions: Action[] = decided.write ? [{ ...decided.write, id: LEASE_WRITE }] : [];
  // After the claim, the injections, all at once, each only within the claim's lifetime (see
  // Action.withinSeconds and README.md), and only if the claim took effect: a claim refused
  // for good (the lock namespace missing, no right to write Leases) is no claim, and the
  // injections it was to serialise must not go out (review). Then the status write with an
  // Event for each injection that took effect, all at once too; verdict Events after the
  // status that says it. A verdict's status and Events wait on its seal (step 7).
  for (const pod of claims.inject) actions.push({ ...inject(job, spec, pod), withinSeconds: lease.cfg.leaseSeconds, group: 'inject', id: injectionId(pod), requires: LEASE_WRITE });
  const seals = decided.write !== undefined && decided !== claims;
  const namesakes = skipped.filter((s) => s.namesake).length;
  const status = statusActions(job, { claimed: { counts, phase, failedBy, unfit }, unclaimed, seals, targets: shown, now, judged, told, toldUnlisted, injections: claims.inject.map(injectionId), namesakes, outside });
  actions.push(...status.told, ...status.write);
  for (const pod of claims.inject) actions.push({ ...injectedEvent(job, spec, pod, now), group: 'report', requires: injectionId(pod) });
  actions.push(...status.verdict);

  const unfitPods = targets.flatMap((t) => (t.why === undefined ? [] : [`pod ${t.pod.metadata.name} failed: its containers cannot go into it (${t.why})`]));
  const notes = [...skipped.map((s) => `pod ${s.name} skipped: ${s.reason}`), ...unfitPods, ...claims.notes];
  const finished = phase === 'Succeeded' || phase === 'Failed';
  // Due by time alone: not the finished TTL, which runs from a verdict this plan only writes
  // (review: with a TTL of 0 a refused verdict was tried every second).
  const due = minRequeue(deadlineExceeded ? undefined : deadlineIn, createdTtl);
  const requeue = [due, claims.requeueAfterSeconds, finished ? ttlAfterFinished(spec) : undefined].reduce(minRequeue);
  return {
    actions, requeueAfterSeconds: requeue, notes, subject: jobRef(job),
    ...(due !== undefined ? { dueAfterSeconds: due } : {}),
    // An injection refused or withheld: its claim may be made again once renewable (step 8).
    ...(claims.inject.length > 0 ? { retryAfterSeconds: Math.ceil(renewAfterMs(lease.cfg) / 1000) } : {}),
  };
}

/**
 * What the status says, and the targets it counts (for the failure Events): once the claimed
 * pods are injected (`claimed`: those pods waiting), and should the claim be refused
 * (`unclaimed`, when this plan claims: those pods still pending; review). A verdict comes from
 * the `narrowed` targets, those within the replicas left (replicasLeft), so a job whose
 * replicas went to pods that are gone still finishes; until then the status counts the pods'
 * `own` targets, the first `replicas`, as every look can: the budget is known only at a look
 * with no pod holding a slot, and counts from it swung with every claim — `match` 2, 3, 2, 3,
 * a status write more per pod, a pod the containers cannot go into counted failed only while
 * a slot was held (review88 F1). The pods claimed and not shown injected count right after
 * the injected ones (countedTargets), as the pods show them once their injections land.
 * A verdict the counted targets give and the narrowed ones do not (a claim still in flight on
 * a pod out of the selector, which is no target) waits, counted as the narrowed targets.
 */
function statusView(o: { narrowed: Target[]; own: Target[]; injecting: ReadonlySet<string>; judge: (ts: Target[]) => Outcome }): { claimed: Outcome; shown: Target[]; unclaimed: Outcome | undefined } {
  const mark = (ts: Target[]): Target[] => (o.injecting.size > 0 ? ts.map((t) => (o.injecting.has(t.pod.metadata.name) ? { ...t, state: 'waiting' as const } : t)) : ts);
  const pick = (injected: boolean): { outcome: Outcome; ts: Target[] } => {
    const narrowed = injected ? mark(o.narrowed) : o.narrowed;
    const decided = o.judge(narrowed);
    if (o.own === o.narrowed || isFinal(decided.phase)) return { outcome: decided, ts: narrowed };
    const own = injected ? mark(o.own) : o.own;
    const counted = o.judge(own);
    return isFinal(counted.phase) ? { outcome: decided, ts: narrowed } : { outcome: counted, ts: own };
  };
  const claimed = pick(true);
  return { claimed: claimed.outcome, shown: claimed.ts, unclaimed: o.injecting.size > 0 ? pick(false).outcome : undefined };
}

const isFinal = (phase: EjobPhase): boolean => phase === 'Succeeded' || phase === 'Failed';

/**
 * The status write of an active plan, the failures told before it in the plan that writes
 * the verdict (statusEvents), and its verdict Events. A verdict's wait on its seal (step 7).
 * A status that counts the pods claimed here as waiting waits on the claim and their
 * injections, and should one of those not take effect the status without them goes instead
 * (reviews: it said pods were waiting where nothing was claimed or injected; gated alone, it
 * froze the other pods' exits). The next look writes what then holds.
 */
function statusActions(job: EphemeralJobObject, o: { claimed: Outcome; unclaimed: Outcome | undefined; seals: boolean; targets: Target[]; now: Date; judged: Date; told: ReadonlySet<string> | undefined; toldUnlisted: true | undefined; injections: string[]; namesakes: number; outside: string | undefined }): { told: Action[]; write: Action[]; verdict: Action[] } {
  // Warnings that could not be listed for now: none told in a plan that writes a verdict (EjobObserved.toldUnlisted).
  const told = (x: Outcome): ReadonlySet<string> | undefined => (o.toldUnlisted && (x.phase === 'Succeeded' || x.phase === 'Failed') ? new Set() : o.told);
  const input = (x: Outcome): StatusInput => {
    const t = told(x);
    return { counts: x.counts, phase: x.phase, targets: o.targets, now: o.now, judgedAt: o.judged, ...(x.failedBy ? { failedBy: x.failedBy } : {}), ...(x.unfit ? { unfit: x.unfit } : {}), ...(t ? { told: t } : {}), ...(o.namesakes > 0 ? { namesakes: o.namesakes } : {}), ...(o.outside ? { outside: o.outside } : {}) };
  };
  const afterSeal = (a: Action): Action => (o.seals ? { ...a, requires: [LEASE_WRITE, ...[a.requires ?? []].flat()] } : a);
  const status = planStatus(job, input(o.claimed));
  const claimAndInjections = [LEASE_WRITE, ...o.injections];
  const write = status.write.map((a): Action => afterSeal({ ...a, group: 'report', ...(o.unclaimed ? { requires: claimAndInjections } : {}) }));
  if (o.unclaimed) write.push(...planStatus(job, input(o.unclaimed)).write.map((a): Action => ({ ...a, group: 'report', unless: claimAndInjections, behindIf: o.injections })));
  return { told: status.told.map(afterSeal), write, verdict: status.verdict.map(afterSeal) };
}

/**
 * The pods targets are chosen from. Once the verdict is on the Lease, nothing is claimed
 * (claims.ts), and once no pod holds a slot the job's pods are the ones it injected: a pod
 * that appeared later is not a target (the counts are then the verdict the seal recorded,
 * recordedVerdict; these targets give the failed pods' Events). While a pod still holds a
 * slot (a deadline verdict, a failed pod whose other container runs), such a pod is counted
 * like any other, never injected; that keeps targets a matter of pods alone whenever a slot
 * is held, which the observation that skips the Lease relies on (README, step 7).
 */
function targetCandidates(pods: readonly Pod[], uid: string, sealed: boolean): readonly Pod[] {
  if (!sealed || slotHolders(pods, uid).length > 0) return pods;
  return pods.filter((p) => ownedContainers(p, uid).length > 0);
}

/**
 * The verdict the Lease recorded with its seal, once no pod holds a slot (else the pods
 * decide, step 7): the verdict's status write was lost, and it is written again as it was
 * decided, whatever the pods show now. Before, the pods decided whenever they gave a final
 * phase, so the pods changing between the seal and the next plan could change it: a pod
 * the containers cannot go into appearing turned a sealed Succeeded into Failed, a failed
 * pod deleted turned Failed into Succeeded (review). And if they gave none — the pods that
 * decided it deleted or ended (an ended pod is no target) — the job would wait for good: a
 * sealed record claims nothing. A record sealed before verdicts were recorded has none.
 */
function recordedVerdict(view: LeaseView, pods: readonly Pod[], jobUid: string): Verdict | undefined {
  if (view.kind !== 'ours' || view.record.finished !== true || view.record.verdict === undefined) return undefined;
  return slotHolders(pods, jobUid).length > 0 ? undefined : view.record.verdict;
}

/**
 * Counts, phase and why a Failed phase failed: the verdict the seal recorded, once no pod
 * holds a slot (`recorded`); else from the targets, or every replica spent on pods that are
 * gone (`gone`).
 */
/** What the targets come to: counts, phase, and why a Failed verdict failed. */
type Outcome = { counts: Counts; phase: EjobPhase; failedBy: FailedBy | undefined; unfit: string | undefined };

/**
 * No verdict while a claim on a pod the LIST does not show may still get its injection
 * (claims.ts unlistedHolds: relabelled out of the selector, it may come back): sealed first,
 * the job would be finished with an injection landing after it, on a pod its counts miss. It
 * says Running (Waiting if nothing has a result yet) until that claim's retention ends, when
 * the claim's own look again (requeue) finds it gone. A deadline's verdict does not wait.
 */
function awaitingLateInjection(o: Outcome, claims: ClaimDecision, deadlineExceeded: boolean): Outcome {
  if (claims.unlistedInFlight === 0 || deadlineExceeded || (o.phase !== 'Succeeded' && o.phase !== 'Failed')) return o;
  return { counts: o.counts, phase: o.counts.succeeded + o.counts.failed > 0 ? 'Running' : 'Waiting', failedBy: undefined, unfit: o.unfit };
}

function outcome(o: { spec: EphemeralJobSpec; targets: readonly Target[]; deadlineExceeded: boolean; gone: (c: Counts) => boolean; recorded: () => Verdict | undefined }): Outcome {
  // A verdict sealed before comes first: the pods it was decided from may have changed since.
  const recorded = o.recorded();
  if (recorded) {
    const counts = { match: recorded.match, succeeded: recorded.succeeded, failed: recorded.failed, running: recorded.running ?? 0, waiting: recorded.waiting ?? 0 };
    return { counts, phase: recorded.phase, failedBy: recorded.failedBy, unfit: recorded.unfit };
  }
  const derived = countStates(o.targets);
  const phase = decidePhase(o.spec, derived, o.deadlineExceeded);
  const unfit = unfitNote(o.targets);
  // Held while paused: no PodsGone verdict either (review), replicas may be raised before the resume.
  if (!o.deadlineExceeded && !o.spec.paused && o.gone(derived)) return { counts: derived, phase: 'Failed', failedBy: 'gone', unfit };
  return { counts: derived, phase, failedBy: o.deadlineExceeded ? 'deadline' : undefined, unfit };
}

/** What a JobFailed message says of the targets the containers could not go into, if any. */
function unfitNote(targets: readonly Target[]): string | undefined {
  const unfit = targets.filter((t) => t.why !== undefined);
  const first = unfit[0];
  // Bounded (names can be long; the seal records it, and a Lease record has a size): NOTE_MAX.
  return first ? `${unfit.length} could not take the containers (${first.pod.metadata.name}: ${first.why})`.slice(0, NOTE_MAX) : undefined;
}

/** The longest `unfit` note (the Lease record's schema allows 1024 characters). */
const NOTE_MAX = 512;

/** The verdict a seal records, for a final phase: what its status write says. */
function verdictOf(phase: EjobPhase, c: Counts, why: { failedBy: FailedBy | undefined; unfit: string | undefined }): Verdict | undefined {
  if (phase !== 'Succeeded' && phase !== 'Failed') return undefined;
  const failed = phase === 'Failed' ? { ...(why.failedBy ? { failedBy: why.failedBy } : {}), ...(why.unfit ? { unfit: why.unfit } : {}) } : {};
  const open = { ...(c.running > 0 ? { running: c.running } : {}), ...(c.waiting > 0 ? { waiting: c.waiting } : {}) };
  return { phase, match: c.match, succeeded: c.succeeded, failed: c.failed, ...open, ...failed };
}

/**
 * Every replica went to pods that are gone (claimed, maybe injected, then deleted, replaced
 * or ended — an ended pod is no target — before their result was seen), and nothing is
 * left: no target, no slot or claim held. Nothing can happen any more — no pod may be claimed — so the job is over, Failed:
 * none of its pods gave a result. Only once no pod holds a slot (`budget` is then known).
 */
function replicasGone(spec: EphemeralJobSpec, budget: ReplicaBudget | undefined, c: Counts, claims: ClaimDecision): boolean {
  return budget !== undefined && budget.left === 0 && (spec.replicas ?? 0) > 0 && c.match === 0 && claims.slotsUsed === 0;
}

/**
 * What `replicas` leaves to claim, once no pod holds a slot (then the Lease is always read:
 * lease-needed.ts). A job whose replicas went to claims on pods that are gone (claimed, then
 * deleted before they could show an injection: they stay counted) would otherwise keep
 * pending targets it can never claim, and never finish. While a pod holds a slot the
 * targets stay a function of the pods alone, as for the seal (README step 7).
 */
function replicasLeft(spec: EphemeralJobSpec, jobUid: string, pods: readonly Pod[], lease: ObservedLease): ReplicaBudget | undefined {
  if (lease.view.kind === 'not-read' || slotHolders(pods, jobUid).length > 0) return undefined;
  return replicaBudget({ spec, jobUid, pods, lease: lease.view, serverNow: lease.serverNow, cfg: lease.cfg, ...(lease.unlisted ? { unlisted: lease.unlisted } : {}) });
}

/**
 * The decision whose Lease write this plan makes, if any. A verdict is a decision like a
 * claim: it is sealed on the Lease first (with any repair, and the verdict itself), at the
 * resourceVersion read, so an instance that meanwhile claimed a late pod makes this 409 and
 * re-plan, and no claim follows it.
 */
function leaseDecision(input: ClaimInput, claims: ClaimDecision, at: { phase: EjobPhase; sealed: boolean; verdict: Verdict | undefined }): ClaimDecision {
  if (at.verdict === undefined || at.sealed || claims.inject.length > 0) return claims;
  return decideClaims({ ...input, mayClaim: false, seal: true, verdict: at.verdict });
}

/**
 * A plan from an observation that did not read the Lease, which would have decided
 * something (claimed, sealed, repaired): the observation should have read it
 * (lease-needed.ts), so plan nothing — no Lease write, no injection, no status that would
 * count either — and look again: when the observation will read the Lease (`untilRead`),
 * else in a second. Defensive: only a planner clock ahead of the server's by more than
 * skewSeconds near a deadline gets here (controller.ts).
 */
function notReadPlan(would: string, at: { createdTtl: number | undefined; untilRead: number | undefined }): Plan {
  return { actions: [], requeueAfterSeconds: minRequeue(at.createdTtl, at.untilRead ?? 1), notes: [`the Lease was not read, and this plan would ${would}: nothing planned, looking again${at.untilRead === undefined ? '' : ` in ${at.untilRead}s, when the API server's clock is within skewSeconds of the deadline and the Lease is read`}`] };
}

/**
 * With the deadline past by the planner's clock but not by the server's + skewSeconds (the
 * planner's clock ahead), the observation reads no Lease until the server's clock reaches
 * the deadline less skewSeconds (controller.ts asks lease-needed.ts that far ahead): the
 * seconds until then, or undefined when that is now. It looked again every second until
 * then, each look a queue message, an invocation and two reads: 297 looks with the planner 5
 * minutes ahead (review95 F6). Who decides the verdict, and when, is as before.
 */
function untilLeaseRead(deadline: number, lease: ObservedLease): number | undefined {
  const ms = deadline - lease.cfg.skewSeconds * 1000 - lease.serverNow.getTime();
  return ms > 1000 ? Math.ceil(ms / 1000) : undefined;
}

/** When activeDeadlineSeconds runs out, in ms (+Infinity: unset); `now` judges a resume (activeSince). */
function deadlineAt(job: EphemeralJobObject, spec: EphemeralJobSpec, now: Date): number {
  return spec.activeDeadlineSeconds === undefined ? Number.POSITIVE_INFINITY : activeSince(job, spec, now).getTime() + spec.activeDeadlineSeconds * 1000;
}

/**
 * Whether every target had its result by `at` (ms): every one succeeded or failed, and none
 * is known to have got it later — by the kubelet's `finishedAt` of the job's containers: a
 * pod succeeded when its last container exited, failed at its first failure. A result with
 * no time (a container that cannot start, an exit without `finishedAt`, a pod the containers
 * cannot go into) stands, as OpenKruise lets any result win over its deadline. So a look that
 * sees the last exit only after the deadline (queue latency, a relay restart) judges a job
 * whose pods ended in time by their results, not DeadlineExceeded (review88 F3).
 */
export function resultsBy(targets: readonly Target[], at: number, jobUid: string): boolean {
  return targets.length > 0 && targets.every((t) => (t.state === 'succeeded' || t.state === 'failed') && !resultAfter(t, at, jobUid));
}

/** A done target whose result is known to have come after `at` (resultsBy). */
function resultAfter(t: Target, at: number, jobUid: string): boolean {
  if (t.why !== undefined) return false;
  const names = new Set(ownedContainers(t.pod, jobUid).map((c) => c.name));
  let exitAfter = false;
  // When each failure came: NaN when it says no time.
  const failures: number[] = [];
  for (const s of t.pod.status?.ephemeralContainerStatuses ?? []) {
    if (!names.has(s.name)) continue;
    const term = s.state?.terminated;
    const ended = toDate(term?.finishedAt)?.getTime() ?? Number.NaN;
    if (term && term.exitCode !== 0) failures.push(ended);
    else if (term) exitAfter ||= ended > at;
    else if (isTerminal(s.state)) failures.push(Number.NaN);
  }
  // Failed at its first failure: late only when every failure is known to be.
  if (t.state === 'failed') return failures.length > 0 && failures.every((x) => x > at);
  return exitAfter;
}

/** True once the job has been active longer than activeDeadlineSeconds (never when unset, never while paused). */
export function pastDeadline(job: EphemeralJobObject, spec: EphemeralJobSpec, now: Date): boolean {
  return deadlineAfter(job, spec, now) === 0;
}

/**
 * Seconds until activeDeadlineSeconds runs out (0: it has), or undefined: unset, or the job
 * is paused. As a suspended Kubernetes Job's, the timer stops while the job is paused and
 * starts again when it is resumed (`activeSince`); OpenKruise's also stops, and failed a job
 * the moment it was resumed past its deadline.
 */
function deadlineAfter(job: EphemeralJobObject, spec: EphemeralJobSpec, now: Date): number | undefined {
  return spec.paused ? undefined : afterSeconds(activeSince(job, spec, now), spec.activeDeadlineSeconds, now);
}

/**
 * When the job became active, for activeDeadlineSeconds and `status.startTime`: the job's
 * creation, or when it was last resumed — now, when the status still says Paused and the
 * spec no longer does (the status write of that plan records it, as a resumed Kubernetes
 * Job's startTime is set again). A pause no status write saw (paused and resumed between
 * two looks) does not stop the timer.
 */
export function activeSince(job: EphemeralJobObject, spec: EphemeralJobSpec, now: Date): Date {
  if (job.status?.phase === 'Paused' && !spec.paused) return now;
  return toDate(job.status?.startTime) ?? toDate(job.metadata.creationTimestamp) ?? now;
}

/** The status counters of these targets. */
export function countStates(targets: readonly Target[]): Counts {
  const c: Counts = { match: targets.length, succeeded: 0, failed: 0, running: 0, waiting: 0 };
  for (const t of targets) {
    if (t.state === 'succeeded') c.succeeded++;
    else if (t.state === 'failed') c.failed++;
    else if (t.state === 'running') c.running++;
    else if (t.state === 'waiting') c.waiting++;
  }
  return c;
}

/** The job's phase from its counts (DESIGN.md's phase rules, in order). */
export function decidePhase(spec: EphemeralJobSpec, c: Counts, deadlineExceeded: boolean): EjobPhase {
  // Paused first: a paused job is held, not judged — no deadline runs (deadlineAfter), and
  // no verdict comes while its pods end; it is judged once resumed (review: a paused job was
  // failed by its deadline, or finished and took no pod after its resume).
  if (spec.paused) return 'Paused';
  if (deadlineExceeded) return 'Failed';
  const done = c.succeeded + c.failed;
  // Every target pod terminal: the job is over (OpenKruise leaves mixed results in Unknown, #2514).
  if (c.match > 0 && done === c.match) return c.failed === 0 ? 'Succeeded' : 'Failed';
  if (c.match === 0) return 'Waiting';
  if (c.running > 0 || done > 0) return 'Running';
  return 'Waiting';
}

/** What the status is computed from. */
export interface StatusInput {
  counts: Counts;
  phase: EjobPhase;
  /** Target pods with their states (for failure events). */
  targets: readonly Target[];
  now: Date;
  /**
   * The later of the planner's clock and the API server's, as the deadline is judged
   * (planActive `judged`); `now` when unset. A resume's `startTime`, and a verdict's
   * `completionTime` and conditions' times.
   */
  judgedAt?: Date;
  /** Why a Failed phase failed, when not for failed pods: past activeDeadlineSeconds, or every replica spent on pods now gone. */
  failedBy?: FailedBy;
  /** What the JobFailed message says of pods the containers could not go into (unfitNote, or as the seal recorded it). */
  unfit?: string;
  /** The job's failure Warnings already written (EjobObserved.told), when known. */
  told?: ReadonlySet<string>;
  /** Selected pods that are no targets because they hold a same-named ephemeral container of another job. */
  namesakes?: number;
  /** What the spec holds outside the webhook's limits, and what it runs as (api/spec-limits.ts). */
  outside?: string;
}

/**
 * Why nothing is targeted. `replicas: 0` targets no pod by definition (as in OpenKruise, the
 * job then waits: raising it goes on), whatever the selector matches, even pods the job's
 * containers still run in (review: the message said no pod matched).
 */
function emptyWhy(job: EphemeralJobObject, namesakes: number | undefined): string {
  const replicas = (job.spec as { replicas?: unknown } | undefined)?.replicas;
  // Below 0 as 0 (api/spec-limits.ts): OpenKruise targets no pod then either.
  if (typeof replicas === 'number' && replicas <= 0) return `replicas is ${replicas}: no pod is targeted`;
  // Said apart (review: a job deleted and applied again under its name found its pods taken by
  // its own earlier containers, and the status said no pod matched).
  if (namesakes) return `no active pod can be targeted: ${namesakes} matching pod${namesakes === 1 ? ' holds' : 's hold'} an ephemeral container of the same name from another job (an earlier job of this name, say), and ephemeral containers cannot be removed; rename the template's containers to run in ${namesakes === 1 ? 'it' : 'them'}`;
  return 'no active pod matches the selector';
}

/** Why a Failed verdict failed, when not for failed pods. */
export type FailedBy = 'deadline' | 'gone';

/**
 * Status (written only when it changed), and its Events (statusEvents): the failures it
 * counts first, sent once it took effect, or before it when it writes the verdict (`told`);
 * a verdict's, once it took effect.
 */
export function planStatus(job: EphemeralJobObject, input: StatusInput): { told: Action[]; write: Action[]; verdict: Action[] } {
  const { counts, phase } = input;
  const judged = input.judgedAt ?? input.now;
  const prev = job.status ?? {};
  const finished = phase === 'Succeeded' || phase === 'Failed';
  // A verdict is stamped by the later of the planner's clock and the server's: others judge
  // the TTL from completionTime by the server's clock, and a verdict written by a planner 5
  // minutes behind was deleted by them at once with a TTL of 2 minutes, its completionTime
  // before its startTime (review95 F4); a planner clock ahead only delays the TTL. Other
  // writes keep the planner's clock: a plan from a Lease not read (whose server time is the
  // pods' LIST's) is then the plan from the Lease, to the byte (lease-needed.ts), and a
  // verdict is always planned from a Lease read.
  const at = finished ? judged : input.now;
  const failedWhy = phase === 'Failed' ? failedCondition(job, { counts, unfit: input.unfit }, input.failedBy) : undefined;
  const wanted = wantedConditions(job, input, failedWhy);

  // Set again at a resume, as a Kubernetes Job's: the deadline runs from it (activeSince).
  // Not by a verdict (a sealed one written again while paused keeps when the job started).
  // The moment the resume was judged at, by the clock the deadline is judged by: with the
  // planner's own clock behind the server's, the deadline ran short by the lag (review88 F2).
  const started = prev.phase === 'Paused' && phase !== 'Paused' && !finished ? judged : (toDate(prev.startTime) ?? toDate(job.metadata.creationTimestamp) ?? at);
  const next: NextStatus = { ...counts, phase, startTime: rfc3339(started), conditions: mergeConditions(prev.conditions ?? [], wanted, at) };
  // Never before startTime (a creationTimestamp of a server clock since stepped back).
  if (finished) next.completionTime = rfc3339(toDate(prev.completionTime) ?? (started > at ? started : at));
  // Earlier versions kept a ledger in status.ephemera: drop it with the next write.
  if ((prev as { ephemera?: unknown }).ephemera !== undefined) next.ephemera = null;

  const write = jsonEqual({ ...normaliseStatus(prev), ...next }, normaliseStatus(prev)) ? [] : [{ ...writeStatus(job, next), id: STATUS_ID }];
  const { told, verdict } = statusEvents(job, input, { written: write.length > 0, before: prev, failedWhy });
  return { told, write, verdict: [...verdict, ...outsideLimitsEvent(job, input, write.length > 0)] };
}

/** The conditions a status of this phase says (mergeConditions keeps the others as they are). */
function wantedConditions(job: EphemeralJobObject, input: StatusInput, failedWhy: WantedCondition | undefined): WantedCondition[] {
  const { counts, phase } = input;
  const prev = job.status?.conditions ?? [];
  const wanted: WantedCondition[] = [
    { type: 'Initialized', status: 'True', reason: 'Initialized' },
    counts.match === 0
      ? { type: 'MatchedEmpty', status: 'True', reason: 'MatchedEmpty', message: emptyWhy(job, input.namesakes) }
      : { type: 'MatchedEmpty', status: 'False', reason: 'Matched' },
  ];
  if (phase === 'Succeeded') wanted.push({ type: 'JobSucceeded', status: 'True', reason: 'AllSucceeded', message: `all ${counts.match} pods succeeded` });
  if (failedWhy) wanted.push(failedWhy);
  // Values outside the webhook's limits are no error (the job runs them as OpenKruise did), so
  // JobError stays False, its reason and message saying what they run as: a condition of
  // DESIGN's list, shown by `kubectl describe` and kept while the values are (review72).
  if (input.outside) wanted.push({ type: 'JobError', status: 'False', reason: OUTSIDE_LIMITS_REASON, message: input.outside });
  else if (prev.some((c) => c.type === 'JobError')) wanted.push({ type: 'JobError', status: 'False', reason: 'SpecValid' });
  // JobFailed comes with a Failed verdict only. OpenKruise sets it (CreateFailed) on a running
  // job as soon as one pod failed, and never clears it: a job taken over from it would say
  // JobFailed beside Running, or beside JobSucceeded, and a later Failed verdict would keep
  // the old transition time (review of the takeover).
  if (!failedWhy && prev.some((c) => c.type === 'JobFailed' && c.status === 'True')) {
    wanted.push({ type: 'JobFailed', status: 'False', reason: 'NoFailedVerdict', message: 'JobFailed is set with a Failed verdict only; a pod\'s failure is told by an EphemeralContainerFailed Warning' });
  }
  return wanted;
}

const STATUS_ID = 'status';

/**
 * A Warning on the job when the status write first says what values outside the webhook's
 * limits run as (or says it anew: a value changed), for alerts and `kubectl get events`;
 * once that write took effect. Not at every look: its JobError condition, already saying
 * it, is the record of it having been told.
 */
function outsideLimitsEvent(job: EphemeralJobObject, input: StatusInput, written: boolean): Action[] {
  if (!written || !input.outside) return [];
  const before = job.status?.conditions?.find((c) => c.type === 'JobError');
  if (before?.reason === OUTSIDE_LIMITS_REASON && before.message === input.outside) return [];
  // Named by its message too: told anew after a value changed, it is a new Event; under the
  // name of the first it would be refused as there already, leaving the old values on show (review78).
  const event = eventAction(jobRef(job), { type: 'Warning', reason: OUTSIDE_LIMITS_REASON, message: input.outside, discriminator: input.outside }, input.now);
  return [{ ...event, group: 'verdict', requires: STATUS_ID }];
}

/**
 * The Events of a plan's status: a Warning on the job for each failure not told yet
 * (failureEvents), and a verdict's when the phase becomes final. The verdict's Events are
 * sent once the status write that says it took effect. So are the failures, but in the plan
 * whose status write finishes the job (`told`): those go before it, since a finished job's
 * looks plan nothing, and one that died between the two writes lost them for good (a crash
 * before the status write is looked at again, and the Warnings listed then are not told
 * twice; their names are fixed, so a second telling is a 409 that means done). Best effort
 * there (Action.bestEffort, withinSeconds): an outage of Events drops them rather than hold
 * the verdict back (review: every redelivery failed the same way, and the job stayed Running).
 */
function statusEvents(job: EphemeralJobObject, input: StatusInput, o: { written: boolean; before: { failed?: number; phase?: string }; failedWhy: WantedCondition | undefined }): { told: Action[]; verdict: Action[] } {
  const failures = failureEvents(job, input, o.written ? o.before.failed ?? 0 : undefined);
  const final = input.phase === 'Succeeded' || input.phase === 'Failed';
  const completion = final && o.before.phase !== input.phase ? completionEvents(job, input, o.failedWhy) : [];
  const after = (a: Action): Action => ({ ...a, group: 'verdict', ...(o.written ? { requires: STATUS_ID } : {}) });
  // An active job's plan with a final phase: its status write finishes the job (its phase,
  // or the completionTime a status Failed without one lacks: review).
  if (final && o.written) return { told: failures.map((a): Action => ({ ...a, group: 'told', bestEffort: true, withinSeconds: TOLD_WITHIN_SECONDS })), verdict: completion.map(after) };
  return { told: [], verdict: [...failures, ...completion].map(after) };
}

/**
 * How long after its look began a failure Warning ahead of a verdict's status write may still
 * be sent: Event writes that hang (a client timeout a try, five tries, five rounds of ten)
 * must not hold the verdict back for minutes (review).
 */
const TOLD_WITHIN_SECONDS = 30;

/** Names an injection, for the Event that follows it. */
function injectionId(pod: Pod): string {
  return `inject:${pod.metadata.name}`;
}

function failedCondition(job: EphemeralJobObject, o: { counts: Counts; unfit: string | undefined }, failedBy: FailedBy | undefined): WantedCondition {
  const c = o.counts;
  const spec = job.spec as Partial<EphemeralJobSpec> | undefined;
  if (failedBy === 'deadline') {
    return { type: 'JobFailed', status: 'True', reason: 'DeadlineExceeded', message: `job was active longer than activeDeadlineSeconds (${spec?.activeDeadlineSeconds}s)` };
  }
  if (failedBy === 'gone') {
    // No count: the spec's replicas may have changed since the verdict was sealed (a re-made
    // write). A pod relabelled out of the selector is no target either (DESIGN), though it may
    // still run: the message says so (review: it said "deleted or ended" of a live pod).
    return { type: 'JobFailed', status: 'True', reason: 'PodsGone', message: 'every replica went to pods that were deleted, ended or left the selector before their result was seen' };
  }
  return { type: 'JobFailed', status: 'True', reason: 'PodsFailed', message: `${c.failed} of ${c.match} pods failed${o.unfit ? `; ${o.unfit}` : ''}` };
}

function completionEvents(job: EphemeralJobObject, input: StatusInput, failed: WantedCondition | undefined): Action[] {
  const uid = job.metadata.uid ?? '';
  const actions: Action[] = [];
  if (!failed) {
    actions.push(eventAction(jobRef(job), { type: 'Normal', reason: 'JobSucceeded', message: `all ${input.counts.match} pods succeeded` }, input.now));
    return actions;
  }
  actions.push(eventAction(jobRef(job), { type: 'Warning', reason: failed.reason === 'DeadlineExceeded' ? 'DeadlineExceeded' : 'JobFailed', message: failed.message ?? 'failed' }, input.now));
  // One event per failed pod on the pod, so `kubectl describe pod` shows why.
  for (const t of input.targets.filter((x) => x.state === 'failed').slice(0, FAILURE_EVENTS_MAX)) {
    const spec: EventSpec = { type: 'Warning', reason: POD_FAILED_REASON, message: `ephemeral job ${job.metadata.name}: ${failureOf(t, uid)}`, discriminator: uid };
    actions.push(eventAction(podRef(t.pod), spec, input.now));
  }
  return actions;
}

/** At most this many failed pods' Warnings in one plan. */
const FAILURE_EVENTS_MAX = 50;

/** The reason of the Warning that tells a pod's failure (on the job, and with a Failed verdict on the pod). */
export const POD_FAILED_REASON = 'EphemeralContainerFailed';

const failureOf = (t: Target, jobUid: string): string => t.why ?? failureReason(t.pod, jobUid);

/**
 * A Warning on the job for each failed target whose failure it does not tell yet, the latest
 * failures first (by when the job's containers in the pod ended, or for a pod the containers
 * cannot go into when it and the job both existed; a container that cannot start has no such
 * time and counts as latest; ties go to the later target), at most
 * FAILURE_EVENTS_MAX in a plan. Named by the job and the pod's uid. So `kubectl describe
 * ejob` tells a failure once, when it is counted, as DESIGN asks ("Events on the job ... for
 * failures"), and it stays told after its pod is deleted and no longer counted (review:
 * failures were told only with the verdict, on the pods still there).
 * Which are told already: `told`, the Warnings the observation listed (controller.ts
 * withTold); of those, a failure that ended within TELL_WITHIN_MS, one without a time in a
 * plan that writes the status, or one the status write counts anew (below). Unknown (the LIST refused, or pure
 * planning): as many as the status write (`before`: the failed count it replaces;
 * undefined, no write) newly counts — best effort, a masked failure then goes untold on the
 * job (review found such cases: that is why the observation lists them).
 */
function failureEvents(job: EphemeralJobObject, input: StatusInput, before: number | undefined): Action[] {
  const uid = job.metadata.uid ?? '';
  const failed = datedFailures(job, input.targets);
  const told = input.told;
  // The failures this plan's status write counts anew (`before`: the count it replaces).
  let newly = before !== undefined ? input.counts.failed - before : 0;
  const out: Action[] = [];
  for (const { t, at } of failed) {
    if (out.length >= FAILURE_EVENTS_MAX || (told === undefined && newly <= 0)) break;
    const spec: EventSpec = { type: 'Warning', reason: POD_FAILED_REASON, message: `pod ${t.pod.metadata.name}: ${failureOf(t, uid)}`, discriminator: t.pod.metadata.uid ?? t.pod.metadata.name };
    const event = eventAction(jobRef(job), spec, input.now);
    if (told?.has(event.name)) continue;
    // An Event lasts kube-apiserver's --event-ttl (1 h by default), then the LIST no longer
    // shows it: a failure older than that would be told again, every hour (review). So with
    // `told` an untold failure goes while recent, or — without a time — in a plan that writes
    // the status, or as one the status write counts anew (review: an old pod labelled in,
    // which the containers cannot go into, was counted and never told).
    const recent = Number.isFinite(at) ? at >= input.now.getTime() - TELL_WITHIN_MS : before !== undefined;
    if (told === undefined || recent || newly > 0) {
      out.push(event);
      newly--;
    }
  }
  return out;
}

/**
 * The failed targets, the latest failures first: by when the job's containers in the pod
 * ended (failedAt), or for a pod the containers cannot go into when it and the job both
 * existed; a container that cannot start has no such time and counts as latest (+Infinity).
 * Ties (the same second, or no time) go to the later target: pods are claimed in target
 * order, so the later one failed last when their containers fail alike (a bad image).
 */
function datedFailures(job: EphemeralJobObject, targets: readonly Target[]): { t: Target; at: number }[] {
  const uid = job.metadata.uid ?? '';
  const created = toDate(job.metadata.creationTimestamp)?.getTime() ?? 0;
  const unfitSince = (pod: Pod): number => Math.max(toDate(pod.metadata.creationTimestamp)?.getTime() ?? Number.POSITIVE_INFINITY, created);
  const failed = targets.flatMap((t, order) => (t.state === 'failed' ? [{ t, order, at: t.why === undefined ? failedAt(t.pod, uid) : unfitSince(t.pod) }] : []));
  return failed.sort((a, b) => b.at - a.at || b.order - a.order);
}

/**
 * Whether a plan of these targets may tell a failure on the job with the Warnings told
 * listed (failureEvents): the status would count failures anew, or a failure with a time is
 * recent. The observation lists them only then (controller.ts withTold; review: a job with
 * one early failure listed them at every look for the rest of its run, to tell nothing).
 */
export function mayTellFailures(job: EphemeralJobObject, spec: EphemeralJobSpec, pods: readonly Pod[], now: Date): boolean {
  const failed = datedFailures(job, selectTargets(spec, job.metadata.uid ?? '', pods).targets);
  return failed.length !== (job.status?.failed ?? 0) || failed.some(({ at }) => Number.isFinite(at) && at >= now.getTime() - TELL_WITHIN_MS);
}

/** How long after a failure it is still told on the job when not told yet: kube-apiserver's default --event-ttl (1 h), less a margin for clocks. */
const TELL_WITHIN_MS = 50 * 60_000;

/** When the job's containers in a failed pod ended (the latest non-zero exit), or +Infinity when none says (a container that cannot start). */
function failedAt(pod: Pod, jobUid: string): number {
  const names = new Set(ownedContainers(pod, jobUid).map((c) => c.name));
  let at = Number.NEGATIVE_INFINITY;
  for (const s of pod.status?.ephemeralContainerStatuses ?? []) {
    const t = s.state?.terminated;
    if (!names.has(s.name) || !t || t.exitCode === 0) continue;
    at = Math.max(at, toDate(t.finishedAt)?.getTime() ?? Number.POSITIVE_INFINITY);
  }
  return at === Number.NEGATIVE_INFINITY ? Number.POSITIVE_INFINITY : at;
}

function writeStatus(job: EphemeralJobObject, status: NextStatus): Action {
  return {
    verb: 'patch',
    apiVersion: EJOB.apiVersion,
    kind: EJOB.kind,
    subresource: 'status',
    namespace: job.metadata.namespace ?? '',
    name: job.metadata.name,
    patchType: 'merge',
    // resourceVersion makes the merge patch a precondition: a stale plan gets 409 and re-plans.
    body: { metadata: { resourceVersion: job.metadata.resourceVersion }, status },
    ...(job.metadata.uid ? { uid: job.metadata.uid } : {}),
    reason: `status: ${status.phase} match=${status.match} succeeded=${status.succeeded} failed=${status.failed} running=${status.running} waiting=${status.waiting}`,
  };
}

/** All template containers in one request, each carrying the job's uid so we know it is ours. */
function inject(job: EphemeralJobObject, spec: EphemeralJobSpec, pod: Pod): Action {
  const uid = job.metadata.uid ?? '';
  // Sent as OpenKruise's typed client sends them: no empty lists (Go's omitempty).
  const containers = spec.template.ephemeralContainers.map((c) => ({
    ...omitEmpty(c),
    env: [...(c.env ?? []).filter((e) => e.name !== EJOB_ID_ENV), { name: EJOB_ID_ENV, value: uid }],
  }));
  return {
    verb: 'patch',
    apiVersion: 'v1',
    kind: 'Pod',
    subresource: 'ephemeralcontainers',
    namespace: pod.metadata.namespace ?? job.metadata.namespace ?? '',
    name: pod.metadata.name,
    patchType: 'strategic',
    // A template field the server does not know (misspelt, or newer than the cluster) refuses
    // the injection, told on the pod and the job, instead of a container run without it.
    strictFields: true,
    // The claimed pod's uid: a pod deleted and created again under its name since (a
    // StatefulSet's) is not the pod claimed, and kube-apiserver refuses the patch (422,
    // metadata.uid is immutable) instead of injecting a pod no claim holds a slot for.
    body: { ...(pod.metadata.uid ? { metadata: { uid: pod.metadata.uid } } : {}), spec: { ephemeralContainers: containers } },
    alreadyExists: 'look-again',
    reason: `inject ${containers.map((c) => c.name).join(', ')} for ephemeral job ${job.metadata.name}`,
    refusalPaths: templatePaths(pod, containers.map((c) => c.name)),
  };
}

/**
 * Where each template container lands in the pod's list, as kube-apiserver's 422 names it
 * (`spec.ephemeralContainers[k]`), told as the template's (`spec.template.ephemeralContainers[j](name)`).
 * The strategic merge keyed by name keeps the pod's ephemeral containers in place (one of
 * the template's names among them is merged there) and appends the others in the template's
 * order (review91 F5: a pod that had `kubectl debug` run on it shifted the index).
 */
function templatePaths(pod: Pod, names: readonly string[]): Record<string, string> {
  const existing = (pod.spec.ephemeralContainers ?? []).map((c) => c.name);
  const out: Record<string, string> = {};
  let appended = existing.length;
  names.forEach((name, j) => {
    const at = existing.indexOf(name);
    out[`spec.ephemeralContainers[${at >= 0 ? at : appended++}]`] = `spec.template.ephemeralContainers[${j}](${name})`;
  });
  return out;
}

/**
 * One Event per injected pod, on the pod (`kubectl describe pod` shows who added the
 * containers); the job gets Events for its verdict and failures only. The name is fixed
 * per job and pod, so a repeated injection plan records it once.
 */
function injectedEvent(job: EphemeralJobObject, spec: EphemeralJobSpec, pod: Pod, now: Date): Action {
  const names = spec.template.ephemeralContainers.map((c) => c.name).join(', ');
  return eventAction(podRef(pod), { type: 'Normal', reason: 'EphemeralContainersInjected', message: `ephemeral job ${job.metadata.name} injected [${names}]`, discriminator: job.metadata.uid ?? '' }, now);
}

/** A job with a bad spec: phase Error and a JobError condition naming the fields. */
function planInvalid(job: EphemeralJobObject, message: string, at: { now: Date; createdTtl: number | undefined }): Plan {
  const { now, createdTtl } = at;
  const requeue = { subject: jobRef(job), ...(createdTtl === undefined ? {} : { requeueAfterSeconds: createdTtl, dueAfterSeconds: createdTtl }) };
  const prev = job.status ?? {};
  const conditions = mergeConditions(prev.conditions ?? [], [
    { type: 'Initialized', status: 'True', reason: 'Initialized' },
    { type: 'JobError', status: 'True', reason: 'InvalidSpec', message },
  ], now);
  // The counters `kubectl get ejob` shows, which OpenKruise always writes (not omitempty): 0
  // where no look counted them, rather than blank columns (review78); the counts of a look made
  // before the spec went bad are kept (no pod is looked at while it is), as OpenKruise keeps them.
  const counts = { match: prev.match ?? 0, succeeded: prev.succeeded ?? 0, failed: prev.failed ?? 0, running: prev.running ?? 0, waiting: prev.waiting ?? 0 };
  const next = { ...normaliseStatus(prev), phase: 'Error', ...counts, conditions };
  if (jsonEqual(next, normaliseStatus(prev))) return { actions: [], ...requeue, notes: [`invalid spec: ${message}`] };
  const body = { metadata: { resourceVersion: job.metadata.resourceVersion }, status: { phase: 'Error', ...counts, conditions } };
  const actions: Action[] = [
    { verb: 'patch', apiVersion: EJOB.apiVersion, kind: EJOB.kind, subresource: 'status', namespace: job.metadata.namespace ?? '', name: job.metadata.name, patchType: 'merge', body, reason: `status: Error (${message})`, ...(job.metadata.uid ? { uid: job.metadata.uid } : {}) },
  ];
  // Told when the job goes to Error, or when what is wrong changed (an edit without the
  // webhook): named by its message, so a new message is a new Event (review78).
  const before = prev.conditions?.find((c) => c.type === 'JobError');
  const told = prev.phase === 'Error' && (before?.reason !== 'InvalidSpec' || before.message === message);
  if (!told) actions.push(eventAction(jobRef(job), { type: 'Warning', reason: 'InvalidSpec', message, discriminator: message }, now));
  return { actions, ...requeue, notes: [`invalid spec: ${message}`] };
}

/** Finished jobs keep their status; only the TTL is left to act on. */
function planFinished(input: { job: EphemeralJobObject; ttl: number | undefined; createdTtl: number | undefined }, now: Date): Plan {
  const { job, ttl, createdTtl } = input;
  const completed = toDate(job.status?.completionTime) ?? now;
  const left = afterSeconds(completed, ttl, now);
  if (left === 0) return deleteJob(job, `ttlSecondsAfterFinished (${ttl}s) has passed since completion`);
  return { actions: [], requeueAfterSeconds: minRequeue(createdTtl, left) };
}

/** A job being deleted: drop OpenKruise's finalizer (ephemeral containers cannot be removed). */
function planDeleting(job: EphemeralJobObject): Plan {
  const finalizers = job.metadata.finalizers ?? [];
  if (!finalizers.includes(EJOB_CLEANUP_FINALIZER)) return { actions: [] };
  return {
    actions: [{
      verb: 'patch',
      apiVersion: EJOB.apiVersion,
      kind: EJOB.kind,
      namespace: job.metadata.namespace ?? '',
      name: job.metadata.name,
      patchType: 'json',
      // The test ops fence the write: if someone else changed the finalizers, or the name now
      // holds a job created again since (same finalizers, another uid: found by chaos), the
      // patch is refused (422) and the job observed again.
      body: [
        ...(job.metadata.uid ? [{ op: 'test', path: '/metadata/uid', value: job.metadata.uid }] : []),
        { op: 'test', path: '/metadata/finalizers', value: finalizers },
        { op: 'replace', path: '/metadata/finalizers', value: finalizers.filter((f) => f !== EJOB_CLEANUP_FINALIZER) },
      ],
      reason: `remove finalizer ${EJOB_CLEANUP_FINALIZER}: ephemeral containers cannot be removed from pods`,
      ...(job.metadata.uid ? { uid: job.metadata.uid } : {}),
    }],
    subject: jobRef(job),
  };
}

/**
 * Delete the job (uid-fenced), and look again soon: its Lease is deleted by the look that
 * finds the job gone or being deleted (planDeparted), fenced by the version read then. Not
 * here, unfenced: between the two deletions a job of the same name may be created and claim
 * on the Lease (README.md, "When a job goes").
 */
function deleteJob(job: EphemeralJobObject, why: string): Plan {
  return { actions: [jobDeletion(job, why)], requeueAfterSeconds: LOOK_AFTER_DELETION_SECONDS, subject: jobRef(job) };
}

/**
 * A job being deleted, or gone (README.md, "When a job goes"): delete its Lease when the
 * record there belongs to no live job — judged from the job as read after the Lease, and
 * fenced by the Lease's resourceVersion — and drop OpenKruise's finalizer from a job being
 * deleted. A job created again under the name is left to its own events.
 */
function planDeparted(d: EjobDeparted): Plan {
  const actions: Action[] = [];
  const notes: string[] = [];
  const owner = d.lease?.owner.job;
  if (d.lease && orphaned(d.lease.owner, d.job)) actions.push(leaseDeletion(d.lease, `its record's job (uid ${owner}) is ${d.job?.metadata.uid === owner ? 'being deleted' : 'gone'}`));
  else if (d.lease) notes.push(`Lease kept: its record is for job uid ${owner}, the live job of this name`);
  if (d.job !== null && d.job.metadata.deletionTimestamp !== undefined) actions.push(...planDeleting(d.job).actions);
  return { actions, notes, ...(d.job !== null ? { subject: jobRef(d.job) } : {}) };
}

function jobDeletion(job: EphemeralJobObject, why: string): Action {
  return {
    verb: 'delete',
    apiVersion: EJOB.apiVersion,
    kind: EJOB.kind,
    namespace: job.metadata.namespace ?? '',
    name: job.metadata.name,
    body: { preconditions: { uid: job.metadata.uid }, propagationPolicy: 'Background' },
    reason: `delete job: ${why}`,
    ...(job.metadata.uid ? { uid: job.metadata.uid } : {}),
  };
}

function ttlAfterFinished(spec: EphemeralJobSpec): number {
  return spec.ttlSecondsAfterFinished ?? DEFAULT_TTL_AFTER_FINISHED_SECONDS;
}

/** Seconds left until `from + seconds` (0 when due), or undefined when seconds is unset. */
function afterSeconds(from: Date, seconds: number | undefined, now: Date): number | undefined {
  if (seconds === undefined) return undefined;
  const left = (from.getTime() + seconds * 1000 - now.getTime()) / 1000;
  return left <= 0 ? 0 : Math.ceil(left);
}

function jobRef(job: EphemeralJobObject): { apiVersion: string; kind: string; namespace: string; name: string; uid?: string } {
  return { apiVersion: EJOB.apiVersion, kind: EJOB.kind, namespace: job.metadata.namespace ?? '', name: job.metadata.name, uid: job.metadata.uid };
}

function podRef(pod: Pod): { apiVersion: string; kind: string; namespace: string; name: string; uid?: string } {
  return { apiVersion: 'v1', kind: 'Pod', namespace: pod.metadata.namespace ?? '', name: pod.metadata.name, uid: pod.metadata.uid };
}
