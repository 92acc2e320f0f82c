import { randomUUID } from 'node:crypto';
import { ENVELOPE_TYPE, WATCHED_KINDS, type Envelope, type WatchedKind } from '../api/envelope.ts';
import type { Kube } from '../kube/kube.ts';
import type { InputEvent } from './input.ts';

/**
 * An input event as production would deliver it: recorded envelopes pass as they are; a
 * watch event becomes the envelope the relay would send. Returns null for what the relay
 * would not forward (kinds it does not watch, bookmarks).
 */
export async function relayRoute(ev: InputEvent, _kube: Kube, now: Date): Promise<Envelope | null> {
  if ('envelope' in ev) return ev.envelope;
  const { type, object } = ev.watch;
  if (type === 'BOOKMARK' || !isWatched(object.kind)) return null;
  const meta = object.metadata as { name: string; namespace?: string; uid?: string; resourceVersion?: string };
  return {
    specversion: '1.0',
    id: randomUUID(),
    source: 'ephemera-invoke',
    type: ENVELOPE_TYPE,
    time: now.toISOString(),
    subject: `${object.kind}/${meta.namespace ?? 'default'}/${meta.name}`,
    data: {
      kind: object.kind,
      event: type,
      namespace: meta.namespace ?? 'default',
      name: meta.name,
      uid: meta.uid,
      resourceVersion: meta.resourceVersion,
      snapshot: object,
    },
  };
}

function isWatched(kind: string | undefined): kind is WatchedKind {
  return (WATCHED_KINDS as readonly string[]).includes(kind ?? '');
}
