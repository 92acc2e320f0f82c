import * as z from 'zod';
import { ObjectMeta } from './meta.ts';

/** An env entry. valueFrom entries have no value; the functions only read plain values. */
export const EnvVar = z.looseObject({ name: z.string(), value: z.string().optional() });
export type EnvVar = z.infer<typeof EnvVar>;

/** The container fields the planners read; everything else passes through. */
export const Container = z.looseObject({
  name: z.string(),
  image: z.string().optional(),
  env: z.array(EnvVar).optional(),
  restartPolicy: z.string().optional(),
  targetContainerName: z.string().optional(),
});
export type Container = z.infer<typeof Container>;

export const ContainerState = z.looseObject({
  waiting: z.looseObject({ reason: z.string().optional(), message: z.string().optional() }).optional(),
  running: z.looseObject({ startedAt: z.union([z.string(), z.date()]).optional() }).optional(),
  terminated: z.looseObject({
    exitCode: z.number(),
    reason: z.string().optional(),
    message: z.string().optional(),
    startedAt: z.union([z.string(), z.date()]).optional(),
    finishedAt: z.union([z.string(), z.date()]).optional(),
  }).optional(),
});
export type ContainerState = z.infer<typeof ContainerState>;

export const ContainerStatus = z.looseObject({
  name: z.string(),
  state: ContainerState.optional(),
  lastState: ContainerState.optional(),
  restartCount: z.number().optional(),
  image: z.string().optional(),
  ready: z.boolean().optional(),
});
export type ContainerStatus = z.infer<typeof ContainerStatus>;

/**
 * A Pod as the functions see it. Parsing is lenient (unknown fields pass) but the fields
 * we read are typed, so a pod with odd fields fails here with a path, not deep in a planner.
 */
export const Pod = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMeta,
  spec: z.looseObject({
    nodeName: z.string().optional(),
    restartPolicy: z.string().optional(),
    shareProcessNamespace: z.boolean().optional(),
    /** The node's process namespace: an ephemeral container does not join its target's then (the SidecarTerminator's signal). */
    hostPID: z.boolean().optional(),
    containers: z.array(Container),
    initContainers: z.array(Container).optional(),
    ephemeralContainers: z.array(Container).optional(),
    /** The host's user namespace unless false: procMount Unmasked needs false (container-rules.ts podBoundProblems). */
    hostUsers: z.boolean().optional(),
    /** Names, and whether each is a PVC or an ephemeral volume: an injection whose volumeMounts name no volume of the pod, or whose volumeDevices name one of another kind, is refused. */
    volumes: z.array(z.looseObject({ name: z.string() })).optional(),
  }),
  status: z.looseObject({
    phase: z.string().optional(),
    reason: z.string().optional(),
    conditions: z.array(z.looseObject({ type: z.string(), status: z.string() })).optional(),
    containerStatuses: z.array(ContainerStatus).optional(),
    initContainerStatuses: z.array(ContainerStatus).optional(),
    ephemeralContainerStatuses: z.array(ContainerStatus).optional(),
  }).optional(),
});
export type Pod = z.infer<typeof Pod>;

/** A Node: only labels matter (type=virtual-kubelet). */
export const Node = z.looseObject({ metadata: ObjectMeta });
export type Node = z.infer<typeof Node>;
