// How the simulated kubelet plays a chaos world: a container's image says what it does
// (`chaos/probe:exit-1-after-2`: runs two ticks, exits 1; `chaos/INVALID:image`: stays waiting
// with InvalidImageName; `…:run`: runs until stopped), and a pod annotation gives the exit code
// of a sidecar stopped with SIGTERM. Deterministic given the ticks.
import type { ContainerFate, ContainerSpec, KubeletPolicy, KubeObject } from '../../functions/cluster/index.ts';
import { SIGTERM_EXIT_ANNOTATION } from './world.ts';

const FATE = /:exit-(\d+)-after-(\d+)$/;

/** The chaos kubelet policy; it counts ticks per container run, so give each schedule its own. */
export function chaosPolicy(): KubeletPolicy {
  const seen = new Map<string, number>();
  const fate = (pod: KubeObject, c: ContainerSpec, restarted: boolean): ContainerFate => {
    const image = c.image ?? '';
    if (image.includes('INVALID')) return { waitingReason: 'InvalidImageName', message: `couldn't parse image reference "${image}"` };
    const m = FATE.exec(image);
    if (!m) return 'run';
    const key = `${pod.metadata.uid}/${c.name}/${restarted ? 'again' : 'first'}`;
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    // Two calls bring it to running (none → waiting → running); then it runs `after` ticks.
    if (n <= Number(m[2]) + 1) return 'run';
    // A main container restarted under OnFailure succeeds the second time.
    return { exitCode: restarted ? 0 : Number(m[1]) };
  };
  return {
    ephemeral: (pod, c) => fate(pod, c, false),
    container: (pod, c) => fate(pod, c, restartCount(pod, c.name) > 0),
    sigtermExitCode: (pod) => Number((pod.metadata.annotations as Record<string, string> | undefined)?.[SIGTERM_EXIT_ANNOTATION] ?? 0),
    swappedImageExitCode: () => 0,
  };
}

function restartCount(pod: KubeObject, name: string): number {
  const statuses = ((pod.status as { containerStatuses?: { name: string; restartCount?: number }[] } | undefined)?.containerStatuses) ?? [];
  return statuses.find((s) => s.name === name)?.restartCount ?? 0;
}
