import * as z from 'zod';

/**
 * The parts of ObjectMeta the functions read. Lenient on purpose: unknown fields pass
 * through untouched, so objects written by other tools round-trip without loss.
 */
export const ObjectMeta = z.looseObject({
  name: z.string().min(1),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.number().optional(),
  creationTimestamp: z.union([z.string(), z.date()]).optional(),
  deletionTimestamp: z.union([z.string(), z.date()]).optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  finalizers: z.array(z.string()).optional(),
  ownerReferences: z.array(z.looseObject({
    apiVersion: z.string(),
    kind: z.string(),
    name: z.string(),
    uid: z.string(),
    controller: z.boolean().optional(),
    blockOwnerDeletion: z.boolean().optional(),
  })).optional(),
});
export type ObjectMeta = z.infer<typeof ObjectMeta>;

/** A label selector (metav1.LabelSelector). */
export const LabelSelector = z.strictObject({
  matchLabels: z.record(z.string(), z.string()).optional(),
  matchExpressions: z.array(z.strictObject({
    key: z.string().min(1),
    operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
    values: z.array(z.string()).optional(),
  })).optional(),
});
export type LabelSelector = z.infer<typeof LabelSelector>;

/** metav1.Condition as OpenKruise's EphemeralJob uses it (with lastProbeTime). */
export const Condition = z.looseObject({
  type: z.string(),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string().optional(),
  message: z.string().optional(),
  lastProbeTime: z.string().optional(),
  lastTransitionTime: z.string().optional(),
});
export type Condition = z.infer<typeof Condition>;

/** Dates from client-node come back as Date objects; from JSON as strings. */
export function toDate(value: string | Date | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const d = value instanceof Date ? value : new Date(value);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

/**
 * A metav1.MicroTime (a Lease's acquireTime and renewTime, an Event's eventTime): RFC 3339
 * with exactly six fractional digits. kube-apiserver parses these with Go's layout
 * `2006-01-02T15:04:05.000000Z07:00`, which refuses both `…:00Z` and JavaScript's `…:00.123Z`
 * with 400.
 */
export function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** RFC 3339 with second precision, as Kubernetes serialises metav1.Time. */
export function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
