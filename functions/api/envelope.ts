import * as z from 'zod';
import { dns1123LabelProblems, dns1123SubdomainProblems } from './name-formats.ts';

/** Kinds the relay watches and the functions handle. */
export const WATCHED_KINDS = ['Pod', 'EphemeralJob'] as const;
export type WatchedKind = (typeof WATCHED_KINDS)[number];

/** Watch event types, plus RESYNC for objects found by a list (initial, re-list, period). */
export const EVENT_TYPES = ['ADDED', 'MODIFIED', 'DELETED', 'RESYNC'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The object a watch event of this type is about: it names the object (kind and apiVersion may be left out). */
const WatchedObject = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: z.looseObject({ name: z.string(), namespace: z.string().optional() }),
});

/**
 * A raw watch event as the API server (and `ephemera invoke --event`) carries it: a change
 * to an object (RESYNC: one a list found), a BOOKMARK, whose object carries only
 * metadata.resourceVersion (`allowWatchBookmarks=true`), or an ERROR, whose object is a
 * metav1.Status (410 Expired: the watch must list again). Watch events, API concepts:
 * https://kubernetes.io/docs/reference/using-api/api-concepts/#watch-bookmarks
 */
export const WatchEvent = z.discriminatedUnion('type', [
  z.object({ type: z.enum(EVENT_TYPES), object: WatchedObject }),
  z.object({
    type: z.literal('BOOKMARK'),
    object: z.looseObject({ apiVersion: z.string().optional(), kind: z.string().optional(), metadata: z.looseObject({ resourceVersion: z.string() }) }),
  }),
  z.object({
    type: z.literal('ERROR'),
    object: z.looseObject({ kind: z.string().optional(), status: z.string().optional(), message: z.string().optional(), reason: z.string().optional(), code: z.number().optional() }),
  }),
]);
export type WatchEvent = z.infer<typeof WatchEvent>;

export const ENVELOPE_TYPE = 'io.ephemera.watch.v1';

/**
 * The versioned event envelope the relay sends and the functions consume. Its top level
 * is CloudEvents 1.0 structured JSON (specversion, id, source, type, time, subject,
 * datacontenttype), so any CloudEvents tool can read it; `data` says which key to look
 * at. The snapshot is a trimmed copy for routing and cheap early exits only: handlers
 * always read current state before writing.
 */
/**
 * A name as the API server allows it: anything else names no object, and would only be sent
 * again and again (review: `x/y` was retried to maxReceiveCount instead of dead-lettered).
 */
function kubeName(problems: (v: string) => string[]): z.ZodType<string> {
  return z.string().min(1).superRefine((v, ctx) => {
    for (const message of problems(v)) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(v)} ${message}` });
  });
}

/**
 * The most job names an envelope carries: a forged message must not fan one message out to
 * any number of reconciles (security review). The relay names none beyond it, and a message
 * naming more is read as naming none — the router then lists the namespace's jobs, which is
 * bounded by what exists — rather than refused: a relay from before the cap sends such
 * messages, and refusing them dead-lettered the pod's SidecarTerminator key too (upgrade review).
 */
export const MAX_ENVELOPE_JOBS = 1000;

export const Envelope = z.object({
  specversion: z.literal('1.0'),
  id: z.string().min(1),
  source: z.string().min(1),
  type: z.literal(ENVELOPE_TYPE),
  time: z.string(),
  subject: z.string(),
  datacontenttype: z.literal('application/json').optional(),
  /** The relay's cluster (EPHEMERA_RELAY_CLUSTER): one function deployment serves many. */
  cluster: z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'a cluster name').max(100).optional(),
  data: z.object({
    kind: z.enum(WATCHED_KINDS),
    event: z.enum(EVENT_TYPES),
    namespace: kubeName(dns1123LabelProblems),
    name: kubeName(dns1123SubdomainProblems),
    uid: z.string().optional(),
    resourceVersion: z.string().optional(),
    /**
     * Pods only: the names of the unfinished EphemeralJobs in the pod's namespace that concern
     * it (their selector matches its labels, or one of its ephemeral containers carries their
     * uid), as the relay's watch cache saw them. The EphemeralJob router takes them as they
     * are, with no API request; absent (an older relay, `ephemera invoke` of a raw watch
     * event, a relay that cannot list EphemeralJobs), the router lists the namespace's jobs.
     */
    jobs: z.preprocess((v) => (Array.isArray(v) && v.length > MAX_ENVELOPE_JOBS ? undefined : v), z.array(kubeName(dns1123SubdomainProblems)).optional()),
    /**
     * Set by the functions on an envelope they send back to the queue: the keys (`controller
     * key`) an earlier pass found refused for good and dead-lettered, so a later pass does not
     * dead-letter them again. The relay never sets it.
     */
    reported: z.array(z.string().min(1)).optional(),
    /**
     * Set by the functions on a "look again" copy they send back to the queue: when the chain
     * of such copies began (the first look's handling, an ISO time). A look more than 900 s
     * after it is not sent: the relay's resync brings back every key that can still need work,
     * and starts a new chain (review70: every resync, restart and pod event started one more
     * chain that none ended, so a key stuck for a day was 150 messages in the queue). The
     * relay never sets it; a reader that does not know it starts a new chain.
     */
    looksSince: z.string().optional(),
    /**
     * Set by the functions on a copy they send back after the API server answered 429/503 with
     * Retry-After: how many such copies in a row this one is. The next delay grows with it
     * (review90 M1). The relay never sets it; a reader that does not know it starts at 0.
     */
    throttled: z.number().int().min(0).optional(),
    /** Trimmed object (see relay trimming); absent when it would not fit the queue. */
    snapshot: z.record(z.string(), z.unknown()).optional(),
  }),
});
export type Envelope = z.infer<typeof Envelope>;

/** The same envelope without its snapshot (for a queue's size limit); handlers then read the object. */
export function withoutSnapshot(e: Envelope): Envelope {
  const { snapshot: _drop, ...data } = e.data;
  return { ...e, data };
}

/** The key a handler serialises on: Kind/namespace/name. */
export function envelopeKey(e: Envelope): string {
  return objectKey(e.data.kind, e.data.namespace, e.data.name);
}

/** "<Kind>/<namespace>/<name>": the key controllers reconcile and lock on. */
export function objectKey(kind: string, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

/** The namespace and name of a key of this kind, or null for any other string. */
export function parseObjectKey(kind: string, key: string): { namespace: string; name: string } | null {
  const prefix = `${kind}/`;
  if (!key.startsWith(prefix)) return null;
  const [namespace, name, ...rest] = key.slice(prefix.length).split('/');
  return namespace && name && rest.length === 0 ? { namespace, name } : null;
}
