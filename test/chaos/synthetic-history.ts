// Synthetic histories for the chaos checker's tests: what the API server would have recorded,
// written by hand a write at a time, and the objects and writes they are made of.
import type { KubeObject, WriteRecord } from '../../functions/cluster/index.ts';
import { CLAIMS_ANNOTATION } from './check.ts';
import type { RunRecord } from './record.ts';

/**
 * Builds a history write by write, a second apart (a write `sameSecond` shares the next one's
 * second); each write stores a copy of the object as it is now.
 */
export class History {
  readonly writes: WriteRecord[] = [];
  private readonly latest = new Map<string, KubeObject>();
  private seconds = 0;

  put(obj: KubeObject, o: { actor?: string; verb?: string; subresource?: string; type?: WriteRecord['type']; sameSecond?: boolean } = {}): KubeObject {
    const copy = structuredClone(obj);
    const type = o.type ?? (this.latest.has(copy.metadata.uid!) ? 'MODIFIED' : 'ADDED');
    copy.metadata.resourceVersion = String(this.writes.length + 10);
    this.writes.push({ seq: this.writes.length + 1, time: this.now(), type, verb: o.verb ?? 'store', subresource: o.subresource ?? '', actor: o.actor ?? 'in-process', object: copy });
    if (!o.sameSecond) this.seconds++;
    if (type === 'DELETED') this.latest.delete(copy.metadata.uid!);
    else this.latest.set(copy.metadata.uid!, copy);
    return obj;
  }

  /** The time the next write will have. */
  now(): string {
    return new Date(Date.UTC(2026, 0, 1, 0, 0, this.seconds)).toISOString();
  }

  final(): KubeObject[] {
    return [...this.latest.values()];
  }

  run(over: Partial<RunRecord> = {}): RunRecord {
    return { writes: this.writes, rejected: [], final: this.final(), exits: [], converged: true, ...over };
  }
}

type Obj = Record<string, unknown>;

/** The uid of the job most stories judge. */
export const JOB = 'job-uid-1';

export const meta = (name: string): KubeObject['metadata'] => ({ name, namespace: 'ns', uid: `uid-${name}` });

/** An EphemeralJob selecting app=a, parallelism 1 unless `spec` says otherwise. */
export function job(spec: Obj = {}, uid = JOB, name = 'j'): KubeObject {
  return { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', metadata: { ...meta(name), uid }, spec: { parallelism: 1, selector: { matchLabels: { app: 'a' } }, ...spec } };
}

/** A running app pod the job's selector matches. */
export function appPod(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { ...meta(name), labels: { app: 'a' } }, spec: { containers: [{ name: 'app' }] }, status: { phase: 'Running' } };
}

/** An ephemeral container of the job `uid`. */
export const ec = (name: string, uid = JOB): Obj => ({ name, image: 'busybox', env: [{ name: 'KRUISE_EJOB_ID', value: uid }] });

/** A container state: 'running', 'terminated' (with `code`), or waiting with that reason. */
export const state = (s: string, code = 0): Obj => (s === 'running' ? { running: {} } : s === 'terminated' ? { terminated: { exitCode: code } } : { waiting: { reason: s } });

type Claim = { pod: string; uid?: string; at?: string };

/** The job's Lease records in the history, oldest first: the Lease as written, and its record whole. */
function leaseRecords(h: History, job: string): { lease: KubeObject; record: Record<string, unknown> & { claims: Claim[] } }[] {
  return h.writes.flatMap((w) => {
    const text = w.object.kind === 'Lease' && w.type !== 'DELETED' ? (w.object.metadata.annotations as Record<string, string> | undefined)?.[CLAIMS_ANNOTATION] : undefined;
    const record = text === undefined ? undefined : (JSON.parse(text) as Record<string, unknown> & { claims?: Claim[] });
    return record?.job === job ? [{ lease: w.object, record: { ...record, claims: record.claims ?? [] } }] : [];
  });
}

/** The Lease written again with this record in its annotation. */
function withRecord(lease: KubeObject, record: Record<string, unknown>): KubeObject {
  return { ...lease, metadata: { ...lease.metadata, annotations: { ...(lease.metadata.annotations as Record<string, string> | undefined), [CLAIMS_ANNOTATION]: JSON.stringify(record) } } };
}

/**
 * A process claims the pod for the job on the job's Lease (the product's record: pod, uid,
 * at; the rest of the record kept), in the same second as the write that follows, unless some
 * record claimed it already (by uid, or by name when the claim names no uid).
 */
export function claim(h: History, pod: KubeObject, job = JOB): KubeObject | undefined {
  const records = leaseRecords(h, job);
  const mine = (c: Claim): boolean => (c.uid === undefined ? c.pod === pod.metadata.name : c.uid === pod.metadata.uid);
  const last = records.at(-1);
  if (records.some((r) => r.record.claims.some(mine))) return last?.lease;
  const lease = last?.lease ?? { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: `lease-${job}`, namespace: 'ephemera-locks', uid: `lease-${job}` }, spec: {} };
  const base = last?.record ?? { v: 1, job, claims: [] };
  const record = { ...base, claims: [...base.claims, { pod: pod.metadata.name, uid: pod.metadata.uid, at: h.now() }] };
  return h.put(withRecord(lease, record), { actor: 'proc-1', verb: 'update', sameSecond: true });
}

/** A process seals the job's verdict on its Lease (`finished: true`), keeping the claims on the record unless `claims` says. */
export function seal(h: History, job = JOB, claims?: Claim[]): void {
  const last = leaseRecords(h, job).at(-1);
  if (!last) throw new Error(`no Lease record of ${job} to seal`);
  h.put(withRecord(last.lease, { ...last.record, claims: claims ?? last.record.claims, finished: true }), { actor: 'proc-1', verb: 'update' });
}

/** A process injects the job's containers into the pod, claimed first unless `claimed` is false (a product bug). */
export function inject(h: History, pod: KubeObject, names: string[], o: { job?: string; claimed?: boolean } = {}): void {
  const uid = o.job ?? JOB;
  if (o.claimed !== false) claim(h, pod, uid);
  const spec = pod.spec as Obj;
  spec.ephemeralContainers = [...((spec.ephemeralContainers as Obj[]) ?? []), ...names.map((n) => ec(n, uid))];
  h.put(pod, { actor: 'proc-1', verb: 'patch', subresource: 'ephemeralcontainers' });
}

/** The kubelet reports the ephemeral containers' states. */
export function ecStatus(h: History, pod: KubeObject, states: Record<string, Obj>): void {
  (pod.status as Obj).ephemeralContainerStatuses = Object.entries(states).map(([name, st]) => ({ name, state: st }));
  h.put(pod, { subresource: 'status' });
}

/** A process writes the job's status. */
export function finishJob(h: History, j: KubeObject, status: Obj): void {
  j.status = status;
  h.put(j, { actor: 'proc-1', verb: 'update', subresource: 'status' });
}

/** Writes of nothing the checker judges: time passes, a second a write. */
export function tick(h: History, n: number): void {
  for (let i = 0; i < n; i++) h.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(`tick-${h.writes.length}`) });
}
