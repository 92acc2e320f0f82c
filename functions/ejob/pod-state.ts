import { isHostProcessContainer, podBoundProblems, type ContainerProblem } from '../api/container-rules.ts';
import type { EphemeralContainerTemplate } from '../api/ephemeraljob.ts';
import { isDeepFrozen } from '../api/frozen.ts';
import { EJOB_ID_ENV } from '../api/names.ts';
import { quoted } from '../api/quoted.ts';
import type { Container, ContainerStatus, Pod } from '../api/pod.ts';

/** The state of one target pod, derived from its injected containers' statuses. */
export const POD_STATES = ['pending', 'waiting', 'running', 'succeeded', 'failed'] as const;
export type PodState = (typeof POD_STATES)[number];

/**
 * Waiting reasons that will not resolve by waiting (DESIGN.md's list). A container stuck in
 * one of these is failed. ImagePullBackOff/ErrImagePull are left out: the kubelet keeps
 * retrying those; so is CreateContainerConfigError (a Secret or ConfigMap the container reads
 * that does not exist yet): the container starts once it does, and counting it failed would
 * free its slot while it may still run.
 */
export const TERMINAL_WAITING_REASONS: ReadonlySet<string> = new Set([
  'RunContainerError',
  'CreateContainerError',
  'InvalidImageName',
  'ErrImageNeverPull',
]);

/** An ephemeral container belongs to a job only if its KRUISE_EJOB_ID env equals the job's uid. */
export function ownedBy(container: Container, jobUid: string): boolean {
  return (container.env ?? []).some((e) => e.name === EJOB_ID_ENV && e.value === jobUid);
}

/** This job's ephemeral containers in the pod. */
export function ownedContainers(pod: Pod, jobUid: string): readonly Container[] {
  return keptFacts(pod, jobUid)?.owned ?? ownedIn(pod, jobUid);
}

function ownedIn(pod: Pod, jobUid: string): Container[] {
  return (pod.spec.ephemeralContainers ?? []).filter((c) => ownedBy(c, jobUid));
}

/** What a pod is for one job (keptFacts). */
interface JobFacts {
  readonly jobUid: string;
  readonly owned: readonly Container[];
  state?: PodState;
  slot?: boolean;
}

const factsKept = new WeakMap<Pod, JobFacts>();

/**
 * What a pod is for one job, kept beside a pod that can never change: a LIST item the
 * functions' client keeps between answers, frozen all the way down (api/frozen.ts). A warm
 * reconcile of a 1,000-pod job worked out every pod's containers, state and slot two or three
 * times an event (~5 ms of ~25), for pods nearly all unchanged since the event before; a
 * changed pod is a new object, so it is worked out anew. Kept for one job per pod (a pod two
 * jobs select is worked out again when the other one asks); a pod not deeply frozen, every
 * time. The same answers either way: test/ejob/pod-facts.test.ts.
 */
function keptFacts(pod: Pod, jobUid: string): JobFacts | undefined {
  if (!isDeepFrozen(pod)) return undefined;
  let facts = factsKept.get(pod);
  if (facts?.jobUid !== jobUid) {
    facts = { jobUid, owned: Object.freeze(ownedIn(pod, jobUid)) };
    factsKept.set(pod, facts);
  }
  return facts;
}

/**
 * True when the pod already holds an ephemeral container with one of the template's
 * names that this job did not create: injecting would be refused (names are unique), and
 * the result would not be ours to count.
 */
export function hasForeignNamesake(pod: Pod, jobUid: string, templateNames: readonly string[]): boolean {
  return (pod.spec.ephemeralContainers ?? []).some((c) => templateNames.includes(c.name) && !ownedBy(c, jobUid));
}

/** The annotation the kubelet sets on the API server's mirror of a static pod. */
const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/**
 * Why the template's containers can never go into this pod, or undefined when they can.
 * kube-apiserver refuses such an injection (422, ValidatePodEphemeralContainersUpdate): a
 * template container named like one of the pod's containers or init containers, a
 * `targetContainerName` that is neither, a static pod's mirror (annotated
 * `kubernetes.io/config.mirror`), and what podBoundProblems (api/container-rules.ts, shared
 * with the embedded API server) finds: a volumeMount or volumeDevice naming no volume of the
 * pod, a device on a volume that is no PVC or ephemeral volume, procMount Unmasked while the
 * pod keeps host users (review91 F2, F3), windowsOptions in a pod whose spec.os is linux and
 * linux-only security fields in a windows one, a HostProcess container in a pod that is not a
 * HostProcess pod or the converse (review91's pod-dependent rules). Those parts of a pod never
 * change, so the refusal would be for good: the pod is failed for the job at once (targets.ts)
 * instead of being claimed again every claim window while it holds a slot (OpenKruise retries
 * it for good, and at parallelism 1 the job stalls).
 */
export function unfitReason(pod: Pod, template: readonly EphemeralContainerTemplate[]): string | undefined {
  // Every reconcile asks this of every pending pod: plain scans of a few names, no Sets.
  // kube-apiserver takes no ephemeral container into a static pod's mirror (ValidatePodEphemeralContainersUpdate).
  if (Object.hasOwn(pod.metadata.annotations ?? {}, MIRROR_POD_ANNOTATION)) return 'it is a static pod (its mirror takes no ephemeral containers)';
  const { containers, initContainers = [] } = pod.spec;
  const has = (name: string): boolean => containers.some((c) => c.name === name) || initContainers.some((c) => c.name === name);
  for (const c of template) {
    if (has(c.name)) return `the pod already has a container named ${c.name}`;
    const target = c.targetContainerName;
    if (typeof target === 'string' && target !== '' && !has(target)) return `the pod has no container ${target} (targetContainerName of ${c.name})`;
    const problem = podBoundProblems(c, pod.spec)[0];
    if (problem !== undefined) return boundReason(problem, c, pod.spec);
  }
  return undefined;
}

/** A podBoundProblems problem, told of the pod: the field of the template container that meets it, and the name it gives (quoted when empty). */
function boundReason(p: ContainerProblem, c: EphemeralContainerTemplate, spec: Pod['spec']): string {
  const container = c.name;
  const list = p.field.replace(/\.name$/, '');
  const name = p.value === '' ? '""' : String(p.value);
  if (p.kind === 'notFound') return `the pod has no volume ${name} (${list} of ${container})`;
  if (p.field === 'securityContext.procMount' && p.kind === 'invalid') return `the pod keeps the host's user namespace (procMount Unmasked of ${container} needs hostUsers: false)`;
  const os = /a (linux|windows) pod$/.exec(p.message ?? '')?.[1];
  if (os !== undefined) return `the pod's spec.os.name is ${os} (${p.field} of ${container}: ${p.message ?? ''})`;
  if (p.podField !== undefined) {
    return isHostProcessContainer(c, spec)
      ? `the pod is no Windows HostProcess pod (${container} is a HostProcess container, ${p.field}: every container of the pod must be one, and the pod use hostNetwork)`
      : `the pod is a Windows HostProcess pod (${container} is not a HostProcess container, ${p.field}: every container of the pod must be one)`;
  }
  if (p.field.endsWith('.hostProcess')) return `the pod's securityContext.windowsOptions.hostProcess is ${String(!(p.value as boolean))} (${p.field} of ${container} is ${String(p.value)}: both must be the same)`;
  return `the pod's volume ${name} is no PersistentVolumeClaim or ephemeral volume (${list} of ${container}: a block device needs one)`;
}

/**
 * The pod's state for this job: 'pending' when nothing is injected yet; otherwise from
 * the owned containers' statuses (failed wins, then all-succeeded, running, waiting).
 */
export function podState(pod: Pod, jobUid: string): PodState {
  const facts = keptFacts(pod, jobUid);
  if (facts === undefined) return stateOf(pod, ownedIn(pod, jobUid));
  return (facts.state ??= stateOf(pod, facts.owned));
}

function stateOf(pod: Pod, owned: readonly Container[]): PodState {
  if (owned.length === 0) return 'pending';
  const statuses = new Map<string, ContainerStatus>();
  for (const s of pod.status?.ephemeralContainerStatuses ?? []) statuses.set(s.name, s);
  const states = owned.map((c) => statuses.get(c.name)?.state);
  if (states.some(isFailed)) return 'failed';
  if (states.every((s) => s?.terminated !== undefined)) return 'succeeded';
  if (states.some((s) => s?.running !== undefined)) return 'running';
  return 'waiting';
}

/**
 * True when the pod holds one of the job's parallelism slots: it has a container of the
 * job that has not ended — no status yet, running, or waiting for a reason that can still
 * resolve. A pod whose outcome is already "failed" (one container exited non-zero) keeps
 * its slot while another of the job's containers in it is still starting or running
 * (DESIGN: slots count pods with a non-terminal container, outcomes count results).
 */
export function holdsSlot(pod: Pod, jobUid: string): boolean {
  const facts = keptFacts(pod, jobUid);
  if (facts === undefined) return slotIn(pod, ownedIn(pod, jobUid));
  return (facts.slot ??= slotIn(pod, facts.owned));
}

function slotIn(pod: Pod, owned: readonly Container[]): boolean {
  if (owned.length === 0) return false;
  const statuses = new Map<string, ContainerStatus>();
  for (const s of pod.status?.ephemeralContainerStatuses ?? []) statuses.set(s.name, s);
  return owned.some((c) => !isTerminal(statuses.get(c.name)?.state));
}

/**
 * The pods holding one of the job's slots: active, with a container of the job not ended
 * (holdsSlot). The one count the claim rules, the sealed verdict and the observation that
 * skips the Lease all use.
 */
export function slotHolders(pods: readonly Pod[], jobUid: string): Pod[] {
  return pods.filter((p) => isActive(p) && holdsSlot(p, jobUid));
}

/** A container that will not run again: terminated, or waiting for a reason that will not resolve. */
export function isTerminal(state: ContainerStatus['state']): boolean {
  if (!state) return false;
  if (state.terminated) return true;
  return state.waiting?.reason !== undefined && TERMINAL_WAITING_REASONS.has(state.waiting.reason);
}

function isFailed(state: ContainerStatus['state']): boolean {
  if (!state) return false;
  if (state.terminated) return state.terminated.exitCode !== 0;
  return state.waiting?.reason !== undefined && TERMINAL_WAITING_REASONS.has(state.waiting.reason);
}

/** Active pods can still run containers: not Succeeded/Failed and not being deleted. */
export function isActive(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && pod.metadata.deletionTimestamp === undefined;
}

/**
 * A short, human reason for a failed pod, with the kubelet's or the container's own words:
 * the waiting message says why it cannot start (`exec: "pidof": executable file not found`),
 * the termination message is the check's output (the log tail under FallbackToLogsOnError).
 * Only for the Warning Events that tell a failure (review78): their names do not depend on
 * it, so a message the kubelet rewrites at every retry makes no new Event, and no status
 * field holds it, so it makes no status write either.
 */
export function failureReason(pod: Pod, jobUid: string): string {
  const names = new Set(ownedContainers(pod, jobUid).map((c) => c.name));
  for (const s of pod.status?.ephemeralContainerStatuses ?? []) {
    if (!names.has(s.name)) continue;
    const t = s.state?.terminated;
    if (t && t.exitCode !== 0) return `container ${s.name} exited with code ${t.exitCode}${t.reason ? ` (${t.reason})` : ''}${saying(t.message)}`;
    const w = s.state?.waiting;
    if (w?.reason && TERMINAL_WAITING_REASONS.has(w.reason)) return `container ${s.name} cannot start: ${w.reason}${saying(w.message)}`;
  }
  return 'failed';
}

function saying(message: string | undefined): string {
  const text = message === undefined ? '' : quoted(message);
  return text === '' ? '' : `: ${text}`;
}

