import type { EjobConditionType, EjobPhase, EphemeralJobStatus } from '../api/ephemeraljob.ts';
import { rfc3339, toDate, type Condition } from '../api/meta.ts';

/** The counters of EphemeralJobStatus. */
export interface Counts {
  match: number;
  succeeded: number;
  failed: number;
  running: number;
  waiting: number;
}

/** A condition the planner wants, before timestamps are decided. */
export interface WantedCondition {
  type: EjobConditionType;
  status: 'True' | 'False';
  reason: string;
  message?: string;
}

/**
 * Merge wanted conditions into the previous ones. lastTransitionTime moves only when a
 * condition's status changes, and lastProbeTime only when anything about it changes, so
 * an unchanged world produces an identical status (and so no write).
 */
export function mergeConditions(prev: readonly Condition[], wanted: readonly WantedCondition[], now: Date): Condition[] {
  const ts = rfc3339(now);
  const out: Condition[] = [];
  for (const w of wanted) {
    const p = prev.find((c) => c.type === w.type);
    const statusChanged = p?.status !== w.status;
    const changed = statusChanged || p?.reason !== w.reason || (p?.message ?? '') !== (w.message ?? '');
    const c: Condition = {
      type: w.type,
      status: w.status,
      reason: w.reason,
      lastProbeTime: changed ? ts : (p?.lastProbeTime ?? ts),
      lastTransitionTime: statusChanged ? ts : (p?.lastTransitionTime ?? ts),
    };
    if (w.message) c.message = w.message;
    out.push(c);
  }
  // Conditions we do not manage (written by someone else) are kept as they are.
  for (const p of prev) if (!out.some((c) => c.type === p.type)) out.push(p);
  return out;
}

/** The status as the planner writes it; dates normalised to RFC 3339 strings. */
export interface NextStatus extends Counts {
  phase: EjobPhase;
  startTime?: string;
  completionTime?: string;
  conditions: Condition[];
  /** null removes the `status.ephemera` ledger an earlier version kept there (merge patch). */
  ephemera?: null;
}

/** Normalise an observed status for comparison (client-node may hand back Date objects). */
export function normaliseStatus(s: EphemeralJobStatus | undefined): Record<string, unknown> {
  if (!s) return {};
  const out: Record<string, unknown> = { ...s };
  for (const k of ['startTime', 'completionTime'] as const) {
    const d = toDate(s[k]);
    if (d) out[k] = rfc3339(d);
  }
  return out;
}
