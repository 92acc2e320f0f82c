import type { Container, Pod } from '../api/pod.ts';

/** Marks a sidecar (value `true`, any case). OpenKruise's name, kept for compatibility. */
export const TERMINATE_SIDECAR_ENV = 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT';
/** Marks a sidecar and names the image that replaces it on a virtual-kubelet node. */
export const TERMINATE_WITH_IMAGE_ENV = 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE';
/** The sidecar's exit code must not decide the pod's phase (value `true`, any case). */
export const IGNORE_EXIT_CODE_ENV = 'KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE';

/** How ephemera sees one of the pod's regular containers. */
export interface SidecarInfo {
  name: string;
  /** Non-empty KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE, if any. */
  withImage?: string;
  /** KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE=true: end the pod by status first. */
  ignoreExitCode: boolean;
}

/**
 * The plain value of an env var as the container sees it. With duplicate names the last
 * entry wins, as in the kubelet (later entries override earlier ones); valueFrom entries
 * have no value here, so they never mark a sidecar.
 */
function envValue(c: Container, name: string): string | undefined {
  let value: string | undefined;
  for (const e of c.env ?? []) if (e.name === name) value = e.value;
  return value;
}

const isTrue = (v: string | undefined): boolean => v !== undefined && v.toLowerCase() === 'true';

/** The sidecar marks on a container, or null for a main container. */
export function sidecarInfo(c: Container): SidecarInfo | null {
  const withImage = envValue(c, TERMINATE_WITH_IMAGE_ENV);
  const marked = isTrue(envValue(c, TERMINATE_SIDECAR_ENV));
  if (!marked && !withImage) return null;
  const info: SidecarInfo = { name: c.name, ignoreExitCode: isTrue(envValue(c, IGNORE_EXIT_CODE_ENV)) };
  if (withImage) info.withImage = withImage;
  return info;
}

/** The pod's regular containers split into main and sidecar. */
export interface ContainerRoles {
  mains: string[];
  sidecars: SidecarInfo[];
  /** Init containers with restartPolicy Always: Kubernetes stops these itself. */
  nativeSidecars: string[];
}

/**
 * Classify spec.containers only. Native sidecars (init containers with restartPolicy
 * Always, https://kubernetes.io/docs/concepts/workloads/pods/sidecar-containers/) are
 * reported but never acted on: the kubelet stops them once the main containers end.
 */
export function containerRoles(pod: Pod): ContainerRoles {
  const roles: ContainerRoles = { mains: [], sidecars: [], nativeSidecars: [] };
  for (const c of pod.spec.containers) {
    const info = sidecarInfo(c);
    if (info) roles.sidecars.push(info);
    else roles.mains.push(c.name);
  }
  for (const c of pod.spec.initContainers ?? []) if (c.restartPolicy === 'Always') roles.nativeSidecars.push(c.name);
  return roles;
}
