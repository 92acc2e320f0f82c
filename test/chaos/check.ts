// The chaos checker: a pure function from what the API server recorded (writes in order,
// refused writes, final objects) and how the processes ended, to the invariants broken.
// It replays the history write by write, so "at any point" means after every stored write.
import type { KubeObject, RejectedWrite, WriteRecord } from '../../functions/cluster/index.ts';
import { unfitReason } from '../../functions/ejob/pod-state.ts';
import {
  allTerminated, containers, field, holdsSlot, isJob, isPod, isSidecar, isSidecarPod, jobContainers, jobsIn, keyOf, mainsDone,
  outcome, phaseOf, podEnded, podSpec, statusOf, type Container,
} from './pod-view.ts';
import type { Invariant, RunRecord, Violation } from './record.ts';

/** More 422 answers than this for one object is a storm (a write retried that can never succeed). */
export const MAX_422_PER_OBJECT = 3;

/** Every invariant broken by the run, in the order of INVARIANTS; [] when it is clean. */
export function check(run: RunRecord): Violation[] {
  const out: Violation[] = [];
  const add = (invariant: Invariant, message: string): void => {
    out.push({ invariant, message });
  };
  if (!run.converged) add('converged', `did not converge before the time limit${run.pending?.length ? `; still open: ${run.pending.join('; ')}` : ''}`);
  replayChecks(run.writes, add, { graceMs: run.lateWriteGraceMs ?? LATE_WRITE_GRACE_MS, skewMs: run.leaseSkewMs ?? LEASE_SKEW_MS });
  finalChecks(run, add);
  for (const e of run.exits.filter((x) => !x.killed)) {
    add('no-unexpected-exit', `process ${e.name} exited by itself (code ${e.code}, signal ${e.signal}); last lines:\n    ${e.tail.join('\n    ')}`);
  }
  for (const actor of run.notStarted ?? []) add('processes-started', `process ${actor} was not watching when the schedule started (after ${((run.startupBoundMs ?? 15_000) / 1000).toFixed(1)} s)`);
  stormCheck(run, add);
  return out;
}

type Add = (invariant: Invariant, message: string) => void;
const at = (w: WriteRecord): string => `write #${w.seq} ${w.verb}${w.subresource ? `/${w.subresource}` : ''} by ${w.actor} at ${w.time}`;

/**
 * The current state while replaying: pods and jobs by uid, and per job the pods holding a slot /
 * injected. Everything about a job is keyed by its uid, never its name: a job deleted and
 * created again under the same name is another job, judged on its own.
 */
class World {
  readonly pods = new Map<string, KubeObject>();
  readonly jobs = new Map<string, KubeObject>();
  readonly holders = new Map<string, Set<string>>();
  readonly injected = new Map<string, Set<string>>();
  /** Every job's "namespace/name" by uid, kept after the job goes (for messages). */
  readonly keys = new Map<string, string>();
  /** The write that first showed a job being deleted (deletionTimestamp) or gone, by job uid. */
  readonly deleted = new Map<string, WriteRecord>();
  /** How late after a job's delete a write planned before it may still land (ms). */
  graceMs = LATE_WRITE_GRACE_MS;
  /** Every job as last written, kept after it goes: its late writes are judged by its last spec (review). */
  readonly lastJob = new Map<string, KubeObject>();
  /** "pod uid/job uid" → when the pod last stopped matching the job's selector, or last entered it (ms). */
  readonly selectorMoves = new Map<string, { leftAt?: number; enteredAt?: number }>();
  /** "pod uid/job uid" → when the pod was first claimed by the job or got its containers (ms). */
  readonly firstHeld = new Map<string, number>();
  /** "job uid/claim identity" → the claim's `at` when it first was on the job's record (ms), and the claims beside it then. */
  readonly claimSeen = new Map<string, ClaimSeen>();
  /** The claim identities on each job's last record (pod uid, or namespace/name when the claim names no uid). */
  readonly claimIds = new Map<string, Set<string>>();
  /** How long before its Lease read a plan's LIST may have been taken (the processes' skewSeconds). */
  skewMs = LEASE_SKEW_MS;
  /** The Lease write that first sealed each job's verdict (`finished: true`), by job uid. */
  readonly sealed = new Map<string, WriteRecord>();
  /** "job uid/claim identity" of every claim any Lease write ever put on a job's record (never dropped: step 1 asks only for a claim first). */
  readonly everClaimed = new Set<string>();
  /** Each job's spec as written over time (ms, parallelism, paused), by uid: a plan judges by the spec it read. */
  readonly specs = new Map<string, { time: number; parallelism: number; paused: boolean }[]>();
  /** "actor|job uid|claim identity" → when that process's Lease writes that made or renewed the claim landed (ms), with the claim's window `w` (s). */
  readonly claimWrites = new Map<string, { time: number; w?: number }[]>();
  /** Each Lease's claims record as last written ("namespace/name"; cleared when the Lease goes). */
  readonly leaseRecords = new Map<string, ClaimsRecord>();
  /** Every pod as last written, by uid, kept after it goes (a claim dropped as unfit is judged by the pod its plan saw). */
  readonly lastPods = new Map<string, KubeObject>();

  jobName(uid: string): string {
    const key = this.keys.get(uid);
    return key ? `job ${key} (uid ${uid})` : `job uid ${uid}`;
  }

  podByName(namespace: string, name: string): KubeObject | undefined {
    for (const p of this.pods.values()) if (p.metadata.namespace === namespace && p.metadata.name === name) return p;
    return undefined;
  }
}

function replayChecks(writes: WriteRecord[], add: Add, bounds: { graceMs: number; skewMs: number }): void {
  const world = new World();
  world.graceMs = bounds.graceMs;
  world.skewMs = bounds.skewMs;
  const reported = new Set<string>();
  const once = (key: string, invariant: Invariant, message: string): void => {
    if (reported.has(key)) return;
    reported.add(key);
    add(invariant, message);
  };
  for (const w of writes) {
    const uid = w.object.metadata.uid ?? keyOf(w.object);
    if (isJob(w.object)) {
      replayJob(world, uid, w);
      continue;
    }
    if (isLease(w.object)) {
      checkLineage(world, w, once);
      if (w.type !== 'DELETED') checkClaims(world, w, once);
      continue;
    }
    if (w.object.kind === 'ContainerRecreateRequest' && w.type === 'ADDED') checkCrr(world, w, once);
    if (!isPod(w.object)) continue;
    const prev = world.pods.get(uid);
    if (prev && w.actor !== 'in-process') checkSidecarStop(prev, w, once);
    trackSelectors(world, prev, w);
    checkInjection(world, prev, w, once);
    if (w.type === 'DELETED') world.pods.delete(uid);
    else world.pods.set(uid, w.object);
    if (w.type !== 'DELETED') world.lastPods.set(uid, w.object);
    for (const job of new Set([...jobsIn(w.object), ...(prev ? jobsIn(prev) : [])])) {
      const set = world.holders.get(job) ?? new Set<string>();
      if (w.type !== 'DELETED' && holdsSlot(w.object, job)) set.add(uid);
      else set.delete(uid);
      world.holders.set(job, set);
      // Judged where this job's containers went in (review: another job's injection into a pod
      // of a job draining after a lowered parallelism is no claim of the first job's).
      if (w.subresource === 'ephemeralcontainers' && adds(prev, w.object, job)) checkSlots(world, job, w, once);
    }
  }
}

type Once = (key: string, invariant: Invariant, message: string) => void;

/** A job write: the job by uid, its name kept, and the first write that shows it being deleted or gone. */
function replayJob(world: World, uid: string, w: WriteRecord): void {
  world.keys.set(uid, keyOf(w.object));
  if ((w.type === 'DELETED' || w.object.metadata.deletionTimestamp) && !world.deleted.has(uid)) world.deleted.set(uid, w);
  if (w.type === 'DELETED') world.jobs.delete(uid);
  else world.jobs.set(uid, w.object);
  world.lastJob.set(uid, w.object);
  const specs = world.specs.get(uid) ?? [];
  specs.push({ time: Date.parse(w.time), parallelism: field(w.object, 'spec', 'parallelism') ?? 1, paused: (w.object.spec as { paused?: unknown } | undefined)?.paused === true });
  world.specs.set(uid, specs);
}

/** The job's specs in effect at some moment from `from` to `to` (ms): the one written last before `from`, and any written since. */
function specsDuring(world: World, job: string, from: number, to: number): { parallelism: number; paused: boolean }[] {
  const all = world.specs.get(job) ?? [];
  const before = all.filter((s) => s.time <= from).at(-1);
  return [...(before ? [before] : []), ...all.filter((s) => s.time > from && s.time <= to)];
}

/**
 * Whether the job selects the pod (its namespace, its matchLabels: what the chaos world's
 * selectors use). The product's slots and counters are of *target* pods (DESIGN, README
 * "Injection"): a pod relabelled out of the selector no longer counts.
 */
export function selects(job: KubeObject, pod: KubeObject): boolean {
  const labels = (job.spec as { selector?: { matchLabels?: Record<string, string> } } | undefined)?.selector?.matchLabels ?? {};
  return pod.metadata.namespace === job.metadata.namespace && Object.entries(labels).every(([k, v]) => (pod.metadata.labels as Record<string, string> | undefined)?.[k] === v);
}

/** A pod write: when it left or entered each known job's selector. */
function trackSelectors(world: World, prev: KubeObject | undefined, w: WriteRecord): void {
  if (!prev || w.type === 'DELETED') return;
  const time = Date.parse(w.time);
  for (const [job, j] of world.lastJob) {
    const was = selects(j, prev);
    const now = selects(j, w.object);
    if (was === now) continue;
    const key = `${prev.metadata.uid ?? keyOf(prev)}/${job}`;
    world.selectorMoves.set(key, { ...world.selectorMoves.get(key), ...(was ? { leftAt: time } : { enteredAt: time }) });
  }
}

/** The write adds containers of this job to the pod. */
function adds(prev: KubeObject | undefined, pod: KubeObject, job: string): boolean {
  const before = new Set(prev ? jobContainers(prev, job).map((c) => c.name) : []);
  return jobContainers(pod, job).some((c) => !before.has(c.name));
}

/** A write that adds a job's containers to a pod that already had some of that job's. */
function checkInjection(world: World, prev: KubeObject | undefined, w: WriteRecord, once: Once): void {
  if (w.type === 'DELETED') return;
  const pod = w.object;
  const uid = pod.metadata.uid ?? keyOf(pod);
  for (const job of jobsIn(pod)) {
    const before = prev ? jobContainers(prev, job).map((c) => c.name) : [];
    const added = jobContainers(pod, job).map((c) => c.name).filter((n) => !before.includes(n));
    if (added.length === 0) continue;
    const gone = lateAfterDelete(world, job, w);
    if (gone) {
      once(`after-delete/${uid}/${job}`, 'no-injection-after-delete', `pod ${keyOf(pod)} got ${world.jobName(job)}'s containers (${added.join(', ')}) in ${at(w)}, more than ${world.graceMs} ms after the job was ${gone.type === 'DELETED' ? 'gone' : 'being deleted'} (${at(gone)})`);
    }
    // Step 1 of functions/ejob/README.md: the Lease is the one serialisation point, so no pod
    // gets a job's containers unless a Lease write that took effect claimed it for that job
    // first (last round's worst finding: a claim refused for good let its injections go).
    if (!world.everClaimed.has(`${job}/${uid}`) && !world.everClaimed.has(`${job}/${pod.metadata.namespace ?? ''}/${pod.metadata.name}`)) {
      once(`unclaimed/${uid}/${job}`, 'claimed-first', `pod ${keyOf(pod)} got ${world.jobName(job)}'s containers (${added.join(', ')}) in ${at(w)}, though no Lease write before it claimed the pod for that job`);
    }
    checkOwnClaim(world, { job, added, before }, w, once);
    if (before.length > 0) {
      once(`twice/${uid}/${job}`, 'injected-once', `pod ${keyOf(pod)} got ${world.jobName(job)}'s containers a second time (${added.join(', ')} after ${before.join(', ')}) in ${at(w)}`);
    }
    const set = world.injected.get(job) ?? new Set<string>();
    set.add(uid);
    world.injected.set(job, set);
    if (!world.firstHeld.has(`${uid}/${job}`)) world.firstHeld.set(`${uid}/${job}`, Date.parse(w.time));
    checkTarget(world, job, w, once);
    const j = world.lastJob.get(job);
    const replicas = j ? field(j, 'spec', 'replicas') : undefined;
    if (replicas !== undefined && set.size > replicas) {
      once(`replicas/${job}`, 'replicas', `${world.jobName(job)} has containers in ${set.size} pods, more than replicas=${replicas}, after ${at(w)}`);
    }
  }
}

/**
 * An injection goes only into a pod that was a target when its claim was planned: that plan
 * LISTed the pods at most skewSeconds before its Lease read, and the claim's `at` is that
 * Lease write, so the pod must have matched the selector until then.
 */
function checkTarget(world: World, job: string, w: WriteRecord, once: Once): void {
  const pod = w.object;
  const uid = pod.metadata.uid ?? keyOf(pod);
  const j = world.lastJob.get(job);
  const claimed = claimOf(world, job, pod)?.at ?? Date.parse(w.time);
  const planned = claimed - world.skewMs;
  // Nothing is claimed or renewed while paused: some plan that could have sent this (a claim
  // or renewal whose window it lands in) read the job unpaused. A plan's writes land within
  // the claim window (lease + skew) of its reconcile's start, where it read the job (the bound
  // no-injection-after-delete holds the product to as well).
  // The window runs to the Lease write itself: `at` is the instance's reading of the server's
  // clock, from a whole-second Date header, so up to a second early (chaos found a claim
  // written just after a resume with an `at` from before it).
  const plans = plansOf(world, job, pod, Date.parse(w.time));
  const pausedThrough = (p: Plan): boolean => {
    const read = specsDuring(world, job, p.at - world.graceMs, p.wrote);
    return read.length > 0 && read.every((s) => s.paused);
  };
  if (plans.every(pausedThrough)) {
    once(`paused/${uid}/${job}`, 'paused', `pod ${keyOf(pod)} got ${world.jobName(job)}'s containers in ${at(w)} from a claim planned while the job was paused (claims at ${plans.map((p) => new Date(p.at).toISOString()).join(', ')})`);
  }
  const left = world.selectorMoves.get(`${uid}/${job}`)?.leftAt;
  if (j && !selects(j, pod) && !(left !== undefined && left >= planned)) {
    once(`targets/${uid}/${job}`, 'targets-only', `pod ${keyOf(pod)} (labels ${JSON.stringify(pod.metadata.labels ?? {})}) got ${world.jobName(job)}'s containers in ${at(w)}, though the job's selector did not match it when its claim was planned (${new Date(planned).toISOString()})`);
  }
}

/**
 * The product's bound (functions/ejob/README.md, "When a job goes"): nothing is planned from a
 * view of a job being deleted or gone, but a plan made from a read just before may still land:
 * its injections are sent only within leaseSeconds of the reconcile's start, so the last one
 * lands within leaseSeconds + skewSeconds of the delete (the chaos processes: 2 + 1 s). The
 * default grace is that window.
 */
export const LATE_WRITE_GRACE_MS = 3000;

/** The processes' skewSeconds (test/chaos/runner.ts), when a run does not say. */
export const LEASE_SKEW_MS = 1000;

/** The write that showed the job deleted, when `w` lands more than the grace after it. */
function lateAfterDelete(world: World, job: string, w: WriteRecord): WriteRecord | undefined {
  const gone = world.deleted.get(job);
  return gone && Date.parse(w.time) - Date.parse(gone.time) > world.graceMs ? gone : undefined;
}

/** A job's Lease record while replaying: a claim of a pod first made later than the grace after the job's delete is a violation. */
function checkClaims(world: World, w: WriteRecord, once: Once): void {
  const record = claimsRecord(w.object);
  if (!record) return;
  const ns = world.keys.get(record.job)?.split('/')[0] ?? '';
  const before = world.claimIds.get(record.job) ?? new Set<string>();
  const renewed = renewedClaims(world, record, { ns, before });
  recordClaims(world, record, { ns, time: Date.parse(w.time) });
  const gone = lateAfterDelete(world, record.job, w);
  const fresh = record.claims.filter((c) => !before.has(c.uid ?? `${ns}/${c.pod}`)).map((c) => `${ns}/${c.pod}`);
  if (gone && fresh.length) {
    once(`claim-after-delete/${record.job}`, 'no-injection-after-delete', `Lease ${keyOf(w.object)} got a new claim of ${world.jobName(record.job)} (pods ${fresh.join(', ')}) in ${at(w)}, more than ${world.graceMs} ms after the job was ${gone.type === 'DELETED' ? 'gone' : 'being deleted'} (${at(gone)})`);
  }
  // Step 7 of functions/ejob/README.md: after the seal nothing is claimed, ever — neither in
  // the sealing write nor after it, neither a new claim nor one made again (step 8). A job
  // being deleted is judged by no-injection-after-delete instead: a plan that read it just
  // before may re-create its Lease, from the pods alone, within the grace ("When a job goes").
  const seal = world.sealed.get(record.job) ?? (record.finished ? w : undefined);
  const claimed = [...fresh, ...renewed.map((p) => `${p} (made again)`)];
  if (seal && claimed.length && !world.deleted.has(record.job)) {
    once(`claim-after-seal/${record.job}`, 'sealed-final', `Lease ${keyOf(w.object)} got a claim of ${world.jobName(record.job)} (pods ${claimed.join(', ')}) in ${at(w)}, ${seal === w ? 'in the write that sealed its verdict' : `after its verdict was sealed (${at(seal)})`}`);
  }
  if (seal && !world.sealed.has(record.job)) world.sealed.set(record.job, seal);
}

/**
 * The smallest skewSeconds a process may run with (functions/config.ts): every reader keeps a
 * claim at least its claimer's window (`w`) and that much more (claims.ts claimRetentionMs).
 */
export const MIN_SKEW_MS = 2000;

/**
 * A Lease write's lineage (review97 F1: a lost update on the claims record — a "retry on
 * conflict" that re-sends a plan at the fresh version, or a 409 taken as done — passed every
 * invariant, since the loser had mostly planned what the winner wrote). Notes which claims
 * the writing process made or renewed here (own-claim-first), and judges the update against
 * the version it replaced (claims-carried): step 2 of functions/ejob/README.md orders claim
 * writes, so a write that took effect was planned from the record it replaced, and its plan
 * keeps every claim whose retention has not ended (at least `w` + the smallest skew after its
 * `at`) unless the claim's pod can never take the job's containers, and keeps the seal.
 */
function checkLineage(world: World, w: WriteRecord, once: Once): void {
  const key = keyOf(w.object);
  const prev = world.leaseRecords.get(key);
  const record = w.type === 'DELETED' ? undefined : claimsRecord(w.object);
  if (record) world.leaseRecords.set(key, record);
  else world.leaseRecords.delete(key);
  if (!record) return;
  const ns = world.keys.get(record.job)?.split('/')[0] ?? '';
  const id = (c: RecordClaim): string => c.uid ?? `${ns}/${c.pod}`;
  const same = prev?.job === record.job ? prev : undefined;
  const before = new Map((same?.claims ?? []).map((c) => [id(c), c.at]));
  const time = Date.parse(w.time);
  for (const c of record.claims) {
    if (before.has(id(c)) && before.get(id(c)) === c.at) continue; // carried, not made here
    const k = `${w.actor}|${record.job}|${id(c)}`;
    world.claimWrites.set(k, [...(world.claimWrites.get(k) ?? []), { time, ...(typeof c.w === 'number' ? { w: c.w } : {}) }]);
  }
  if (!same) return;
  if (same.finished && !record.finished) {
    once(`unsealed/${key}/${w.seq}`, 'claims-carried', `Lease ${key} lost the seal of ${world.jobName(record.job)}'s verdict (finished) in ${at(w)}: written from a record older than the sealed one`);
  }
  const now = new Set(record.claims.map(id));
  const dropped = same.claims.filter((c) => !now.has(id(c)) && live(c, time) && !neverTakes(world, record.job, c, ns)).map((c) => `${ns}/${c.pod} (at ${c.at ?? '?'}, w ${c.w ?? '?'})`);
  if (dropped.length > 0) {
    once(`dropped/${key}/${w.seq}`, 'claims-carried', `Lease ${key} dropped live claims of ${world.jobName(record.job)} (${dropped.join(', ')}) in ${at(w)}: written from a record older than the one it replaced`);
  }
}

/** A claim whose retention (its claimer's window `w`, then the smallest skew) has not ended at `time`; one without `w` or `at` is not judged. */
function live(c: RecordClaim, time: number): boolean {
  const claimed = Date.parse(c.at ?? '');
  return typeof c.w === 'number' && Number.isFinite(claimed) && claimed + c.w * 1000 + MIN_SKEW_MS > time;
}

/**
 * The claim's pod (as last written, also after it went) can never take the job's containers:
 * another job's container under one of the template's names, or the product's unfitReason
 * (the product drops such a claim at once; the pod's containers and those parts never change).
 */
function neverTakes(world: World, job: string, c: RecordClaim, ns: string): boolean {
  const pod = c.uid !== undefined ? world.lastPods.get(c.uid) : [...world.lastPods.values()].find((p) => p.metadata.namespace === ns && p.metadata.name === c.pod);
  const template = (world.lastJob.get(job)?.spec as { template?: { ephemeralContainers?: { name: string; targetContainerName?: string }[] } } | undefined)?.template?.ephemeralContainers ?? [];
  if (!pod || jobContainers(pod, job).length > 0) return false;
  const names = new Set(template.map((t) => t.name));
  const namesake = list(podSpec(pod).ephemeralContainers).some((x) => names.has(x.name));
  return namesake || unfitReason(pod as never, template as never) !== undefined;
}

/**
 * An injection by a process follows, within the claim's life, a Lease write by that same
 * process that made or renewed the pod's claim for the job: the product sends injections
 * only once its own claim write took effect (planner.ts, `requires` the Lease write), and
 * only within its claim window (`w`, written on the claim) of the reconcile that wrote it.
 * claimed-first accepts anyone's claim; a loser of the Lease race that injects anyway (a 409
 * taken as done) is excused there by the winner's claim of the same pod. A pod no Lease
 * write ever claimed for the job, or that had the job's containers already, is left to
 * claimed-first and injected-once.
 */
function checkOwnClaim(world: World, what: { job: string; added: string[]; before: string[] }, w: WriteRecord, once: Once): void {
  const pod = w.object;
  const ids = [pod.metadata.uid ?? keyOf(pod), `${pod.metadata.namespace ?? ''}/${pod.metadata.name}`];
  if (!w.actor.startsWith('proc-') || what.before.length > 0 || !ids.some((id) => world.everClaimed.has(`${what.job}/${id}`))) return;
  const time = Date.parse(w.time);
  const within = (c: { time: number; w?: number }): boolean => c.time <= time && (c.w === undefined || time - c.time <= c.w * 1000);
  if (ids.some((id) => (world.claimWrites.get(`${w.actor}|${what.job}|${id}`) ?? []).some(within))) return;
  once(`own-claim/${pod.metadata.uid ?? keyOf(pod)}/${what.job}/${w.seq}`, 'own-claim-first', `pod ${keyOf(pod)} got ${world.jobName(what.job)}'s containers (${what.added.join(', ')}) in ${at(w)}, though no Lease write by ${w.actor} made or renewed its claim of the pod within the claim's window before`);
}

/** Claims on the record that were on the one before with another `at`: made again (step 8). */
function renewedClaims(world: World, record: { job: string; claims: { pod: string; uid?: string; at?: string }[] }, o: { ns: string; before: Set<string> }): string[] {
  const { ns, before } = o;
  return record.claims.filter((c) => {
    const id = c.uid ?? `${ns}/${c.pod}`;
    const last = world.claimSeen.get(`${record.job}/${id}`)?.plans.at(-1)?.at;
    return before.has(id) && last !== undefined && c.at !== undefined && Date.parse(c.at) !== last;
  }).map((c) => `${ns}/${c.pod}`);
}

/**
 * Claims by the pod's uid, as the product makes them (a pod replaced under its name is
 * another claim, with its own `at`: review found the name alone kept the old one's), each
 * with every `at` it has had and the claims beside it when it came.
 */
function recordClaims(world: World, record: { job: string; claims: { pod: string; uid?: string; at?: string }[] }, o: { ns: string; time: number }): void {
  const { ns } = o;
  const ids = new Set(record.claims.map((c) => c.uid ?? `${ns}/${c.pod}`));
  const idsBefore = world.claimIds.get(record.job) ?? new Set<string>();
  world.claimIds.set(record.job, ids);
  for (const c of record.claims) {
    const id = c.uid ?? `${ns}/${c.pod}`;
    world.everClaimed.add(`${record.job}/${id}`);
    const claimAt = Date.parse(c.at ?? '') || o.time;
    const seen = world.claimSeen.get(`${record.job}/${id}`);
    if (!idsBefore.has(id) || !seen) world.claimSeen.set(`${record.job}/${id}`, { plans: [{ at: claimAt, wrote: o.time }], peers: ids });
    else if (seen.plans.at(-1)?.at !== claimAt) seen.plans.push({ at: claimAt, wrote: o.time }); // renewed
    const pod = c.uid !== undefined ? world.pods.get(c.uid) : world.podByName(ns, c.pod);
    if (pod && !world.firstHeld.has(`${pod.metadata.uid}/${record.job}`)) world.firstHeld.set(`${pod.metadata.uid}/${record.job}`, o.time);
  }
  for (const id of idsBefore) if (!ids.has(id)) world.claimSeen.delete(`${record.job}/${id}`);
}

/** The Lease annotation holding an EphemeralJob's claims record (functions/ejob/README.md). */
export const CLAIMS_ANNOTATION = 'ephemera.io/ejob-claims';

const isLease = (o: KubeObject): boolean => o.kind === 'Lease';

/** One claim on a job's record, as the checker reads it (`w`: its claimer's window in seconds). */
type RecordClaim = { pod: string; uid?: string; at?: string; w?: number };
/** A job's claims record on its Lease. */
type ClaimsRecord = { job: string; claims: RecordClaim[]; finished?: boolean };

/** The claims record a Lease holds (`{"v":1,"job":"<uid>","claims":[{"pod":…}],…}`), if any parses. */
export function claimsRecord(lease: KubeObject): ClaimsRecord | undefined {
  const text = (lease.metadata.annotations as Record<string, string> | undefined)?.[CLAIMS_ANNOTATION];
  if (text === undefined) return undefined;
  try {
    const r = JSON.parse(text) as { job?: unknown; claims?: unknown; finished?: unknown };
    if (typeof r.job !== 'string') return undefined;
    const claims = Array.isArray(r.claims) ? r.claims.filter((c): c is RecordClaim => typeof (c as { pod?: unknown })?.pod === 'string') : [];
    return { job: r.job, claims, ...(r.finished === true ? { finished: true } : {}) };
  } catch {
    return undefined;
  }
}

/**
 * Leases whose claims record is no live job's: its job uid is not that of any job present and
 * not being deleted (a job deleted while no process lived is no exception: the next relay's
 * first sync sweeps its Lease).
 */
export function staleJobLeases(final: KubeObject[]): { lease: KubeObject; job: string }[] {
  const live = new Set(final.filter(isJob).filter((j) => !j.metadata.deletionTimestamp).map((j) => j.metadata.uid));
  return final.filter(isLease).flatMap((lease) => {
    const r = claimsRecord(lease);
    return r && !live.has(r.job) ? [{ lease, job: r.job }] : [];
  });
}

/** A claim as the checker saw it come: the claim identities on the record beside it then. */
interface ClaimSeen {
  /** The claim and its renewals, each a plan that may send the injection; the first is the claim. */
  plans: Plan[];
  peers: Set<string>;
}

/** A claim or renewal: its `at` on the record, and when the Lease write that made it landed (ms). */
interface Plan {
  at: number;
  wrote: number;
}

/**
 * The claims and renewals of this pod whose window (lease + skew) an injection at `time`
 * lands in: the plans that may have sent it (review: judging by the first claim alone let a
 * renewal made while paused, or long after parallelism was lowered, through). The write's own
 * time when none does.
 */
function plansOf(world: World, job: string, pod: KubeObject, time: number): Plan[] {
  const plans = (claimOf(world, job, pod)?.plans ?? []).filter((p) => p.at <= time && time <= p.at + world.graceMs);
  return plans.length > 0 ? plans : [{ at: time, wrote: time }];
}

/** The job's claim of this pod on its record, if any (by the pod's uid, or its name when the claim names none), with its first `at`. */
function claimOf(world: World, job: string, pod: KubeObject): (ClaimSeen & { at: number }) | undefined {
  const seen = world.claimSeen.get(`${job}/${pod.metadata.uid}`) ?? world.claimSeen.get(`${job}/${pod.metadata.namespace ?? ''}/${pod.metadata.name}`);
  return seen && { ...seen, at: seen.plans[0]!.at };
}

/**
 * Whether the plan that made `claim` may not have seen pod `u` as a target: u came back into
 * the selector after that plan's LIST — at most skewSeconds before the claim, or after the
 * claim itself when u's own claim was on the record it read (a LIST that does not show a
 * claimed pod does not stand: the plan LISTs again after the Lease, functions/ejob/README.md
 * "Reading the pods once") — with a claim or container it had before it came back.
 */
function unseenBy(world: World, job: string, u: string, claim: { at: number; peers?: Set<string> }): boolean {
  const back = world.selectorMoves.get(`${u}/${job}`)?.enteredAt;
  if (back === undefined) return false;
  const pod = world.pods.get(u);
  const onRecord = claim.peers !== undefined && pod !== undefined && (claim.peers.has(u) || claim.peers.has(`${pod.metadata.namespace ?? ''}/${pod.metadata.name}`));
  return back > (onRecord ? claim.at : claim.at - world.skewMs) && (world.firstHeld.get(`${u}/${job}`) ?? Infinity) < back;
}

/**
 * At a write that injects pod X, the job's target pods with a non-terminal container of it,
 * against its parallelism (its last spec, also once it is gone). Only pods the selector
 * matches count (README "Injection"). The plan that claimed X LISTed the pods at most
 * skewSeconds before its claim (`at`); a pod it did not see as a target because it was out
 * of the selector then, and came back with a claim or container it had before, is the
 * documented overshoot (the job may be over parallelism until one of them ends), and so is X
 * itself when it left and came back after its claim. A pod that came back empty counts (a
 * review found the first version of this rule, a window of time alone, let a second pod at
 * parallelism 1 through). Only injections add slot holders, so judging them misses nothing
 * else; a parallelism lowered while pods run is drained, not broken.
 */
function checkSlots(world: World, job: string, w: WriteRecord, once: Once): void {
  const j = world.lastJob.get(job);
  const held = world.holders.get(job);
  if (!j || !held) return;
  const x = w.object.metadata.uid ?? keyOf(w.object);
  const claimX = claimOf(world, job, w.object) ?? { at: Date.parse(w.time) };
  // The bound is the spec a plan that may have sent it read (within the claim window before its
  // claim or renewal), or any since: a parallelism lowered after it drains what was decided before.
  const now = Date.parse(w.time);
  const read = plansOf(world, job, w.object, now).flatMap((p) => specsDuring(world, job, p.at - world.graceMs, now));
  const parallelism = Math.max(...read.map((s) => s.parallelism), field(j, 'spec', 'parallelism') ?? 1);
  const selected = [...held].filter((u) => world.pods.get(u) !== undefined && selects(j, world.pods.get(u)!));
  // X itself is the overshoot when some other holder's plan could not see it: X was out of the
  // selector then, and came back with its claim (review: excusing X whenever it came back after
  // its own claim let a second pod claimed while X was back through).
  const xUnseen = selected.some((u) => {
    if (u === x) return false;
    const claim = claimOf(world, job, world.pods.get(u)!);
    const left = world.selectorMoves.get(`${x}/${job}`)?.leftAt;
    return claim !== undefined && left !== undefined && left <= claim.at && unseenBy(world, job, x, claim);
  });
  const targets = selected.filter((u) => (u === x ? !xUnseen : !unseenBy(world, job, u, claimX)));
  if (targets.length <= parallelism) return;
  const names = targets.map((u) => describe(world.pods.get(u)!, job)).sort();
  once(`parallelism/${job}`, 'parallelism', `${world.jobName(job)}: ${targets.length} target pods with a non-terminal container of the job (${names.join(', ')}), more than parallelism=${parallelism}, after ${at(w)}`);
}

/** "ns/pod [probe: running, helper: InvalidImageName]": the job's containers' states, for the message. */
function describe(pod: KubeObject, job: string): string {
  const states = jobContainers(pod, job).map((c) => {
    const st = statusOf(pod, c.name)?.state;
    const s = st?.terminated ? `exited ${st.terminated.exitCode}` : st?.running ? 'running' : st?.waiting?.reason ?? 'no status';
    return `${c.name}: ${s}`;
  });
  return `${keyOf(pod)} [${states.join(', ')}]`;
}

/** A process creating a CRR for a pod whose main containers are not all done. */
function checkCrr(world: World, w: WriteRecord, once: Once): void {
  if (w.actor === 'in-process') return;
  const spec = podSpec(w.object);
  const pod = world.podByName(w.object.metadata.namespace ?? '', String(spec.podName ?? ''));
  if (pod && !mainsDone(pod)) {
    once(`early/${keyOf(pod)}/crr`, 'sidecar-stopped-after-main', `ContainerRecreateRequest ${w.object.metadata.name} for pod ${keyOf(pod)} created while a main container had not finished, in ${at(w)}`);
  }
}

/** The ways a process stops sidecars through the pod itself: a signal container, an image swap, a phase. */
function checkSidecarStop(prev: KubeObject, w: WriteRecord, once: Once): void {
  if (w.type === 'DELETED' || mainsDone(prev)) return;
  const how = stopAction(prev, w.object, w.subresource);
  if (how) once(`early/${keyOf(prev)}/${how}`, 'sidecar-stopped-after-main', `pod ${keyOf(prev)}: ${how} while a main container had not finished, in ${at(w)}`);
}

function stopAction(prev: KubeObject, next: KubeObject, sub: string): string | undefined {
  if (sub === 'ephemeralcontainers') {
    const before = new Set(list(podSpec(prev).ephemeralContainers).map((c) => c.name));
    const signal = list(podSpec(next).ephemeralContainers).find((c) => !before.has(c.name) && (c.env ?? []).some((e) => e.name === 'EPHEMERA_SIGNAL_TARGET'));
    return signal ? `signal container ${signal.name} injected` : undefined;
  }
  if (sub === 'status') return !podEnded(prev) && podEnded(next) ? `phase set to ${phaseOf(next)}` : undefined;
  const old = new Map(containers(prev).map((c) => [c.name, c.image]));
  const swapped = containers(next).find((c) => isSidecar(c) && old.has(c.name) && old.get(c.name) !== c.image);
  return swapped ? `sidecar ${swapped.name}'s image swapped to ${swapped.image}` : undefined;
}

const list = (v: unknown): Container[] => (Array.isArray(v) ? (v as Container[]) : []);

function finalChecks({ final, writes, leaseSkewMs }: RunRecord, add: Add): void {
  const pods = final.filter(isPod);
  const skewMs = leaseSkewMs ?? LEASE_SKEW_MS;
  // A job still being deleted is not expected to finish; deleted-job-gone judges it.
  for (const job of final.filter(isJob).filter((j) => !j.metadata.deletionTimestamp)) checkJobEnd(job, { final: pods, atVerdict: podsAtVerdict(job, writes, skewMs) ?? [{ views: [pods], carried: [] }] }, add);
  for (const job of final.filter(isJob).filter((j) => j.metadata.deletionTimestamp)) {
    add('deleted-job-gone', `job ${keyOf(job)} (uid ${job.metadata.uid}) is still there at the end, being deleted since ${String(job.metadata.deletionTimestamp)}, finalizers ${JSON.stringify(job.metadata.finalizers ?? [])}`);
  }
  const keys = new Map(writes.filter((w) => isJob(w.object)).map((w) => [w.object.metadata.uid, keyOf(w.object)]));
  for (const { lease, job } of staleJobLeases(final)) {
    const key = keys.get(job);
    add('no-stale-job-lease', `Lease ${keyOf(lease)} still holds the claims record of ${key ? `job ${key} (uid ${job})` : `job uid ${job}`}, which is ${key ? 'gone' : 'unknown'}; the job of that name now: ${liveJobOf(final, key)}`);
  }
  for (const pod of pods.filter(isSidecarPod)) {
    if (!podEnded(pod) && !allTerminated(pod)) {
      const open = containers(pod).filter((c) => !statusOf(pod, c.name)?.state?.terminated).map((c) => c.name);
      add('sidecar-pod-ended', `Job pod ${keyOf(pod)} with sidecars did not end: phase ${phaseOf(pod) || 'none'}, not terminated: ${open.join(', ')}`);
    }
  }
}

/**
 * The pods the job's verdict may have been planned from: as they were after each write from
 * the job's last write before the verdict (the status write that says it, the first with a
 * completionTime) up to that one. The verdict's status write is fenced by the job's
 * resourceVersion, so its plan read the job after that last write, and LISTed the pods after
 * the job. A finished job's status is final: a pod deleted or replaced later does not change
 * it. Undefined when the job never got a verdict.
 */
function podsAtVerdict(job: KubeObject, writes: readonly WriteRecord[], skewMs: number): VerdictViews[] | undefined {
  const mineJob = (w: WriteRecord): boolean => isJob(w.object) && w.object.metadata.uid === job.metadata.uid;
  const verdict = writes.find((w) => mineJob(w) && (w.object.status as { completionTime?: unknown } | undefined)?.completionTime !== undefined);
  if (!verdict) return undefined;
  const from = writes.filter((w) => w.seq < verdict.seq && mineJob(w)).at(-1)?.seq ?? 0;
  const seal = podsAtSeal(job, writes.filter((w) => w.seq < verdict.seq), skewMs);
  return [...(seal ? [seal] : []), { views: podViews(writes, (w) => w.seq >= from, verdict.seq), carried: carriedAt(job, writes, verdict.seq) }];
}

/**
 * Moments a verdict may have been planned from, and the pods that carried the job's
 * containers at the write that decided it (the verdict's status write, or the seal): any such
 * pod was claimed before that write's plan read the Lease, so the plan saw it.
 */
interface VerdictViews {
  views: KubeObject[][];
  carried: string[];
}

/**
 * Once sealed, a verdict re-planned after its status write was lost is the one the seal
 * recorded (functions/ejob/README.md, step 7), planned from the pods the seal's plan LISTed:
 * after the Lease write before the seal (the seal is fenced by its resourceVersion), or up to
 * skewSeconds before that Lease read (a LIST from before the Lease stands only if sent at most
 * skewSeconds before the Lease came back, by the local monotonic clock) — by the server's
 * time of the writes.
 */
function podsAtSeal(job: KubeObject, writes: readonly WriteRecord[], skewMs: number): VerdictViews | undefined {
  const uid = job.metadata.uid ?? '';
  const seal = writes.find((w) => isLease(w.object) && w.type !== 'DELETED' && sealedFor(w.object, uid));
  if (!seal) return undefined;
  const before = writes.filter((w) => w.seq < seal.seq && isLease(w.object) && keyOf(w.object) === keyOf(seal.object)).at(-1);
  const from = before ? Date.parse(before.time) - skewMs : Number.NEGATIVE_INFINITY;
  // Checked against the pods that carried the containers at the seal, not at the status write
  // after it (review: a pod injected after the seal, by a claim its plan did not count, was
  // taken as missing from the seal's views).
  return { views: podViews(writes, (w) => Date.parse(w.time) >= from, seal.seq), carried: carriedAt(job, writes, seal.seq) };
}

/** Whether this Lease holds the job's sealed claims record. */
function sealedFor(lease: KubeObject, jobUid: string): boolean {
  const r = claimsRecord(lease);
  return r?.job === jobUid && r.finished === true;
}

/** The pods as they were after each write that `include` picks, up to write `until`. */
function podViews(writes: readonly WriteRecord[], include: (w: WriteRecord) => boolean, until: number): KubeObject[][] {
  const pods = new Map<string, KubeObject>();
  const views: KubeObject[][] = [];
  for (const w of writes) {
    if (w.seq > until) break;
    if (isPod(w.object)) {
      if (w.type === 'DELETED') pods.delete(w.object.metadata.uid ?? keyOf(w.object));
      else pods.set(w.object.metadata.uid ?? keyOf(w.object), w.object);
    }
    if (include(w)) views.push([...pods.values()]);
  }
  return views;
}

/**
 * Every job ends Succeeded or Failed, its counters are the outcomes of the pods it injected
 * as they were when its verdict was planned (any moment the plan may have read them), and
 * no pod of it is left open at the end.
 */
function checkJobEnd(job: KubeObject, pods: { final: KubeObject[]; atVerdict: VerdictViews[] }, add: Add): void {
  const uid = job.metadata.uid ?? '';
  const open = pods.final.filter((p) => jobContainers(p, uid).length > 0 && selects(job, p) && outcome(p, uid) === 'open').map(keyOf);
  const tries = pods.atVerdict.flatMap((g) => g.views.map((view) => verdictProblems(job, view, g.carried)));
  const problems = tries.find((t) => t.length === 0) ?? tries.at(-1) ?? [];
  if (open.length) problems.push(`pods still open: ${open.join(', ')}`);
  if (problems.length) add('job-finished', `job ${keyOf(job)}: ${problems.join('; ')}`);
}

/**
 * What contradicts the job's final status, with the pods as in `view`: its target pods
 * carrying its containers. A view the verdict cannot have been planned from is refused: one
 * with a target pod of it still open (unless past the deadline), or one missing a pod that
 * carried its containers just before the verdict's write (`carried`; review: without these,
 * a view from before any injection passed for a verdict of Succeeded 0/0/0).
 */
function verdictProblems(job: KubeObject, view: KubeObject[], carried: readonly string[] = []): string[] {
  const uid = job.metadata.uid ?? '';
  const mine = view.filter((p) => jobContainers(p, uid).length > 0 && selects(job, p));
  const count = (o: string): number => mine.filter((p) => outcome(p, uid) === o).length;
  const got = { succeeded: field(job, 'status', 'succeeded') ?? 0, failed: field(job, 'status', 'failed') ?? 0, match: field(job, 'status', 'match') ?? 0 };
  // Pods the containers cannot go into are failed targets without an injection, as many as
  // replicas left room for: each counts in match and in failed alike, never more than the view has.
  const unfit = Math.min(unfitSelected(job, view), Math.max(0, got.match - mine.length));
  const want = { succeeded: count('succeeded'), failed: count('failed') + unfit, match: mine.length + unfit };
  const phase = phaseOf(job);
  const problems = unplannable(job, { mine, view, carried, match: got.match });
  if (phase !== 'Succeeded' && phase !== 'Failed') problems.push(`phase is ${phase || 'unset'}`);
  if (phase === 'Succeeded' && want.failed > 0) problems.push(`phase Succeeded although ${want.failed} pod(s) failed`);
  // PodsGone (DESIGN's phases, README): every replica went to pods deleted before their result was seen; none is left.
  const gone = phase === 'Failed' && conditionReason(job, 'JobFailed') === 'PodsGone';
  if (gone && mine.length > 0) problems.push(`reason PodsGone although ${mine.length} pod(s) with its containers are here`);
  if (phase === 'Failed' && want.failed === 0 && !gone) problems.push('phase Failed although no pod failed');
  for (const k of ['succeeded', 'failed', 'match'] as const) if (got[k] !== want[k]) problems.push(`status.${k}=${got[k]} but the pods say ${want[k]}`);
  return problems;
}

/** Why the verdict cannot have been planned from this view (see verdictProblems), or cannot be right whatever the view. */
function unplannable(job: KubeObject, pods: { mine: KubeObject[]; view: KubeObject[]; carried: readonly string[]; match: number }): string[] {
  const uid = job.metadata.uid ?? '';
  const problems: string[] = [];
  const replicas = field(job, 'spec', 'replicas');
  if (replicas !== undefined && pods.match > replicas) problems.push(`status.match=${pods.match} is more than replicas=${replicas}`);
  const open = pods.mine.filter((p) => outcome(p, uid) === 'open').length;
  if (open > 0 && conditionReason(job, 'JobFailed') !== 'DeadlineExceeded') problems.push(`a verdict while ${open} pod(s) of it were open`);
  const missing = pods.carried.filter((u) => !pods.view.some((p) => p.metadata.uid === u && jobContainers(p, uid).length > 0));
  if (missing.length > 0) problems.push(`pod(s) uid ${missing.join(', ')} carried its containers at the verdict's write but not in this view`);
  return problems;
}

/**
 * Active pods the job selects (its namespace, its matchLabels: what the chaos world's
 * selectors use) that have no container named by the template's targetContainerName, and
 * none of the job's containers: no injection of the job can go into them.
 */
function unfitSelected(job: KubeObject, view: KubeObject[]): number {
  const spec = job.spec as { selector?: { matchLabels?: Record<string, string> }; template?: { ephemeralContainers?: { targetContainerName?: string }[] } } | undefined;
  const labels = spec?.selector?.matchLabels ?? {};
  const targets = (spec?.template?.ephemeralContainers ?? []).flatMap((c) => (c.targetContainerName ? [c.targetContainerName] : []));
  return view.filter((p) => p.metadata.namespace === job.metadata.namespace && !podEnded(p) && p.metadata.deletionTimestamp === undefined
    && Object.entries(labels).every(([k, v]) => (p.metadata.labels as Record<string, string> | undefined)?.[k] === v)
    && jobContainers(p, job.metadata.uid ?? '').length === 0
    && targets.some((t) => !containers(p).some((c) => c.name === t))).length;
}

/** The pods (uids) carrying the job's containers at write `seq`. */
function carriedAt(job: KubeObject, writes: readonly WriteRecord[], seq: number): string[] {
  const uid = job.metadata.uid ?? '';
  const view = podViews(writes, (w) => w.seq === seq, seq).at(-1) ?? [];
  return view.filter((p) => jobContainers(p, uid).length > 0).map((p) => p.metadata.uid ?? keyOf(p));
}

/** The reason of the job's condition of this type, if any. */
function conditionReason(job: KubeObject, type: string): string | undefined {
  const conditions = (job.status as { conditions?: { type?: string; reason?: string }[] } | undefined)?.conditions ?? [];
  return conditions.find((c) => c.type === type)?.reason;
}

function liveJobOf(final: KubeObject[], key: string | undefined): string {
  const j = key ? final.filter(isJob).find((x) => keyOf(x) === key) : undefined;
  return j ? `uid ${j.metadata.uid}${j.metadata.deletionTimestamp ? ', being deleted' : ''}` : 'none';
}

function stormCheck(run: RunRecord, add: Add): void {
  const per = new Map<string, number>();
  // A failed test op of a JSON patch is a fence doing its job (the engine observes again), not a
  // storm; nor is kube's answer to an injection whose containers are already there ("existing
  // ephemeral containers … may not be changed"), which the product takes as done by design:
  // concurrent signal or job injections each stamp their own plan (review97 F5).
  const expected = (x: RejectedWrite): boolean => /testing value .* failed/.test(x.message ?? '')
    || (x.path.endsWith('/ephemeralcontainers') && /existing ephemeral containers .* may not be changed/.test(x.message ?? ''));
  for (const r of run.rejected.filter((x) => x.status === 422 && !expected(x))) {
    const object = r.path.replace(/\/(status|ephemeralcontainers)$/, '');
    per.set(object, (per.get(object) ?? 0) + 1);
  }
  for (const [object, n] of per) if (n > MAX_422_PER_OBJECT) add('no-422-storm', `${n} writes to ${object} refused with 422 (more than ${MAX_422_PER_OBJECT})`);
}
