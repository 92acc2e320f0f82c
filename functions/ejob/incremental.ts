import { type EphemeralJobObject, type EphemeralJobSpec } from '../api/ephemeraljob.ts';
import type { Pod } from '../api/pod.ts';
import type { Action, Plan } from '../engine/plan.ts';
import type { Ledger } from './ledger.ts';
import { hasForeignNamesake, isActive, podState, type PodState } from './pod-state.ts';
import { activeSince, decidePhase, injectionActions, planStatus } from './planner.ts';
import type { Counts } from './status.ts';

/** What a pod event needs observed: the job, its ledger, the pod, and the queue heads it may inject. */
export interface PodEventObserved {
  job: EphemeralJobObject;
  spec: EphemeralJobSpec;
  ledger: Ledger;
  /** The event's pod as it is now; null when it no longer exists. */
  pod: Pod | null;
  /** Current state of the first queued pods, in queue order (null = gone). */
  candidates: { name: string; pod: Pod | null }[];
}

const terminal = (s: PodState): boolean => s === 'succeeded' || s === 'failed';

/**
 * How many queued pods a pod event may inject into: the slots free after this event.
 * Observation reads only that many pods (plus a little slack for pods that turn out gone).
 */
export function slotsAfter(spec: EphemeralJobSpec, ledger: Ledger, pod: Pod | null, jobUid: string): number {
  if (spec.paused || !pod) return 0;
  const name = pod.metadata.name;
  const frees = ledger.inflight[name] !== undefined && terminal(podState(pod, jobUid));
  const inflight = Object.keys(ledger.inflight).length - (frees ? 1 : 0);
  return Math.max(0, (spec.parallelism ?? 1) - inflight);
}

/**
 * Handle one pod event from the ledger: a Plan, or `reobserve` with the reason a full
 * reconcile (LIST of the job's pods) is needed instead. Pure. Anything the ledger cannot
 * vouch for goes to a full reconcile, which rebuilds the ledger; so does a job's last pod,
 * so the final verdict is always taken over every pod.
 */
export function planPodEvent(o: PodEventObserved, now: Date): Plan {
  const full = (why: string): Plan => ({ actions: [], reobserve: why });
  const { job, spec, ledger, pod } = o;
  const uid = job.metadata.uid ?? '';
  const stale = ledgerStale(o, now);
  if (stale) return full(stale);
  if (!pod) return full('pod is gone');
  if (!isActive(pod)) return full('pod is no longer active');
  const name = pod.metadata.name;
  const state = podState(pod, uid);
  const prev = ledger.inflight[name];
  if (state === 'pending') {
    if (prev !== undefined) return full('ledger says injected but the pod has no container of ours');
    // A new or queued pod: only interesting if the job has room for it right now.
    return slotsAfter(spec, ledger, pod, uid) > 0 && (ledger.queue.length > 0 || !ledger.complete) ? full('free slots to fill') : noop(`pod ${name} waits its turn`);
  }
  if (prev === undefined) return terminal(state) ? noop(`pod ${name} already counted`) : full('pod has our container but the ledger does not track it');
  if (prev === state) return noop(`pod ${name} still ${state}`);
  return advance(o, name, state, now);
}

/**
 * A job MODIFIED event whose spec generation the ledger was built for: its status or
 * metadata changed (most often our own status write), which needs no look at the pods.
 * Spec changes, deadlines and anything else go to a full reconcile.
 */
export function planJobEvent(o: { job: EphemeralJobObject; spec: EphemeralJobSpec; ledger: Ledger }, now: Date): Plan {
  const stale = ledgerStale(o, now);
  if (stale) return { actions: [], reobserve: stale };
  return noop('job changed outside its spec; the ledger is current');
}

/** Why the ledger cannot be planned from any more (a spec change, a passed deadline), or undefined. */
function ledgerStale(o: { job: EphemeralJobObject; spec: EphemeralJobSpec; ledger: Ledger }, now: Date): string | undefined {
  const { job, spec, ledger } = o;
  if (ledger.generation !== (job.metadata.generation ?? 0)) return 'spec changed since the ledger was built';
  if (spec.activeDeadlineSeconds === undefined) return undefined;
  const deadline = activeSince(job, now).getTime() + spec.activeDeadlineSeconds * 1000;
  return now.getTime() >= deadline ? 'activeDeadlineSeconds passed' : undefined;
}

function noop(why: string): Plan {
  return { actions: [], notes: [why] };
}

/** The pod moved on: adjust counts, fill freed slots from the queue, write status. */
function advance(o: PodEventObserved, name: string, state: PodState, now: Date): Plan {
  const { job, spec } = o;
  const uid = job.metadata.uid ?? '';
  const ledger: Ledger = { ...o.ledger, inflight: { ...o.ledger.inflight }, queue: [...o.ledger.queue] };
  const counts = countsOf(job);
  const prev = ledger.inflight[name];
  if (prev) counts[prev]--;
  counts[state === 'pending' ? 'waiting' : state]++;
  if (terminal(state)) delete ledger.inflight[name];
  else ledger.inflight[name] = state as 'waiting' | 'running';

  const actions: Action[] = [];
  let slots = slotsAfter(spec, o.ledger, o.pod, uid);
  for (const c of o.candidates) {
    if (slots === 0) break;
    ledger.queue = ledger.queue.filter((n) => n !== c.name);
    if (!c.pod || !isActive(c.pod) || podState(c.pod, uid) !== 'pending' || hasForeignNamesake(c.pod, uid, spec.template.ephemeralContainers.map((x) => x.name))) {
      counts.match = Math.max(0, counts.match - 1); // no longer a target: a full reconcile would not count it
      continue;
    }
    actions.push(...injectionActions(job, spec, c.pod, now));
    ledger.inflight[c.name] = 'waiting';
    counts.waiting++;
    slots--;
  }
  if (slots > 0 && ledger.queue.length === 0 && !ledger.complete) return { actions: [], reobserve: 'queue exhausted: refill from a LIST' };
  if (Object.keys(ledger.inflight).length === 0 && ledger.queue.length === 0) return { actions: [], reobserve: 'no pod left in flight: final verdict over every pod' };
  const phase = decidePhase(spec, counts, false);
  actions.push(...planStatus(job, { counts, phase, targets: [], now, ledger }).actions);
  return { actions };
}

function countsOf(job: EphemeralJobObject): Counts {
  const s = job.status ?? {};
  return { match: s.match ?? 0, succeeded: s.succeeded ?? 0, failed: s.failed ?? 0, running: s.running ?? 0, waiting: s.waiting ?? 0 };
}
