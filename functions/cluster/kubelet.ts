// A deterministic stand-in for the kubelet (and for OpenKruise's kruise-daemon, which executes
// ContainerRecreateRequests). Each tick() moves every container one step and writes pod
// status through the pods/status subresource, so watchers see MODIFIED events.
import { jsonEqual } from '../api/json-equal.ts';
import { clone } from './patch.ts';
import type { ResourceDef } from './resources.ts';
import type { ApiServer } from './server.ts';
import { timestamp, type KubeObject } from './store.ts';

type Obj = Record<string, unknown>;
/** A container (or ephemeral container) spec as stored. */
export type ContainerSpec = Obj & { name: string; image?: string; targetContainerName?: string; command?: string[]; restartPolicy?: string };
/** A container status as the kubelet reports it. */
export type ContainerStatus = Obj & { name: string; state: Obj; lastState: Obj; restartCount: number; image?: string; ready: boolean };

/**
 * What a container does next: exit with a code, keep running, or stay waiting with a reason
 * (ErrImagePull, RunContainerError, CreateContainerError, ...).
 */
export type ContainerFate = { exitCode: number } | 'run' | { waitingReason: string; message?: string };

/** How simulated containers behave. Every callback is optional. */
export interface KubeletPolicy {
  /** An ephemeral container's fate (default: exit 0). */
  ephemeral?(pod: KubeObject, container: ContainerSpec): ContainerFate;
  /** A regular or init container's fate (default: containers run, init containers exit 0). */
  container?(pod: KubeObject, container: ContainerSpec, init: boolean): ContainerFate;
  /** Exit code of a container stopped with SIGTERM (default 0: it shuts down cleanly). */
  sigtermExitCode?(pod: KubeObject, containerName: string): number;
  /** Exit code of a container restarted with a swapped image (default 0). */
  swappedImageExitCode?(pod: KubeObject, container: ContainerSpec): number;
  /** Which pods this kubelet runs (default: all). */
  owns?(pod: KubeObject): boolean;
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const arr = <T = Obj>(v: unknown): T[] => (Array.isArray(v) ? (v.filter(isObj) as T[]) : []);
const TERMINAL = new Set(['Succeeded', 'Failed']);
const CRR_DONE = new Set(['Completed', 'Succeeded', 'Failed']);

/** Which state a status is in. */
export function stateOf(s: ContainerStatus | undefined): 'none' | 'waiting' | 'running' | 'terminated' {
  if (!s) return 'none';
  if (isObj(s.state.terminated)) return 'terminated';
  if (isObj(s.state.running)) return 'running';
  return 'waiting';
}

/**
 * The simulated kubelet. Override the protected steps to change one behaviour:
 * stepContainer / stepEphemeral (one state transition), stopContainer (SIGTERM),
 * onImageChange (in-place image swap), onEphemeralStarted (signal containers),
 * executeCrr (kruise-daemon), podPhase (the pod's phase from its containers).
 */
export class SimKubelet {
  protected readonly server: ApiServer;
  protected readonly policy: KubeletPolicy;
  private timer: NodeJS.Timeout | undefined;
  private seq = 0;

  constructor(server: ApiServer, policy: KubeletPolicy = {}) {
    this.server = server;
    this.policy = policy;
  }

  /** One step for every pod and every pending ContainerRecreateRequest; returns what changed. */
  tick(): { pods: number; crrs: number } {
    let crrs = 0;
    for (const crr of this.server.store.list({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ContainerRecreateRequest' })) {
      if (this.executeCrr(crr)) crrs++;
    }
    let pods = 0;
    for (const pod of this.server.store.list({ apiVersion: 'v1', kind: 'Pod' })) {
      if (!this.owns(pod)) continue;
      const next = clone(pod);
      this.stepPod(next);
      if (this.writeStatus(pod, next)) pods++;
    }
    return { pods, crrs };
  }

  /** Sends SIGTERM to one container now (it terminates with policy.sigtermExitCode). */
  kill(namespace: string, podName: string, containerName: string): boolean {
    const pod = this.server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace, name: podName });
    if (!pod) return false;
    const next = clone(pod);
    const s = findStatus(next, containerName);
    if (!s || stateOf(s) === 'terminated') return false;
    this.stopContainer(next, s);
    return this.writeStatus(pod, next);
  }

  /** Ticks every intervalMs until stop() (for demos). */
  run(intervalMs: number): void {
    this.stop();
    this.timer = setInterval(() => {
      try {
        this.tick();
      } catch {
        // A failed step (e.g. the server closed) is retried on the next tick.
      }
    }, intervalMs);
    this.timer.unref();
  }

  /** Stops run(). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  // ---- overridable pieces ----

  /** Does this kubelet run the pod? Deleting pods are left alone. */
  protected owns(pod: KubeObject): boolean {
    if (pod.metadata.deletionTimestamp) return false;
    return this.policy.owns ? this.policy.owns(pod) : true;
  }

  /**
   * Moves every container of a pod one step and recomputes the phase. A pod whose phase is
   * terminal (ended by a status write: the SidecarTerminator's ignore-exit-code stage, a
   * virtual-kubelet's end) has what still runs in it stopped, and nothing started, as the
   * kubelet's pod worker does once the API's phase is terminal (review).
   */
  protected stepPod(pod: KubeObject): void {
    const status = statusOf(pod);
    if (TERMINAL.has(String(status.phase))) return this.stopAll(pod);
    const spec = specOf(pod);
    const initDone = this.stepInitContainers(pod);
    if (initDone) {
      for (const c of arr<ContainerSpec>(spec.containers)) this.stepContainer(pod, c, 'containerStatuses');
    }
    for (const ec of arr<ContainerSpec>(spec.ephemeralContainers)) this.stepEphemeral(pod, ec);
    const phase = this.podPhase(pod, initDone);
    if (phase !== 'Pending' && !status.startTime) status.startTime = this.now();
    status.phase = phase;
  }

  /** SIGTERM to every running container of a terminal pod. */
  protected stopAll(pod: KubeObject): void {
    for (const list of ['containerStatuses', 'initContainerStatuses', 'ephemeralContainerStatuses'] as const) {
      for (const s of arr<ContainerStatus>(statusOf(pod)[list])) if (stateOf(s) === 'running') this.stopContainer(pod, s);
    }
  }

  /** Init containers run one after the other; native sidecars (restartPolicy Always) keep running. */
  protected stepInitContainers(pod: KubeObject): boolean {
    for (const c of arr<ContainerSpec>(specOf(pod).initContainers)) {
      const s = findStatus(pod, c.name, 'initContainerStatuses');
      const done = c.restartPolicy === 'Always' ? stateOf(s) === 'running' : stateOf(s) === 'terminated' && (s!.state.terminated as Obj).exitCode === 0;
      if (done) continue;
      this.stepContainer(pod, c, 'initContainerStatuses');
      return false;
    }
    return true;
  }

  /** One transition of a regular or init container: none → waiting → running → (policy) terminated → restart per restartPolicy. */
  protected stepContainer(pod: KubeObject, c: ContainerSpec, list: 'containerStatuses' | 'initContainerStatuses'): void {
    const init = list === 'initContainerStatuses';
    const fate = this.policy.container?.(pod, c, init) ?? (init && c.restartPolicy !== 'Always' ? { exitCode: 0 } : 'run');
    const s = findStatus(pod, c.name, list);
    switch (stateOf(s)) {
      case 'none': return upsertStatus(pod, list, this.waiting(c, 'ContainerCreating'));
      case 'waiting': return this.startOrHold(s!, c, fate);
      case 'running':
        // A status without an image (seeded by hand) has not seen a change.
        if (s!.image !== undefined && s!.image !== c.image) return this.onImageChange(pod, c, s!);
        if (typeof fate === 'object' && 'exitCode' in fate) return this.terminate(s!, fate.exitCode);
        return;
      case 'terminated':
        if (this.mayRestart(pod, c, s!)) this.restart(s!, c);
    }
  }

  /** One transition of an ephemeral container; they never restart. */
  protected stepEphemeral(pod: KubeObject, c: ContainerSpec): void {
    const fate = this.policy.ephemeral?.(pod, c) ?? { exitCode: 0 };
    const s = findStatus(pod, c.name, 'ephemeralContainerStatuses');
    switch (stateOf(s)) {
      case 'none': return upsertStatus(pod, 'ephemeralContainerStatuses', this.waiting(c, 'ContainerCreating'));
      case 'waiting': {
        this.startOrHold(s!, c, fate);
        const exitCode = typeof fate === 'object' && 'exitCode' in fate ? fate.exitCode : 0;
        // `kill` returns at once: the signal container has exited by the next status report.
        // One that exits non-zero signalled nothing (kill(2) refused: another user, no CAP_KILL).
        if (stateOf(s) === 'running' && this.onEphemeralStarted(pod, c, exitCode === 0)) this.terminate(s!, exitCode);
        return;
      }
      case 'running':
        if (typeof fate === 'object' && 'exitCode' in fate) this.terminate(s!, fate.exitCode);
    }
  }

  /**
   * An ephemeral container just started. Default: one that targets a container and runs
   * `kill` signals it (ephemera's daemon-less sidecar stop), so the target gets SIGTERM.
   * Returns true for such a one-shot signal container (it exits right after); `signals`:
   * false when its `kill` fails (it exits non-zero), and the target is left running.
   */
  protected onEphemeralStarted(pod: KubeObject, c: ContainerSpec, signals = true): boolean {
    const target = c.targetContainerName;
    if (!target || !(c.command ?? []).some((w) => /(^|\/)kill$/.test(w))) return false;
    const s = findStatus(pod, target);
    if (signals && s && stateOf(s) !== 'terminated') this.stopContainer(pod, s);
    return true;
  }

  /** SIGTERM: the container terminates with the policy's exit code. */
  protected stopContainer(pod: KubeObject, s: ContainerStatus): void {
    this.terminate(s, this.policy.sigtermExitCode?.(pod, s.name) ?? 0);
  }

  /**
   * The spec image of a running container changed (in-place update): the kubelet kills it and
   * starts the new image, which exits (default 0; virtual-kubelet sidecar swap).
   */
  protected onImageChange(pod: KubeObject, c: ContainerSpec, s: ContainerStatus): void {
    this.terminate(s, this.policy.sigtermExitCode?.(pod, s.name) ?? 0);
    s.lastState = s.state;
    s.restartCount += 1;
    s.image = c.image;
    s.imageID = '';
    s.state = {};
    this.terminate(s, this.policy.swappedImageExitCode?.(pod, c) ?? 0);
  }

  /**
   * Executes a ContainerRecreateRequest as kruise-daemon would: stop the listed containers
   * (SIGTERM), then mark the request Completed. Returns whether anything was written.
   */
  protected executeCrr(crr: KubeObject): boolean {
    const status = isObj(crr.status) ? crr.status : {};
    if (CRR_DONE.has(String(status.phase))) return false;
    const spec = isObj(crr.spec) ? crr.spec : {};
    const ns = crr.metadata.namespace ?? 'default';
    const pod = this.server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: ns, name: String(spec.podName ?? '') });
    const names = arr(spec.containers).map((c) => String(c.name));
    let states: Obj[];
    let message: string | undefined;
    if (!pod) {
      states = names.map((name) => ({ name, phase: 'Failed', message: 'pod not found' }));
      message = 'pod not found';
    } else {
      const next = clone(pod);
      states = names.map((name) => {
        const s = findStatus(next, name);
        if (!s) return { name, phase: 'Failed', message: 'container not found' };
        const running = stateOf(s) !== 'terminated';
        if (running) this.stopContainer(next, s);
        return { name, phase: 'Succeeded', isKilled: running };
      });
      this.writeStatus(pod, next);
    }
    const body = clone(crr);
    body.status = { ...status, phase: 'Completed', completionTime: this.now(), containerRecreateStates: states, ...(message ? { message } : {}) };
    this.server.rest.update({ def: this.def('apps.kruise.io/v1alpha1', 'ContainerRecreateRequest'), namespace: ns, name: crr.metadata.name, sub: 'status' }, body);
    return true;
  }

  /** The phase the kubelet reports (kubelet's getPhase, simplified). */
  protected podPhase(pod: KubeObject, initDone: boolean): string {
    const spec = specOf(pod);
    const rp = String(spec.restartPolicy ?? 'Always');
    const failedInit = arr<ContainerStatus>(statusOf(pod).initContainerStatuses).some((s) => stateOf(s) === 'terminated' && (s.state.terminated as Obj).exitCode !== 0);
    if (failedInit && rp === 'Never') return 'Failed';
    if (!initDone) return 'Pending';
    const states = arr<ContainerSpec>(spec.containers).map((c) => findStatus(pod, c.name));
    if (states.some((s) => stateOf(s) === 'running')) return 'Running';
    if (!states.every((s) => stateOf(s) === 'terminated')) return states.some((s) => stateOf(s) === 'terminated') ? 'Running' : 'Pending';
    const failed = states.some((s) => (s!.state.terminated as Obj).exitCode !== 0);
    if (rp === 'Always' || (rp === 'OnFailure' && failed)) return 'Running';
    return failed ? 'Failed' : 'Succeeded';
  }

  // ---- helpers ----

  protected now(): string {
    return timestamp(this.server.now());
  }

  private def(apiVersion: string, kind: string): ResourceDef {
    return this.server.store.defFor(apiVersion, kind);
  }

  private waiting(c: ContainerSpec, reason: string): ContainerStatus {
    return { name: c.name, state: { waiting: { reason } }, lastState: {}, ready: false, restartCount: 0, image: c.image, imageID: '', started: false };
  }

  private startOrHold(s: ContainerStatus, c: ContainerSpec, fate: ContainerFate): void {
    if (typeof fate === 'object' && 'waitingReason' in fate) {
      s.state = { waiting: { reason: fate.waitingReason, ...(fate.message ? { message: fate.message } : {}) } };
      return;
    }
    s.state = { running: { startedAt: this.now() } };
    s.image = c.image;
    s.imageID = `sim://${c.image}`;
    s.containerID = `sim://${++this.seq}`;
    s.started = true;
    s.ready = true;
  }

  private terminate(s: ContainerStatus, exitCode: number): void {
    const running = isObj(s.state.running) ? s.state.running : {};
    s.state = {
      terminated: {
        exitCode, reason: exitCode === 0 ? 'Completed' : 'Error',
        startedAt: running.startedAt ?? this.now(), finishedAt: this.now(), containerID: s.containerID ?? `sim://${++this.seq}`,
      },
    };
    s.ready = false;
    s.started = false;
  }

  private mayRestart(pod: KubeObject, c: ContainerSpec, s: ContainerStatus): boolean {
    const rp = c.restartPolicy ?? String(specOf(pod).restartPolicy ?? 'Always');
    const code = (s.state.terminated as Obj).exitCode;
    return rp === 'Always' || (rp === 'OnFailure' && code !== 0);
  }

  private restart(s: ContainerStatus, c: ContainerSpec): void {
    s.lastState = s.state;
    s.restartCount += 1;
    this.startOrHold(s, c, 'run');
  }

  /** Writes the pod's new status through pods/status; false when nothing changed. */
  private writeStatus(old: KubeObject, next: KubeObject): boolean {
    if (jsonEqual(old.status, next.status)) return false;
    const def = this.def('v1', 'Pod');
    this.server.rest.update({ def, namespace: old.metadata.namespace ?? '', name: old.metadata.name, sub: 'status' }, next);
    return true;
  }
}

function specOf(pod: KubeObject): Obj {
  return isObj(pod.spec) ? pod.spec : {};
}

function statusOf(pod: KubeObject): Obj {
  if (!isObj(pod.status)) pod.status = {};
  return pod.status as Obj;
}

type StatusList = 'containerStatuses' | 'initContainerStatuses' | 'ephemeralContainerStatuses';

/** A container's status by name (any list unless one is given); mutable, part of the pod. */
function findStatus(pod: KubeObject, name: string, list?: StatusList): ContainerStatus | undefined {
  const lists: StatusList[] = list ? [list] : ['containerStatuses', 'initContainerStatuses', 'ephemeralContainerStatuses'];
  const status = statusOf(pod);
  for (const l of lists) {
    const hit = arr<ContainerStatus>(status[l]).find((s) => s.name === name);
    if (hit) return hit;
  }
  return undefined;
}

function upsertStatus(pod: KubeObject, list: StatusList, s: ContainerStatus): void {
  const status = statusOf(pod);
  const cur = Array.isArray(status[list]) ? (status[list] as ContainerStatus[]) : [];
  status[list] = [...cur.filter((x) => x.name !== s.name), s];
}
