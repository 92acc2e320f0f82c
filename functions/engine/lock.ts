import { microTime, toDate } from '../api/meta.ts';
import { Lease } from '../api/lease.ts';
import { isKubeError } from '../kube/errors.ts';
import type { Kube } from '../kube/kube.ts';
import { shortHash } from './events.ts';
import type { Action } from './plan.ts';

/**
 * Where and how long per-key Leases are held. The relay's leader election takes a Lease with
 * acquire() below; the engine takes none (the EphemeralJob keeps claims on its job's Lease,
 * see ejob/claims.ts), but passes this config to controllers for where Leases live.
 */
export interface LockConfig {
  /** Namespace holding the Leases (the functions need create/get/update/delete there). */
  namespace: string;
  /** Identity of this invocation; unique per concurrent handler, not just per process. */
  holder: string;
  leaseSeconds: number;
  /** Allowance for the API server's Date header being read at 1 s resolution and late. */
  skewSeconds: number;
}

/**
 * The latency allowed for in landingMarginMs: a request's way to the API server, which counts
 * a deadline (`?timeout=`) from the request's arrival, and the way back of the answer whose
 * Date header a claim's `at` was read from. Both are milliseconds on any working network.
 */
export const LATENCY_ALLOWANCE_MS = 500;

/**
 * How long after the last moment an action with `withinSeconds` may be sent (its window's
 * start + withinSeconds) each attempt of it must be answered or abandoned: skewSeconds − 1 s −
 * LATENCY_ALLOWANCE_MS (3.5 s with the defaults, 0.5 s at the smallest skew, 2). ejob/README.md
 * step 4 derives it: a claim's `at` is the server's time read after the window began, at most
 * 1 s (a Date header's resolution) plus an answer's latency behind; its injection must land before
 * `at + leaseSeconds + skewSeconds` (the claim's window), since a plan may drop the claim with
 * pods LISTed up to skewSeconds before its Lease read (not 2 × skewSeconds, the retention).
 */
export function landingMarginMs(cfg: Pick<LockConfig, 'skewSeconds'>): number {
  return cfg.skewSeconds * 1000 - 1000 - LATENCY_ALLOWANCE_MS;
}

/** A held lock: renew it by acquiring again as the same holder; release when done. */
export interface HeldLock {
  readonly name: string;
  release(): Promise<void>;
}

export type Acquired = { held: HeldLock } | { busy: true; retryAfterSeconds: number; holder: string };

/** Lease names must be DNS subdomains; keep something readable plus a hash for uniqueness. */
export function leaseName(controller: string, key: string): string {
  const readable = key.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 200);
  return `${controller}-${readable}-${shortHash(key)}`;
}

/**
 * What one contender saw of a Lease: its resourceVersion, and when (its local monotonic clock,
 * ms) it first saw that version — client-go leaderelection's observedRecord and observedTime.
 * Kept between acquire() calls by the contender (the relay's election loop).
 */
export class LeaseSightings {
  private last: { resourceVersion: string; at: number } | undefined;
  private readonly local: () => number;

  constructor(local: () => number = () => performance.now()) {
    this.local = local;
  }

  /** How long (ms) this version has been seen unchanged, counting from its first sighting. */
  unchangedFor(resourceVersion: string | undefined): number {
    const now = this.local();
    if (resourceVersion === undefined) {
      this.last = undefined;
      return 0;
    }
    if (this.last?.resourceVersion !== resourceVersion) this.last = { resourceVersion, at: now };
    return now - this.last.at;
  }
}

/** Which Lease: the controller and key naming it, and the contender's sightings of it, if it keeps them. */
export interface LeaseKey {
  controller: string;
  key: string;
  sightings?: LeaseSightings;
}

/**
 * Acquire the per-key Lease. Correctness does not rest on synchronised clocks: renewTime
 * is written from the API server's own Date header, expiry is judged against it, and every
 * write to the Lease carries its resourceVersion, so two instances can never both win.
 * With `sightings`, a Lease also expires once the same version has been seen for its
 * duration + skew of local time, as client-go's leaderelection judges it (observedTime +
 * leaseDuration): a renewTime ahead of the server's clock (written through an API server
 * replica whose clock is ahead, or by a holder whose estimate was) kept every relay from
 * leading until the server's clock passed it, an hour for one an hour ahead (review95 F5).
 * A live holder renews every third of its duration, each time a new version, and steps down
 * when it could not for its duration, so the rule takes over from no live holder.
 */
export async function acquire(kube: Kube, cfg: LockConfig, lease: LeaseKey): Promise<Acquired> {
  const name = leaseName(lease.controller, lease.key);
  const raw = await kube.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: cfg.namespace, name });
  const now = kube.serverNow() ?? new Date();
  if (raw === null) {
    lease.sightings?.unchangedFor(undefined);
    return create(kube, cfg, name, now);
  }
  const found = Lease.parse(raw);
  const spec = found.spec ?? {};
  const renewed = toDate(spec.renewTime) ?? toDate(spec.acquireTime);
  const windowMs = ((spec.leaseDurationSeconds ?? cfg.leaseSeconds) + cfg.skewSeconds) * 1000;
  const byServer = (renewed ? renewed.getTime() + windowMs : 0) - now.getTime();
  const bySight = lease.sightings ? windowMs - lease.sightings.unchangedFor(found.metadata.resourceVersion) : Number.POSITIVE_INFINITY;
  const holder = spec.holderIdentity ?? '';
  const leftMs = Math.min(byServer, bySight);
  if (holder !== '' && holder !== cfg.holder && leftMs > 0) {
    return { busy: true, holder, retryAfterSeconds: Math.max(1, Math.ceil(leftMs / 1000)) };
  }
  // Renewing our own lease keeps when we took it; taking it over starts a new holding.
  const ours = holder === cfg.holder;
  const kept = ours ? toDate(spec.acquireTime) : undefined;
  const held = { acquireTime: microTime(kept ?? now), transitions: (spec.leaseTransitions ?? 0) + (ours ? 0 : 1) };
  const body = leaseBody(cfg, name, now, { resourceVersion: found.metadata.resourceVersion, ...held });
  try {
    const res = await kube.perform(leaseAction('update', cfg, name, body));
    return { held: heldLock(kube, cfg, name, { ...held, resourceVersion: Lease.parse(res).metadata.resourceVersion }) };
  } catch (err) {
    if (isKubeError(err, 'conflict', 'not-found')) return { busy: true, holder: '?', retryAfterSeconds: 1 };
    throw err;
  }
}

async function create(kube: Kube, cfg: LockConfig, name: string, now: Date): Promise<Acquired> {
  try {
    const held = { acquireTime: microTime(now), transitions: 0 };
    const res = await kube.perform(leaseAction('create', cfg, name, leaseBody(cfg, name, now, held)));
    return { held: heldLock(kube, cfg, name, { ...held, resourceVersion: Lease.parse(res).metadata.resourceVersion }) };
  } catch (err) {
    if (isKubeError(err, 'already-exists', 'conflict')) return { busy: true, holder: '?', retryAfterSeconds: 1 };
    throw err;
  }
}

/** What a renewal keeps: when we took the lease, how often it changed hands. */
interface Holding {
  acquireTime: string;
  transitions: number;
  resourceVersion: string | undefined;
}

function heldLock(kube: Kube, cfg: LockConfig, name: string, holding: Holding): HeldLock {
  const { resourceVersion } = holding;
  /** Deletes the Lease at `rv`; false when another version is there (409); a Lease already gone is done. */
  const deleteAt = async (rv: string | undefined): Promise<boolean> => {
    try {
      await kube.perform({ ...leaseAction('delete', cfg, name, { preconditions: { resourceVersion: rv } }) });
      return true;
    } catch (err) {
      if (isKubeError(err, 'not-found')) return true;
      if (!isKubeError(err, 'conflict')) throw err;
      return false;
    }
  };
  return {
    name,
    async release() {
      // Delete only our own version: if it was taken over meanwhile, the 409 leaves it alone.
      // A 409 may also be our own renewal whose answer was lost (it landed): then the Lease
      // is still ours at a newer version, and is released at that one, so a successor does
      // not wait for it to run out (review).
      if (await deleteAt(resourceVersion)) return;
      const now = Lease.safeParse(await kube.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: cfg.namespace, name }));
      if (now.success && now.data.spec?.holderIdentity === cfg.holder) await deleteAt(now.data.metadata.resourceVersion);
    },
  };
}

function leaseBody(cfg: LockConfig, name: string, now: Date, prev: { resourceVersion?: string | undefined; transitions: number; acquireTime: string }): object {
  const { resourceVersion, transitions, acquireTime } = prev;
  const ts = microTime(now);
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace: cfg.namespace, ...(resourceVersion ? { resourceVersion } : {}) },
    spec: {
      holderIdentity: cfg.holder,
      leaseDurationSeconds: cfg.leaseSeconds,
      acquireTime,
      renewTime: ts,
      leaseTransitions: transitions,
    },
  };
}

function leaseAction(verb: 'create' | 'update' | 'delete', cfg: LockConfig, name: string, body: object): Action {
  return { verb, apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: cfg.namespace, name, body, reason: `${verb} lock lease` };
}
