import { Pod, type ContainerStatus } from '../api/pod.ts';
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
  const roles = containerRoles(pod);
  if (roles.sidecars.length === 0) {
    return notDue(roles.nativeSidecars.length > 0 ? 'no sidecar containers (only native sidecars, which Kubernetes stops itself)' : 'no sidecar containers');
  }
  const statuses = statusByName(pod.status?.containerStatuses ?? []);
  const missing = [...roles.mains, ...roles.sidecars.map((s) => s.name)].filter((n) => statuses.get(n)?.state === undefined);
  if (missing.length > 0) return notDue(`no state reported yet for container ${missing.join(', ')}`);
  const unterminated = roles.sidecars.filter((s) => statuses.get(s.name)?.state?.terminated === undefined);
  if (unterminated.length === 0) return notDue('all sidecars have terminated');
  return mainsVerdict({ policy, roles, unterminated, statuses });
}

function mainsVerdict(p: { policy: JobRestartPolicy; roles: ContainerRoles; unterminated: SidecarInfo[]; statuses: Map<string, ContainerStatus> }): DueResult {
  let mainsSucceeded = true;
  for (const name of p.roles.mains) {
    const t = p.statuses.get(name)?.state?.terminated;
    if (t === undefined) return notDue(`main container ${name} has not terminated`);
    if (t.exitCode !== 0) {
      if (p.policy === 'OnFailure') return notDue(`main container ${name} exited ${t.exitCode} under restartPolicy OnFailure: the kubelet restarts it`);
      mainsSucceeded = false;
    }
  }
  return { due: true, restartPolicy: p.policy, roles: p.roles, unterminated: p.unterminated, mainsSucceeded };
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
  const containers = pod.spec.containers.map((c) => ({ name: c.name, env: (c.env ?? []).filter((e) => MARK_ENVS.has(e.name)).map((e) => ({ name: e.name, value: e.value })) }));
  const initContainers = (pod.spec.initContainers ?? []).filter((c) => c.restartPolicy === 'Always').map((c) => ({ name: c.name, restartPolicy: c.restartPolicy }));
  const statuses = (pod.status?.containerStatuses ?? []).map((s) => ({ name: s.name, state: trimState(s.state) }));
  return {
    metadata: { name: m.name, namespace: m.namespace, uid: m.uid, deletionTimestamp: m.deletionTimestamp, annotations: strategyAnnotation(m.annotations) },
    spec: { restartPolicy: pod.spec.restartPolicy, containers, initContainers },
    status: { phase: pod.status?.phase, containerStatuses: statuses },
  };
}

/**
 * Of the annotations, only the pod's termination strategy: a user who sets or fixes it
 * (the stuck Warning says to) changes what is done, so the change must reach the
 * functions; every other annotation would only make changes the functions ignore.
 */
export function strategyAnnotation(annotations: Record<string, string> | undefined): Record<string, string> | undefined {
  const v = annotations !== undefined && Object.hasOwn(annotations, STRATEGY_ANNOTATION) ? annotations[STRATEGY_ANNOTATION] : undefined;
  return v === undefined ? undefined : { [STRATEGY_ANNOTATION]: v };
}

/** Which state, and the exit code: termination messages can be kilobytes. */
function trimState(state: ContainerStatus['state']): ContainerStatus['state'] {
  if (state === undefined) return undefined;
  if (state.terminated) return { terminated: { exitCode: state.terminated.exitCode } };
  if (state.running) return { running: {} };
  return state.waiting ? { waiting: {} } : {};
}
