// Which pod events can matter to a function. Shares the sidecar predicate and the label
// selector code with the functions, without their heavy dependencies (no Kubernetes client).
import { MAX_ENVELOPE_JOBS } from '../functions/api/envelope.ts';
import { EJOB_ID_ENV } from '../functions/api/names.ts';
import { LabelSelector } from '../functions/api/meta.ts';
import type { Pod } from '../functions/api/pod.ts';
import { selectorMatches } from '../functions/api/selector.ts';
import { containerRoles } from '../functions/sidecar/env.ts';
import { podDue } from '../functions/sidecar/predicate.ts';
import type { JobView } from './trim.ts';

/**
 * A job's selector, parsed once per job view: the same view meets every pod event of its
 * namespace, and parsing it each time cost more than matching it. A changed job is a new
 * view (trim.ts builds one per event), so nothing stale is kept.
 */
const selectors = new WeakMap<JobView, ReturnType<typeof LabelSelector.safeParse>>();

function parsedSelector(job: JobView): ReturnType<typeof LabelSelector.safeParse> {
  let parsed = selectors.get(job);
  if (parsed === undefined) selectors.set(job, (parsed = LabelSelector.safeParse(job.selector)));
  return parsed;
}

/** Forward, or skip with a reason (pepr-style). */
export type Verdict = { forward: true; why: string } | { forward: false; reason: string };

/**
 * A pod event is forwarded when the pod is selected by an unfinished job in its namespace,
 * carries an ephemeral container owned by a job, or has sidecars and the sidecar predicate
 * says it is due. `jobsInNamespace` are the jobs of the pod's namespace.
 */
export function filterPod(pod: Pod, jobsInNamespace: Iterable<JobView>, deleted = false): Verdict {
  if ((pod.spec.ephemeralContainers ?? []).some((c) => (c.env ?? []).some((e) => e.name === EJOB_ID_ENV))) {
    return { forward: true, why: 'carries an ephemeral container owned by an EphemeralJob' };
  }
  for (const job of jobsInNamespace) {
    if (job.finished) continue;
    const selector = parsedSelector(job);
    // A job whose selector we cannot read is told about every pod: its reconcile reports the error.
    if (!selector.success || selectorMatches(selector.data, pod.metadata.labels)) return { forward: true, why: `selected by EphemeralJob ${job.name}` };
  }
  if (deleted) return { forward: false, reason: 'deleted pod no job selects' };
  if (containerRoles(pod).sidecars.length === 0) return { forward: false, reason: 'no job selects it and it has no sidecars' };
  const due = podDue(pod);
  return due.due ? { forward: true, why: 'sidecars are due for termination' } : { forward: false, reason: `sidecars not due: ${due.reason}` };
}

/**
 * The unfinished jobs (of the pod's namespace) that concern the pod, by name: the ones
 * whose selector matches its labels (or cannot be read: their reconcile reports it), and the
 * ones whose uid one of its ephemeral containers carries. The same rule as the EphemeralJob
 * router's, which takes this list (envelope `data.jobs`) instead of listing the jobs.
 */
export function concernedJobs(pod: Pod, jobsInNamespace: Iterable<JobView>): string[] | undefined {
  const names: string[] = [];
  for (const job of jobsInNamespace) {
    if (job.finished) continue;
    const selector = parsedSelector(job);
    if (!selector.success || selectorMatches(selector.data, pod.metadata.labels) || (job.uid !== undefined && carriesJobId(pod, job.uid))) names.push(job.name);
  }
  // More than an envelope may name: none, and the router lists the namespace's jobs.
  return names.length > MAX_ENVELOPE_JOBS ? undefined : names;
}

/** One of the pod's ephemeral containers carries this job uid (KRUISE_EJOB_ID). */
function carriesJobId(pod: Pod, uid: string): boolean {
  for (const c of pod.spec.ephemeralContainers ?? []) for (const e of c.env ?? []) if (e.name === EJOB_ID_ENV && e.value === uid) return true;
  return false;
}

/**
 * Do these two label sets of a pod select it for the same unfinished jobs? A job whose
 * selector cannot be read is told about every pod, so it selects both.
 */
export function sameSelection(before: Record<string, string> | undefined, after: Record<string, string> | undefined, jobsInNamespace: Iterable<JobView>): boolean {
  for (const job of jobsInNamespace) {
    if (job.finished) continue;
    const selector = parsedSelector(job);
    if (selector.success && selectorMatches(selector.data, before) !== selectorMatches(selector.data, after)) return false;
  }
  return true;
}
