import { rfc3339 } from '../api/meta.ts';
import type { Kube } from '../kube/kube.ts';
import type { Action } from './plan.ts';

/** The object an Event is about. */
export interface Involved {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid?: string;
}

export interface EventSpec {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  /** Distinguishes events with the same reason on the same object (e.g. the pod name). */
  discriminator?: string;
}

/**
 * FNV-1a, 32 bit, hex: a deterministic short hash with no runtime dependency. Lease and signal
 * container names are made with it: changing it renames them (a Lease renamed loses its
 * claims record), so it stays as it is.
 */
export function shortHash(text: string, basis = 0x811c9dc5): string {
  let h = basis;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/**
 * 64 bits for Event names, two FNV-1a passes from different offset bases: a job tells each
 * failed pod in its own Warning, named by the pod's uid, and with 32 bits two of 10,000 share
 * a name about once in a hundred jobs — the second then counted as told and never shown
 * (review). Upgrading renames Events, so a failure told just before is told once more.
 */
function eventHash(text: string): string {
  return `${shortHash(text)}${shortHash(text, 0x050c5d1f)}`;
}

/**
 * A core/v1 Event as a create action. The name is derived from the object, reason and
 * discriminator, so a retried reconcile that plans the same event gets 409 AlreadyExists
 * (treated as done) instead of recording it twice.
 */
export function eventAction(obj: Involved, spec: EventSpec, now: Date): Action {
  const name = `${obj.name.slice(0, 200)}.${eventHash(`${obj.uid ?? ''}/${spec.reason}/${spec.discriminator ?? ''}`)}`;
  const ts = rfc3339(now);
  return {
    verb: 'create',
    apiVersion: 'v1',
    kind: 'Event',
    namespace: obj.namespace,
    name,
    alreadyExists: 'done',
    reason: `record event ${spec.reason} on ${obj.kind} ${obj.namespace}/${obj.name}`,
    body: {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace: obj.namespace },
      involvedObject: { apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.namespace, name: obj.name, uid: obj.uid },
      type: spec.type,
      reason: spec.reason,
      message: spec.message,
      source: { component: 'ephemera' },
      reportingComponent: 'ephemera',
      reportingInstance: 'ephemera',
      firstTimestamp: ts,
      lastTimestamp: ts,
      count: 1,
    },
  };
}

/**
 * The Event `create` planned is there already (409 AlreadyExists: its name is derived from what
 * it is about): count the repeat on it, as client-go's event correlator does — `count` one
 * more, `lastTimestamp` now and the latest message — so `kubectl describe` shows "(x3 over
 * 4m)" rather than one old Warning. A GET, then a merge patch; best effort (no right to get or
 * patch Events: left as it is).
 */
export async function countRepeat(kube: Kube, create: Action): Promise<void> {
  try {
    const old = (await kube.get({ apiVersion: 'v1', kind: 'Event', namespace: create.namespace, name: create.name })) as { count?: unknown; lastTimestamp?: unknown } | null;
    if (!old) return;
    const count = typeof old.count === 'number' && old.count > 0 ? old.count : 1;
    const { lastTimestamp, message } = create.body as { lastTimestamp?: string; message?: string };
    await kube.perform({
      verb: 'patch', patchType: 'merge', apiVersion: 'v1', kind: 'Event', namespace: create.namespace, name: create.name,
      reason: `count a repeat of ${create.reason}`, body: { count: count + 1, lastTimestamp: later(old.lastTimestamp, lastTimestamp), message },
    });
  } catch {
    // Counting is a courtesy: the Warning is there either way.
  }
}

/** The later of two RFC 3339 times: an instance whose clock is behind never moves `lastTimestamp` back (review). */
function later(stored: unknown, now: string | undefined): string | undefined {
  if (typeof stored !== 'string' || now === undefined) return now;
  return Date.parse(stored) > Date.parse(now) ? stored : now;
}
