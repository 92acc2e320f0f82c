// The claims Lease sweep. Each EphemeralJob's claims Lease lives in the lock namespace and is
// deleted by the functions when the job's key is reconciled while the job is being deleted
// or gone (functions/ejob/controller.ts departed()). A job deleted while no relay watched
// never brings that event, so at its first sync and at each periodic resync the relay lists
// the labelled claims Leases and names the key of every one whose job its watch cache does
// not have. It deletes nothing: the functions read the job and the Lease again and delete it
// fenced, exactly as on a DELETED event (functions/ejob/README.md, "When a job goes").
import type { KubeConfig } from '@kubernetes/client-node';
import { parseObjectKey } from '../functions/api/envelope.ts';
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

/** The jobs the labelled claims Leases in `namespace` name (every page); throws what the LIST throws. */
export async function listLeaseJobs(kc: KubeConfig, namespace: string, page: { limit: number; timeoutMs: number; signal?: AbortSignal | undefined }): Promise<NamedJob[]> {
  const path = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`;
  const out: NamedJob[] = [];
  let cont: string | undefined;
  do {
    // Each Lease is read down to the job it names as it arrives (raw-list.ts: map).
    const res = await listRaw(kc, path, { ...page, continue: cont, labelSelector: `${LEASE_LABEL}=true`, map: namedJob });
    for (const job of res.items) if (job) out.push(job);
    cont = res.continue;
  } while (cont);
  return out;
}

/** The job a Lease's key annotation names, or undefined (no annotation, not a job key). */
export function namedJob(lease: unknown): NamedJob | undefined {
  const key = (lease as { metadata?: { annotations?: Record<string, unknown> } } | null)?.metadata?.annotations?.[KEY_ANNOTATION];
  return typeof key === 'string' ? (parseObjectKey(EJOB.kind, key) ?? undefined) : undefined;
}
