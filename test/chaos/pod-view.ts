// How the checker reads pods and jobs: its own definitions from the design (DESIGN.md), not
// ephemera's code, so a bug there cannot hide itself here.
import type { KubeObject } from '../../functions/cluster/index.ts';

type Obj = Record<string, unknown>;
/** A container or container status as stored (only the fields read here). */
export type Container = Obj & { name: string; image?: string; env?: { name: string; value?: string }[] };
type Status = Obj & { name: string; state?: { waiting?: { reason?: string }; running?: Obj; terminated?: { exitCode?: number } } };

/** The env var that marks a job's ephemeral containers. */
export const JOB_ID_ENV = 'KRUISE_EJOB_ID';
/** Waiting reasons that will never resolve: the container has failed (DESIGN.md, per pod state). */
export const TERMINAL_WAITING = new Set(['RunContainerError', 'CreateContainerError', 'InvalidImageName', 'ErrImageNeverPull']);

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = <T>(v: unknown): T[] => (Array.isArray(v) ? (v.filter(isObj) as T[]) : []);
const spec = (o: KubeObject): Obj => (isObj(o.spec) ? o.spec : {});
const status = (o: KubeObject): Obj => (isObj(o.status) ? o.status : {});

/** Is this object a pod / an EphemeralJob? */
export const isPod = (o: KubeObject): boolean => o.apiVersion === 'v1' && o.kind === 'Pod';
export const isJob = (o: KubeObject): boolean => o.kind === 'EphemeralJob';
/** "namespace/name". */
export const keyOf = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

function env(c: Container, name: string): string | undefined {
  let v: string | undefined;
  for (const e of c.env ?? []) if (e.name === name) v = e.value;
  return v;
}

/** The pod's ephemeral containers that carry this job's uid. */
export function jobContainers(pod: KubeObject, jobUid: string): Container[] {
  return list<Container>(spec(pod).ephemeralContainers).filter((c) => env(c, JOB_ID_ENV) === jobUid);
}

/** The job uids whose containers the pod carries. */
export function jobsIn(pod: KubeObject): string[] {
  return [...new Set(list<Container>(spec(pod).ephemeralContainers).map((c) => env(c, JOB_ID_ENV)).filter((u): u is string => !!u))];
}

/** A container's status by name from any of the pod's status lists. */
export function statusOf(pod: KubeObject, name: string): Status | undefined {
  const s = status(pod);
  for (const l of ['containerStatuses', 'ephemeralContainerStatuses', 'initContainerStatuses']) {
    const hit = list<Status>(s[l]).find((x) => x.name === name);
    if (hit) return hit;
  }
  return undefined;
}

/** Terminated, or waiting for a reason that never resolves. */
export function containerDone(s: Status | undefined): boolean {
  if (!s?.state) return false;
  if (s.state.terminated) return true;
  return TERMINAL_WAITING.has(s.state.waiting?.reason ?? '');
}

/** The pod has ended: phase Succeeded or Failed. */
export function podEnded(pod: KubeObject): boolean {
  return ['Succeeded', 'Failed'].includes(String(status(pod).phase));
}

/** Does the pod hold one of the job's parallelism slots: a job container not done, in a pod still running? */
export function holdsSlot(pod: KubeObject, jobUid: string): boolean {
  if (podEnded(pod)) return false;
  const mine = jobContainers(pod, jobUid);
  return mine.length > 0 && mine.some((c) => !containerDone(statusOf(pod, c.name)));
}

/** The job's outcome in this pod: failed (any failed), succeeded (all exited 0), or open. */
export function outcome(pod: KubeObject, jobUid: string): 'succeeded' | 'failed' | 'open' {
  const states = jobContainers(pod, jobUid).map((c) => statusOf(pod, c.name));
  const failed = (s: Status | undefined): boolean => (s?.state?.terminated ? s.state.terminated.exitCode !== 0 : TERMINAL_WAITING.has(s?.state?.waiting?.reason ?? ''));
  if (states.some(failed)) return 'failed';
  return states.every((s) => s?.state?.terminated) ? 'succeeded' : 'open';
}

/** A regular container marked as a sidecar (KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT=true or ..._WITH_IMAGE). */
export function isSidecar(c: Container): boolean {
  return (env(c, 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT') ?? '').toLowerCase() === 'true' || !!env(c, 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE');
}

/** The pod's regular containers. */
export function containers(pod: KubeObject): Container[] {
  return list<Container>(spec(pod).containers);
}

/** A Job pod (restartPolicy Never/OnFailure) with at least one sidecar. */
export function isSidecarPod(pod: KubeObject): boolean {
  return ['Never', 'OnFailure'].includes(String(spec(pod).restartPolicy)) && containers(pod).some(isSidecar);
}

/** Every main container has terminated (under OnFailure: with exit code 0, else it restarts). */
export function mainsDone(pod: KubeObject): boolean {
  const onFailure = spec(pod).restartPolicy === 'OnFailure';
  return containers(pod).filter((c) => !isSidecar(c)).every((c) => {
    const t = statusOf(pod, c.name)?.state?.terminated;
    return t !== undefined && (!onFailure || t.exitCode === 0);
  });
}

/** Every regular container has terminated. */
export function allTerminated(pod: KubeObject): boolean {
  return containers(pod).every((c) => statusOf(pod, c.name)?.state?.terminated !== undefined);
}

/** A number field of the job's spec or status. */
export function field(job: KubeObject, part: 'spec' | 'status', name: string): number | undefined {
  const v = (part === 'spec' ? spec(job) : status(job))[name];
  return typeof v === 'number' ? v : undefined;
}

/** The job's status.phase. */
export const phaseOf = (o: KubeObject): string => String(status(o).phase ?? '');
/** Pod spec field. */
export const podSpec = spec;
