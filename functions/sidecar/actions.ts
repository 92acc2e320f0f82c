import { rfc3339 } from '../api/meta.ts';
import type { Container, Pod } from '../api/pod.ts';
import { eventAction, shortHash, type EventSpec } from '../engine/events.ts';
import type { Action } from '../engine/plan.ts';
import type { SidecarOptions } from './config.ts';
import type { Stage } from './strategy.ts';

/** OpenKruise's CRR API. */
export const CRR = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ContainerRecreateRequest' } as const;

/** OpenKruise's pod condition for a phase set by the sidecar terminator. */
export const SIDECAR_TERMINATED_CONDITION = 'SidecarTerminated';

/** Marks a signal container ephemera injected; its value is the targeted sidecar. */
export const SIGNAL_TARGET_ENV = 'EPHEMERA_SIGNAL_TARGET';

/**
 * When ephemera injected the signal container (RFC 3339). The pod's status says nothing of a
 * container the kubelet never started, and an ephemeral container cannot carry an annotation
 * (its subresource writes the spec's ephemeralContainers alone): without it a container the
 * kubelet ignores was looked at every two minutes for ever, silently (review86).
 */
export const SIGNAL_INJECTED_AT_ENV = 'EPHEMERA_SIGNAL_INJECTED_AT';

const SIGNAL_PREFIX = 'ephemera-stop-';

/** The pod as the actions need it: uid and namespace checked by the planner. */
export interface PodRef {
  pod: Pod;
  namespace: string;
  uid: string;
}

/**
 * `sidecar-termination-<uid>` for the first stage, as OpenKruise names it (an existing one
 * from OpenKruise counts). The ignore-exit-code stage gets its own name: OpenKruise reuses
 * the first name, so an earlier CRR silently blocks the second stage.
 */
export function crrName(uid: string, stage: Stage['stage']): string {
  return stage === 'sidecars' ? `sidecar-termination-${uid}` : `sidecar-termination-${uid}-ignore-exit-code`;
}

/** Deterministic, so a retried injection meets a duplicate name (already done). */
export function signalContainerName(sidecar: string): string {
  const readable = `${SIGNAL_PREFIX}${sidecar}`;
  return readable.length <= 63 ? readable : `${SIGNAL_PREFIX}${shortHash(sidecar)}`;
}

/** Create the CRR for these sidecars (409 AlreadyExists means done). */
export function crrAction(ref: PodRef, stage: Stage): Action {
  const { pod, namespace, uid } = ref;
  const name = crrName(uid, stage.stage);
  const labels: Record<string, string> = { 'crr.apps.kruise.io/pod-uid': uid };
  // kruise-daemon watches CRRs by node; OpenKruise's webhook sets this label too.
  if (pod.spec.nodeName) labels['crr.apps.kruise.io/node-name'] = pod.spec.nodeName;
  return {
    verb: 'create',
    ...CRR,
    namespace,
    name,
    alreadyExists: 'done',
    reason: `stop sidecars ${names(stage)} of pod ${namespace}/${pod.metadata.name} through OpenKruise (${stage.stage})`,
    body: {
      ...CRR,
      metadata: {
        name,
        namespace,
        labels,
        // No blockOwnerDeletion: under OwnerReferencesPermissionEnforcement (on in OpenShift)
        // setting it needs `update pods/finalizers`, which the functions are not granted, and
        // every CRR would be refused (403); it only orders a foreground deletion of the pod.
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid, controller: true }],
      },
      spec: {
        podName: pod.metadata.name,
        containers: stage.sidecars.map((s) => ({ name: s.name })),
        strategy: { forceRecreate: true, failurePolicy: 'Ignore' },
      },
    },
  };
}

/**
 * Inject one ephemeral container that shares the sidecar's process namespace
 * (targetContainerName) and signals its PID 1. It runs with the sidecar's own
 * securityContext, so it has the identity and privileges the sidecar has, no more. A retry
 * planned later differs in its time, which kube-apiserver refuses as a change of the
 * container ("may not be changed"): already there, done (apply.ts nameTaken).
 */
export function signalAction(ref: PodRef, sidecar: Container, options: SidecarOptions, now: Date): Action {
  const { pod, namespace } = ref;
  const container: Record<string, unknown> = {
    name: signalContainerName(sidecar.name),
    image: options.signalImage,
    command: options.signalCommand,
    targetContainerName: sidecar.name,
    imagePullPolicy: 'IfNotPresent',
    terminationMessagePolicy: 'FallbackToLogsOnError',
    env: [{ name: SIGNAL_TARGET_ENV, value: sidecar.name }, { name: SIGNAL_INJECTED_AT_ENV, value: rfc3339(now) }],
  };
  const securityContext = (sidecar as Record<string, unknown>).securityContext;
  if (securityContext !== undefined) container.securityContext = securityContext;
  return {
    verb: 'patch',
    apiVersion: 'v1',
    kind: 'Pod',
    subresource: 'ephemeralcontainers',
    namespace,
    name: pod.metadata.name,
    patchType: 'strategic',
    alreadyExists: 'done',
    reason: `signal sidecar ${sidecar.name} of pod ${namespace}/${pod.metadata.name} from an ephemeral container`,
    // The uid of the pod planned on: one deleted and created again under its name since (a
    // training operator's <job>-worker-0, a rerun) is another pod, whose main container may
    // still run; kube-apiserver refuses the patch then (422, metadata.uid is immutable: a
    // PATCH sets no precondition, the ephemeralcontainers strategy keeps the uid sent and
    // ValidateObjectMetaUpdate compares it), and the engine re-plans (apply.ts otherUid;
    // review86). As the EphemeralJob's injection does.
    body: { metadata: { uid: ref.uid }, spec: { ephemeralContainers: [container] } },
    uid: ref.uid,
  };
}

/**
 * Replace the sidecars' images (virtual-kubelet). A strategic merge patch addresses
 * containers by name, not index; metadata.resourceVersion makes a stale plan a 409 (a
 * JSON Patch `test` op would fail with 422, which reads as a refusal, not a conflict).
 */
/**
 * When ephemera wrote an image swap (RFC 3339): the pod's status says nothing of it, and a
 * node that never acts on the swap would otherwise leave the pod looked at for good, silently.
 */
export const SWAPPED_AT_ANNOTATION = 'ephemera.io/sidecar-swapped-at';

export function imageSwapAction(ref: PodRef, swaps: { name: string; image: string }[], now: Date): Action {
  const { pod, namespace } = ref;
  return {
    verb: 'patch',
    apiVersion: 'v1',
    kind: 'Pod',
    namespace,
    name: pod.metadata.name,
    patchType: 'strategic',
    reason: `replace the images of sidecars ${swaps.map((s) => s.name).join(', ')} of pod ${namespace}/${pod.metadata.name} (virtual-kubelet)`,
    // The first swap's time is kept: a later one (another sidecar, under OnFailure) does not put off the first one's Warning (review).
    body: { metadata: { resourceVersion: pod.metadata.resourceVersion, annotations: { [SWAPPED_AT_ANNOTATION]: pod.metadata.annotations?.[SWAPPED_AT_ANNOTATION] ?? now.toISOString().replace(/\.\d+Z$/, 'Z') } }, spec: { containers: swaps } },
    uid: ref.uid,
  };
}

/**
 * Set the pod's phase with condition SidecarTerminated. The kubelet never moves a pod
 * out of a terminal phase; it stops the containers still running and restarts none.
 * Fenced by resourceVersion: the verdict was read from this version of the status.
 */
export function endPodAction(ref: PodRef, end: { phase: 'Succeeded' | 'Failed'; reason: string }, now: Date): Action {
  const { pod, namespace } = ref;
  return {
    verb: 'patch',
    apiVersion: 'v1',
    kind: 'Pod',
    subresource: 'status',
    namespace,
    name: pod.metadata.name,
    patchType: 'strategic',
    reason: `end pod ${namespace}/${pod.metadata.name} as ${end.phase} (${end.reason})`,
    uid: ref.uid,
    body: {
      metadata: { resourceVersion: pod.metadata.resourceVersion },
      status: {
        phase: end.phase,
        conditions: [{ type: SIDECAR_TERMINATED_CONDITION, status: 'True', reason: end.reason, message: 'Terminated by Sidecar Terminator', lastTransitionTime: rfc3339(now) }],
      },
    },
  };
}

/** An Event on the pod, once per distinct discriminator. */
export function podEvent(ref: PodRef, spec: EventSpec, now: Date): Action {
  return eventAction({ apiVersion: 'v1', kind: 'Pod', namespace: ref.namespace, name: ref.pod.metadata.name, uid: ref.uid }, spec, now);
}

function names(stage: Stage): string {
  return stage.sidecars.map((s) => s.name).join(', ');
}
