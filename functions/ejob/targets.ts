import type { EphemeralJobSpec } from '../api/ephemeraljob.ts';
import { isDeepFrozen } from '../api/frozen.ts';
import { toDate } from '../api/meta.ts';
import type { Pod } from '../api/pod.ts';
import { selectorMatches } from '../api/selector.ts';
import { hasForeignNamesake, isActive, podState, unfitReason, type PodState } from './pod-state.ts';

/** A target pod with its state for this job. */
export interface Target {
  pod: Pod;
  state: PodState;
  /** Failed without an injection: why the template cannot go into the pod (pod-state.ts unfitReason). */
  why?: string;
}

/** Why a matched pod is not a target (for logs and `ephemera invoke`). */
export interface Skipped {
  name: string;
  reason: string;
  /** A pod holding a same-named ephemeral container of another job (an earlier job of the same name, say). */
  namesake?: true;
}

/** Oldest first: creationTimestamp, then name (stable across reconciles). */
export function compareAge(a: Pod, b: Pod): number {
  return byAge(ageKey(a), ageKey(b));
}

interface AgeKey {
  at: number;
  name: string;
}

function ageKey(pod: Pod): AgeKey {
  const kept = agesKept.get(pod);
  if (kept !== undefined) return kept;
  const key = { at: toDate(pod.metadata.creationTimestamp)?.getTime() ?? 0, name: pod.metadata.name };
  if (isDeepFrozen(pod)) agesKept.set(pod, key);
  return key;
}

/** Age keys of pods that can never change (api/frozen.ts): a warm reconcile parsed every timestamp of a large job again. */
const agesKept = new WeakMap<Pod, AgeKey>();

function byAge(a: AgeKey, b: AgeKey): number {
  return a.at - b.at || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/** The pods oldest first (compareAge), each timestamp parsed once: every reconcile sorts all of a job's pods. */
function oldestFirst(pods: readonly Pod[]): Pod[] {
  return pods.map((pod) => ({ pod, key: ageKey(pod) })).sort((a, b) => byAge(a.key, b.key)).map((x) => x.pod);
}

/**
 * How many pods `replicas` still lets the job claim, from its Lease (claims.ts
 * replicaBudget), and the pods claimed but not shown injected yet.
 */
export interface ReplicaBudget {
  left: number;
  claimed: ReadonlySet<string>;
}

/** Of pods not injected (oldest first; unfit ones last), those claimed already, and as many others as replicas are left. */
function withinBudget(fresh: readonly Target[], budget: ReplicaBudget): Target[] {
  const out: Target[] = [];
  let left = budget.left;
  for (const t of fresh) {
    if (budget.claimed.has(t.pod.metadata.name)) out.push(t);
    else if (left > 0) {
      out.push(t);
      left--;
    }
  }
  return out;
}

/** What selectTargets works out of the pods before `replicas` and the budget. */
interface Sorted {
  /** Pods injected by this job, oldest first. */
  readonly injected: readonly Target[];
  /** Pods not injected: those the template can go into, oldest first, then the unfit ones (failed). */
  readonly untried: readonly Target[];
  readonly skipped: readonly Skipped[];
}

/**
 * Sorted targets kept beside a pod list that can never change: frozen, of pods frozen all
 * the way down (controller.ts listPods; api/frozen.ts). One reconcile asks for the targets
 * of the same list two or three times (the observation's leaseNeeded, the plan, the failures
 * it may tell), and each time sorted and sifted all of a 1,000-pod job's pods again (~1.2 ms
 * a time in a CPU profile of the whole job). Keyed by what sorting reads of the job besides
 * the pods: its uid, selector and template. The same answers either way:
 * test/ejob/pod-facts.test.ts.
 */
const sortedKept = new WeakMap<readonly Pod[], { readonly key: string; readonly sorted: Sorted }>();

function sortedTargets(spec: EphemeralJobSpec, jobUid: string, pods: readonly Pod[]): Sorted {
  const kept = Object.isFrozen(pods) && pods.every(isDeepFrozen);
  const key = kept ? `${jobUid}\n${JSON.stringify(spec.selector)}\n${JSON.stringify(spec.template.ephemeralContainers)}` : '';
  const found = kept ? sortedKept.get(pods) : undefined;
  if (found?.key === key) return found.sorted;
  const sorted = sortPods(spec, jobUid, pods);
  if (kept) sortedKept.set(pods, { key, sorted });
  return sorted;
}

function sortPods(spec: EphemeralJobSpec, jobUid: string, pods: readonly Pod[]): Sorted {
  const names = spec.template.ephemeralContainers.map((c) => c.name);
  const skipped: Skipped[] = [];
  const injected: Target[] = [];
  const fresh: Target[] = [];
  const unfit: Target[] = [];
  for (const pod of oldestFirst(pods)) {
    if (!selectorMatches(spec.selector, pod.metadata.labels)) continue;
    if (!isActive(pod)) {
      skipped.push(Object.freeze({ name: pod.metadata.name, reason: 'pod is not active (finished or deleting)' }));
      continue;
    }
    const state = podState(pod, jobUid);
    if (state !== 'pending') injected.push(Object.freeze({ pod, state }));
    else if (hasForeignNamesake(pod, jobUid, names)) {
      skipped.push(Object.freeze({ name: pod.metadata.name, reason: 'pod already has an ephemeral container of the same name not created by this job', namesake: true as const }));
    } else {
      const why = unfitReason(pod, spec.template.ephemeralContainers);
      if (why === undefined) fresh.push(Object.freeze({ pod, state }));
      else unfit.push(Object.freeze({ pod, state: 'failed' as const, why }));
    }
  }
  // Unfit pods after the fresh ones, and through the budget like them: each is one of `replicas`.
  return Object.freeze({ injected: Object.freeze(injected), untried: Object.freeze([...fresh, ...unfit]), skipped: Object.freeze(skipped) });
}

/**
 * The job's target pods: active pods matching the selector, oldest first, minus those
 * holding a same-name ephemeral container the job did not create; the first `replicas`.
 * Pods already injected by this job stay targets (before any new ones), so a later,
 * older-looking pod can never push an injected pod out of the count. A pod the template
 * cannot go into (unfitReason) is a failed target, after the pods that can take it: with
 * `replicas`, pods that can run the containers are chosen first. With a `budget`
 * (the Lease was read), a pod neither injected nor claimed is a target only while replicas
 * are left to claim it: a job whose replicas went to pods that are gone now (claimed, then
 * deleted) has no target it can never inject, so it can still finish.
 */
export function selectTargets(spec: EphemeralJobSpec, jobUid: string, pods: readonly Pod[], budget?: ReplicaBudget): { targets: Target[]; skipped: Skipped[] } {
  const { injected, untried, skipped } = sortedTargets(spec, jobUid, pods);
  const limit = spec.replicas ?? Number.POSITIVE_INFINITY;
  const targets = [...injected, ...(budget ? withinBudget(untried, budget) : untried)].slice(0, limit);
  return { targets, skipped: [...skipped] };
}

/**
 * The targets a job's status counts until its verdict (planner.ts statusView), once its Lease
 * was read: selectTargets' without the replicas left, but with the pods claimed and not shown
 * injected yet (`claimed`) right after the injected ones — as the pods will show them once
 * their injections land, so the count does not move then. The first `replicas`. Without pods
 * claimed, the targets of the pods alone, as every look can count them.
 */
export function countedTargets(spec: EphemeralJobSpec, jobUid: string, pods: readonly Pod[], claimed: ReadonlySet<string>): Target[] {
  const { injected, untried } = sortedTargets(spec, jobUid, pods);
  const first = untried.filter((t) => claimed.has(t.pod.metadata.name));
  const rest = first.length === 0 ? untried : untried.filter((t) => !claimed.has(t.pod.metadata.name));
  return [...injected, ...first, ...rest].slice(0, spec.replicas ?? Number.POSITIVE_INFINITY);
}
