// The relay's EphemeralJob views by namespace, then name: what the pod filter, the jobs
// stamp on pod envelopes, the replay and the Lease sweep read. A namespace is kept only while
// it has a job: namespaces come and go (CI), and the replay walks every one kept.
import type { ReflectorEvent } from './reflector.ts';
import type { JobView } from './trim.ts';

/** Job views by namespace, then name; no namespace without a job. */
export type JobsByNamespace = Map<string, Map<string, JobView>>;

/** Record one job event: a deleted job leaves the index (its namespace too, with its last job); any other event puts its view in. */
export function indexJob(jobs: JobsByNamespace, type: ReflectorEvent, job: JobView): void {
  const inNs = jobs.get(job.namespace);
  if (type !== 'DELETED') {
    if (inNs) inNs.set(job.name, job);
    else jobs.set(job.namespace, new Map([[job.name, job]]));
    return;
  }
  inNs?.delete(job.name);
  if (inNs?.size === 0) jobs.delete(job.namespace);
}
