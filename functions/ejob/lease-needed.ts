import type { EphemeralJobObject, EphemeralJobSpec } from '../api/ephemeraljob.ts';
import type { Pod } from '../api/pod.ts';
import { countStates, decidePhase, pastDeadline } from './planner.ts';
import { slotHolders } from './pod-state.ts';
import { selectTargets } from './targets.ts';

/** Whether planning an active job needs its Lease, and why (for the observation's notes). */
export interface LeaseNeed {
  needed: boolean;
  why: string;
}

/**
 * Whether a plan of this active job, from these pods, can need its Lease: the first stage of
 * the observation (controller.ts) reads the job and its pods only, and reads the Lease (then
 * the pods again, README step 3) unless the pods alone prove that no plan can claim, seal or
 * repair anything, whatever the Lease holds:
 * - some pod holds a slot (pod-state.ts `slotHolders`, the count the claim rules use), so
 *   the sealed record cannot narrow the targets (planner.ts), and
 * - no claim is possible from any record: at least `parallelism` pods hold a slot (claims
 *   only add to that), or the job is paused, or no target is left to inject; and
 * - not a resume, whose `startTime` takes the server's time read with the Lease; and
 * - no verdict (the seal is a Lease write): the phase these targets give, at `at`, is not
 *   Succeeded or Failed. `at` is the latest time the plan may be made: the deadline is the
 *   only clock in this, and once passed it stays passed.
 * `test/ejob/lease-needed.test.ts` checks, over random jobs, pods, Leases and clocks, that
 * whenever this says "not needed" the plan is the same with the Lease as without it. Pure.
 */
export function leaseNeeded(job: EphemeralJobObject, spec: EphemeralJobSpec, pods: readonly Pod[], at: Date): LeaseNeed {
  const uid = job.metadata.uid ?? '';
  const holders = slotHolders(pods, uid).length;
  const parallelism = spec.parallelism ?? 1;
  if (holders === 0) return { needed: true, why: 'no pod holds a slot' };
  // A resume's startTime is the later of the planner's clock and the server's, as the deadline
  // is judged (review88 F2): the server's time as read with the Lease, as every other plan of
  // the job after a Lease read. Once per resume.
  if (job.status?.phase === 'Paused' && !spec.paused) return { needed: true, why: 'resumed: startTime takes the server\'s time read with the Lease' };
  const { targets } = selectTargets(spec, uid, pods);
  const left = targets.some((t) => t.state === 'pending');
  if (holders < parallelism && !spec.paused && left) return { needed: true, why: `${holders} of ${parallelism} slots held: a pod may be claimed` };
  const phase = decidePhase(spec, countStates(targets), pastDeadline(job, spec, at));
  if (phase === 'Succeeded' || phase === 'Failed') return { needed: true, why: `phase ${phase}: the verdict is sealed on the Lease` };
  const because = holders >= parallelism ? `${holders} of ${parallelism} slots held` : spec.paused ? 'paused' : 'no target pod left to inject';
  return { needed: false, why: `no claim, seal or repair is possible (${because}; phase ${phase})` };
}
