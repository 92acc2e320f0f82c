import { z } from 'zod';
import type { Target } from './targets.ts';

/** How many queued target names the ledger keeps (~8 KiB at most); past that, a LIST refills it. */
export const LEDGER_QUEUE_MAX = 256;

/**
 * ephemera's bookkeeping in `status.ephemera`, so a pod event can be handled from the job
 * and that one pod instead of listing every pod of the job. It is only a cache of what a
 * full reconcile computes: a full reconcile (job event, resync) rebuilds it, and anything
 * it cannot vouch for sends the handler back to a full reconcile. OpenKruise's own CRD
 * prunes unknown status fields; then the ledger is simply absent and every event is full.
 */
const InflightState = z.enum(['waiting', 'running']);

/**
 * As stored: in-flight pods are a list, not a map, because the status is written with a
 * JSON merge patch, which merges maps key by key (a finished pod would never leave) but
 * replaces lists whole.
 */
const StoredLedger = z.object({
  v: z.literal(1),
  generation: z.number().int(),
  inflight: z.array(z.object({ pod: z.string(), state: InflightState })),
  queue: z.array(z.string()),
  complete: z.boolean(),
});

/** The ledger as the planner uses it: in-flight pods by name. */
export interface Ledger {
  v: 1;
  /** metadata.generation the ledger was built for; a spec change invalidates it. */
  generation: number;
  /** Target pods with an injected, non-terminal container, by state. */
  inflight: Record<string, z.infer<typeof InflightState>>;
  /** Not yet injected target pods, oldest first (at most LEDGER_QUEUE_MAX). */
  queue: string[];
  /** True when `queue` holds every not yet injected target. */
  complete: boolean;
}

/** The ledger a full reconcile leaves behind, from its targets after injection. */
export function buildLedger(generation: number, targets: readonly Target[]): Ledger {
  const inflight: Ledger['inflight'] = {};
  const pending: string[] = [];
  for (const t of targets) {
    if (t.state === 'waiting' || t.state === 'running') inflight[t.pod.metadata.name] = t.state;
    else if (t.state === 'pending') pending.push(t.pod.metadata.name);
  }
  return { v: 1, generation, inflight, queue: pending.slice(0, LEDGER_QUEUE_MAX), complete: pending.length <= LEDGER_QUEUE_MAX };
}

/** The ledger in a job's status, if present and readable. */
export function readLedger(status: unknown): Ledger | undefined {
  const raw = (status as { ephemera?: unknown } | undefined)?.ephemera;
  const r = StoredLedger.safeParse(raw);
  if (!r.success) return undefined;
  return { ...r.data, inflight: Object.fromEntries(r.data.inflight.map((e) => [e.pod, e.state])) };
}

/** The ledger as written into status (see StoredLedger). */
export function storedLedger(ledger: Ledger): z.infer<typeof StoredLedger> {
  return { ...ledger, inflight: Object.entries(ledger.inflight).map(([pod, state]) => ({ pod, state })) };
}
