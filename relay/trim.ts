// What the relay keeps of each object: enough to route and to exit early, nothing else.
// Trimming at the door keeps the relay's memory small (10,000 pods) and envelopes short.
import { EJOB_ID_ENV } from '../functions/api/names.ts';
import { jobFinished } from '../functions/ejob/finished.ts';
import type { Pod } from '../functions/api/pod.ts';
import { trimPodForSidecar } from '../functions/sidecar/predicate.ts';

/** A trimmed EphemeralJob: what the relay's filter needs. */
export interface JobView {
  namespace: string;
  name: string;
  uid?: string;
  resourceVersion?: string;
  selector?: unknown;
  finished: boolean;
}

/**
 * A pod as the relay keeps and forwards it: the sidecar predicate's fields (marking env
 * vars, container states), plus labels and this job's ownership marks on ephemeral
 * containers and their states (the EphemeralJob router and the ledger need those).
 */
export function trimPod(pod: Pod): Pod {
  const base = trimPodForSidecar(pod);
  const m = pod.metadata;
  const ephemeralContainers = (pod.spec.ephemeralContainers ?? []).map((c) => ({
    name: c.name,
    env: (c.env ?? []).filter((e) => e.name === EJOB_ID_ENV).map((e) => ({ name: e.name, value: e.value })),
  }));
  const ephemeralContainerStatuses = (pod.status?.ephemeralContainerStatuses ?? []).map((s) => ({
    name: s.name,
    state: s.state?.terminated ? { terminated: { exitCode: s.state.terminated.exitCode } } : s.state?.running ? { running: {} } : { waiting: { reason: s.state?.waiting?.reason } },
  }));
  return {
    ...base,
    metadata: { ...base.metadata, labels: m.labels, creationTimestamp: m.creationTimestamp, resourceVersion: m.resourceVersion },
    spec: { ...base.spec, nodeName: pod.spec.nodeName, ephemeralContainers },
    status: { ...base.status, ephemeralContainerStatuses },
  };
}

/** The fields of a trimmed pod whose change matters (resourceVersion always changes). */
export function podFingerprint(trimmed: Pod): string {
  const { resourceVersion: _rv, ...meta } = trimmed.metadata;
  return JSON.stringify({ ...trimmed, metadata: meta });
}

/** A job's routing view; finished jobs ignore pod events. */
export function trimJob(raw: Record<string, unknown>): JobView | null {
  const meta = raw.metadata as { name?: string; namespace?: string; uid?: string; resourceVersion?: string; deletionTimestamp?: unknown } | undefined;
  if (!meta?.name || !meta.namespace) return null;
  const spec = raw.spec as { selector?: unknown } | undefined;
  const status = raw.status as { phase?: string; completionTime?: unknown } | undefined;
  const finished = jobFinished(status) && meta.deletionTimestamp === undefined;
  return { namespace: meta.namespace, name: meta.name, uid: meta.uid, resourceVersion: meta.resourceVersion, selector: spec?.selector, finished };
}
