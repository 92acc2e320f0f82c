// Generators, oracles and plan helpers for the EphemeralJob planner's properties
// (test/ejob/planner-properties.test.ts, planner-histories.test.ts, kruise-compare.test.ts),
// from review88. The oracles are written from DESIGN.md's text ("EphemeralJob"), not from the
// code: a property compares the planner with them.
import fc from 'fast-check';
import type { EphemeralJobObject } from '../../functions/api/ephemeraljob.ts';
import type { ContainerStatus, Pod } from '../../functions/api/pod.ts';
import type { Action } from '../../functions/engine/plan.ts';
import { CLAIMS_ANNOTATION, readLeaseView, type LeaseRecord, type LeaseView } from '../../functions/ejob/lease-record.ts';
import { DEFAULT_LEASE } from '../../functions/ejob/planner.ts';

export const UID = 'job-uid';
export const BASE = Date.parse('2026-01-01T01:00:00Z');
export const cfg = { ...DEFAULT_LEASE, name: 'ejob-ns-j', key: 'EphemeralJob/ns/j' };

const tmpl = (name: string): Record<string, unknown> => ({ name, image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'main' });

/** Container states, every one the kubelet reports for an ephemeral container. */
export type Ec = 'nostatus' | 'emptystate' | 'creating' | 'backoff' | 'configerr' | 'running' | 'ok' | 'okNoFinish' | 'err' | 'badimage' | 'runerr' | 'createerr' | 'neverpull';
export const EC_STATES: readonly Ec[] = ['nostatus', 'emptystate', 'creating', 'backoff', 'configerr', 'running', 'ok', 'okNoFinish', 'err', 'badimage', 'runerr', 'createerr', 'neverpull'];

type State = ContainerStatus['state'];

/** The state of a container in `e`; a start or exit 3 s before `now` (`endedAt` sets an exit's time). */
export function ecState(e: Ec, now: number, endedAt = now - 3000): State | undefined {
  const t = new Date(now - 3000).toISOString();
  const ended = new Date(endedAt).toISOString();
  switch (e) {
    case 'nostatus': return undefined;
    case 'emptystate': return {};
    case 'creating': return { waiting: { reason: 'ContainerCreating' } };
    case 'backoff': return { waiting: { reason: 'ImagePullBackOff' } };
    case 'configerr': return { waiting: { reason: 'CreateContainerConfigError' } };
    case 'running': return { running: { startedAt: t } };
    case 'ok': return { terminated: { exitCode: 0, finishedAt: ended } };
    case 'okNoFinish': return { terminated: { exitCode: 0 } };
    case 'err': return { terminated: { exitCode: 1, finishedAt: ended } };
    case 'badimage': return { waiting: { reason: 'InvalidImageName' } };
    case 'runerr': return { waiting: { reason: 'RunContainerError' } };
    case 'createerr': return { waiting: { reason: 'CreateContainerError' } };
    case 'neverpull': return { waiting: { reason: 'ErrImageNeverPull' } };
  }
}

export interface PodSpec {
  /** fresh: nothing injected; unfit: no container 'main' (the template's target); ours: the job's containers; other-*: another job's. */
  owner: 'fresh' | 'unfit' | 'ours' | 'ours-partial' | 'other-same-name' | 'other-own-name' | 'ours+other';
  states: Ec[];
  phase: 'Running' | 'Pending' | 'none' | 'Succeeded' | 'Failed';
  deleting: boolean;
  matches: boolean;
  created: number;
  /** The pod was replaced under its name: the record's claims and passed entries name its old uid. */
  replaced: boolean;
}

export const podArb: fc.Arbitrary<PodSpec> = fc.record({
  owner: fc.constantFrom<PodSpec['owner']>('fresh', 'fresh', 'fresh', 'unfit', 'ours', 'ours', 'ours', 'ours-partial', 'other-same-name', 'other-own-name', 'ours+other'),
  states: fc.array(fc.constantFrom(...EC_STATES), { minLength: 1, maxLength: 2 }),
  phase: fc.constantFrom<PodSpec['phase']>('Running', 'Running', 'Running', 'Running', 'Pending', 'none', 'Succeeded', 'Failed'),
  deleting: fc.integer({ min: 0, max: 7 }).map((n) => n === 0),
  matches: fc.integer({ min: 0, max: 7 }).map((n) => n > 0),
  created: fc.integer({ min: 0, max: 4 }),
  replaced: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
});

export const podUid = (i: number, s: Pick<PodSpec, 'replaced'>): string => (s.replaced ? `u${i}-new` : `u${i}`);

/** Pod `p<i>` as `s` says, the job's containers named `names`; exits at `endedAt` (default: 3 s before `now`). */
export function makePod(i: number, s: PodSpec, names: readonly string[], at: { now: number; endedAt?: number }): Pod {
  const phase = s.phase === 'none' ? undefined : s.phase;
  const p: Pod = {
    metadata: { name: `p${i}`, namespace: 'ns', uid: podUid(i, s), resourceVersion: `${i}`, labels: { app: s.matches ? 'x' : 'y' }, creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, s.created)).toISOString(), ...(s.deleting ? { deletionTimestamp: '2026-01-01T00:59:00Z' } : {}) },
    spec: { containers: [{ name: s.owner === 'unfit' ? 'other' : 'main' }] },
    status: { ...(phase ? { phase } : {}) },
  };
  if (s.owner === 'fresh' || s.owner === 'unfit') return p;
  const env = (uid: string): { name: string; value: string }[] => [{ name: 'KRUISE_EJOB_ID', value: uid }];
  let ecs: { name: string; uid: string }[];
  if (s.owner === 'ours') ecs = names.map((name) => ({ name, uid: UID }));
  else if (s.owner === 'ours-partial') ecs = [{ name: names[0] ?? 'ec', uid: UID }];
  else if (s.owner === 'other-same-name') ecs = names.map((name) => ({ name, uid: 'other-uid' }));
  else if (s.owner === 'other-own-name') ecs = [{ name: 'theirs', uid: 'other-uid' }];
  else ecs = [...names.map((name) => ({ name, uid: UID })), { name: 'theirs', uid: 'other-uid' }];
  p.spec.ephemeralContainers = ecs.map((c) => ({ name: c.name, image: 'busybox', env: env(c.uid) }));
  p.status = {
    ...p.status,
    ephemeralContainerStatuses: ecs.flatMap((c, j) => {
      const state = ecState(s.states[j % s.states.length] ?? 'nostatus', at.now, at.endedAt);
      return state ? [{ name: c.name, state }] : [];
    }),
  };
  return p;
}

export interface JobSpec {
  parallelism: number | undefined;
  replicas: number | undefined;
  paused: boolean;
  deadline: number | undefined;
  twoContainers: boolean;
  status: undefined | { phase: string; match: number; succeeded: number; failed: number; running: number; waiting: number; startedAgo: number };
}

export const jobArb: fc.Arbitrary<JobSpec> = fc.record({
  parallelism: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
  replicas: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
  paused: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
  deadline: fc.option(fc.integer({ min: 1, max: 7200 }), { nil: undefined }),
  twoContainers: fc.boolean(),
  status: fc.option(fc.record({
    phase: fc.constantFrom('Waiting', 'Running', 'Paused'),
    match: fc.integer({ min: 0, max: 8 }), succeeded: fc.integer({ min: 0, max: 8 }), failed: fc.integer({ min: 0, max: 8 }),
    running: fc.integer({ min: 0, max: 8 }), waiting: fc.integer({ min: 0, max: 8 }), startedAgo: fc.integer({ min: 0, max: 7200 }),
  }), { nil: undefined }),
});

export const templateNames = (j: Pick<JobSpec, 'twoContainers'>): string[] => (j.twoContainers ? ['ec', 'ec2'] : ['ec']);

export function makeJob(j: JobSpec, now: number): EphemeralJobObject {
  const spec: Record<string, unknown> = {
    selector: { matchLabels: { app: 'x' } },
    template: { ephemeralContainers: templateNames(j).map(tmpl) },
    ...(j.parallelism !== undefined ? { parallelism: j.parallelism } : {}),
    ...(j.replicas !== undefined ? { replicas: j.replicas } : {}),
    ...(j.paused ? { paused: true } : {}),
    ...(j.deadline !== undefined ? { activeDeadlineSeconds: j.deadline } : {}),
  };
  const { startedAgo = 0, ...counts } = j.status ?? {};
  const status = j.status === undefined ? undefined : { ...counts, startTime: new Date(now - startedAgo * 1000).toISOString() };
  return { metadata: { name: 'j', namespace: 'ns', uid: UID, generation: 1, resourceVersion: '5', creationTimestamp: '2026-01-01T00:30:00Z' }, spec, ...(status ? { status } : {}) };
}

/** A Lease view as the planner takes it, made at the server's time `now` for these pods. */
export type ViewGen = (now: number, pods: readonly PodSpec[]) => LeaseView;

/** A ViewGen that a failing property prints as what it was drawn from, not as its code. */
const named = (what: string, r: unknown, gen: ViewGen): ViewGen => Object.assign(gen, { [fc.toStringMethod]: () => `${what}(${JSON.stringify(r)})` });

/** Lease views: absent; ours (claims on listed pods by their current or an old uid, on pods not listed; renewed; w; total; passed; holdUntil; sealed with or without a verdict); unreadable (dated or not, another job's). */
export const viewArb: fc.Arbitrary<ViewGen> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<ViewGen>(named('absent', {}, () => ({ kind: 'absent' }))) },
  {
    weight: 5,
    arbitrary: fc.record({
      total: fc.integer({ min: 0, max: 8 }),
      claims: fc.array(fc.record({ pod: fc.integer({ min: 0, max: 9 }), oldUid: fc.integer({ min: 0, max: 4 }).map((n) => n === 0), ago: fc.integer({ min: -3, max: 40 }), renewed: fc.boolean(), w: fc.option(fc.constantFrom(20, 40, 400), { nil: undefined }) }), { maxLength: 4 }),
      passed: fc.array(fc.record({ pod: fc.integer({ min: 0, max: 9 }), ago: fc.integer({ min: 0, max: 400 }) }), { maxLength: 3 }),
      holdFor: fc.option(fc.integer({ min: -30, max: 30 }), { nil: undefined }),
      sealed: fc.constantFrom<'no' | 'bare' | 'Succeeded' | 'Failed'>('no', 'no', 'no', 'bare', 'Succeeded', 'Failed'),
      keptSince: fc.boolean(),
    }).map((r): ViewGen => named('ours', r, (now, pods) => {
      const uidOf = (i: number, old: boolean): string => (old ? `u${i}` : pods[i] ? podUid(i, pods[i]) : `u${i}`);
      // One claim per pod and uid, as every writer leaves the record (a record holding one twice: claims.test.ts, review88 F4).
      const claims = r.claims.filter((c, i) => r.claims.findIndex((d) => d.pod === c.pod && uidOf(d.pod, d.oldUid) === uidOf(c.pod, c.oldUid)) === i);
      const record: LeaseRecord = {
        v: 1, job: UID, total: r.total,
        claims: claims.map((c) => ({ pod: `p${c.pod}`, uid: uidOf(c.pod, c.oldUid), at: new Date(now - c.ago * 1000).toISOString(), ...(c.renewed ? { renewed: true as const } : {}), ...(c.w ? { w: c.w } : {}) })),
        ...(r.passed.length ? { passed: r.passed.map((p) => ({ uid: uidOf(p.pod, false), at: new Date(now - p.ago * 1000).toISOString() })) } : {}),
        ...(r.keptSince ? { keptSince: '1970-01-01T00:00:00.000Z', s: 5 } : {}),
        ...(r.holdFor !== undefined ? { holdUntil: new Date(now + r.holdFor * 1000).toISOString() } : {}),
        ...(r.sealed !== 'no' ? { finished: true } : {}),
        ...(r.sealed === 'Succeeded' ? { verdict: { phase: 'Succeeded' as const, match: 2, succeeded: 2, failed: 0 } } : {}),
        ...(r.sealed === 'Failed' ? { verdict: { phase: 'Failed' as const, match: 2, succeeded: 1, failed: 1 } } : {}),
      };
      // As every writer leaves it: the count of pods ever claimed covers the claims kept.
      record.total = Math.max(record.total, new Set(record.claims.map((c) => c.uid ?? c.pod)).size);
      return { kind: 'ours', resourceVersion: '9', uid: 'lease-uid', record };
    })),
  },
  {
    weight: 1,
    arbitrary: fc.record({ renewedAgo: fc.option(fc.integer({ min: 0, max: 60 }), { nil: undefined }), otherJob: fc.boolean() }).map((r): ViewGen => named('unreadable', r, (now) => ({
      kind: 'unreadable', resourceVersion: '9', uid: 'lease-uid', why: r.otherJob ? 'record of another job' : 'does not parse', otherJob: r.otherJob,
      renewedAt: r.renewedAgo === undefined ? undefined : new Date(now - r.renewedAgo * 1000),
    }))),
  },
);

// ---------- oracles (DESIGN.md "EphemeralJob", written from the text, not the code) ----------

const TERMINAL_WAITING = new Set(['RunContainerError', 'CreateContainerError', 'InvalidImageName', 'ErrImageNeverPull']);
export const ownedNames = (p: Pod): string[] => (p.spec.ephemeralContainers ?? []).filter((c) => (c.env ?? []).some((e) => e.name === 'KRUISE_EJOB_ID' && e.value === UID)).map((c) => c.name);
export const isActiveO = (p: Pod): boolean => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed' && p.metadata.deletionTimestamp === undefined;
export const matchesO = (p: Pod): boolean => p.metadata.labels?.app === 'x';
export const stateOfName = (p: Pod, n: string): State | undefined => (p.status?.ephemeralContainerStatuses ?? []).find((s) => s.name === n)?.state;
const terminalWaiting = (s: State | undefined): boolean => !s?.terminated && TERMINAL_WAITING.has(s?.waiting?.reason ?? '');
const failedC = (s: State | undefined): boolean => (s?.terminated !== undefined && s.terminated.exitCode !== 0) || terminalWaiting(s);
const terminalC = (s: State | undefined): boolean => s?.terminated !== undefined || terminalWaiting(s);
export type PState = 'pending' | 'waiting' | 'running' | 'succeeded' | 'failed';
export function podStateO(p: Pod): PState {
  const owned = ownedNames(p);
  if (owned.length === 0) return 'pending';
  const states = owned.map((n) => stateOfName(p, n));
  if (states.some(failedC)) return 'failed';
  if (states.every((s) => s?.terminated)) return 'succeeded';
  if (states.some((s) => s?.running)) return 'running';
  return 'waiting';
}
/** DESIGN: a pod holds a slot when it has a non-terminal container of the job. */
export const holdsSlotO = (p: Pod): boolean => isActiveO(p) && ownedNames(p).some((n) => !terminalC(stateOfName(p, n)));
export const foreignNamesakeO = (p: Pod, names: readonly string[]): boolean => (p.spec.ephemeralContainers ?? []).some((c) => names.includes(c.name) && !ownedNames(p).includes(c.name));
export const unfitO = (p: Pod): boolean => !p.spec.containers.some((c) => c.name === 'main');

/**
 * When a done pod got its result, by the kubelet's finishedAt (README "Phase"): succeeded at
 * its last exit, failed at its first failure; undefined when it says no time (then the result
 * stands past the deadline, as in OpenKruise).
 */
export function resultAtO(p: Pod): number | undefined {
  const states = ownedNames(p).map((n) => stateOfName(p, n));
  const time = (s: State | undefined): number | undefined => (s?.terminated?.finishedAt === undefined ? undefined : Date.parse(String(s.terminated.finishedAt)));
  if (podStateO(p) === 'failed') {
    const failures = states.filter(failedC).map(time);
    return failures.some((t) => t === undefined) ? undefined : Math.min(...(failures as number[]));
  }
  const exits = states.map(time);
  const known = exits.filter((t): t is number => t !== undefined);
  // A later exit known is enough to say the result came after it.
  return known.length === 0 ? undefined : Math.max(...known);
}

// ---------- plan helpers ----------
export const isLease = (a: Action): boolean => a.kind === 'Lease';
export const isInjection = (a: Action): boolean => a.subresource === 'ephemeralcontainers';
export const isStatus = (a: Action): boolean => a.subresource === 'status';
export const isWrite = (a: Action): boolean => isLease(a) || isInjection(a) || isStatus(a);
export function writtenRecord(a: Action | undefined): LeaseRecord | undefined {
  const text = (a?.body as { metadata?: { annotations?: Record<string, string> } } | undefined)?.metadata?.annotations?.[CLAIMS_ANNOTATION];
  return text === undefined ? undefined : (JSON.parse(text) as LeaseRecord);
}
export interface WrittenStatus {
  phase: string;
  match: number;
  succeeded: number;
  failed: number;
  running: number;
  waiting: number;
  startTime?: string;
  completionTime?: string;
  conditions: { type: string; status: string; reason?: string; message?: string }[];
}
/** The status the plan writes when every claim and injection took effect (the one that `requires` them, or the only one). */
export function mainStatus(actions: readonly Action[]): WrittenStatus | undefined {
  const a = actions.filter(isStatus).find((x) => x.unless === undefined);
  return (a?.body as { status: WrittenStatus } | undefined)?.status;
}
export const failedReason = (st: WrittenStatus | undefined): string | undefined => st?.conditions.find((c) => c.type === 'JobFailed' && c.status === 'True')?.reason;

/** Apply a Lease write as kube-apiserver would, and read it back as the planner would. */
export function leaseAfter(a: Action, rv: string): { raw: unknown; view: LeaseView } {
  const body = a.body as { metadata: Record<string, unknown> } & Record<string, unknown>;
  const raw = { ...body, metadata: { ...body.metadata, resourceVersion: rv, uid: 'lease-uid' } };
  return { raw, view: readLeaseView(raw, UID) };
}

/** Apply an injection (the containers, no status yet). */
export function injectInto(p: Pod, a: Action): Pod {
  const ecs = (a.body as { spec: { ephemeralContainers: NonNullable<Pod['spec']['ephemeralContainers']> } }).spec.ephemeralContainers;
  return { ...p, spec: { ...p.spec, ephemeralContainers: [...(p.spec.ephemeralContainers ?? []), ...ecs] } };
}

/** The job with a status patch merged as RFC 7386 does (null deletes), and a new resourceVersion. */
export function withStatus(job: EphemeralJobObject, patch: object, rv: string): EphemeralJobObject {
  const out: Record<string, unknown> = { ...(job.status ?? {}) };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return { ...job, metadata: { ...job.metadata, resourceVersion: rv }, status: out as EphemeralJobObject['status'] };
}

/** `xs` in the order of `keys` (stable). */
export function shuffle<T>(xs: readonly T[], keys: readonly number[]): T[] {
  return xs.map((x, i) => ({ x, k: keys[i % Math.max(1, keys.length)] ?? 0, i })).sort((a, b) => a.k - b.k || a.i - b.i).map((e) => e.x);
}
