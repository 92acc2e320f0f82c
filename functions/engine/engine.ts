import { setTimeout as sleep } from 'node:timers/promises';
import { Envelope, envelopeKey, parseObjectKey } from '../api/envelope.ts';
import { formatZodIssues } from '../api/field-path.ts';
import { elapsedMs } from '../kube/elapsed.ts';
import { askedRetrySeconds, isKubeError, KubeError, refusedForGood } from '../kube/errors.ts';
import type { Kube } from '../kube/kube.ts';
import { applyPlan, describe, type ApplyDeps, type ApplyResult } from './apply.ts';
import type { ClockWatch } from './clock-watch.ts';
import type { Controller } from './controller.ts';
import { countRepeat, eventAction } from './events.ts';
import { landingMarginMs, type LockConfig } from './lock.ts';
import type { Logger } from './logger.ts';
import { minRequeue, type Action, type Plan } from './plan.ts';

/** Everything a handler needs, passed in (nothing is read from the environment here). */
export interface EngineDeps {
  kube: Kube;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each controller has its own observed type
  controllers: readonly Controller<any>[];
  /** Where per-key Leases live and how long a claim holds (the EphemeralJob's state record). */
  lock: LockConfig;
  clock: () => Date;
  logger: Logger;
  /** Re-plans allowed after 409 conflicts within one invocation (default 3). */
  maxReplans?: number;
  /** Local clock in ms (default kube/elapsed.ts's: monotonic, counting a Lambda's freeze): bounds how late a claimed injection may be sent. */
  monotonic?: () => number;
  /** Backoff of transient write failures (apply.ts defaults: 4 retries from 100 ms). */
  retry?: { retries?: number; minTimeoutMs?: number };
  /**
   * Wait before observing again after a 409 (default 10 ms, doubled at each re-plan, each
   * wait drawn between it and twice it). The instance that won is usually still sending the
   * rest of its plan; reading after it lands finds its status written instead of planning the
   * same write and losing again (client-go's retry.DefaultRetry waits 10 ms between tries too).
   */
  conflictBackoffMs?: number;
  /** The longest a reconcile queued behind a running one of its key waits for it (default COALESCE_WAIT_MS). */
  coalesceWaitMs?: number;
  /** Warns when `clock` is more than the skew from the API server's (clock-watch.ts); unset: no check. */
  clockWatch?: ClockWatch;
}

export const KEY_OUTCOMES = ['done', 'gone', 'conflict', 'refused'] as const;
export type KeyOutcome = (typeof KEY_OUTCOMES)[number];

/** The result for one key. */
export interface KeyResult {
  controller: string;
  key: string;
  outcome: KeyOutcome;
  actions: Action[];
  requeueAfterSeconds?: number;
  notes?: string[];
  /** The plan's warnings (also first in notes): what is wrong and shows nowhere else; `ephemera invoke` prints them. */
  warnings?: string[];
  /** The refusals, one line each (`describe(action): message`), as logs show them. */
  errors?: string[];
  /** The same refusals as data: each write the API server refused for good, and its error. */
  refused?: { action: Action; error: Error }[];
}

/** The result of handling one envelope. */
export interface HandleResult {
  keys: KeyResult[];
  skipped: { controller: string; reason: string }[];
  /** The soonest any key wants another look (conflicts, claims, TTLs, deadlines), or null. */
  requeueAfterSeconds: number | null;
  /**
   * Keys (or routes) whose read was refused for good (403, 400, a 404 naming nothing…):
   * the other keys of the envelope were handled all the same; the queue keeps the envelope
   * as a dead letter for these (review: one such key threw the whole envelope away).
   */
  failed: { controller: string; key?: string; error: KubeError }[];
  /** Keys not started before options.deadline (then those that failed for now), as an envelope that routes to them (restOf). */
  rest?: Envelope;
  /**
   * How long `rest` should wait before it is handled (s): the longest Retry-After the API
   * server answered one of its keys that failed for now with (review90 L2: sent at once, such
   * a key came back before the server's wait); absent: at once.
   */
  restAfterSeconds?: number;
}

/** Bad input: the message can never be handled (dead-letter it, don't retry). */
export class InvalidEnvelopeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidEnvelopeError';
  }
}

/** Parse an envelope from a queue message body; InvalidEnvelopeError names the bad fields. */
export function parseEnvelope(body: unknown): Envelope {
  const r = Envelope.safeParse(body);
  if (!r.success) throw new InvalidEnvelopeError(`invalid event envelope: ${formatZodIssues(r.error.issues, '')}`);
  return r.data;
}

/**
 * One event in, the world nudged toward desired state: route → observe → plan →
 * apply → requeue, for every controller the event concerns. Transient API failures are
 * thrown (the queue redelivers); everything else is a result.
 */
export async function handle(envelope: Envelope, deps: EngineDeps, options: HandleOptions = {}): Promise<HandleResult> {
  const log = deps.logger.child({ event: envelope.id, subject: envelopeKey(envelope) });
  const result: HandleResult = { keys: [], skipped: [], requeueAfterSeconds: null, failed: [] };
  const progress = options.progress ?? newProgress();
  progress.partial = result;
  // One key that cannot be handled does not keep the envelope's other keys (other jobs
  // selecting the pod, the sidecar terminator) from theirs. An error a retry may cure is
  // thrown once all have run: the queue delivers the envelope again (its keys are idempotent).
  const run: Run = { envelope, deps, log, result, progress, retry: undefined, asked: 0 };
  const routed = await routeAll(run);
  const routeRetry = run.retry !== undefined;
  const { left, errored } = await runKeys(run, routed, keyBudget(options.deadline));
  // Cut at the deadline, a key that failed for now goes on with the keys not started, last
  // (review: thrown, the record was delivered again and cut at the same place, so the keys
  // after the cut never ran); alone, or with a route that failed, it is thrown as before.
  if (run.retry !== undefined && (left.length === 0 || routeRetry)) throw run.retry.error;
  if (left.length > 0) {
    result.rest = restOf(envelope, [...left, ...errored]);
    if (errored.length > 0 && run.asked > 0) result.restAfterSeconds = run.asked;
    log.info({ started: result.keys.length + result.failed.length + errored.length, left: left.length, failedForNow: errored.length }, 'the invocation\'s time is nearly up: the keys not started are sent on as their own envelope');
  }
  return result;
}

/** One handle() call's state. */
interface Run {
  envelope: Envelope;
  deps: EngineDeps;
  log: Logger;
  result: HandleResult;
  progress: HandleProgress;
  /** The first error a retry may cure. */
  retry: { error: unknown } | undefined;
  /** The longest Retry-After (s) the keys' errors that a retry may cure asked for, 0 if none. */
  asked: number;
}

/** `work`, with an error recorded instead of thrown: refused for good in `failed`, else the run's retry. */
async function attempt<T>(run: Run, what: { controller: string; key?: string }, work: () => Promise<T>): Promise<T | undefined> {
  try {
    return await work();
  } catch (error) {
    const final = refusedForGood(error);
    if (final === undefined) {
      run.retry ??= { error };
      run.asked = Math.max(run.asked, askedRetrySeconds(error) ?? 0);
      run.progress.asked = run.asked;
    } else run.result.failed.push({ ...what, error: final });
    run.log.warn({ ...what, err: (error as Error).message, final: final !== undefined }, final ? 'refused for good: the other keys go on' : 'failed: the other keys go on, then the envelope is delivered again');
    return undefined;
  }
}

/**
 * Every controller's route, before any key runs: all the envelope's keys are known before the
 * first starts, so a caller that stops waiting can name those not finished (restAfter).
 */
async function routeAll(run: Run): Promise<{ controller: Controller<unknown>; key: string }[]> {
  const routed: { controller: Controller<unknown>; key: string }[] = [];
  for (const controller of run.deps.controllers) {
    const route = await attempt(run, { controller: controller.name }, () => controller.route(run.envelope, run.deps.kube));
    if (route === undefined) continue;
    run.progress.routed.push(...route.keys);
    run.progress.routes++;
    if (route.keys.length === 0) {
      run.result.skipped.push({ controller: controller.name, reason: route.skipped ?? 'not routed' });
      run.log.debug({ controller: controller.name, reason: route.skipped }, 'skipped');
    }
    for (const key of route.keys) routed.push({ controller, key });
  }
  return routed;
}

/** The keys in order, each only while the budget lets it start: those left, and those that failed for now. */
async function runKeys(run: Run, routed: { controller: Controller<unknown>; key: string }[], budget: ReturnType<typeof keyBudget>): Promise<{ left: string[]; errored: string[] }> {
  const { result, progress, deps, log } = run;
  const left: string[] = [];
  const errored: string[] = [];
  for (const { controller, key } of routed) {
    if (left.length > 0 || !budget.fits()) {
      left.push(key);
      continue;
    }
    const failedBefore = result.failed.length;
    progress.running = key;
    const r = await budget.time(() => attempt(run, { controller: controller.name, key }, () => reconcileCoalesced(controller, key, { ...deps, logger: log.child({ controller: controller.name, key }) })));
    progress.running = undefined;
    if (r !== undefined || result.failed.length > failedBefore) progress.finished.add(key);
    else errored.push(key);
    if (r === undefined) continue;
    result.keys.push(r);
    result.requeueAfterSeconds = minRequeue(result.requeueAfterSeconds ?? undefined, r.requeueAfterSeconds) ?? null;
  }
  return { left, errored };
}

/**
 * What handle() has done so far, for a caller that may stop waiting for it (an invocation's
 * end): the keys routed (`routes`: how many controllers' routes are known) and those finished
 * (a result, or refused for good).
 */
export interface HandleProgress {
  routed: string[];
  routes: number;
  finished: Set<string>;
  /** The key being reconciled now. */
  running?: string | undefined;
  /** The result so far: the finished keys' results, refusals and soonest next look. */
  partial?: HandleResult;
  /** The longest Retry-After (s) a key's error that a retry may cure asked for so far (0 or absent: none). */
  asked?: number;
}

export function newProgress(): HandleProgress {
  return { routed: [], routes: 0, finished: new Set() };
}

/**
 * The envelope for the keys not finished, once every controller's route is known (undefined
 * before: the keys of a route not taken cannot be named). For a caller that stops waiting
 * for handle() — the key running then is among them (review: a key slower than every one
 * before it, started near the deadline, timed the whole record out, and each redelivery
 * stopped at the same key).
 */
export function restAfter(envelope: Envelope, progress: HandleProgress, controllers: number): Envelope | undefined {
  if (progress.routes < controllers) return undefined;
  const { running } = progress;
  // The one running last: slower than an invocation, it would hold back the keys after it again.
  const waiting = progress.routed.filter((key) => !progress.finished.has(key) && key !== running);
  return restOf(envelope, running === undefined ? waiting : [...waiting, running]);
}

/** How handle() is bounded (an SQS consumer's invocation). */
export interface HandleOptions {
  /** Filled in as handle() goes (restAfter). */
  progress?: HandleProgress;
  /**
   * Date.now() by which the envelope's keys must be done. A key is started only if, taking as
   * long as the longest so far (at least KEY_BUDGET_FLOOR_MS), it ends by then; the first
   * always starts, so each pass makes progress. The keys left are the result's `rest`.
   */
  deadline?: number;
}

/** The least time a key is expected to take when judging whether the next one fits (handle's deadline). */
export const KEY_BUDGET_FLOOR_MS = 1000;

function keyBudget(deadline: number | undefined): { fits(): boolean; time<T>(run: () => Promise<T>): Promise<T> } {
  let longest = KEY_BUDGET_FLOOR_MS;
  let started = 0;
  return {
    fits: () => deadline === undefined || started === 0 || Date.now() + longest <= deadline,
    async time(run) {
      const t0 = Date.now();
      started++;
      try {
        return await run();
      } finally {
        longest = Math.max(longest, Date.now() - t0);
      }
    },
  };
}

/**
 * The envelope again, routing to the keys in `left` (review: an envelope naming hundreds of
 * jobs past an invocation's deadline failed as a whole, and each redelivery started over
 * from the first job, so the last ones never saw the event). A pod's envelope names the jobs
 * left in `jobs`, so the EphemeralJob router takes exactly those; any other controller routes
 * it again as the original (a key of it done already runs once more: keys are idempotent).
 */
export function restOf(envelope: Envelope, left: readonly string[]): Envelope {
  if (envelope.data.kind !== 'Pod') return envelope;
  const jobs = left.flatMap((key) => {
    const ref = parseObjectKey('EphemeralJob', key);
    return ref !== null && ref.namespace === envelope.data.namespace ? [ref.name] : [];
  });
  return { ...envelope, data: { ...envelope.data, jobs } };
}

/** How a key refused for good is named: in a dead letter, and in a requeued envelope's `data.reported`. */
export function failedKey(f: { controller: string; key?: string }): string {
  return f.key ? `${f.controller} ${f.key}` : f.controller;
}

/** A key's reconcile running in this process, and the one queued to run after it. */
interface KeySlot {
  running: Promise<KeyResult>;
  queued?: Promise<KeyResult>;
}

/** Per Kube (one cluster's client) and controller key: what runs now (reconcileCoalesced). */
const inFlight = new WeakMap<Kube, Map<string, KeySlot>>();

/**
 * reconcileKey, but not twice at once for one key in this process: client-go's workqueue
 * keeps a key out of processing while it is processed and marks it dirty, so events that
 * arrive meanwhile bring one more reconcile after it, not one each. Here a key asked for while
 * it runs joins the one reconcile queued after it (which observes everything that arrived
 * before it starts), so N envelopes routed to one job at once — a batch of SQS records of its
 * pods ending together, a relay's replay — cost at most two reconciles instead of N
 * concurrent ones each LISTing all its pods and losing the Lease write to each other (review:
 * 35 LISTs and six 409s for a batch of 10 at 1,000 pods, and a heap limit at 2,500).
 * Per Kube: the same key in another cluster, or another instance's client, is another key.
 * A queued reconcile waits COALESCE_WAIT_MS at most: one that hangs does not hold the key.
 */
export function reconcileCoalesced(controller: Controller<unknown>, key: string, deps: EngineDeps): Promise<KeyResult> {
  let keys = inFlight.get(deps.kube);
  if (!keys) inFlight.set(deps.kube, (keys = new Map()));
  const id = `${controller.name} ${key}`;
  const slot = keys.get(id);
  if (slot?.queued) return slot.queued;
  const table = keys;
  const start = (): Promise<KeyResult> => {
    const entry: KeySlot = { running: reconcileKey(controller, key, deps) };
    table.set(id, entry);
    // Done with nothing queued behind it: the key is free (a queued one replaces the entry as it starts).
    const settle = (): void => {
      if (table.get(id) === entry && entry.queued === undefined) table.delete(id);
    };
    entry.running.then(settle, settle);
    return entry.running;
  };
  if (!slot) return start();
  deps.logger.debug({ controller: controller.name, key }, 'a reconcile of this key is running: one more follows it');
  // After it, or once it has run COALESCE_WAIT_MS: a reconcile that hangs (a request whose
  // answer never comes) must not hold the key's later events for good.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, deps.coalesceWaitMs ?? COALESCE_WAIT_MS);
    timer.unref?.();
  });
  slot.queued = Promise.race([slot.running.then(noop, noop), waited]).then(() => {
    clearTimeout(timer);
    return start();
  });
  return slot.queued;
}

/** The longest a queued reconcile waits for the running one of its key (reconcileCoalesced). */
export const COALESCE_WAIT_MS = 60_000;

function noop(): void {}

/**
 * Reconcile one key, the one path every event takes: observe → plan (pure) → apply in
 * order; a 409 on a fenced write (another instance moved first) means observe and plan
 * again, at most maxReplans times; then requeueAfter. No lock is taken here: a controller
 * that must serialise a decision (which pods to inject) plans a resourceVersion-fenced
 * write that records it, and the 409 of a concurrent instance lands here as a re-plan.
 */
export async function reconcileKey(controller: Controller<unknown>, key: string, deps: EngineDeps): Promise<KeyResult> {
  const base = { controller: controller.name, key };
  const applied: Action[] = [];
  const maxReplans = deps.maxReplans ?? 3;
  const monotonic = deps.monotonic ?? elapsedMs;
  for (let attempt = 0; attempt <= maxReplans; attempt++) {
    // Before observing: a claim's server time is read during observation, so a window
    // counted from here ends no later than the claim's own (ejob/README.md, step 4).
    const startedAt = monotonic();
    const observed = await controller.observe(key, deps.kube, deps.lock);
    if (observed === null) return { ...base, outcome: 'gone', actions: applied };
    const now = deps.clock();
    const plan = controller.plan(observed, now);
    const { told, warned } = tellPlan(plan, now, deps);
    const r = await applyPlan(plan.actions, applyDepsOf(plan, { monotonic, startedAt }, deps));
    applied.push(...r.applied);
    // Creates its namespace refused as it is being deleted: told, not refused (apply.ts).
    told.push(...r.moot.map((a) => `${describe(a)}: not made, its namespace is being deleted`));
    if (r.replan) {
      if (attempt < maxReplans) await sleep(conflictBackoff(deps.conflictBackoffMs ?? 10, attempt));
      continue;
    }
    if (r.refused.length > 0) {
      const again = await reportRefusals(r.refused, plan.subject, deps);
      const look = r.partial ? Math.min(afterRefusal(plan, again), PARTIAL_LOOK_SECONDS) : afterRefusal(plan, again);
      return { ...base, outcome: 'refused', actions: applied, notes: told, ...warned, errors: r.refused.map((x) => `${describe(x.action)}: ${x.error.message}`), refused: r.refused, requeueAfterSeconds: look };
    }
    return { ...base, outcome: 'done', actions: applied, notes: told, ...warned, requeueAfterSeconds: nextLook(plan, r) };
  }
  deps.logger.warn({ maxReplans }, 'still conflicting after re-planning: requeue');
  return { ...base, outcome: 'conflict', actions: applied, requeueAfterSeconds: 1 };
}

/** Logs a plan's notes and warnings (and this host's clock if off from the server's); what the key's result tells: the warnings first, which ephemera invoke prints. */
function tellPlan(plan: Plan, now: Date, deps: EngineDeps): { told: string[]; warned: { warnings?: string[] } } {
  const off = deps.clockWatch?.check(now, deps.kube.serverNow(), deps.lock.skewSeconds);
  if (off !== undefined) deps.logger.warn({ warning: off }, 'clock off from the API server\'s');
  for (const note of plan.notes ?? []) deps.logger.debug({ note }, 'plan note');
  for (const warning of plan.warnings ?? []) deps.logger.warn({ warning }, 'skipped what cannot be read');
  return { told: [...(plan.warnings ?? []), ...(plan.notes ?? [])], warned: plan.warnings?.length ? { warnings: plan.warnings } : {} };
}

/**
 * How a plan's actions are applied: each attempt of an action sent within a window (a claim's
 * injections) is answered or abandoned before the claim may be dropped (lock.ts
 * landingMarginMs; review87 F1); a create the subject's namespace refuses as it goes is moot.
 */
function applyDepsOf(plan: Plan, at: { monotonic: () => number; startedAt: number }, deps: EngineDeps): ApplyDeps {
  const subjectNamespace = plan.subject?.namespace ? { subjectNamespace: plan.subject.namespace } : {};
  return { kube: deps.kube, logger: deps.logger, ...at, landingMarginMs: landingMarginMs(deps.lock), ...subjectNamespace, ...deps.retry };
}

/** Looking again sooner than this is a loop through the queue (a TTL of 0 whose status write is refused: review). */
const MIN_REQUEUE_SECONDS = 1;

/** After a fallback version went though part of what it stands in for took effect: write what now holds (no loop: the next plan sees it). */
const PARTIAL_LOOK_SECONDS = 1;

/** When an action was refused or withheld and the plan says nothing sooner (Plan.retryAfterSeconds). */
const RETRY_AFTER_SECONDS = 10;

/** When the same refusal was met before (its Warning Event is there already): a refusal for good waits on a person. */
const REFUSED_AGAIN_SECONDS = 120;

/**
 * When to look again after a refusal: the plan's retry, or, when this very refusal was met
 * before, REFUSED_AGAIN_SECONDS. Never the plan's own sooner look: it assumed the refused
 * write took effect (review: a TTL deletion refused was tried every second, for good; a
 * refused claim every 5–10 s, 60 requests a minute per job).
 */
function afterRefusal(plan: Plan, again: boolean): number {
  const retry = plan.retryAfterSeconds ?? RETRY_AFTER_SECONDS;
  // A deadline or TTL comes due whatever was refused (review: a deadline acted 106 s late).
  const backOff = minRequeue(again ? Math.max(retry, REFUSED_AGAIN_SECONDS) : retry, plan.dueAfterSeconds) ?? retry;
  return Math.max(MIN_REQUEUE_SECONDS, backOff);
}

/** When to look at a key again after applying its plan. */
function nextLook(plan: Plan, r: ApplyResult): number | undefined {
  // An action sent too late was skipped, or an injection met containers of its names that
  // may not be ours: look again soon rather than at the plan's leisure (the change that
  // brought them may be held by the relay, and our own status write is not forwarded).
  const soon = r.expired.length > 0 || r.namesTaken.length > 0 || r.partial ? 1 : undefined;
  // Withheld after what it follows did not take effect: what the plan wanted is not done,
  // and nothing may bring the key back (refusals: afterRefusal).
  const retry = r.withheld.length > 0 ? (plan.retryAfterSeconds ?? RETRY_AFTER_SECONDS) : undefined;
  const next = minRequeue(minRequeue(plan.requeueAfterSeconds, soon), retry);
  return next === undefined ? undefined : Math.max(MIN_REQUEUE_SECONDS, next);
}

/** The wait before re-plan `attempt + 1`: base × 2^attempt, with jitter so instances that collided do not read in step again. */
export function conflictBackoff(baseMs: number, attempt: number, random: () => number = Math.random): number {
  return baseMs * 2 ** attempt * (1 + random());
}

/**
 * What a refusal's Warning Event is about: the object written when it is the plan's subject
 * or a pod, else the subject (a refused Lease or CRR write is shown on the job or the pod,
 * where `kubectl describe` looks: review).
 */
function aboutRefused(action: Action, subject: Plan['subject']): { apiVersion: string; kind: string; namespace: string; name: string; uid?: string } {
  const own = { apiVersion: action.apiVersion, kind: action.kind, namespace: action.namespace, name: action.name, ...uidOf(action) };
  if (subject === undefined || action.kind === 'Pod') return own;
  const isSubject = action.kind === subject.kind && action.name === subject.name && action.namespace === subject.namespace;
  // The subject's own write names its uid even when the action does not carry it.
  if (isSubject) return own.uid === undefined && subject.uid ? { ...own, uid: subject.uid } : own;
  return subject;
}

/** The uid of the object an action writes, if known: `kubectl describe` shows only the Events that name it. */
function uidOf(action: Action): { uid?: string } {
  const body = action.body as { metadata?: { uid?: unknown }; preconditions?: { uid?: unknown } } | undefined;
  // A delete names its object's uid as a precondition.
  const fromBody = body?.metadata?.uid ?? body?.preconditions?.uid;
  const uid = action.uid ?? (typeof fromBody === 'string' ? fromBody : undefined);
  return uid ? { uid } : {};
}

/**
 * Which refusal this is, for its Warning's name: the status and reason the API server gave.
 * Not its message, which may change from one time to the next (a quota's figures, a
 * webhook's wording): that made every repeat a new Warning and never a repeat (no back-off).
 * The Warning shows the latest message.
 */
function refusalKind(error: Error): string {
  return error instanceof KubeError ? `${error.status}/${error.reason}` : error.message;
}

/**
 * The API server's words for a refusal, its paths told as the action's refusalPaths say
 * (an injection's: the template's container, not the pod's list index).
 */
function refusalText(action: Action, error: Error): string {
  const paths = action.refusalPaths;
  if (paths === undefined || Object.keys(paths).length === 0) return error.message;
  const any = new RegExp(Object.keys(paths).map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
  return error.message.replace(any, (k) => paths[k] ?? k);
}

/**
 * A refused write is recorded as a Warning Event on the object, once per distinct refusal
 * (all at once). True when one of them was there already: the same refusal met again.
 */
async function reportRefusals(refused: { action: Action; error: Error }[], subject: Plan['subject'], deps: EngineDeps): Promise<boolean> {
  const reportable = refused.filter(({ action }) => action.kind !== 'Event' && action.namespace);
  const planned = reportable.map(({ action, error }) => eventAction(
    aboutRefused(action, subject),
    // The action's id tells apart writes that describe() does not: two sidecars' signal
    // patches of one pod (review: they shared a Warning, counted 2 on first sight).
    { type: 'Warning', reason: 'ActionRefused', message: `${describe(action)} (${action.reason}) refused: ${refusalText(action, error)}`.slice(0, 1000), discriminator: `${describe(action)}${action.id ? `#${action.id}` : ''}/${refusalKind(error)}` },
    deps.clock(),
  ));
  // A pod write refused for a job shows on the job too, once per kind of refusal (not per
  // pod: a missing RBAC right refuses every injection alike), so `kubectl describe` of the job
  // tells why it does not go on — without it a job whose injections were all refused looked
  // like one held on purpose (operability review).
  // It does not count as "met before" for the back-off: the first refusal of another pod of the
  // same kind is new (review: it made the key wait 120 s instead of the plan's retry).
  const onJob: Action[] = [];
  for (const { action, error } of reportable) {
    if (action.kind !== 'Pod' || subject === undefined || subject.kind === 'Pod') continue;
    const what = `${action.verb} pods${action.subresource ? `/${action.subresource}` : ''}`;
    onJob.push(eventAction(subject, { type: 'Warning', reason: 'ActionRefused', message: `${action.reason} (pod ${action.name}): ${what} refused: ${refusalText(action, error)}`.slice(0, 1000), discriminator: `${what}/${refusalKind(error)}` }, deps.clock()));
  }
  // One create per Warning: a 409 then means an earlier reconcile wrote it, never this one.
  const once = (evs: Action[]): Action[] => [...new Map(evs.map((ev) => [`${ev.namespace}/${ev.name}`, ev])).values()];
  const events = once(planned);
  // Best effort: a refusal that cannot be recorded does not fail the reconcile that met it.
  // A Warning there already is the same refusal met again: counted on it. One that cannot be
  // written for good (no right to create Events, its namespace missing) says nothing of
  // repeats: taken as one, so the key backs off rather than looks every few seconds.
  const seen = await Promise.all(events.map((ev) => deps.kube.perform(ev).then(() => false, async (err: unknown) => {
    if (!isKubeError(err, 'already-exists')) return isKubeError(err, 'not-found', 'terminal', 'invalid', 'unserved');
    await countRepeat(deps.kube, ev);
    return true;
  })));
  await Promise.all(once(onJob).map((ev) => deps.kube.perform(ev).catch(async (err: unknown) => {
    if (isKubeError(err, 'already-exists')) await countRepeat(deps.kube, ev);
  })));
  return seen.some(Boolean);
}
