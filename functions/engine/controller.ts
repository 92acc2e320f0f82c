import type { Envelope } from '../api/envelope.ts';
import type { Kube } from '../kube/kube.ts';
import type { Plan } from './plan.ts';

/** Where an envelope should go: the keys to reconcile, or why it was skipped. */
export interface Route {
  keys: string[];
  /** Human-readable reason when keys is empty (pepr-style filter reasons). */
  skipped?: string;
}


/**
 * A controller as the engine drives it: route (which keys does this event concern),
 * observe (read current state for one key), plan (pure). The engine owns locking,
 * applying, conflict re-planning and requeueing, so controllers stay small.
 */
export interface Controller<O> {
  /** Short name, used in logs, metrics and lock names ("ejob", "sidecar"). */
  readonly name: string;
  /**
   * Every write this controller plans is idempotent (fixed names, AlreadyExists = done) or
   * fenced by resourceVersion, so two instances acting on the same key at once cannot do
   * anything twice: the engine applies a plan from an unlocked read as it is, with no Lease
   * and no second read. Leave unset when a plan counts things others may be changing
   * (the EphemeralJob's parallelism).
   */
  readonly fencedWrites?: boolean;
  /**
   * Events that usually change nothing for this controller (a pod's unrelated update, our
   * own status write): the engine plans once from an unlocked, cheap read and takes the
   * Lease only when there is something to write. Unset: always lock first.
   */
  cheapFirst?(trigger: Envelope): boolean;
  route(event: Envelope, kube: Kube): Promise<Route>;
  /**
   * Read current state for one key. `trigger` is the event that routed here, for a
   * cheaper partial read; without it (or after a plan asks to reobserve) read fully.
   */
  observe(key: string, kube: Kube, trigger?: Envelope): Promise<O | null>;
  plan(observed: O, now: Date): Plan;
}
