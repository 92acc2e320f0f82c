import type { Envelope } from '../api/envelope.ts';
import type { Kube } from '../kube/kube.ts';
import type { LockConfig } from './lock.ts';
import type { Plan } from './plan.ts';

/** Where an envelope should go: the keys to reconcile, or why it was skipped. */
export interface Route {
  keys: string[];
  /** Human-readable reason when keys is empty (pepr-style filter reasons). */
  skipped?: string;
}

/**
 * A controller as the engine drives it, shaped like controller-runtime's Reconciler: an
 * event only names keys (route); for each key the engine reads the world (observe), asks the
 * pure planner what to do (plan), applies the actions in order and, on a 409, observes and
 * plans again. Whatever a controller needs serialised (the EphemeralJob's claims on its
 * Lease) is an ordinary resourceVersion-fenced action of its plan, not an engine path.
 */
export interface Controller<O> {
  /** Short name, used in logs, metrics and Lease names ("ejob", "sidecar"). */
  readonly name: string;
  route(event: Envelope, kube: Kube): Promise<Route>;
  /**
   * Read current state for one key; null when there is nothing to reconcile (the key's
   * object is gone and left nothing to tidy up: the engine reports the key "gone"). An
   * object that is gone but left something behind (the EphemeralJob's Lease) is an
   * observation like any other, planned by the same planner. `lock` says where the
   * controller may keep per-key state (Leases) and how long a claim holds.
   */
  observe(key: string, kube: Kube, lock?: LockConfig): Promise<O | null>;
  plan(observed: O, now: Date): Plan;
}
