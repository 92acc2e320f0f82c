// What the relay does with one pod event, decided from its cache alone: queue it, with the
// jobs to name on its envelope, or skip it and say why. Pure, so the EphemeralJob cost bench
// (test/bench/ejob-cost.bench.ts) makes its events with the very same decision.
import type { ContainerStatus, Pod } from '../functions/api/pod.ts';
import { isTerminal } from '../functions/ejob/pod-state.ts';
import { concernedJobs, filterPod, sameSelection } from './filter.ts';
import type { Decoded, ReflectorEvent } from './reflector.ts';
import { labelsChangedOnly, type JobView } from './trim.ts';

/**
 * Forward (with the envelope's `data.jobs`, undefined when unknown; `hold`: the change only
 * starts ephemeral containers, see startsOnly), or skip with a reason.
 */
export type PodDecision = { forward: true; jobs: string[] | undefined; hold: boolean } | { forward: false; reason: string };

/** The relay's view of the pod's namespace: its job views, and whether it can know them at all. */
export interface NamespaceJobs {
  /** The job views of the namespace (called again for each use: a Map's values() is read once). */
  jobs(): Iterable<JobView>;
  /** False while the relay cannot list EphemeralJobs (404/403): then it names no jobs. */
  known: boolean;
}

/**
 * A pod event (`previous`: the fingerprint it replaces, if the pod was cached) is forwarded
 * when a field the functions read changed and the filter says it can matter. Labels matter
 * to the functions only through which jobs select the pod (the sidecar terminator reads
 * none), so a change of labels alone that selects the same jobs is skipped.
 */
export function decidePod(type: ReflectorEvent, d: Decoded<Pod>, previous: string | undefined, ns: NamespaceJobs): PodDecision {
  if (type !== 'DELETED' && previous === d.fingerprint) return { forward: false, reason: 'nothing relevant changed' };
  const pod = d.object;
  const labelsOnly = type !== 'DELETED' && previous !== undefined ? labelsChangedOnly(previous, d.fingerprint) : null;
  if (labelsOnly && sameSelection(labelsOnly.before, pod.metadata.labels, ns.jobs())) return { forward: false, reason: 'only labels changed, selected by the same jobs' };
  const verdict = filterPod(pod, ns.jobs(), type === 'DELETED');
  if (!verdict.forward) return { forward: false, reason: verdict.reason.split(':')[0] ?? 'filtered' };
  const hold = type === 'MODIFIED' && previous !== undefined && startsOnly(previous, d);
  return { forward: true, jobs: ns.known ? concernedJobs(pod, ns.jobs()) : undefined, hold };
}

interface Fingerprinted {
  metadata: unknown;
  spec: { ephemeralContainers?: unknown[] } & Record<string, unknown>;
  status?: { ephemeralContainerStatuses?: ContainerStatus[] } & Record<string, unknown>;
}

/**
 * True when a pod's change (its fingerprint before → now) does nothing but add ephemeral
 * containers and move them to waiting (for a reason that can still resolve) or running:
 * nothing ends, fails, or changes anywhere else in what the relay keeps of the pod. Such a
 * change can be held back (the relay's hold, delivery-queue.ts) — an injection's echo and a
 * container's start — so that a short container's exit, which ends the hold, goes as one
 * event. No rule reads it sooner: a start changes only the job's running/waiting counts (a
 * start shown up to the hold late is the only cost), an injection's own reconcile already
 * counted the pod as waiting, and slots and claims are read from the pods at every
 * reconcile, never from events. Pure.
 */
export function startsOnly(previous: string, d: Decoded<Pod>): boolean {
  const added = d.object.spec.ephemeralContainers ?? [];
  // Most pods: no ephemeral containers at all; a pod with one that has ended never holds.
  if (added.length === 0 || (d.object.status?.ephemeralContainerStatuses ?? []).some((s) => isTerminal(s.state))) return false;
  const before = JSON.parse(previous) as Fingerprinted;
  const now = JSON.parse(d.fingerprint) as Fingerprinted;
  const had = before.spec.ephemeralContainers ?? [];
  // Ephemeral containers are only ever added: what the pod had stays as it was.
  if (had.length > added.length || JSON.stringify(had) !== JSON.stringify((now.spec.ephemeralContainers ?? []).slice(0, had.length))) return false;
  const statusNames = (x: Fingerprinted): string[] => (x.status?.ephemeralContainerStatuses ?? []).map((s) => s.name);
  if (!statusNames(before).every((n) => statusNames(now).includes(n))) return false;
  return JSON.stringify(withoutEphemeral(before)) === JSON.stringify(withoutEphemeral(now));
}

function withoutEphemeral(x: Fingerprinted): Fingerprinted {
  return { metadata: x.metadata, spec: { ...x.spec, ephemeralContainers: [] }, status: { ...x.status, ephemeralContainerStatuses: [] } };
}
