/**
 * What a planner returns: actions to perform and an optional requeue. Planners are pure
 * (observed state and a clock in, Plan out); the apply layer performs the actions.
 */
export const VERBS = ['create', 'patch', 'update', 'delete'] as const;
export type Verb = (typeof VERBS)[number];

/** merge = RFC 7386, strategic = Kubernetes strategic merge, json = RFC 6902. */
export const PATCH_TYPES = ['merge', 'strategic', 'json'] as const;
export type PatchType = (typeof PATCH_TYPES)[number];

export const SUBRESOURCES = ['status', 'ephemeralcontainers'] as const;
export type Subresource = (typeof SUBRESOURCES)[number];

/** One write against the API server. */
export interface Action {
  verb: Verb;
  apiVersion: string;
  kind: string;
  subresource?: Subresource;
  namespace: string;
  name: string;
  /** create/update: the object; patch: the patch document; delete: DeleteOptions. */
  body?: unknown;
  /** patch only. */
  patchType?: PatchType;
  /**
   * Sent as `?fieldValidation=Strict`: a field the API server does not know refuses the write
   * (a 422 for a patch) instead of being dropped. The injection asks for it, so a misspelt
   * template field, or one newer than the cluster, is told rather than run without.
   */
  strictFields?: true;
  /** Why the planner wants this (logged, and shown by `ephemera invoke`). */
  reason: string;
  /**
   * How to read a 409 AlreadyExists (create) or kube-apiserver's "may not be changed"
   * (ephemeral container injection): "done" means the object is already there, which is
   * success; "replan" means someone else got there first (a Lease created concurrently):
   * observe and plan again; "look-again" (an injection whose names another's containers may
   * hold: apply.ts nameTaken) means not known to be ours: nothing that `requires` it is
   * sent, it is no refusal, and the key is looked at again in a second.
   */
  alreadyExists?: 'done' | 'error' | 'replan' | 'look-again';
  /**
   * Send this action only within this many seconds (local elapsed clock, kube/elapsed.ts) of the start of
   * the reconcile attempt that planned it (before its observation); later it is skipped and
   * the next reconcile decides again. Injections after a Lease claim carry the claim's
   * lifetime, so a slow or paused instance never injects after its claim may have been
   * dropped by another one (see ejob/README.md).
   */
  withinSeconds?: number;
  /**
   * Actions next to each other in a plan with the same `group` are sent at once (at most
   * 10 in flight, apply.ts GROUP_IN_FLIGHT): they do not depend on one another (injections
   * into different pods, Events, a status write beside them). The run waits for the whole group before the next action, so the order
   * between groups stays the plan's (a Lease claim before the injections it claims). One of
   * them asking for a re-plan ends the run once the group is done.
   */
  group?: string;
  /** Names this action, for `requires`. */
  id?: string;
  /**
   * How to name, in the refusal's Warnings, the fields the API server's message names: each
   * key (a path in what it validated, `spec.ephemeralContainers[2]`) told as its value (the
   * field the user wrote, `spec.template.ephemeralContainers[0](probe)`). kube-apiserver
   * validates the pod after the patch, whose list holds the pod's own ephemeral containers
   * first: its index is not the template's (review91 F5).
   */
  refusalPaths?: Readonly<Record<string, string>>;
  /**
   * The uid of the object written, when the body does not carry it (a status patch): an
   * Event about this action (a refusal) names it, as `kubectl describe` finds Events by uid.
   */
  uid?: string;
  /**
   * Send this action only if the action with this `id` (or every one of these), earlier in
   * the plan and in another group, took effect in this run (or was found already done): an
   * Event that says a pod was injected follows its injection; a status that counts pods as
   * injected follows their injections. Otherwise it is withheld, and the key is looked at
   * again soon (engine.ts).
   */
  requires?: string | readonly string[];
  /**
   * Send this action only if the action with this `id` (or one of these) did not take effect
   * (refused, withheld, too late): the other of two versions of a write, e.g. a status that
   * does not count the pods a refused claim or injection was for. Skipped silently otherwise.
   */
  unless?: string | readonly string[];
  /**
   * With `unless`: if this version is sent although one of these took effect, what it says is
   * already behind (a status counting none of a claim's pods, some of them injected): the
   * key is looked at again in a second to write what holds.
   */
  behindIf?: readonly string[];
  /**
   * A transient failure (429, 5xx, no answer) that outlasts the retries drops this action and
   * the run goes on, instead of failing the reconcile: for a write that must not hold up what
   * follows it while its kind of object is unavailable (the failure Warnings sent before a
   * verdict's status write: an outage of Events must not hold back the verdict).
   */
  bestEffort?: true;
}

/** A planner's output. */
export interface Plan {
  actions: Action[];
  /** Look again after this long (TTL, deadline, polling for kubelet progress). */
  requeueAfterSeconds?: number;
  /**
   * Look again after this long when an action was refused for good, or withheld because one
   * it follows did not take effect (engine.ts; default 10 s; two minutes once the same
   * refusal was met before): an injection refused leaves its claim to be made again after a
   * while.
   */
  retryAfterSeconds?: number;
  /**
   * Of `requeueAfterSeconds`, the looks due by time alone, whatever the writes do (a
   * deadline, a TTL): kept after a refusal, which otherwise waits its back-off.
   */
  dueAfterSeconds?: number;
  /**
   * The object the plan is about (the job, the pod): a refused write to another object (the
   * job's Lease, a CRR) is reported with a Warning Event on it, where `kubectl describe`
   * looks, besides nothing on an object that may not exist.
   */
  subject?: { apiVersion: string; kind: string; namespace: string; name: string; uid?: string };
  /** Human-readable notes on what was decided and why (logged at debug, never acted on). */
  notes?: string[];
  /**
   * What is wrong and shows nowhere else — no status, no Event: an object skipped because it
   * cannot be read (logged at warn with the key, never acted on; operability review).
   */
  warnings?: string[];
}

/** The smaller of two optional requeue delays. */
export function minRequeue(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}
