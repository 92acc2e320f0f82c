import type { EphemeralJobSpec } from '../api/ephemeraljob.ts';
import { toDate } from '../api/meta.ts';
import { selectorMatches } from '../api/selector.ts';
import type { Pod } from '../api/pod.ts';
import type { Action } from '../engine/plan.ts';
import { leaseWrite, RECORD_VERSION, type Claim, type LeaseConfig, type LeaseRecord, type LeaseView, type Passed, type ReadLeaseView, type Verdict } from './lease-record.ts';
import { hasForeignNamesake, holdsSlot, isActive, ownedContainers, slotHolders, unfitReason } from './pod-state.ts';
import type { Target } from './targets.ts';

/** What the claim rules need: the job's pods (read after the Lease, or just before it when that LIST stands: listBeforeLeaseStands), its Lease, the server's time. */
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
  /** With `seal`: the verdict, recorded with it. */
  verdict?: Verdict;
  /**
   * Claimed pods within their retention that `pods` does not show, as a GET after it found
   * them (null: not found, gone for good). One not here was not looked up: it holds its slot.
   */
  unlisted?: ReadonlyMap<string, Pod | null>;
}

/** What the count of pods ever claimed is read from: the claim rules' input without targets. */
export type ClaimContext = Pick<ClaimInput, 'spec' | 'jobUid' | 'pods' | 'lease' | 'serverNow' | 'cfg' | 'unlisted'>;

/**
 * How many more pods `replicas` lets the job claim (after every pod shown injected and every
 * claim kept, each once: `everClaimed`), and the pods claimed and not shown injected yet —
 * those stay targets whatever is left (planner.ts, targets.ts). Undefined without replicas.
 */
export function replicaBudget(ctx: ClaimContext): { left: number; claimed: ReadonlySet<string> } | undefined {
  if (ctx.spec.replicas === undefined) return undefined;
  const { kept, total } = recordState(ctx);
  return { left: Math.max(0, ctx.spec.replicas - total), claimed: kept.claimed };
}

/** The record to plan from, the claims it keeps, and how many pods the job has ever claimed (the replicas bound). */
function recordState(ctx: ClaimContext): { base: ReturnType<typeof baseRecord>; kept: Retained; total: number } {
  const base = baseRecord(ctx);
  const kept = retainedClaims(base.record.claims, ctx);
  return { base, kept, total: everClaimed(base.record.total - kept.dropped, kept.claims, ctx) };
}

/** The decision: which pods to inject now, the Lease write that claims them first, when to look again. */
export interface ClaimDecision {
  /** Pods to inject now: those claimed anew, then those whose claim is renewed (`renewed`). */
  inject: Pod[];
  /** Of `inject`, the pods claimed before whose injection did not show: claimed again, same slot. */
  renewed: Pod[];
  /** Claims and repairs, written before any injection; absent when nothing was decided. */
  write?: Action;
  requeueAfterSeconds?: number;
  notes: string[];
  /** Pods holding a slot: a non-terminal container of the job, or an unexpired claim. */
  slotsUsed: number;
  /**
   * Of those, claims on pods the LIST does not show whose injection may still land (a pod
   * relabelled out of the selector, which may come back): no verdict while there is one.
   */
  unlistedInFlight: number;
  /**
   * Set when the Lease was not read and this decision would have written it (what it would
   * have done): then nothing is claimed, and the planner plans nothing (planner.ts).
   */
  needsLease?: string;
}

/**
 * At most this many claims on a record: each takes up to ~360 bytes (a 253-character pod
 * name, its uid and time), so the record stays well under the 256 KiB a Lease's annotations
 * may hold. Claims stay for their retention whatever their pods show, so a long lease and
 * skew with short containers at parallelism 10 grew it past that, and every claim write
 * was then refused (review: 211 cycles with lease 300 s, skew 60 s). At the bound, new claims
 * wait for older ones to leave; the defaults stay far below it.
 */
export const MAX_RECORD_CLAIMS = 500;

/**
 * The candidates that fit under MAX_RECORD_CLAIMS beside the kept claims; when some do not,
 * why, and when to look again: once the oldest claim's retention ends and it leaves the record.
 */
function withinBound(candidates: Pod[], kept: readonly Claim[], input: ClaimInput, at: { holding: boolean; notes: string[] }): { fresh: Pod[]; look?: number } {
  // A hold makes no claim at all (decideClaims says why).
  if (at.holding) return { fresh: [] };
  const room = Math.max(0, MAX_RECORD_CLAIMS - kept.length);
  if (candidates.length <= room) return { fresh: candidates };
  const first = Math.min(...kept.map((c) => (toDate(c.at)?.getTime() ?? input.serverNow.getTime()) + claimRetentionMs(c, input.cfg)));
  at.notes.push(`the record holds ${kept.length} claims, at most ${MAX_RECORD_CLAIMS}: ${candidates.length - room} more wait until older ones leave it`);
  return { fresh: candidates.slice(0, room), look: secondsUntil(new Date(first), input.serverNow) };
}

/** The sooner of two waits in seconds, either of which may be unset. */
function earlier(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

/**
 * Decide new claims (DESIGN: never more than `parallelism` pods with a non-terminal
 * container of the job; never more than `replicas` pods). Slots are the union of pods that
 * show a non-terminal container of the job and the record's claims that the pods do not show
 * ended or gone (retainedClaims). The Lease is written only when something is decided: a
 * claim, the verdict's seal, or a hold on new claims that needs a fixed end (see
 * baseRecord); an unreadable record is repaired by that write. Pure.
 */
export function decideClaims(input: ClaimInput): ClaimDecision {
  const { serverNow } = input;
  const { base, kept, total } = recordState(input);
  const inFlight = new Set(slotHolders(input.pods, input.jobUid).map((p) => p.metadata.name));
  for (const name of kept.holding) inFlight.add(name);
  const notes = [...base.notes, ...kept.notes];
  const holdUntil = toDate(base.record.holdUntil);
  const holding = holdUntil !== undefined && holdUntil.getTime() > serverNow.getTime();
  const sealed = input.seal === true || base.record.finished === true;
  const open = input.mayClaim && !sealed;
  // What would be claimed but for a hold: a hold is written down only when it stops a claim.
  const passed = passedOver(base.record, kept, input);
  const candidates = open ? claimable(input, { inFlight: inFlight.size, total, claimed: kept.claimed, passed }) : [];
  notes.push(...passedNote(candidates, passed, input.targets));
  const bound = withinBound(candidates, kept.claims, input, { holding, notes });
  const fresh = bound.fresh;
  const renewed = open && !holding ? renewable(input, kept.stale, inFlight.size, notes) : [];
  const inject = [...fresh, ...renewed];
  let requeue = earlier(kept.nextLook === undefined ? undefined : secondsUntil(kept.nextLook, serverNow), bound.look);
  if (holding) {
    requeue = Math.min(requeue ?? Number.POSITIVE_INFINITY, secondsUntil(holdUntil, serverNow));
    notes.push(`no new claims until ${holdUntil.toISOString()} (an unreadable Lease record may have held live claims)`);
  }
  const decision: ClaimDecision = { inject, renewed, notes, slotsUsed: inFlight.size, unlistedInFlight: kept.unlisted, ...(requeue !== undefined ? { requeueAfterSeconds: requeue } : {}) };
  const pinHold = holding && candidates.length > 0 && base.undated;
  if (inject.length === 0 && !pinHold && !needsSeal(input, base.record)) return decision;
  // Nothing is ever decided from a Lease that was not read: say what would have been.
  if (input.lease.kind === 'not-read') return { ...decision, inject: [], renewed: [], needsLease: writeReason(input, inject, base) };
  const record = nextRecord(input, { base: base.record, kept: kept.claims, total, fresh, renewed, holdUntil: holding ? holdUntil : undefined, sealed, passed });
  return { ...decision, write: leaseWrite({ cfg: input.cfg, view: input.lease, serverNow }, record, writeReason(input, inject, base)) };
}

/** The record the claim write leaves: kept claims (the renewed ones with a new `at`), the new ones, the hold and seal. */
function nextRecord(input: ClaimInput, d: { base: LeaseRecord; kept: readonly Claim[]; total: number; fresh: readonly Pod[]; renewed: readonly Pod[]; holdUntil: Date | undefined; sealed: boolean; passed: ReadonlyMap<string, Passed> }): LeaseRecord {
  const at = input.serverNow.toISOString();
  const w = claimWindowSeconds(input.cfg);
  const again = new Set(d.renewed.map((p) => p.metadata.name));
  return {
    v: RECORD_VERSION,
    job: input.jobUid,
    // A renewed claim is the same pod: replicas counts it once.
    total: d.total + d.fresh.length,
    claims: [
      // A renewed claim keeps the longer window: its first claimer may still inject under it.
      ...d.kept.map((c): Claim => (again.has(c.pod) ? { ...c, at, renewed: true, w: Math.max(c.w ?? 0, w) } : c)),
      ...d.fresh.map((p): Claim => ({ pod: p.metadata.name, ...(p.metadata.uid ? { uid: p.metadata.uid } : {}), at, w })),
    ],
    keptSince: d.base.keptSince ?? at,
    // A keptSince set now starts the smallest skew anew; one carried keeps the smaller.
    s: d.base.keptSince === undefined ? input.cfg.skewSeconds : Math.min(d.base.s ?? input.cfg.skewSeconds, input.cfg.skewSeconds),
    ...(d.passed.size > 0 ? { passed: [...d.passed.values()] } : {}),
    ...(d.holdUntil ? { holdUntil: d.holdUntil.toISOString() } : {}),
    ...(d.sealed ? { finished: true } : {}),
    ...sealedVerdict(input, d.base),
  };
}

/**
 * How many pods the job has ever claimed (the replicas bound): the record's count, never
 * below the pods shown injected and the claims kept (each pod once, by uid): a record that
 * lags them must not let replicas be exceeded.
 */
function everClaimed(recorded: number, kept: readonly Claim[], input: ClaimContext): number {
  const seen = new Set(input.pods.filter((p) => ownedContainers(p, input.jobUid).length > 0).map((p) => p.metadata.uid ?? p.metadata.name));
  for (const c of kept) seen.add(c.uid ?? c.pod);
  return Math.max(recorded, seen.size);
}

/**
 * The pods to claim now if nothing holds claims back: free slots, replicas left, oldest
 * pending targets first — but those passed over last, the longest passed first.
 */
function claimable(input: ClaimInput, used: { inFlight: number; total: number; claimed: ReadonlySet<string>; passed: ReadonlyMap<string, Passed> }): Pod[] {
  const free = Math.max(0, (input.spec.parallelism ?? 1) - used.inFlight);
  const left = input.spec.replicas === undefined ? Number.POSITIVE_INFINITY : Math.max(0, input.spec.replicas - used.total);
  const pending = input.targets.filter((t) => t.state === 'pending' && !used.claimed.has(t.pod.metadata.name)).map((t) => t.pod);
  // Array.prototype.sort is stable: the pods never passed over keep their order, and those
  // passed over follow in the map's order (longest passed first).
  const rank = new Map([...used.passed.keys()].map((uid, i) => [uid, i + 1]));
  const order = (p: Pod): number => rank.get(p.metadata.uid ?? '') ?? 0;
  return pending.sort((a, b) => order(a) - order(b)).slice(0, Math.min(free, left));
}

/**
 * At most this many pods passed over on a record (LeaseRecord.passed; ~80 bytes each, so
 * 40 KB beside MAX_RECORD_CLAIMS claims, under a Lease's 256 KiB of annotations): the most
 * recent are kept. Past it, the pods passed over longest ago count as never passed (review:
 * at 50, sixty pods refusing every injection kept a healthy younger one from ever being claimed).
 */
export const MAX_RECORD_PASSED = 500;

/**
 * The pods passed over as the next write records them, by uid, longest passed first: the
 * record's, and those whose claim ends its retention now with no injection showing
 * (retainedClaims), each while it is a pending target; at most MAX_RECORD_PASSED.
 */
function passedOver(base: LeaseRecord, kept: Retained, input: ClaimInput): Map<string, Passed> {
  const pending = new Set(input.targets.filter((t) => t.state === 'pending').flatMap((t) => (t.pod.metadata.uid === undefined ? [] : [t.pod.metadata.uid])));
  const latest = new Map<string, Passed>();
  for (const p of [...(base.passed ?? []), ...kept.passed]) {
    if (!pending.has(p.uid)) continue;
    const was = latest.get(p.uid);
    if (was === undefined || at(was) <= at(p)) latest.set(p.uid, p);
  }
  const ordered = [...latest.values()].sort((a, b) => at(a) - at(b)).slice(-MAX_RECORD_PASSED);
  return new Map(ordered.map((p) => [p.uid, p]));
}

/** Why a claim went to other pods first, when pods passed over were waiting. */
function passedNote(candidates: readonly Pod[], passed: ReadonlyMap<string, Passed>, targets: readonly Target[]): string[] {
  if (candidates.length === 0 || passed.size === 0) return [];
  const claimed = new Set(candidates.map((p) => p.metadata.uid));
  const names = new Map(targets.map((t) => [t.pod.metadata.uid, t.pod.metadata.name]));
  // In the order they will be claimed: the longest passed first.
  const waiting = [...passed.keys()].filter((uid) => !claimed.has(uid)).flatMap((uid) => names.get(uid) ?? []);
  return waiting.length === 0 ? [] : [`claimed after the other pods (a claim on each ended with no injection showing): ${waiting.join(', ')}`];
}

function at(p: Passed): number {
  return toDate(p.at)?.getTime() ?? 0;
}

/**
 * Claims to make again: kept claims whose pod is still a pending target (active, matching,
 * not injected) `renewAfterMs` after the claim, not renewed before. The claimer's injection
 * failed or never came (a crash, a 409, transient errors past its retries, a window run
 * out); rather than hold the slot until the claim's retention ends (25 s by default), the
 * claim is written again with a new `at`, on the same slot, and the pod injected within the
 * new window. Only while the slots held, this claim among them, are within `parallelism`
 * (after `parallelism` was lowered, claims in flight are left to end). Once per claim: a
 * pod that keeps refusing costs a claim and a renewal per retention, no more.
 */
function renewable(input: ClaimInput, stale: readonly Claim[], inFlight: number, notes: string[]): Pod[] {
  if (stale.length === 0 || inFlight > (input.spec.parallelism ?? 1)) return [];
  const pending = new Map(input.targets.filter((t) => t.state === 'pending').map((t) => [t.pod.metadata.name, t.pod]));
  // Each pod once: a record holding the same claim twice (never written so by a planner: edited
  // by hand) made one plan inject the pod twice under one action id (review88 F4).
  const pods = [...new Set(stale.flatMap((c) => pending.get(c.pod) ?? []))];
  if (pods.length > 0) notes.push(`claim again ${pods.map((p) => p.metadata.name).join(', ')}: claimed ${Math.round(renewAfterMs(input.cfg) / 1000)} s or more ago and not shown injected`);
  return pods;
}

/**
 * How long after a claim its injection may be sent again by any reconcile (a third of the
 * lease: 5 s by default). An injection is sent right after its claim and lands in well under
 * a second; one that has not shown by then most likely failed. Sending it twice is harmless
 * (the same containers: a no-op, README step 6).
 */
export function renewAfterMs(cfg: Pick<LeaseConfig, 'leaseSeconds'>): number {
  return (cfg.leaseSeconds * 1000) / 3;
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
function baseRecord(input: ClaimContext): { record: LeaseRecord; repair: boolean; undated: boolean; notes: string[] } {
  const { lease, jobUid, serverNow, cfg } = input;
  if (lease.kind === 'ours') return { record: lease.record, repair: false, undated: false, notes: [] };
  const injected = input.pods.filter((p) => ownedContainers(p, jobUid).length > 0).length;
  const rebuilt: LeaseRecord = { v: RECORD_VERSION, job: jobUid, total: injected, claims: [] };
  // Absent: no claim exists, so the record keeps every claim from its first write on.
  if (lease.kind === 'absent') return { record: { ...rebuilt, keptSince: EPOCH }, repair: false, undated: false, notes: [] };
  // Not read: planned as if rebuilt from the pods, only to tell what would be decided (never written).
  if (lease.kind === 'not-read') return { record: rebuilt, repair: false, undated: false, notes: [] };
  const windowMs = (cfg.leaseSeconds + cfg.skewSeconds) * 1000;
  // A record of an earlier job with this name holds no claim on this job's pods.
  // A renewTime further ahead of the server than skewSeconds (a writer's clock ahead) says no
  // more than an absent one: its claims were made by now, and a day-ahead one must not hold
  // the job for a day (time review); like an undated record, its hold is written down when
  // it first stops a claim. Within skewSeconds it is taken as it is: a reader's serverNow
  // trails a fresh write's by up to the Date header's second plus latency (review).
  const dated = lease.renewedAt !== undefined && lease.renewedAt.getTime() <= serverNow.getTime() + cfg.skewSeconds * 1000 ? lease.renewedAt : undefined;
  const from = lease.otherJob ? undefined : (dated ?? serverNow);
  const holdUntil = from === undefined ? undefined : new Date(Math.max(from.getTime(), serverNow.getTime() - windowMs) + windowMs);
  const record = holdUntil && holdUntil.getTime() > serverNow.getTime() ? { ...rebuilt, holdUntil: holdUntil.toISOString() } : rebuilt;
  return { record, repair: true, undated: !lease.otherJob && dated === undefined, notes: [`Lease record unreadable (${lease.why}): rebuilt from the pods`] };
}

/**
 * How long a claim stays on the record: its window (leaseSeconds + skewSeconds, after which
 * no injection under it can land) and then skewSeconds more — the most a LIST read before
 * the Lease may lag it and still stand for the pods (listBeforeLeaseStands). A claim is
 * kept that long whatever its pod shows, so a reader whose LIST predates an injection still
 * finds the claim (README.md, step 3).
 */
export function retentionMs(cfg: Pick<LeaseConfig, 'leaseSeconds' | 'skewSeconds'>): number {
  return (cfg.leaseSeconds + 2 * cfg.skewSeconds) * 1000;
}

/** This instance's claim window in seconds, written on each claim it makes (`w`): leaseSeconds + skewSeconds. */
export function claimWindowSeconds(cfg: Pick<LeaseConfig, 'leaseSeconds' | 'skewSeconds'>): number {
  return cfg.leaseSeconds + cfg.skewSeconds;
}

/**
 * How long this claim stays on the record, by this reader: the longer of its claimer's
 * window (`w`) and the reader's own, then skewSeconds more (retentionMs). Each instance
 * judged claims by its own settings, so during a rollout that shortened them an instance
 * dropped a claim whose claimer could still inject under it, and claimed another pod: two
 * in flight at parallelism 1 (review70). Never shorter than retentionMs.
 */
export function claimRetentionMs(c: Pick<Claim, 'w'>, cfg: Pick<LeaseConfig, 'leaseSeconds' | 'skewSeconds'>): number {
  return (Math.max(Math.min(c.w ?? 0, MAX_CLAIM_WINDOW_SECONDS), claimWindowSeconds(cfg)) + cfg.skewSeconds) * 1000;
}

/**
 * The longest window any valid setting gives (EPHEMERA_LEASE_SECONDS ≤ 300, skew ≤ 60): a
 * recorded `w` beyond it (a record edited by hand) holds no slot longer than that (review76:
 * w = 1e9 held the slot for 31 years).
 */
const MAX_CLAIM_WINDOW_SECONDS = 360;

/**
 * How long before the Lease was read a LIST of the pods may have been sent and still stand
 * for them (listBeforeLeaseStands): the reader's skewSeconds, or the smallest a writer of the
 * record since keptSince had (`s`), if smaller — each writer drops a claim skewSeconds past
 * its window by its own setting, so a LIST older than that may miss an injection whose
 * claim is already gone (review76).
 */
export function standingLagMs(view: LeaseView, cfg: Pick<LeaseConfig, 'skewSeconds'>): number {
  const recorded = view.kind === 'ours' ? view.record.s : undefined;
  return Math.min(cfg.skewSeconds, recorded ?? cfg.skewSeconds) * 1000;
}

/**
 * Whether `pods`, LISTed before this Lease was read (at most skewSeconds before: the
 * observation checks that), may stand for pods read after it (README.md, "Reading the pods
 * once"). They may when the Lease is absent (no claim exists), or when its record has kept
 * every claim for a whole retention since `keptSince` — every write since then was made by
 * this rule (an older instance's write drops `keptSince`, and the next write sets it anew),
 * so every claim whose injection may have landed after such a LIST is still on the record —
 * and the LIST shows every pod the record claims, with the claimed uid. A claimed pod it
 * does not show may have been created (labelled into the selector, created again under its
 * name) after it and injected since: a LIST read after the Lease shows that pod, this one
 * would count its claim as no slot (review found the gap: a second pod claimed at
 * parallelism 1, a verdict sealed without the pod). Not for a sealed record (the verdict's
 * re-plans keep the LIST after the Lease, step 7), nor an unreadable one.
 */
export function listBeforeLeaseStands(view: ReadLeaseView, serverNow: Date, cfg: Pick<LeaseConfig, 'leaseSeconds' | 'skewSeconds'>, pods: readonly Pod[]): boolean {
  if (view.kind === 'absent') return true;
  if (view.kind !== 'ours' || view.record.finished === true) return false;
  const since = toDate(view.record.keptSince);
  // The longest retention any claim on the record asks (its claimer's window), at least ours.
  const longest = Math.max(retentionMs(cfg), ...view.record.claims.map((c) => claimRetentionMs(c, cfg)));
  if (since === undefined || since.getTime() + longest > serverNow.getTime()) return false;
  const shown = new Map(pods.map((p) => [p.metadata.name, p.metadata.uid]));
  return view.record.claims.every((c) => shown.has(c.pod) && (c.uid === undefined || shown.get(c.pod) === c.uid));
}

/**
 * The record's claims as the next write keeps them, and what they hold. Every claim is kept
 * until its retention ends (retentionMs), whatever its pod shows — but for a claim no
 * injection can ever follow (below). While kept, a claim holds a slot unless the pods show
 * that it cannot: the pod replaced (another uid), inactive, or injected with every container
 * of the job ended — each for good, so a
 * LIST that predates the truth can only count a slot too many. A claim that ends its
 * retention with its pod present and not injected was never used: it no longer counts
 * toward `replicas` (`dropped`), and the pod, if still active, may be claimed again. A claim
 * whose pod can never take the job's containers (neverTakes) is dropped the same way at once:
 * no injection under it can ever land, which is all the retention is for.
 */
function retainedClaims(claims: readonly Claim[], input: ClaimContext): Retained {
  const byName = new Map(input.pods.map((p) => [p.metadata.name, p]));
  const out: Retained = { claims: [], holding: new Set(), claimed: new Set(), stale: [], dropped: 0, passed: [], nextLook: undefined, notes: [], unlisted: 0 };
  for (const c of claims) {
    const found = byName.get(c.pod);
    const pod = found && (c.uid === undefined || found.metadata.uid === c.uid) ? found : undefined;
    const injected = pod !== undefined && ownedContainers(pod, input.jobUid).length > 0;
    const ends = (toDate(c.at)?.getTime() ?? 0) + claimRetentionMs(c, input.cfg);
    if (ends <= input.serverNow.getTime()) {
      // Its pod is here (the same uid) and shows no container of the job, now that nothing can
      // be sent under the claim: it was never used, active or not. A pod gone cannot show
      // whether it was injected before it went, so its claim stays counted.
      if (pod && !injected) {
        out.dropped++;
        const uid = c.uid ?? pod.metadata.uid;
        if (uid !== undefined) out.passed.push({ uid, at: new Date(ends).toISOString() });
        out.notes.push(`claim on pod ${c.pod} expired without an injection: dropped`);
      }
      continue;
    }
    // Not injected, and never can be: no injection under this claim can land, now or later,
    // so it is dropped at once, its replica given back (kept, it would hold that replica for
    // its retention and could end a job with `replicas` as PodsGone; review found that).
    if (pod && !injected && neverTakes(pod, input)) {
      out.dropped++;
      out.notes.push(`claim on pod ${c.pod} dropped: the pod cannot take the job's containers`);
      continue;
    }
    out.claims.push(c);
    countSlot(c, { found, pod, injected, ends }, input, out);
  }
  return out;
}

/** Whether a kept claim holds a slot (into `out`), and when to look again for it. */
function countSlot(c: Claim, at: { found: Pod | undefined; pod: Pod | undefined; injected: boolean; ends: number }, input: ClaimContext, out: Retained): void {
  if (at.found === undefined) {
    if (!unlistedHolds(c, input)) return;
    out.holding.add(c.pod);
    out.unlisted++;
    if (out.nextLook === undefined || at.ends < out.nextLook.getTime()) out.nextLook = new Date(at.ends);
    return;
  }
  // Replaced, for good: the injection names the claimed uid, which the new pod is not.
  if (at.pod === undefined) return;
  out.claimed.add(c.pod);
  if (!isActive(at.pod) || (at.injected && !holdsSlot(at.pod, input.jobUid))) return;
  out.holding.add(c.pod);
  if (!at.injected) pendingClaim(c, at.ends, input, out);
}

/**
 * Whether a claim whose pod the LIST does not show holds its slot. The pod may be gone (for
 * good), or relabelled out of the selector, from where it can come back while the injection
 * under the claim is still on its way (chaos seed 14048: the slot went to another pod and the
 * late injection landed once it was back, two pods at parallelism 1). The GET after the LIST
 * tells them apart (controller.ts unlistedClaims): gone, replaced or no longer active holds
 * none; the claimed pod itself, not injected, holds it for the claim's retention; injected,
 * it holds it as any target does if it is back in the selector, else it is no target
 * (README, "Injection"). Not looked up (a GET that failed): it holds it.
 */
function unlistedHolds(c: Claim, input: ClaimContext): boolean {
  const seen = input.unlisted?.get(c.pod);
  if (seen === undefined) return true;
  if (seen === null || (c.uid !== undefined && seen.metadata.uid !== c.uid) || !isActive(seen)) return false;
  if (ownedContainers(seen, input.jobUid).length === 0) return true;
  // Injected. The GET is newer than the LIST: a pod back in the selector since, its container
  // not ended, holds its slot like any target (review: the injection landed between the two
  // reads, and a second pod was claimed beside it); one still out of it is no target.
  return holdsSlot(seen, input.jobUid) && selectorMatches(input.spec.selector, seen.metadata.labels);
}

/**
 * The pod holds a container of another job under one of the template's names (landed after
 * the claim: apply.ts nameTaken), or cannot take the containers at all (unfitReason). Its
 * containers are never removed and those parts never change, so kube-apiserver refuses every
 * injection of the job's containers for as long as the pod lives.
 */
function neverTakes(pod: Pod, input: ClaimContext): boolean {
  const template = input.spec.template.ephemeralContainers;
  return hasForeignNamesake(pod, input.jobUid, template.map((c) => c.name)) || unfitReason(pod, template) !== undefined;
}

/** What retainedClaims finds in the record. */
interface Retained {
  claims: Claim[];
  holding: Set<string>;
  claimed: Set<string>;
  /** Claims not shown injected that may be made again now (renewable). */
  stale: Claim[];
  dropped: number;
  /** The pods of claims dropped that way, passed over from now (LeaseRecord.passed). */
  passed: Passed[];
  nextLook: Date | undefined;
  notes: string[];
  /** Of `holding`, the claims on pods the LIST does not show whose injection may still land (unlistedHolds). */
  unlisted: number;
}

/**
 * A kept claim whose pod is active and not injected yet: it may be made again a while after
 * it was made (once), and its slot frees when its retention ends; look again at whichever
 * comes first.
 */
function pendingClaim(c: Claim, ends: number, input: ClaimContext, out: Retained): void {
  const now = input.serverNow.getTime();
  const renewAt = c.renewed === true ? undefined : (toDate(c.at)?.getTime() ?? 0) + renewAfterMs(input.cfg);
  if (renewAt !== undefined && renewAt <= now) out.stale.push(c);
  const look = renewAt !== undefined && renewAt > now ? renewAt : ends;
  if (out.nextLook === undefined || look < out.nextLook.getTime()) out.nextLook = new Date(look);
}

/** `keptSince` of a record created where no Lease was: it has kept every claim it ever had. */
const EPOCH = '1970-01-01T00:00:00.000Z';

/** The verdict a write carries: the one sealed before, else the one sealed now. */
function sealedVerdict(input: ClaimInput, base: LeaseRecord): { verdict?: Verdict } {
  if (base.finished === true) return base.verdict ? { verdict: base.verdict } : {};
  return input.seal === true && input.verdict ? { verdict: input.verdict } : {};
}

/** A verdict to record that the record does not hold yet. */
function needsSeal(input: ClaimInput, record: LeaseRecord): boolean {
  return input.seal === true && record.finished !== true;
}

function secondsUntil(t: Date, now: Date): number {
  return Math.max(1, Math.ceil((t.getTime() - now.getTime()) / 1000));
}
