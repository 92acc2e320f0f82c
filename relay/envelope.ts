import { randomUUID } from 'node:crypto';
import { ENVELOPE_TYPE, type Envelope, type EventType, type WatchedKind } from '../functions/api/envelope.ts';

/** Build the envelope for one (trimmed) object. */
export function makeEnvelope(input: { kind: WatchedKind; event: EventType; object: { metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string } }; relayId: string; now: Date }): Envelope {
  const { metadata } = input.object;
  const namespace = metadata.namespace ?? 'default';
  return {
    specversion: '1.0',
    id: randomUUID(),
    source: `ephemera-relay/${input.relayId}`,
    type: ENVELOPE_TYPE,
    time: input.now.toISOString(),
    subject: `${input.kind}/${namespace}/${metadata.name}`,
    datacontenttype: 'application/json',
    data: {
      kind: input.kind,
      event: input.event,
      namespace,
      name: metadata.name,
      uid: metadata.uid,
      resourceVersion: metadata.resourceVersion,
      snapshot: input.object as Record<string, unknown>,
    },
  };
}

/** The same envelope without its snapshot (for a queue's size limit); handlers then read the object. */
export function withoutSnapshot(e: Envelope): Envelope {
  const { snapshot: _drop, ...data } = e.data;
  return { ...e, data };
}
