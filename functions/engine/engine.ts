import { Envelope, envelopeKey } from '../api/envelope.ts';
import { formatZodIssues } from '../api/field-path.ts';
import type { Kube } from '../kube/kube.ts';
import { applyPlan, describe } from './apply.ts';
import type { Controller } from './controller.ts';
import { eventAction } from './events.ts';
import { acquire, LockLostError, type LockConfig } from './lock.ts';
import type { Logger } from './logger.ts';
import { minRequeue, type Action } from './plan.ts';

/** Everything a handler needs, passed in (nothing is read from the environment here). */
export interface EngineDeps {
  kube: Kube;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each controller has its own observed type
  controllers: readonly Controller<any>[];
  lock: LockConfig;
  clock: () => Date;
  logger: Logger;
  /** Re-plans allowed after 409 conflicts within one invocation (default 3). */
  maxReplans?: number;
}

export const KEY_OUTCOMES = ['done', 'gone', 'busy', 'conflict', 'refused'] as const;
export type KeyOutcome = (typeof KEY_OUTCOMES)[number];

/** The result for one key. */
export interface KeyResult {
  controller: string;
  key: string;
  outcome: KeyOutcome;
  actions: Action[];
  requeueAfterSeconds?: number;
  notes?: string[];
  errors?: string[];
}

/** The result of handling one envelope. */
export interface HandleResult {
  keys: KeyResult[];
  skipped: { controller: string; reason: string }[];
  /** The soonest any key wants another look (busy locks, TTLs, deadlines), or null. */
  requeueAfterSeconds: number | null;
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
 * One event in, the world nudged toward desired state: route → lock → observe → plan →
 * apply → requeue, for every controller the event concerns. Transient API failures are
 * thrown (the queue redelivers); everything else is a result.
 */
export async function handle(envelope: Envelope, deps: EngineDeps): Promise<HandleResult> {
  const log = deps.logger.child({ event: envelope.id, subject: envelopeKey(envelope) });
  const result: HandleResult = { keys: [], skipped: [], requeueAfterSeconds: null };
  for (const controller of deps.controllers) {
    const route = await controller.route(envelope, deps.kube);
    if (route.keys.length === 0) {
      result.skipped.push({ controller: controller.name, reason: route.skipped ?? 'not routed' });
      log.debug({ controller: controller.name, reason: route.skipped }, 'skipped');
    }
    for (const key of route.keys) {
      const r = await reconcileKey(controller, key, { ...deps, logger: log.child({ controller: controller.name, key }) }, envelope);
      result.keys.push(r);
      result.requeueAfterSeconds = minRequeue(result.requeueAfterSeconds ?? undefined, r.requeueAfterSeconds) ?? null;
    }
  }
  return result;
}

/** Reconcile one key under its Lease. A busy lock is "look again soon", not an error. */
export async function reconcileKey(controller: Controller<unknown>, key: string, deps: EngineDeps, trigger?: Envelope): Promise<KeyResult> {
  const base = { controller: controller.name, key };
  // Writes that cannot double up need no Lease: observe, plan, apply.
  if (controller.fencedWrites) return observePlanApply(controller, { key, trigger }, deps, undefined);
  let partial = trigger;
  if (trigger && controller.cheapFirst?.(trigger)) {
    // Find out from the cheap, partial read before taking the Lease that nothing changes, so
    // such events cost reads only. Anything to write is planned again under the lock (a
    // plan from an unlocked read must never be applied: parallelism would race).
    const peek = await controller.observe(key, deps.kube, trigger);
    if (peek === null) return { ...base, outcome: 'gone', actions: [] };
    const preview = controller.plan(peek, deps.clock());
    if (preview.actions.length === 0 && preview.reobserve === undefined) {
      for (const note of preview.notes ?? []) deps.logger.debug({ note }, 'plan note');
      return { ...base, outcome: 'done', actions: [], notes: preview.notes, requeueAfterSeconds: preview.requeueAfterSeconds };
    }
    // The partial view was not enough: under the lock, read everything straight away.
    if (preview.reobserve !== undefined) partial = undefined;
  }
  const got = await acquire(deps.kube, deps.lock, controller.name, key);
  if ('busy' in got) {
    deps.logger.info({ holder: got.holder, retryAfterSeconds: got.retryAfterSeconds }, 'lock busy: retry later');
    return { ...base, outcome: 'busy', actions: [], requeueAfterSeconds: got.retryAfterSeconds };
  }
  try {
    return await observePlanApply(controller, { key, trigger: partial }, deps, got.held);
  } catch (err) {
    if (err instanceof LockLostError) {
      deps.logger.warn({ err: err.message }, 'lost the lock mid-reconcile: stopping, will retry');
      return { ...base, outcome: 'busy', actions: [], requeueAfterSeconds: 1 };
    }
    throw err;
  } finally {
    await got.held.release().catch((err: unknown) => deps.logger.warn({ err: String(err) }, 'lease release failed (it will expire)'));
  }
}

async function observePlanApply(controller: Controller<unknown>, at: { key: string; trigger: Envelope | undefined }, deps: EngineDeps, lock: Parameters<typeof applyPlan>[1]['lock']): Promise<KeyResult> {
  const { key } = at;
  let trigger = at.trigger;
  const base = { controller: controller.name, key };
  const applied: Action[] = [];
  const maxReplans = deps.maxReplans ?? 3;
  for (let attempt = 0; attempt <= maxReplans; attempt++) {
    const observed = await controller.observe(key, deps.kube, trigger);
    if (observed === null) return { ...base, outcome: 'gone', actions: applied };
    const plan = controller.plan(observed, deps.clock());
    for (const note of plan.notes ?? []) deps.logger.debug({ note }, 'plan note');
    if (plan.reobserve !== undefined) {
      if (trigger === undefined) throw new Error(`${controller.name} asked to reobserve after a full observation: ${plan.reobserve}`);
      // A partial observation was not enough: read everything (does not count as a re-plan).
      deps.logger.debug({ why: plan.reobserve }, 'full observation needed');
      trigger = undefined;
      attempt--;
      continue;
    }
    // After a conflict, re-read everything: the partial view is what went stale.
    trigger = undefined;
    const r = await applyPlan(plan.actions, { kube: deps.kube, lock, logger: deps.logger });
    applied.push(...r.applied);
    if (r.replan) continue;
    if (r.refused.length > 0) {
      await reportRefusals(r.refused, deps);
      return { ...base, outcome: 'refused', actions: applied, notes: plan.notes, errors: r.refused.map((x) => `${describe(x.action)}: ${x.error.message}`), requeueAfterSeconds: plan.requeueAfterSeconds };
    }
    return { ...base, outcome: 'done', actions: applied, notes: plan.notes, requeueAfterSeconds: plan.requeueAfterSeconds };
  }
  deps.logger.warn({ maxReplans }, 'still conflicting after re-planning: requeue');
  return { ...base, outcome: 'conflict', actions: applied, requeueAfterSeconds: 1 };
}

/** A refused write is recorded as a Warning Event on the object, once per distinct refusal. */
async function reportRefusals(refused: { action: Action; error: Error }[], deps: EngineDeps): Promise<void> {
  for (const { action, error } of refused) {
    if (action.kind === 'Event' || !action.namespace) continue;
    const ev = eventAction(
      { apiVersion: action.apiVersion, kind: action.kind, namespace: action.namespace, name: action.name },
      { type: 'Warning', reason: 'ActionRefused', message: `${describe(action)} refused: ${error.message}`.slice(0, 1000), discriminator: `${describe(action)}/${error.message}` },
      deps.clock(),
    );
    await applyPlan([ev], { kube: deps.kube, logger: deps.logger }).catch(() => undefined);
  }
}
