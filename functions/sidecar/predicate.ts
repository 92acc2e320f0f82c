import { createHash } from 'node:crypto';
import { Pod, type Container, type ContainerStatus } from '../api/pod.ts';
import { SIDECAR_STRATEGIES } from './config.ts';
import { containerRoles, IGNORE_EXIT_CODE_ENV, TERMINATE_SIDECAR_ENV, TERMINATE_WITH_IMAGE_ENV, type ContainerRoles, type SidecarInfo } from './env.ts';
import { STRATEGY_ANNOTATION } from './strategy.ts';

/** The restart policies under which a pod can finish. */
export type JobRestartPolicy = 'Never' | 'OnFailure';

/** A due pod, with what the planner needs to know about it. */
export interface Due {
  due: true;
  restartPolicy: JobRestartPolicy;
  roles: ContainerRoles;
  /** Sidecars whose current state is not terminated, in spec order. */
  unterminated: SidecarInfo[];
  /** Every main container terminated with exit code 0. */
  mainsSucceeded: boolean;
}

/** Not due, and why (pepr-style: a reason a person can read in a log). */
export interface NotDue {
  due: false;
  reason: string;
}

export type DueResult = Due | NotDue;

const notDue = (reason: string): NotDue => ({ due: false, reason });

/**
 * Is this pod's sidecar termination due? It is when the pod is not deleting, not Pending,
 * its restartPolicy is Never (every main container terminated) or OnFailure (every main
 * container terminated with 0: a non-zero one is about to be restarted), and some sidecar
 * has not terminated. A container with no reported state blocks the decision: the kubelet
 * will report it, and that report is another event. Pure and cheap: the relay's filter and
 * the controller's routing use it on a snapshot, the planner on the live pod.
 */
export function podDue(pod: Pod): DueResult {
  if (pod.metadata.deletionTimestamp !== undefined) return notDue('pod is being deleted');
  const phase = pod.status?.phase;
  if (phase === undefined) return notDue('pod has no status phase yet');
  if (phase === 'Pending') return notDue('pod is Pending');
  const policy = pod.spec.restartPolicy ?? 'Always';
  if (policy !== 'Never' && policy !== 'OnFailure') return notDue(`restartPolicy is ${policy}: its containers restart, there is no job to finish`);
  if (restartingInPlace(pod)) return notDue(`the kubelet is restarting every container of the pod in place (condition ${ALL_CONTAINERS_RESTARTING}=True, a ${RESTART_ALL_CONTAINERS} rule)`);
  const roles = containerRoles(pod);
  if (roles.sidecars.length === 0) {
    return notDue(roles.nativeSidecars.length > 0 ? 'no sidecar containers (only native sidecars, which Kubernetes stops itself)' : 'no sidecar containers');
  }
  const statuses = statusByName(pod.status?.containerStatuses ?? []);
  const missing = [...roles.mains, ...roles.sidecars.map((s) => s.name)].filter((n) => statuses.get(n)?.state === undefined);
  if (missing.length > 0) return notDue(`no state reported yet for container ${missing.join(', ')}`);
  const unterminated = roles.sidecars.filter((s) => statuses.get(s.name)?.state?.terminated === undefined);
  if (unterminated.length === 0) return notDue('all sidecars have terminated');
  const specs = new Map(pod.spec.containers.map((c) => [c.name, c] as const));
  const restarting = sidecarRestartingAll(roles, statuses, specs);
  if (restarting) return notDue(restarting);
  return mainsVerdict({ policy, roles, unterminated, statuses, specs });
}

/** A sidecar's own rule too: its exit restarts the main containers with it (review71). */
function sidecarRestartingAll(roles: ContainerRoles, statuses: Map<string, ContainerStatus>, specs: Map<string, Container>): string | undefined {
  for (const s of roles.sidecars) {
    const t = statuses.get(s.name)?.state?.terminated;
    if (t && matchingRule(specs.get(s.name), t.exitCode)?.action === RESTART_ALL_CONTAINERS) return `sidecar ${s.name} exited ${t.exitCode} under ${RESTARTS_ALL}`;
  }
  return undefined;
}

/** The container restart rule action (Kubernetes 1.35 alpha, 1.36 beta) that restarts the whole pod in place (KEP-5532). */
export const RESTART_ALL_CONTAINERS = 'RestartAllContainers';
/** The pod condition the kubelet sets while it carries such a restart out. */
export const ALL_CONTAINERS_RESTARTING = 'AllContainersRestarting';
const RESTARTS_ALL = `a ${RESTART_ALL_CONTAINERS} rule: the kubelet restarts every container of the pod in place`;

/**
 * The kubelet is restarting the whole pod in place (review71): its exits are not final, and a
 * sidecar stopped now would be started again with the rest while its CRR or signal container,
 * fixed names both, stays behind and blocks the stop at the real finish.
 */
function restartingInPlace(pod: Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === ALL_CONTAINERS_RESTARTING && c.status === 'True');
}

function mainsVerdict(p: { policy: JobRestartPolicy; roles: ContainerRoles; unterminated: SidecarInfo[]; statuses: Map<string, ContainerStatus>; specs: Map<string, Container> }): DueResult {
  let mainsSucceeded = true;
  for (const name of p.roles.mains) {
    const t = p.statuses.get(name)?.state?.terminated;
    if (t === undefined) return notDue(`main container ${name} has not terminated`);
    const restarts = restartedAfter(p.specs.get(name), p.policy, t.exitCode);
    if (restarts) return notDue(`main container ${name} exited ${t.exitCode} under ${restarts}: the kubelet restarts it`);
    if (t.exitCode !== 0) mainsSucceeded = false;
  }
  return { due: true, restartPolicy: p.policy, roles: p.roles, unterminated: p.unterminated, mainsSucceeded };
}

/**
 * Whether the kubelet restarts a container that exited with `exitCode`, and under what: its
 * own `restartPolicyRules` first (the first rule whose exit codes match decides: `Restart`
 * restarts the container, `RestartAllContainers` the whole pod in place — it was taken for a
 * final exit, and the pod was ended or its sidecars stopped mid-restart: review71), then its
 * own `restartPolicy`, then the pod's (KEP-5307, container restart rules: beta and on by
 * default from Kubernetes 1.35 — a `Never` pod's main container may restart, an `OnFailure`
 * pod's may not; version review). Undefined: the exit is final.
 */
function restartedAfter(container: Container | undefined, podPolicy: JobRestartPolicy, exitCode: number): string | undefined {
  const rule = matchingRule(container, exitCode);
  if (rule) return rule.action === 'Restart' ? 'a restartPolicyRules rule' : rule.action === RESTART_ALL_CONTAINERS ? RESTARTS_ALL : undefined;
  const own = container?.restartPolicy;
  const policy = own ?? podPolicy;
  if (policy === 'Always' || (policy === 'OnFailure' && exitCode !== 0)) return `${own ? 'its container ' : ''}restartPolicy ${policy}`;
  return undefined;
}

/** The first of the container's restartPolicyRules whose exit codes match: the kubelet applies that one. */
function matchingRule(container: Container | undefined, exitCode: number): { action: unknown } | undefined {
  return restartRules(container).find((rule) => rule.matches(exitCode));
}

/** A container's restartPolicyRules, read leniently (an odd rule matches nothing). */
function restartRules(container: Container | undefined): { action: unknown; matches(code: number): boolean }[] {
  const rules = (container as { restartPolicyRules?: unknown } | undefined)?.restartPolicyRules;
  if (!Array.isArray(rules)) return [];
  return rules.map((r: unknown) => {
    const { action, exitCodes } = (r ?? {}) as { action?: unknown; exitCodes?: { operator?: unknown; values?: unknown } };
    const values = Array.isArray(exitCodes?.values) ? exitCodes.values : [];
    const op = exitCodes?.operator;
    return { action, matches: (code: number) => (op === 'In' ? values.includes(code) : op === 'NotIn' ? !values.includes(code) : false) };
  });
}

/** Container statuses by name; the first wins if a status is (oddly) repeated. */
export function statusByName(statuses: readonly ContainerStatus[]): Map<string, ContainerStatus> {
  const m = new Map<string, ContainerStatus>();
  for (const s of statuses) if (!m.has(s.name)) m.set(s.name, s);
  return m;
}

/**
 * The predicate on an event's snapshot (or any raw object). null means "cannot tell from
 * this" (absent or unreadable snapshot): look at the live pod instead of guessing.
 */
export function dueFromSnapshot(raw: unknown): DueResult | null {
  if (raw === undefined || raw === null) return null;
  const parsed = Pod.safeParse(raw);
  return parsed.success ? podDue(parsed.data) : null;
}

/** The env vars that mark a sidecar: the only ones a trimmed pod keeps (the relay's fast trim reads this set too). */
export const MARK_ENVS: ReadonlySet<string> = new Set([TERMINATE_SIDECAR_ENV, TERMINATE_WITH_IMAGE_ENV, IGNORE_EXIT_CODE_ENV]);

/**
 * The part of a pod the predicate reads, for a relay that trims snapshots: everything
 * else can go, but dropping any of this (the marking env vars above all) would make a
 * sidecar pod look like it has no sidecars and be skipped.
 */
export function trimPodForSidecar(pod: Pod): Pod {
  const m = pod.metadata;
  // Each container's own restart policy and rules too: they decide whether a main container's exit is final.
  const containers = pod.spec.containers.map((c) => {
    const rules = (c as { restartPolicyRules?: unknown }).restartPolicyRules;
    return { name: c.name, env: (c.env ?? []).filter((e) => MARK_ENVS.has(e.name)).map((e) => ({ name: e.name, value: e.value })), ...(c.restartPolicy ? { restartPolicy: c.restartPolicy } : {}), ...(rules !== undefined ? { restartPolicyRules: rules } : {}) };
  });
  const initContainers = (pod.spec.initContainers ?? []).filter((c) => c.restartPolicy === 'Always').map((c) => ({ name: c.name, restartPolicy: c.restartPolicy }));
  const statuses = (pod.status?.containerStatuses ?? []).map((s) => ({ name: s.name, state: trimState(s.state) }));
  // Of the conditions only AllContainersRestarting (review71): any other would only make changes the functions ignore.
  const conditions = (pod.status?.conditions ?? []).filter((c) => c.type === ALL_CONTAINERS_RESTARTING).map((c) => ({ type: c.type, status: c.status }));
  return {
    metadata: { name: m.name, namespace: m.namespace, uid: m.uid, deletionTimestamp: m.deletionTimestamp, annotations: strategyAnnotation(m.annotations) },
    spec: { restartPolicy: pod.spec.restartPolicy, containers, initContainers },
    status: { phase: pod.status?.phase, containerStatuses: statuses, ...(conditions.length > 0 ? { conditions } : {}) },
  };
}

/**
 * Of the annotations, only the pod's termination strategy: a user who sets or fixes it
 * (the stuck Warning says to) changes what is done, so the change must reach the
 * functions; every other annotation would only make changes the functions ignore.
 */
export function strategyAnnotation(annotations: Record<string, string> | undefined): Record<string, string> | undefined {
  const v = annotations !== undefined && Object.hasOwn(annotations, STRATEGY_ANNOTATION) ? annotations[STRATEGY_ANNOTATION] : undefined;
  return v === undefined ? undefined : { [STRATEGY_ANNOTATION]: keptStrategy(v) };
}

/** The longest strategy value kept as it is: the valid ones are a few characters. */
const MAX_KEPT_STRATEGY = 64;

/**
 * A strategy value as a trimmed pod keeps it. One past MAX_KEPT_STRATEGY characters (an
 * annotation may hold 256 KiB: a tenant made every kept pod that large, review82) becomes
 * the strategy it names, if it does, else a short stand-in that names none and changes when
 * the value does (its length and a SHA-256 of it), so the pod is still refused as asking for
 * no known strategy and a fix of the value still reaches the functions.
 */
function keptStrategy(value: string): string {
  if (value.length <= MAX_KEPT_STRATEGY) return value;
  const known = SIDECAR_STRATEGIES.find((s) => s === value.trim());
  if (known) return known;
  return `${value.slice(0, 16)}… (${value.length} characters, sha256 ${createHash('sha256').update(value).digest('hex').slice(0, 16)})`;
}

/** Which state, and the exit code: termination messages can be kilobytes. */
function trimState(state: ContainerStatus['state']): ContainerStatus['state'] {
  if (state === undefined) return undefined;
  if (state.terminated) return { terminated: { exitCode: state.terminated.exitCode } };
  if (state.running) return { running: {} };
  return state.waiting ? { waiting: {} } : {};
}
