import pLimit from 'p-limit';
import pRetry, { AbortError } from 'p-retry';
import { isRecord } from '../api/json-equal.ts';
import { elapsedMs } from '../kube/elapsed.ts';
import { isKubeError, namespaceEnding, type KubeError } from '../kube/errors.ts';
import type { Kube } from '../kube/kube.ts';
import type { Logger } from './logger.ts';
import type { Action } from './plan.ts';

/** What applying a plan came to. */
export interface ApplyResult {
  /** Actions that took effect (or were found already done), in the plan's order. */
  applied: Action[];
  /** A fenced write met a newer object: observe and plan again. */
  replan: boolean;
  /** Actions the API server refused for good (422, 403, …), with why. */
  refused: { action: Action; error: KubeError }[];
  /** Actions not sent because their `withinSeconds` had passed (the next reconcile decides again). */
  expired: Action[];
  /** Actions not sent because the action they `require` did not take effect. */
  withheld: Action[];
  /** Best-effort actions (Action.bestEffort) dropped after a transient failure outlasted their retries. */
  dropped: Action[];
  /** Injections (`alreadyExists: 'look-again'`) whose container names the pod already holds, maybe not ours: look again soon. */
  namesTaken: Action[];
  /** An action was sent that is already behind (Action.behindIf): look again soon. */
  partial: boolean;
  /**
   * Actions moot because the plan's subject is going away with its namespace: creates there
   * refused because the namespace is being deleted or is gone (ApplyDeps.subjectNamespace),
   * and what `requires` them. Not refusals: no alarm, no Warning, no back-off.
   */
  moot: Action[];
}

export interface ApplyDeps {
  kube: Kube;
  logger: Logger;
  /** Transient-failure retries per action before giving up (default 4). */
  retries?: number;
  /** Base backoff in ms (default 100; doubles each try, jittered). */
  minTimeoutMs?: number;
  /** Local clock in ms for `withinSeconds` (default kube/elapsed.ts's: monotonic, counting a Lambda's freeze; tests move it). */
  monotonic?: () => number;
  /**
   * When the window of `withinSeconds` began, on that clock: the engine passes the moment
   * before it observed, so the window never starts after the server time a claim records.
   * Default: the start of this apply run.
   */
  startedAt?: number;
  /**
   * How long after its `withinSeconds` an action may still land, in ms: every attempt of such
   * an action is answered or abandoned by the window's start + withinSeconds + this, and the
   * API server is told so (Kube PerformOptions.timeoutMs, `?timeout=`). The engine gives
   * lock.ts landingMarginMs. Unset: no deadline (the attempt has the client's own timeout).
   */
  landingMarginMs?: number;
  /**
   * The namespace of the object the plan is about (Plan.subject). A write there that the API
   * server refuses because the namespace is being deleted or is gone (kube/errors.ts
   * namespaceEnding) is moot, not refused: the subject goes with the namespace, and no retry
   * could make it. Elsewhere (the lock namespace) such a refusal is one like any other.
   */
  subjectNamespace?: string;
}

/**
 * The `alarm` field of the log lines the AWS stack's metric filters count (infra/aws
 * functions-stack.ts): a write refused for good, a message left for redelivery, a cluster's
 * credential refused (its messages are left for redelivery too, and the stack counts them
 * there as well, but no retry cures it: its own alarm fires on the first line), and an
 * envelope requeued because the API server asked to be called later (429/503 Retry-After).
 */
export const ALARM_REFUSED = 'refused';
export const ALARM_REDELIVERY = 'redelivery';
export const ALARM_CREDENTIALS = 'credentials';
export const ALARM_THROTTLED = 'throttled';

/**
 * Perform a plan's actions in order, each `group` of neighbours at once. Transient failures
 * (429, 5xx, timeouts) are retried with backoff and, if they persist, thrown so the queue
 * redelivers (once the rest of their group has settled). A 409 on a fenced write stops the
 * run and asks for a re-plan. Refusals are collected and the rest goes on (metacontroller's
 * manage_children: one bad child does not block the others).
 */
export async function applyPlan(actions: readonly Action[], deps: ApplyDeps): Promise<ApplyResult> {
  const result: ApplyResult = { applied: [], replan: false, refused: [], expired: [], withheld: [], dropped: [], namesTaken: [], partial: false, moot: [] };
  const clock = deps.monotonic ?? elapsedMs;
  const started = deps.startedAt ?? clock();
  const tookEffect = new Set<string>();
  // The ids of moot actions: what requires one of them is moot too, not withheld.
  const moot = new Set<string>();
  // A group is sent at most GROUP_IN_FLIGHT requests at a time (a failed verdict's Events
  // can be 51), as client-go's default burst of 10 would.
  const limit = pLimit(GROUP_IN_FLIGHT);
  const window = (action: Action): SendWindow => ({
    late: () => action.withinSeconds !== undefined && clock() - started >= action.withinSeconds * 1000,
    leftMs: () => (action.withinSeconds === undefined || deps.landingMarginMs === undefined ? undefined : started + action.withinSeconds * 1000 + deps.landingMarginMs - clock()),
  });
  const all = groups(actions);
  for (const [g, group] of all.entries()) {
    const settled = await Promise.allSettled(group.map((action) => {
      const unless = action.unless === undefined ? [] : [action.unless].flat();
      if (unless.length > 0 && unless.every((id) => tookEffect.has(id))) return Promise.resolve('skipped' as const);
      if ((action.behindIf ?? []).some((id) => tookEffect.has(id))) result.partial = true;
      if (!requirementsMet(action, tookEffect)) return Promise.resolve(followsMoot(action, moot) ? 'moot' as const : 'withheld' as const);
      // Checked before every attempt, retries included: a retry is a send like the first one.
      return limit(() => applyOne(action, deps, window(action)));
    }));
    recordOutcomes(group, settled, { result, tookEffect, moot, logger: deps.logger });
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed || result.replan) {
      // The run stops here; what took effect is still reported (review: the Events of the
      // pods injected beside one that failed were lost, and the next plan finds them
      // injected and plans none).
      await reportFacts(all.slice(g + 1).flat(), tookEffect, { deps, result, window });
      if (failed) throw failed.reason;
      return result;
    }
  }
  return result;
}

/** What each action of a group that answered came to, into the result. */
function recordOutcomes(group: Action[], settled: PromiseSettledResult<Outcome | 'withheld'>[], into: { result: ApplyResult; tookEffect: Set<string>; moot: Set<string>; logger: Logger }): void {
  const { result, tookEffect, moot, logger } = into;
  group.forEach((action, i) => {
    const s = settled[i];
    if (s === undefined || s.status === 'rejected') return;
    const outcome = s.value;
    if (outcome === 'expired') {
      logger.warn({ action: describe(action), withinSeconds: action.withinSeconds }, 'too late to send: left to the next reconcile');
      result.expired.push(action);
    } else if (outcome === 'dropped') {
      logger.warn({ action: describe(action) }, 'transient failures outlasted the retries: dropped (best effort), the run goes on');
      result.dropped.push(action);
    } else if (outcome === 'withheld') {
      logger.info({ action: describe(action), requires: action.requires }, 'not sent: the action it follows did not take effect');
      result.withheld.push(action);
    } else if (outcome === 'replan') result.replan = true;
    else if (outcome === 'taken') {
      logger.info({ action: describe(action) }, 'containers of those names are already in the pod, ours or another job\'s: looking again');
      result.namesTaken.push(action);
    } else if (outcome === 'done') {
      result.applied.push(action);
      if (action.id !== undefined) tookEffect.add(action.id);
    } else if (outcome === 'moot') {
      result.moot.push(action);
      if (action.id !== undefined) moot.add(action.id);
    } else if (outcome !== 'skipped') result.refused.push({ action, error: outcome });
  });
}

/** The Events among `rest` that report an action which took effect: sent, best effort, when the run stops before them. */
async function reportFacts(rest: Action[], tookEffect: ReadonlySet<string>, ctx: { deps: ApplyDeps; result: ApplyResult; window: (a: Action) => SendWindow }): Promise<void> {
  const facts = rest.filter((a) => a.kind === 'Event' && a.requires !== undefined && requirementsMet(a, tookEffect));
  const limit = pLimit(GROUP_IN_FLIGHT);
  await Promise.all(facts.map((a) => limit(async () => {
    const outcome = await applyOne(a, ctx.deps, ctx.window(a)).catch(() => undefined);
    if (outcome === 'done') ctx.result.applied.push(a);
  })));
}

/** Whether an action withheld follows a moot one: it is moot too (an Event saying a CRR was made, when its namespace refused the CRR). */
function followsMoot(action: Action, moot: ReadonlySet<string>): boolean {
  return [action.requires ?? []].flat().some((id) => moot.has(id));
}

/** Whether every action `action` requires took effect earlier in the run. */
function requirementsMet(action: Action, tookEffect: ReadonlySet<string>): boolean {
  const required = action.requires ?? [];
  return typeof required === 'string' ? tookEffect.has(required) : required.every((id) => tookEffect.has(id));
}

/** The most writes of one group in flight at once. */
export const GROUP_IN_FLIGHT = 10;

/** The plan cut into runs of neighbours that share a `group`; an action without one runs alone. */
function groups(actions: readonly Action[]): Action[][] {
  const out: Action[][] = [];
  for (const action of actions) {
    const last = out.at(-1);
    if (last && action.group !== undefined && last[0]?.group === action.group) last.push(action);
    else out.push([action]);
  }
  return out;
}

type Outcome = 'done' | 'skipped' | 'taken' | 'replan' | 'expired' | 'dropped' | 'moot' | KubeError;

/** Thrown (inside the retry loop) when an action's withinSeconds has passed before an attempt. */
class TooLate extends Error {}

/**
 * When an action may be sent: not once `late` (its withinSeconds has passed since the window
 * began), and each attempt answered or abandoned within `leftMs` (undefined: no deadline).
 */
interface SendWindow {
  late(): boolean;
  leftMs(): number | undefined;
}

async function applyOne(action: Action, deps: ApplyDeps, window: SendWindow): Promise<Outcome> {
  const log = deps.logger;
  // An attempt whose answer was lost (a reset, a 5xx from a proxy) may have been applied.
  let unsure = false;
  // The server's asked-for waits this action may still spend (MAX_ASKED_WAIT_MS in all).
  let askBudget = MAX_ASKED_WAIT_MS;
  try {
    await pRetry(() => {
      // The attempt's deadline: sent to the server with it, so that a write it holds (queued
      // under API Priority and Fairness, a slow etcd) is not made after the claim it was sent
      // under may have been dropped (review87 F1; ejob/README.md step 4). Its timeout is a
      // transient failure like any other: the next attempt is checked by `late` again.
      const leftMs = window.leftMs();
      if (window.late() || (leftMs !== undefined && leftMs < 1)) throw new AbortError(new TooLate());
      return performOnce(deps.kube, action, { budgetMs: askBudget, ...(leftMs !== undefined ? { timeoutMs: leftMs } : {}) });
    }, {
      retries: deps.retries ?? 4,
      minTimeout: deps.minTimeoutMs ?? 100,
      factor: 2,
      randomize: true,
      onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
        if (isKubeError(error) && (error.status === 0 || error.status >= 500)) unsure = true;
        log.warn({ err: error.message, attemptNumber, action: describe(action) }, 'transient API failure, retrying');
        // The wait the server asked for (API Priority and Fairness' 429 says 1 s): the next
        // attempt comes after it, not within the backoff's 100 ms (review); none after the
        // last attempt, and at most MAX_ASKED_WAIT_MS over all of them (a handling deadline
        // of 10 s must still hold: review).
        const asked = retriesLeft > 0 ? Math.min(askedWaitMs(error), askBudget) : 0;
        askBudget -= asked;
        if (asked > 0) await new Promise((resolve) => setTimeout(resolve, asked));
      },
    });
    log.info({ action: describe(action), why: action.reason }, 'applied');
    return 'done';
  } catch (err) {
    if (err instanceof TooLate) return 'expired';
    // The retry of a write that landed meets its own write: a 409 (the resourceVersion moved,
    // or the object now exists). If the object holds what was written, it was ours: done
    // (review: a verdict's Event was lost that way, and a claim's injections waited 5 s).
    if (unsure && isKubeError(err, 'conflict', 'already-exists') && (await holdsWrite(deps.kube, action))) {
      log.info({ action: describe(action) }, 'an earlier attempt took effect though its answer was lost');
      return 'done';
    }
    return classifyFailure(action, err, log, deps.subjectNamespace);
  }
}

/** Whether the object now holds every field `action` wrote (a create, an update, a merge patch); never for a JSON or strategic patch. */
async function holdsWrite(kube: Kube, action: Action): Promise<boolean> {
  const body = action.body;
  if (action.verb === 'delete' || (action.verb === 'patch' && action.patchType !== 'merge') || !isRecord(body)) return false;
  const meta = isRecord(body['metadata']) ? body['metadata'] : {};
  const name = action.name || (typeof meta['name'] === 'string' ? meta['name'] : '');
  const current = await kube.get({ apiVersion: action.apiVersion, kind: action.kind, namespace: action.namespace, name }).catch(() => null);
  // The resourceVersion was the write's precondition, not part of what it wrote.
  const { resourceVersion: _precondition, ...wroteMeta } = meta;
  return current !== null && holds({ ...body, metadata: wroteMeta }, current);
}

/** `have` holds `want`: every field of `want` is there, equal (null: absent, as a merge patch deletes; timestamps by instant). */
function holds(want: unknown, have: unknown): boolean {
  if (want === null) return have === undefined || have === null;
  if (isRecord(want)) return isRecord(have) && Object.entries(want).every(([k, v]) => holds(v, have[k]));
  if (Array.isArray(want)) return Array.isArray(have) && want.length === have.length && want.every((v, i) => holds(v, have[i]));
  if (typeof want === 'string' && typeof have === 'string' && want !== have && TIMESTAMP.test(want) && TIMESTAMP.test(have)) return Date.parse(want) === Date.parse(have);
  return want === have;
}

/** RFC 3339 as the API server writes Time and MicroTime (it may add or drop fraction digits). */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;


/**
 * The longest a write waits in place for what the server asked (its Retry-After), over all
 * its attempts; a server asking for more than is left gets the whole event handed back,
 * requeued with its delay (runtime/lambda/sqs-consumer.ts), rather than an instance held
 * waiting.
 */
export const MAX_ASKED_WAIT_MS = 2000;

/** The wait a transient failure asked for (its Retry-After), in ms; 0 if none. */
function askedWaitMs(err: unknown): number {
  return isKubeError(err) && err.retryAfterSeconds !== undefined && err.retryAfterSeconds > 0 ? err.retryAfterSeconds * 1000 : 0;
}

/**
 * One attempt, answered within `timeoutMs` if given; anything not transient, or asking to
 * wait longer than `budgetMs` is left, aborts the retry loop at once.
 */
async function performOnce(kube: Kube, action: Action, { budgetMs, timeoutMs }: { budgetMs: number; timeoutMs?: number }): Promise<unknown> {
  try {
    return await (timeoutMs === undefined ? kube.perform(action) : kube.perform(action, { timeoutMs }));
  } catch (err) {
    if (isKubeError(err, 'transient') && askedWaitMs(err) <= budgetMs) throw err;
    throw new AbortError(err as Error);
  }
}

function classifyFailure(action: Action, err: unknown, log: Logger, subjectNamespace: string | undefined): Outcome {
  if (!isKubeError(err)) throw err; // bugs: let the engine decide
  // Unauthenticated even with a fresh credential (the client resends once): not this write's
  // refusal but the cluster's, which the queue's consumer handles for all its records (an
  // EKS authenticator answers 401 while STS fails, too).
  if (err.status === 401) throw err;
  // The subject's namespace is being deleted (or is gone): NamespaceLifecycle refuses every
  // create in it, and the pod or job this was for goes with it (review96 F1: each such
  // refusal paged through RefusedWritesAlarm, and its Warning, a create there too, was
  // refused as well). Nothing to alarm on, tell or back off from; the key's next look is
  // the plan's own, and the subject's deletion brings it back sooner.
  if (goesWithSubject(action, err, subjectNamespace)) {
    log.info({ action: describe(action), status: err.status, err: err.message }, 'not made: its namespace is being deleted, and what it was for goes with it');
    return 'moot';
  }
  if (otherUid(action, err)) {
    log.info({ action: describe(action), err: err.message }, 'the object was replaced under its name since it was read: re-planning');
    return 'replan';
  }
  if (action.alreadyExists === 'look-again' && nameTaken(action, err)) return 'taken';
  if (action.alreadyExists === 'done' && (err.errorClass === 'already-exists' || nameTaken(action, err))) {
    log.info({ action: describe(action) }, 'already done');
    return 'done';
  }
  if (action.alreadyExists === 'replan' && err.errorClass === 'already-exists') {
    log.info({ action: describe(action) }, 'created concurrently: re-planning');
    return 'replan';
  }
  if (failedTest(action, err)) {
    log.info({ action: describe(action), err: err.message }, 'a test op of the JSON patch failed (the object changed since it was read): re-planning');
    return 'replan';
  }
  switch (err.errorClass) {
    case 'conflict':
      log.info({ action: describe(action), err: err.message }, 'conflict: re-planning');
      return 'replan';
    case 'not-found':
      // Deleting something already gone is success; patching it means our view is stale;
      // creating into a missing namespace or an uninstalled CRD will not heal by re-planning.
      if (action.verb === 'delete') return 'skipped';
      if (action.verb === 'create') {
        log.warn({ action: describe(action), err: err.message, alarm: ALARM_REFUSED }, 'refused: the resource type or namespace does not exist');
        return err;
      }
      return 'replan';
    case 'transient':
      if (action.bestEffort) return 'dropped';
      throw err; // retries exhausted: the message goes back to the queue
    default:
      log.warn({ action: describe(action), status: err.status, err: err.message, alarm: ALARM_REFUSED }, 'refused by the API server');
      return err;
  }
}

/** A write refused because its namespace, the plan's subject's, is being deleted or is gone (kube/errors.ts namespaceEnding). */
function goesWithSubject(action: Action, err: KubeError, subjectNamespace: string | undefined): boolean {
  return subjectNamespace !== undefined && action.namespace === subjectNamespace && namespaceEnding(err, subjectNamespace);
}

/**
 * A JSON patch refused because one of its `test` ops failed. kube-apiserver answers any JSON
 * patch that does not apply with its generic 422 — "the server rejected our request due to an
 * error in our request", reason Invalid, no causes (handlers/patch.go applyJSPatch) — and
 * drops json-patch's "testing value <path> failed" (older servers and proxies may keep it).
 * A 422 of validation names its causes. The test op is how a planner fences a patch on what
 * it read (finalizers, uid), and a remove of what it read that is gone fails the same way, so
 * this means "changed since": observe again. (Review: the fake used to answer json-patch's
 * words, and only those were recognised, so on a real cluster a lost race was a refusal.)
 */
export function failedTest(action: Action, err: KubeError): boolean {
  if (action.patchType !== 'json' || err.errorClass !== 'invalid' || !Array.isArray(action.body)) return false;
  if (!(action.body as { op?: unknown }[]).some((op) => op.op === 'test')) return false;
  return /testing value .* failed/.test(err.message) || (err.message === JSON_PATCH_NOT_APPLIED && err.causes.length === 0);
}

/** kube-apiserver's message for a JSON patch that does not apply (apimachinery NewGenericServerResponse, 422). */
const JSON_PATCH_NOT_APPLIED = 'the server rejected our request due to an error in our request';

/**
 * A patch that names the object's uid (`metadata.uid` in its body) refused because the
 * object under that name has another: kube-apiserver validates the patched object's uid as
 * immutable (422, as the garbage collector's and controller-ref manager's patches expect).
 * The object read was deleted and another created under its name: observe again. Checked
 * before "already there": the new object may hold the same containers.
 */
export function otherUid(action: Action, err: KubeError): boolean {
  if (action.verb !== 'patch' || err.errorClass !== 'invalid') return false;
  const meta = (action.body as { metadata?: { uid?: unknown } } | undefined)?.metadata;
  return typeof meta?.uid === 'string' && err.causes.some((c) => c.field === 'metadata.uid');
}

/**
 * kube-apiserver's answer to an injection whose container name is already in the pod with
 * other content: 422 with a FieldValueForbidden cause "existing ephemeral containers \"x\"
 * may not be changed" (ValidatePodEphemeralContainersUpdate). The same containers sent again
 * are a no-op 200 (the strategic merge changes nothing), so for an EphemeralJob this is
 * mostly another job's container of that name, landed since the pods were read
 * (`alreadyExists: 'look-again'`); the sidecar terminator's signal container is ours
 * whatever its content (`'done'`).
 */
export function nameTaken(action: Action, err: KubeError): boolean {
  if (err.errorClass !== 'invalid' || action.subresource !== 'ephemeralcontainers') return false;
  const changed = /existing ephemeral containers .* may not be changed/;
  return err.causes.some((c) => c.reason === 'FieldValueForbidden' && changed.test(c.message ?? '')) || changed.test(err.message);
}

/** "patch v1 Pod ns/name/ephemeralcontainers" for logs. */
export function describe(a: Action): string {
  return `${a.verb} ${a.apiVersion} ${a.kind} ${a.namespace ? `${a.namespace}/` : ''}${a.name}${a.subresource ? `/${a.subresource}` : ''}`;
}
