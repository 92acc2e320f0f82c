// What the relay does with one pod event, decided from its cache alone: queue it, with the
// jobs to name on its envelope, or skip it and say why. Pure, so the EphemeralJob cost bench
// (test/bench/ejob-cost.bench.ts) makes its events with the very same decision.
import type { Pod } from '../functions/api/pod.ts';
import { concernedJobs, filterPod, sameSelection } from './filter.ts';
import type { Decoded, ReflectorEvent } from './reflector.ts';
import { labelsChangedOnly, type JobView } from './trim.ts';

/** Forward (with the envelope's `data.jobs`, undefined when unknown), or skip with a reason. */
export type PodDecision = { forward: true; jobs: string[] | undefined } | { forward: false; reason: string };

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
  return { forward: true, jobs: ns.known ? concernedJobs(pod, ns.jobs()) : undefined };
}
