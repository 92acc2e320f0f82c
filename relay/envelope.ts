import { randomUUID } from 'node:crypto';
import { ENVELOPE_TYPE, type Envelope, type EventType, type WatchedKind } from '../functions/api/envelope.ts';
import type { Pod } from '../functions/api/pod.ts';
import { filterPod } from './filter.ts';
import type { JobView } from './trim.ts';

/** Build the envelope for one (trimmed) object. */
export function makeEnvelope(input: { kind: WatchedKind; event: EventType; object: { metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string } }; relayId: string; cluster?: string | undefined; now: Date }): Envelope {
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
    ...(input.cluster ? { cluster: input.cluster } : {}),
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

/** Who sends, and when. */
export interface Sender {
  relayId: string;
  cluster?: string | undefined;
  now: Date;
}

/** A job event: always forwarded, with the job's identity as the snapshot. */
export function jobEnvelope(event: EventType, job: JobView, from: Sender): Envelope {
  const object = { metadata: { name: job.name, namespace: job.namespace, uid: job.uid, resourceVersion: job.resourceVersion } };
  return makeEnvelope({ kind: 'EphemeralJob', event, object, ...from });
}

/** A (trimmed) pod's event as the relay forwards it, or why it is filtered out. */
export function podEnvelope(event: EventType, pod: Pod, jobsInNamespace: Iterable<JobView>, from: Sender): { envelope: Envelope } | { skipped: string } {
  const verdict = filterPod(pod, jobsInNamespace, event === 'DELETED');
  if (!verdict.forward) return { skipped: verdict.reason };
  return { envelope: makeEnvelope({ kind: 'Pod', event, object: pod, ...from }) };
}

/** The same envelope without its snapshot (for a queue's size limit); handlers then read the object. */
export function withoutSnapshot(e: Envelope): Envelope {
  const { snapshot: _drop, ...data } = e.data;
  return { ...e, data };
}
