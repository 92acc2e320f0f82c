// The claims Lease sweep. Each EphemeralJob's claims Lease lives in the lock namespace and is
// deleted by the functions when the job's key is reconciled while the job is being deleted
// or gone (functions/ejob/controller.ts departed()). A job deleted while no relay watched
// never brings that event, so at its first sync and at each periodic resync the relay lists
// the labelled claims Leases and names the key of every one whose job its watch cache does
// not have. It deletes nothing: the functions read the job and the Lease again and delete it
// fenced, exactly as on a DELETED event (functions/ejob/README.md, "When a job goes").
import type { KubeConfig } from '@kubernetes/client-node';
import { parseObjectKey } from '../functions/api/envelope.ts';
import { dns1123LabelProblems, dns1123SubdomainProblems } from '../functions/api/name-formats.ts';
import { EJOB } from '../functions/api/names.ts';
import { KEY_ANNOTATION, LEASE_LABEL } from '../functions/ejob/lease-record.ts';
import { listRaw } from './raw-list.ts';

/** Where the claims Leases are (the functions' EPHEMERA_LOCK_NAMESPACE). */
export interface LeaseSweepOptions {
  namespace: string;
}

/** A job a claims Lease names. */
export interface NamedJob {
  namespace: string;
  name: string;
}

/** A labelled Lease whose key annotation names no job that can exist: skipped, and why. */
export interface UnusableLease {
  /** The Lease, as namespace/name. */
  lease: string;
  /** Its key annotation, as it is (cut to 300 characters). */
  key: string;
  problem: string;
}

/** The jobs the labelled claims Leases in `namespace` name (every page), and the Leases naming none that can exist; throws what the LIST throws. */
export async function listLeaseJobs(kc: KubeConfig, namespace: string, page: { limit: number; timeoutMs: number; signal?: AbortSignal | undefined }): Promise<{ jobs: NamedJob[]; unusable: UnusableLease[] }> {
  const path = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`;
  const jobs: NamedJob[] = [];
  const unusable: UnusableLease[] = [];
  let cont: string | undefined;
  do {
    // Each Lease is read down to the job it names as it arrives (raw-list.ts: map).
    const res = await listRaw(kc, path, { ...page, continue: cont, labelSelector: `${LEASE_LABEL}=true`, map: namedJob });
    for (const job of res.items) {
      if (job && 'problem' in job) unusable.push(job);
      else if (job) jobs.push(job);
    }
    cont = res.continue;
  } while (cont);
  return { jobs, unusable };
}

type LeaseLike = { metadata?: { name?: unknown; namespace?: unknown; annotations?: Record<string, unknown> } } | null;

/**
 * The job a Lease's key annotation names; undefined without one that is a job key; what is
 * wrong when the job it names cannot exist (a namespace or name Kubernetes refuses): such a
 * key sent on failed the functions' envelope schema at every sweep, dead-lettered each time
 * while the Lease lasted, with nothing naming the Lease (review80 L3).
 */
export function namedJob(lease: unknown): NamedJob | UnusableLease | undefined {
  const meta = (lease as LeaseLike)?.metadata;
  const key = meta?.annotations?.[KEY_ANNOTATION];
  const job = typeof key === 'string' ? parseObjectKey(EJOB.kind, key) : null;
  if (job === null) return undefined;
  const problems = [...dns1123LabelProblems(job.namespace).map((p) => `namespace "${job.namespace}": ${p}`), ...dns1123SubdomainProblems(job.name).map((p) => `name "${job.name}": ${p}`)];
  if (problems.length === 0) return job;
  return { lease: `${String(meta?.namespace ?? '')}/${String(meta?.name ?? '')}`, key: String(key).slice(0, 300), problem: problems.join('; ') };
}
