// Envelopes as the relay builds them. Two forms of one thing:
// - the object form (makeEnvelope, jobEnvelope, podEnvelope), for `ephemera invoke`'s
//   routing of raw watch events and for tests;
// - the queued form: the delivery queue keeps a small record per key (Queued) and the
//   envelope's JSON text is built only when it is sent (messageFor), with the snapshot's
//   JSON text taken from the watch cache as it is. An envelope object per watch event (a
//   random id, a time string, a snapshot parsed back from the cache and stringified again
//   by the sink) was a good share of the relay's garbage (issue 11).
// test/relay/envelope.test.ts proves that messageFor's text is JSON.stringify of the object
// form, byte for byte.
import { randomUUID } from 'node:crypto';
import { ENVELOPE_TYPE, objectKey, type Envelope, type EventType, type WatchedKind } from '../functions/api/envelope.ts';
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

/** A job's snapshot: its identity only (the functions read the job itself). */
function jobIdentity(job: { name: string; namespace: string; uid?: string | undefined; resourceVersion?: string | undefined }): { metadata: { name: string; namespace: string; uid?: string; resourceVersion?: string } } {
  return { metadata: { name: job.name, namespace: job.namespace, uid: job.uid, resourceVersion: job.resourceVersion } };
}

/** A job event: always forwarded, with the job's identity as the snapshot. */
export function jobEnvelope(event: EventType, job: JobView, from: Sender): Envelope {
  return makeEnvelope({ kind: 'EphemeralJob', event, object: jobIdentity(job), ...from });
}

/** A (trimmed) pod's event as the relay forwards it, or why it is filtered out. */
export function podEnvelope(event: EventType, pod: Pod, jobsInNamespace: Iterable<JobView>, from: Sender): { envelope: Envelope } | { skipped: string } {
  const verdict = filterPod(pod, jobsInNamespace, event === 'DELETED');
  if (!verdict.forward) return { skipped: verdict.reason };
  return { envelope: makeEnvelope({ kind: 'Pod', event, object: pod, ...from }) };
}

/** The same envelope without its snapshot (functions/api/envelope.ts). */
export { withoutSnapshot } from '../functions/api/envelope.ts';

/**
 * An event as the delivery queue keeps it until it is sent: the envelope's fields, minus
 * what is made at send time (id, time string) or kept by the watch cache anyway (a live
 * pod's snapshot).
 */
export interface Queued {
  kind: WatchedKind;
  event: EventType;
  namespace: string;
  name: string;
  uid?: string | undefined;
  resourceVersion?: string | undefined;
  /** When the relay saw the event (ms since the epoch): the envelope's time. */
  at: number;
  /** Pods: the unfinished jobs that concern the pod (envelope `data.jobs`), when the relay knows its namespace's jobs. */
  jobs?: string[] | undefined;
  /** The snapshot's JSON text when the watch cache will not have it at send time (a deleted pod). */
  snapshot?: string | undefined;
}

/** The key a queued event coalesces on: the envelope's Kind/namespace/name. */
export function queuedKey(q: Queued): string {
  return objectKey(q.kind, q.namespace, q.name);
}

/** A queued job event for a job view. */
export function queuedJob(event: EventType, job: JobView, at: number): Queued {
  return { kind: 'EphemeralJob', event, namespace: job.namespace, name: job.name, uid: job.uid, resourceVersion: job.resourceVersion, at, jobs: undefined, snapshot: undefined };
}

/**
 * A queued pod event: `jobs`, the jobs that concern it (undefined when the relay does not
 * know the namespace's jobs); a deleted pod keeps `snapshot`, the JSON text of its last state.
 */
export function queuedPod(event: EventType, pod: Pod, at: number, extra: { jobs?: string[] | undefined; snapshot?: string | undefined } = {}): Queued {
  const m = pod.metadata;
  return { kind: 'Pod', event, namespace: m.namespace ?? 'default', name: m.name, uid: m.uid, resourceVersion: m.resourceVersion, at, jobs: extra.jobs, snapshot: extra.snapshot };
}

/** An envelope (a requeue from the in-process sink) back in the queued form. */
export function queuedFrom(e: Envelope, at: number): Queued {
  const d = e.data;
  const keep = d.kind === 'Pod' && d.event === 'DELETED' && d.snapshot !== undefined;
  return { kind: d.kind, event: d.event, namespace: d.namespace, name: d.name, uid: d.uid, resourceVersion: d.resourceVersion, at, jobs: d.jobs, snapshot: keep ? JSON.stringify(d.snapshot) : undefined };
}

/** The snapshot text a queued job event is sent with (its identity). */
export function jobSnapshotJson(q: Queued): string {
  return JSON.stringify(jobIdentity(q));
}

/** Where envelopes come from (EPHEMERA_RELAY_ID, EPHEMERA_RELAY_CLUSTER), and how their ids are made. */
export interface Origin {
  relayId: string;
  cluster?: string | undefined;
  /** A new envelope id, unique for this source (default: a random UUID). */
  nextId?(): string;
}

/**
 * Envelope ids for one relay process: a random UUID drawn once, then a counter. Unique per
 * source as CloudEvents asks (and as a FIFO queue's deduplication needs: a restarted or
 * another relay draws another UUID), at a fraction of a random UUID's cost per message.
 */
export function idSequence(): () => string {
  const prefix = randomUUID();
  let n = 0;
  return () => `${prefix}.${(n++).toString(36)}`;
}

/** The object form of a queued event (what messageFor's text encodes). */
export function envelopeFor(q: Queued, from: Origin, snapshot: Record<string, unknown> | undefined, id: string): Envelope {
  return {
    specversion: '1.0',
    id,
    source: `ephemera-relay/${from.relayId}`,
    type: ENVELOPE_TYPE,
    time: new Date(q.at).toISOString(),
    subject: queuedKey(q),
    datacontenttype: 'application/json',
    ...(from.cluster ? { cluster: from.cluster } : {}),
    data: { kind: q.kind, event: q.event, namespace: q.namespace, name: q.name, uid: q.uid, resourceVersion: q.resourceVersion, ...(q.jobs ? { jobs: q.jobs } : {}), ...(snapshot !== undefined ? { snapshot } : {}) },
  };
}

/** One message for a sink: an envelope as JSON text, built once, when it is sent. */
export interface Message {
  /** Kind/namespace/name (the functions' key; a FIFO queue's message group). */
  key: string;
  kind: WatchedKind;
  /** The envelope's id (a FIFO queue's deduplication id). */
  id: string;
  body: string;
}

/**
 * The message for a queued event: JSON.stringify(envelopeFor(q, from, JSON.parse(snapshot),
 * id)), written directly, with the snapshot's text as it is (not parsed and stringified
 * again). Members in envelopeFor's order; test/relay/envelope.test.ts holds the two equal.
 * `sameId`: the id of an earlier try of this state (the delivery queue's retry).
 */
export function messageFor(q: Queued, from: Origin, snapshot: string | undefined, sameId?: string): Message {
  const id = sameId ?? from.nextId?.() ?? randomUUID();
  const key = queuedKey(q);
  const json = JSON.stringify;
  let body = `{"specversion":"1.0","id":${json(id)},"source":${json(`ephemera-relay/${from.relayId}`)},"type":"${ENVELOPE_TYPE}","time":"${new Date(q.at).toISOString()}","subject":${json(key)},"datacontenttype":"application/json"`;
  if (from.cluster) body += `,"cluster":${json(from.cluster)}`;
  body += `,"data":{"kind":"${q.kind}","event":"${q.event}","namespace":${json(q.namespace)},"name":${json(q.name)}`;
  if (q.uid !== undefined) body += `,"uid":${json(q.uid)}`;
  if (q.resourceVersion !== undefined) body += `,"resourceVersion":${json(q.resourceVersion)}`;
  if (q.jobs) body += `,"jobs":${json(q.jobs)}`;
  if (snapshot !== undefined) body += `,"snapshot":${snapshot}`;
  return { key, kind: q.kind, id, body: `${body}}}` };
}

/** The envelope a message carries (for sinks that hand objects to the functions). */
export function envelopeOf(m: Message): Envelope {
  return JSON.parse(m.body) as Envelope;
}
