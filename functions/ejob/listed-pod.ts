// What an EphemeralJob's reconcile keeps of each pod its LIST returns (review82 H2). A
// reconcile held every pod of its job whole while it planned — 7.5 KB of JSON a real pod,
// about 25 KB once parsed — and a job of 8,000 pods took the all-in-cluster process past its
// 256Mi. The planner reads only a few fields of a pod, so the LIST is read through a view
// (kube.ts ItemView): each pod is checked against the schema whole, as before (a pod that
// fails it is named in the same warning), then trimmed to those fields before the next is
// read. test/ejob/listed-pod.test.ts proves with fast-check that the planner decides exactly
// the same from trimmed pods as from whole ones.
//
// Kept, and who reads it (everything else of the pod is dropped):
// - metadata.name, namespace, uid: targets, claims, injections and Events name the pod by
//   them (planner.ts inject, podRef; claims.ts);
// - metadata.labels: the planner checks the selector again (targets.ts, claims.ts
//   unlistedHolds);
// - metadata.creationTimestamp: the targets' order, oldest first (targets.ts), and when an
//   unfit pod failed (planner.ts datedFailures);
// - metadata.deletionTimestamp, status.phase: whether the pod is active (pod-state.ts isActive);
// - the annotation kubernetes.io/config.mirror, alone: a static pod's mirror takes no
//   ephemeral container (pod-state.ts unfitReason);
// - the names of spec.containers, spec.initContainers and spec.volumes, each volume's
//   persistentVolumeClaim or ephemeral source as `{}` (only that it is set is read),
//   spec.hostUsers, spec.os.name, and windowsOptions.hostProcess of spec.securityContext and of
//   each container (init and ephemeral ones too), where it is set: whether the template can go
//   into the pod (unfitReason: a name taken, a targetContainerName or a volumeMount naming
//   nothing, a volumeDevice on a volume of another kind, procMount Unmasked in a pod that keeps
//   host users: review91 F2, F3; windowsOptions in a linux pod, linux-only fields in a windows
//   one, a HostProcess container in a pod that is not a HostProcess pod or the converse).
//   Not spec.hostNetwork: kube-apiserver's HostProcess rule reads it, but its error comes only
//   beside the one that a pod's containers must all be HostProcess ones or none, so the planner
//   decides nothing from it;
// - each ephemeral container's name and its KRUISE_EJOB_ID env entries (name and value): which
//   job owns it (pod-state.ts ownedBy, hasForeignNamesake);
// - each ephemeral container status's name and state — waiting (reason, message), running
//   (that it is), terminated (exitCode, reason, message, finishedAt): the pod's state and slot
//   for the job, and the failure told on it (pod-state.ts podState, holdsSlot, failureReason;
//   planner.ts failedAt).
// Nothing of a pod is written back: an injection is a strategic merge patch of the job's own
// containers, fenced by the pod's uid (planner.ts inject).
import { formatZodIssues } from '../api/field-path.ts';
import { deepFreeze } from '../api/frozen.ts';
import { EJOB_ID_ENV } from '../api/names.ts';
import type { Container, ContainerState, ContainerStatus, Pod } from '../api/pod.ts';
import { parsePod } from '../api/pod-shape.ts';
import type { ItemView } from '../kube/kube.ts';

/** A LIST item as the reconcile keeps it: the pod trimmed, or why it was skipped (a pod the schema refuses). */
export type ListedPod = { pod: Pod } | { unreadable: string };

/** The annotation the kubelet sets on the API server's mirror of a static pod (pod-state.ts). */
const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** The EphemeralJob reconcile's view of a pod LIST: each pod checked whole, then trimmed (trimListedPod), frozen. */
export const LISTED_POD_VIEW: ItemView<ListedPod> = {
  name: 'ejob-pod/1',
  read(raw) {
    const p = parsePod(raw);
    if (!p.success) return { unreadable: `pod ${nameOf(raw)} skipped: unreadable (${formatZodIssues(p.error.issues, '')})` };
    return { pod: deepFreeze(trimListedPod(p.data)) };
  },
};

/** Only what the EphemeralJob planner reads of a pod (the list above); the planner decides the same from it. */
export function trimListedPod(pod: Pod): Pod {
  const m = pod.metadata;
  const s = pod.spec;
  const mirror = m.annotations !== undefined && Object.hasOwn(m.annotations, MIRROR_POD_ANNOTATION) ? { [MIRROR_POD_ANNOTATION]: m.annotations[MIRROR_POD_ANNOTATION]! } : undefined;
  const metadata: Pod['metadata'] = present({ name: m.name, namespace: m.namespace, uid: m.uid, labels: m.labels, creationTimestamp: m.creationTimestamp, deletionTimestamp: m.deletionTimestamp, annotations: mirror });
  const spec: Pod['spec'] = present({
    containers: s.containers.map(named),
    initContainers: s.initContainers?.map(named),
    volumes: s.volumes?.map(volumeKind),
    ephemeralContainers: s.ephemeralContainers?.map(marked),
    hostUsers: s.hostUsers,
    os: isObject(s.os) && typeof s.os.name === 'string' ? { name: s.os.name } : undefined,
    securityContext: hostProcessOnly(s.securityContext),
  });
  const st = pod.status;
  const status = st === undefined ? undefined : present({ phase: st.phase, ephemeralContainerStatuses: st.ephemeralContainerStatuses?.map(stated) });
  return status === undefined ? { metadata, spec } : { metadata, spec, status };
}

/** A container's name, and its hostProcess where it is set. */
function named(c: Container): Container {
  const securityContext = hostProcessOnly(c.securityContext);
  return securityContext === undefined ? { name: c.name } : { name: c.name, securityContext };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A securityContext cut to its windowsOptions.hostProcess, when that is set (a boolean; null is unset, as in Go); else nothing. */
function hostProcessOnly(sc: unknown): { windowsOptions: { hostProcess: boolean } } | undefined {
  const hostProcess = isObject(sc) && isObject(sc.windowsOptions) ? sc.windowsOptions.hostProcess : undefined;
  return typeof hostProcess === 'boolean' ? { windowsOptions: { hostProcess } } : undefined;
}

/** A volume's name, and `{}` for the block-capable source it has (persistentVolumeClaim or ephemeral; null is none, as in Go). */
function volumeKind(v: { name: string; persistentVolumeClaim?: unknown; ephemeral?: unknown }): { name: string; persistentVolumeClaim?: object; ephemeral?: object } {
  return present({ name: v.name, persistentVolumeClaim: v.persistentVolumeClaim == null ? undefined : {}, ephemeral: v.ephemeral == null ? undefined : {} });
}

/** An ephemeral container's name, the env entries that mark its job, and its hostProcess (named). */
function marked(c: Container): Container {
  const env = c.env?.filter((e) => e.name === EJOB_ID_ENV).map((e) => present({ name: e.name, value: e.value }));
  return present({ ...named(c), env });
}

function stated(s: ContainerStatus): ContainerStatus {
  return s.state === undefined ? { name: s.name } : { name: s.name, state: trimState(s.state) };
}

function trimState(state: ContainerState): ContainerState {
  const { waiting: w, running: r, terminated: t } = state;
  return present({
    waiting: w && present({ reason: w.reason, message: w.message }),
    running: r && {},
    terminated: t && present({ exitCode: t.exitCode, reason: t.reason, message: t.message, finishedAt: t.finishedAt }),
  });
}

/** A copy of the object without its undefined fields (as JSON would have it). */
function present<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out as T;
}

function nameOf(item: unknown): string {
  const m = (item as { metadata?: { name?: unknown } } | null)?.metadata;
  return typeof m?.name === 'string' ? m.name : '?';
}
