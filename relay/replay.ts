// Replaying the watch cache, as an informer's resync does: no LIST, and only what can need
// work. `due`: every EphemeralJob not finished (or whose TTL has come) and every pod the
// sidecar predicate finds due: the periodic safety net, so at most one envelope per such
// object; pods a job selects are the job's reconcile's business. `all`: every job, and the
// same pods, for when envelopes may have been dropped (a new leader, a queue that
// overflowed) or none was sent yet (the first list of the pods). Never every pod a job
// selects: each is one reconcile of the job, which LISTs all its pods, and the job's own
// RESYNC already reads them all (review: a relay's start cost a 500-pod job 501 reconciles
// and 137 MB of LISTs, O(N²) in its pods).
import type { Pod } from '../functions/api/pod.ts';
import { podDue } from '../functions/sidecar/predicate.ts';
import { queuedJob, queuedPod, type Queued } from './envelope.ts';
import type { JobView } from './trim.ts';

/** How much a replay sends. */
export type ReplayScope = 'due' | 'all';

/**
 * How far ahead a finished job's TTL brings it back: SQS's longest delay, so the reconcile
 * of a resync sends the message due at the TTL (the functions send none longer: a job's
 * long waits are the resync's, functions/runtime/lambda/sqs-consumer.ts).
 */
export const TTL_LOOKAHEAD_MS = 900_000;

/** Whether a job can need work now: unfinished (or being deleted), or its TTL within TTL_LOOKAHEAD_MS. */
export function jobNeedsWork(job: JobView, now: Date): boolean {
  return !job.finished || (job.expiresAt !== undefined && job.expiresAt <= now.getTime() + TTL_LOOKAHEAD_MS);
}

/** What a replay reads: the cached objects per reflector and the jobs of a namespace. */
export interface ReplayInput {
  scope: ReplayScope;
  now: Date;
  pods: Iterable<Pod>[];
  jobs: Iterable<JobView>[];
  /**
   * The jobs to stamp on a pod's envelope: none when its namespace's jobs are known (each
   * that needs work is replayed itself), else undefined (the router lists them).
   */
  stamp(pod: Pod): string[] | undefined;
}

/** RESYNC events for the cached objects the scope selects, lazily (pulled as the queue has room). */
export function* replayCache(input: ReplayInput): Generator<Queued> {
  const at = input.now.getTime();
  for (const cached of input.jobs) {
    for (const job of cached) {
      if (input.scope === 'all' || jobNeedsWork(job, input.now)) yield queuedJob('RESYNC', job, at);
    }
  }
  for (const cached of input.pods) {
    for (const pod of cached) {
      const e = podReplay(input, pod);
      if (e) yield e;
    }
  }
}

function podReplay(input: ReplayInput, pod: Pod): Queued | undefined {
  return podDue(pod).due ? queuedPod('RESYNC', pod, input.now.getTime(), { jobs: input.stamp(pod) }) : undefined;
}
