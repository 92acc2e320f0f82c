// History properties of the EphemeralJob planner (review88): a single-instance world — one
// API server, a fresh LIST by selector at each look, the Lease read and written with its
// resourceVersion, claimed pods the LIST misses looked up by GET as controller.ts does —
// driven by random steps: looks whose writes may be refused, injections delayed in flight
// (landing later only within their withinSeconds and onto the claimed uid), time passing,
// containers progressing through every state, pods deleted / ended / marked deleting /
// created / replaced under their name / relabelled out and back, spec edits (parallelism,
// replicas, paused), and at the end a settling phase. Concurrent planners and a LIST read
// before the Lease are test/e2e/ejob-chaos.test.ts's and reading-once.test.ts's.
// Two deliberately broken worlds check that the checker catches what it claims to.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import fc from 'fast-check';
import type { EphemeralJobObject } from '../../functions/api/ephemeraljob.ts';
import type { Pod } from '../../functions/api/pod.ts';
import type { Action, Plan } from '../../functions/engine/plan.ts';
import { claimRetentionMs } from '../../functions/ejob/claims.ts';
import { readLeaseView, type LeaseRecord } from '../../functions/ejob/lease-record.ts';
import { plan } from '../../functions/ejob/planner.ts';
import { BASE, cfg, ecState, holdsSlotO, isActiveO, isInjection, isLease, isStatus, ownedNames, UID, withStatus, writtenRecord, type Ec, type WrittenStatus } from '../support/ejob-props.ts';
import { propsRuns, Seen } from '../support/props.ts';

type Reconcile = { k: 'reconcile'; refuse: number; refuseLease: boolean; refuseStatus: boolean; skew: number; again: boolean; delay: number };
type Step =
  | Reconcile
  | { k: 'land' }
  | { k: 'tick'; s: number }
  | { k: 'progress'; pod: number; to: Ec }
  | { k: 'pod'; pod: number; what: 'delete' | 'deleting' | 'Succeeded' | 'Failed' | 'relabel-out' | 'relabel-in' | 'replace' | 'create' }
  | { k: 'spec'; parallelism?: number | undefined; replicas?: number | null | undefined; paused?: boolean | undefined };

/** Where a container may go next, by where it is. */
const FORWARD: Record<string, Ec[]> = {
  nostatus: ['creating', 'running', 'backoff', 'configerr', 'badimage', 'createerr', 'ok', 'err'],
  creating: ['running', 'backoff', 'badimage', 'createerr', 'runerr', 'ok', 'err'],
  backoff: ['running', 'creating', 'ok', 'err'],
  configerr: ['running', 'ok', 'err'],
  running: ['ok', 'err'],
};

/** Steps; a reconcile's injections are held in flight when its `delay` draw is at least `delayFrom` (of 0–15). */
const stepArb = (delayFrom: number): fc.Arbitrary<Step> => fc.oneof(
  { weight: 6, arbitrary: fc.record({ k: fc.constant('reconcile' as const), refuse: fc.integer({ min: 0, max: 15 }), refuseLease: fc.integer({ min: 0, max: 9 }).map((n) => n === 0), refuseStatus: fc.integer({ min: 0, max: 6 }).map((n) => n === 0), skew: fc.integer({ min: -2, max: 2 }), again: fc.boolean(), delay: fc.integer({ min: 0, max: 15 }).map((n) => (n < delayFrom ? 0 : 1)) }) },
  { weight: 2, arbitrary: fc.constant({ k: 'land' as const }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('tick' as const), s: fc.constantFrom(1, 2, 3, 5, 6, 10, 20, 26, 60) }) },
  { weight: 5, arbitrary: fc.record({ k: fc.constant('progress' as const), pod: fc.integer({ min: 0, max: 6 }), to: fc.constantFrom<Ec>('creating', 'running', 'ok', 'ok', 'err', 'badimage', 'backoff', 'configerr', 'createerr', 'runerr') }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('pod' as const), pod: fc.integer({ min: 0, max: 6 }), what: fc.constantFrom('delete', 'deleting', 'Succeeded', 'Failed', 'relabel-out', 'relabel-in', 'replace', 'create', 'create') }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('spec' as const), parallelism: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }), replicas: fc.option(fc.option(fc.integer({ min: 0, max: 5 }), { nil: null }), { nil: undefined }), paused: fc.option(fc.boolean(), { nil: undefined }) }) },
);

interface Setup {
  parallelism: number;
  replicas: number | undefined;
  deadline: number | undefined;
  twoContainers: boolean;
  pods: number;
  steps: Step[];
}
const setupArb = (o: { steps: number; delayFrom: number }): fc.Arbitrary<Setup> => fc.record({
  parallelism: fc.integer({ min: 0, max: 3 }),
  replicas: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
  deadline: fc.option(fc.integer({ min: 20, max: 400 }), { nil: undefined }),
  twoContainers: fc.boolean(),
  pods: fc.integer({ min: 0, max: 6 }),
  steps: fc.array(stepArb(o.delayFrom), { minLength: 1, maxLength: o.steps }),
});

/** A world broken on purpose: `stale`, a LIST from before the last look and the Lease lost; `lease`, the Lease lost at every look. */
type Teeth = 'stale' | 'lease' | undefined;

const seen = new Seen();
// EPHEMERA_DEBUG=1: what the runs covered.
after(() => {
  if (process.env.EPHEMERA_DEBUG) console.log(seen.n);
});

class World {
  t = BASE;
  job: EphemeralJobObject;
  jobRv = 1;
  lease: Record<string, unknown> | null = null;
  leaseRv = 0;
  pods = new Map<string, Pod>();
  uidSeq = 0;
  names: string[];
  injectedUids = new Set<string>();
  log: string[] = [];
  sealed: LeaseRecord['verdict'] | undefined;
  parLowered = false;
  maxReplicasSeen: number;
  stale: Pod[] | undefined;
  inflight: { a: Action; sentBy: number; refused: boolean }[] = [];
  readonly teeth: Teeth;

  constructor(s: Setup, teeth: Teeth) {
    this.teeth = teeth;
    this.names = s.twoContainers ? ['ec', 'ec2'] : ['ec'];
    this.maxReplicasSeen = s.replicas ?? Infinity;
    const spec: Record<string, unknown> = {
      selector: { matchLabels: { app: 'x' } },
      template: { ephemeralContainers: this.names.map((name) => ({ name, image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'main' })) },
      parallelism: s.parallelism,
      ...(s.replicas !== undefined ? { replicas: s.replicas } : {}),
      ...(s.deadline !== undefined ? { activeDeadlineSeconds: s.deadline } : {}),
    };
    this.job = { metadata: { name: 'j', namespace: 'ns', uid: UID, resourceVersion: '1', creationTimestamp: new Date(this.t).toISOString() }, spec };
    for (let i = 0; i < s.pods; i++) this.createPod(`p${i}`);
  }

  createPod(name: string): void {
    const uid = `uid-${this.uidSeq++}`;
    this.pods.set(name, { metadata: { name, namespace: 'ns', uid, resourceVersion: '1', labels: { app: 'x' }, creationTimestamp: new Date(this.t - 600_000 + this.uidSeq * 1000).toISOString() }, spec: { containers: [{ name: 'main' }] }, status: { phase: 'Running' } });
  }
  podAt(i: number): Pod | undefined {
    return [...this.pods.values()][i % Math.max(1, this.pods.size)];
  }
  spec(): { parallelism?: number; replicas?: number; paused?: boolean } {
    return this.job.spec as { parallelism?: number; replicas?: number; paused?: boolean };
  }
  setSpec(spec: Record<string, unknown>): void {
    this.job = { ...this.job, spec, metadata: { ...this.job.metadata, resourceVersion: String(++this.jobRv) } };
  }
  holders(): Pod[] {
    return [...this.pods.values()].filter((p) => p.metadata.labels?.app === 'x' && holdsSlotO(p));
  }
  finished(): boolean {
    return this.job.status?.completionTime !== undefined;
  }

  observe(skew: number): { obs: Parameters<typeof plan>[0]; now: Date } {
    const listed = (this.teeth === 'stale' && this.stale ? this.stale : [...this.pods.values()]).filter((p) => p.metadata.labels?.app === 'x');
    this.stale = [...this.pods.values()];
    const view = readLeaseView(this.teeth ? null : this.lease, UID);
    const unlisted = new Map<string, Pod | null>();
    if (view.kind === 'ours') {
      const names = new Set(listed.map((p) => p.metadata.name));
      for (const c of view.record.claims) if (!names.has(c.pod) && Date.parse(c.at) + claimRetentionMs(c, cfg) > this.t) unlisted.set(c.pod, this.pods.get(c.pod) ?? null);
    }
    return { obs: { job: this.job, pods: listed, lease: { view, serverNow: new Date(this.t), cfg, ...(unlisted.size ? { unlisted } : {}) } }, now: new Date(this.t + skew * 1000) };
  }

  /** Containers into the pod (H2, H3 checked). */
  inject(pod: Pod, a: Action): void {
    const uid = pod.metadata.uid ?? '';
    assert.equal(ownedNames(pod).length, 0, `H3 injected ${a.name} (${uid}) a second time`);
    assert.ok(!this.injectedUids.has(uid), `H3 uid ${uid} injected twice`);
    this.injectedUids.add(uid);
    if (this.spec().replicas !== undefined) assert.ok(this.injectedUids.size <= this.maxReplicasSeen, `H2 ${this.injectedUids.size} pods injected > replicas (the most it had: ${this.maxReplicasSeen})`);
    const ecs = (a.body as { spec: { ephemeralContainers: NonNullable<Pod['spec']['ephemeralContainers']> } }).spec.ephemeralContainers;
    this.pods.set(a.name, { ...pod, spec: { ...pod.spec, ephemeralContainers: [...(pod.spec.ephemeralContainers ?? []), ...ecs] } });
  }

  /** Injections in flight reach the API server now: applied if sent within their window, to the claimed pod (uid). */
  land(): string[] {
    const out: string[] = [];
    for (const { a, sentBy, refused } of this.inflight.splice(0)) {
      const pod = this.pods.get(a.name);
      const uid = (a.body as { metadata?: { uid?: string } }).metadata?.uid;
      if (this.t > sentBy || refused || !pod || pod.metadata.uid !== uid || pod.metadata.deletionTimestamp !== undefined) out.push('dropped');
      else if (ownedNames(pod).length > 0) out.push('already there (no-op)');
      else {
        this.inject(pod, a);
        out.push('landed');
      }
    }
    return out;
  }

  /** Apply a plan as engine/apply.ts would (requires / unless), refusing some writes (H4 checked). */
  apply(p: Plan, r: Pick<Reconcile, 'refuse' | 'refuseLease' | 'refuseStatus' | 'delay'>): { deleted: boolean; wrote: string[] } {
    const done = new Set<string>();
    const wrote: string[] = [];
    let deleted = false;
    let injIdx = 0;
    const ready = (a: Action): boolean => [a.requires ?? []].flat().every((id) => done.has(id)) && (a.unless === undefined || [a.unless].flat().some((id) => !done.has(id)));
    for (const a of p.actions) {
      if (!ready(a)) continue;
      let ok = true;
      if (isLease(a)) {
        ok = !r.refuseLease;
        if (ok) this.writeLease(a, wrote);
      } else if (isInjection(a)) {
        ok = this.sendInjection(a, { refused: ((r.refuse >> (injIdx++ % 4)) & 1) === 1, delayed: r.delay > 0 }, wrote);
      } else if (isStatus(a)) {
        ok = !r.refuseStatus;
        if (ok) this.writeStatus(a, wrote);
      } else if (a.verb === 'delete' && a.kind === 'EphemeralJob') {
        deleted = true;
        wrote.push('delete job');
      }
      if (a.id && ok) done.add(a.id);
    }
    return { deleted, wrote };
  }

  /** An injection sent: refused, held in flight, or applied. Whether it took effect now. */
  sendInjection(a: Action, how: { refused: boolean; delayed: boolean }, wrote: string[]): boolean {
    if (how.delayed) {
      // An instance that stalls after its claim: the injection lands at a later step, if sent within the action's withinSeconds.
      this.inflight.push({ a, sentBy: this.t + (a.withinSeconds ?? 0) * 1000, refused: how.refused });
      wrote.push(`inject ${a.name} (in flight)`);
      return false; // what `requires` it (the status counting it, its Event) is withheld in this run
    }
    const pod = this.pods.get(a.name);
    const uid = (a.body as { metadata?: { uid?: string } }).metadata?.uid;
    if (pod === undefined || pod.metadata.uid !== uid || how.refused || pod.metadata.deletionTimestamp !== undefined) return false;
    this.inject(pod, a);
    wrote.push(`inject ${a.name}`);
    return true;
  }

  writeLease(a: Action, wrote: string[]): void {
    const body = a.body as { metadata: Record<string, unknown> };
    if (!this.teeth) assert.ok(a.verb === 'create' ? this.lease === null : body.metadata.resourceVersion === String(this.leaseRv), 'Lease precondition (single instance: always current)');
    this.lease = { ...body, metadata: { ...body.metadata, resourceVersion: String(++this.leaseRv), uid: 'lease-uid' } };
    const rec = writtenRecord(a);
    if (rec?.finished && rec.verdict) {
      if (this.sealed) assert.deepEqual(rec.verdict, this.sealed, 'H4 a sealed verdict never changes');
      this.sealed = rec.verdict;
    }
    wrote.push('lease');
  }

  writeStatus(a: Action, wrote: string[]): void {
    assert.ok(!this.finished(), 'H4 status written after the job finished');
    const st = (a.body as { status: WrittenStatus }).status;
    this.job = withStatus(this.job, st, String(++this.jobRv));
    const ph = this.job.status?.phase;
    if (ph === 'Succeeded' || ph === 'Failed') {
      assert.ok(this.job.status?.completionTime, 'H4 final phase without completionTime');
      assert.ok(this.sealed && this.sealed.phase === ph, `H4 final phase ${ph} written without the same sealed verdict (${JSON.stringify(this.sealed)})`);
    }
    wrote.push(`status ${ph} m${st.match} s${st.succeeded} f${st.failed} r${st.running} w${st.waiting}`);
  }

  progress(st: { pod: number; to: Ec }): void {
    const p = this.podAt(st.pod);
    if (!p || ownedNames(p).length === 0) return;
    const statuses = [...(p.status?.ephemeralContainerStatuses ?? [])];
    for (const n of ownedNames(p)) {
      const cur = statuses.find((x) => x.name === n)?.state;
      const reason = cur?.waiting?.reason;
      const kind = !cur ? 'nostatus' : cur.running ? 'running' : cur.terminated ? 'ended' : reason === 'ContainerCreating' ? 'creating' : reason === 'ImagePullBackOff' ? 'backoff' : reason === 'CreateContainerConfigError' ? 'configerr' : 'ended';
      if (!(FORWARD[kind] ?? []).includes(st.to)) continue;
      const next = { name: n, state: ecState(st.to, this.t) };
      const i = statuses.findIndex((x) => x.name === n);
      if (i >= 0) statuses[i] = next;
      else statuses.push(next);
      break; // one container a step
    }
    this.pods.set(p.metadata.name, { ...p, status: { ...p.status, ephemeralContainerStatuses: statuses } });
  }

  podStep(st: { pod: number; what: string }): void {
    if (st.what === 'create') {
      this.createPod(`p${this.uidSeq + 10}`);
      return;
    }
    const p = this.podAt(st.pod);
    if (!p) return;
    const name = p.metadata.name;
    if (st.what === 'delete') this.pods.delete(name);
    else if (st.what === 'deleting') this.pods.set(name, { ...p, metadata: { ...p.metadata, deletionTimestamp: new Date(this.t).toISOString() } });
    else if (st.what === 'Succeeded' || st.what === 'Failed') this.pods.set(name, { ...p, status: { ...p.status, phase: st.what } });
    else if (st.what === 'relabel-out') this.pods.set(name, { ...p, metadata: { ...p.metadata, labels: { app: 'y' } } });
    // Back into the selector only without the job's containers (README: a pod relabelled back with a live container may overshoot, as OpenKruise's).
    else if (st.what === 'relabel-in' && ownedNames(p).length === 0) this.pods.set(name, { ...p, metadata: { ...p.metadata, labels: { app: 'x' } } });
    else if (st.what === 'replace') {
      this.pods.delete(name);
      this.createPod(name);
    }
  }

  /** A step other than a look. */
  step(st: Exclude<Step, Reconcile>): void {
    if (st.k === 'tick') this.t += st.s * 1000;
    else if (st.k === 'land') for (const o of this.land()) seen.add(`in-flight injection ${o}`);
    else if (st.k === 'progress') this.progress(st);
    else if (st.k === 'pod') this.podStep(st);
    else this.specStep(st);
  }

  specStep(st: { parallelism?: number | undefined; replicas?: number | null | undefined; paused?: boolean | undefined }): void {
    const spec: Record<string, unknown> = { ...this.spec() };
    if (st.parallelism !== undefined) {
      if (st.parallelism < (this.spec().parallelism ?? 1)) this.parLowered = true;
      spec.parallelism = st.parallelism;
    }
    // H2 is checked against the largest replicas the job ever had; once unset (unbounded), never again.
    if (st.replicas === null) {
      delete spec.replicas;
      this.maxReplicasSeen = Infinity;
    } else if (st.replicas !== undefined) {
      spec.replicas = st.replicas;
      if (this.maxReplicasSeen !== Infinity) this.maxReplicasSeen = Math.max(this.maxReplicasSeen, st.replicas);
    }
    if (st.paused !== undefined) spec.paused = st.paused;
    this.setSpec(spec);
  }
}

/** One history: the violations found (H1, H5, H6; H2–H4 throw where they happen), with the last looks. */
function run(s: Setup, teeth?: Teeth): string[] {
  const w = new World(s, teeth);
  const violations: string[] = [];
  const reconcile = (r: Omit<Reconcile, 'k' | 'again'>, tag: string): { wrote: string[]; deleted: boolean; allOk: boolean } => {
    const before = w.holders().length;
    const { obs, now } = w.observe(r.skew);
    const p = plan(obs, now);
    const res = w.apply(p, r);
    const par = w.spec().parallelism ?? 1;
    if (w.holders().length > Math.max(par, before)) violations.push(`H1 ${tag}: ${w.holders().length} pods hold a slot > parallelism ${par} (before ${before}) after ${res.wrote.join('; ')}`);
    seen.add('looks');
    for (const x of res.wrote) seen.add(x.startsWith('status') ? `status ${x.split(' ')[1]}` : x.endsWith('(in flight)') ? 'injection in flight' : (x.split(' ')[0] ?? ''));
    if (p.notes?.some((n) => /claim again/.test(n))) seen.add('renewals');
    w.log.push(`${tag} t+${(w.t - BASE) / 1000}s: ${res.wrote.join('; ') || '-'}${p.notes?.length ? ' [' + p.notes.join(' | ') + ']' : ''}`);
    const planned = p.actions.filter((a) => isLease(a) || isInjection(a) || isStatus(a) || a.verb === 'delete').length;
    return { ...res, allOk: res.wrote.length === planned && !res.wrote.some((x) => x.endsWith('(in flight)')) };
  };
  for (const st of s.steps) {
    const par = w.spec().parallelism ?? 1;
    if (!w.parLowered && w.holders().length > par) violations.push(`H1 before ${st.k}: ${w.holders().length} pods hold a slot > parallelism ${par}: ${w.holders().map((p) => p.metadata.name).join(', ')}`);
    if (violations.length) break;
    if (st.k === 'reconcile') {
      if (w.finished()) continue;
      const r = reconcile(st, 'look');
      if (r.deleted) return violations;
      if (st.again && r.allOk && r.wrote.length > 0) {
        // H5: nothing changed since, and every write took effect: the next look writes nothing.
        const again = reconcile({ refuse: 0, refuseLease: false, refuseStatus: false, skew: st.skew, delay: 0 }, 'again');
        if (again.wrote.length > 0) violations.push(`H5 a look right after a look whose writes all took effect wrote again: ${again.wrote.join('; ')}`);
        seen.add('H5 looked again');
      }
    } else w.step(st);
  }
  if (!violations.length && !w.finished()) settle(w, reconcile, violations);
  return violations.length ? [...violations, ...w.log.slice(-14).map((l) => `    ${l}`)] : [];
}

/** H6: resumed, parallelism ≥ 1, nothing refused, containers ending, time passing: a job with a target gets its verdict. */
function settle(w: World, reconcile: (r: Omit<Reconcile, 'k' | 'again'>, tag: string) => { deleted: boolean }, violations: string[]): void {
  w.setSpec({ ...w.spec(), paused: false, parallelism: Math.max(1, w.spec().parallelism ?? 1) });
  for (let i = 0; i < 60 && !w.finished(); i++) {
    if (reconcile({ refuse: 0, refuseLease: false, refuseStatus: false, skew: 0, delay: 0 }, 'settle').deleted) return;
    for (const p of [...w.pods.values()]) {
      if (ownedNames(p).length === 0) continue;
      const statuses = ownedNames(p).map((n) => (p.status?.ephemeralContainerStatuses ?? []).find((x) => x.name === n && x.state?.terminated) ?? { name: n, state: ecState('ok', w.t) });
      w.pods.set(p.metadata.name, { ...p, status: { ...p.status, ephemeralContainerStatuses: statuses } });
    }
    w.t += 30_000;
  }
  const matchable = [...w.pods.values()].some((p) => p.metadata.labels?.app === 'x' && isActiveO(p));
  if (!w.finished() && matchable && w.spec().replicas !== 0) {
    const st = w.job.status;
    violations.push(`H6 not finished after settling: ${JSON.stringify(st && { phase: st.phase, match: st.match, s: st.succeeded, f: st.failed, r: st.running, w: st.waiting })}`);
  }
  if (w.finished()) seen.add('settled');
}

const holds = (s: Setup): void => {
  const v = run(s);
  if (v.length) throw new Error(v.join('\n'));
};

describe('EphemeralJob planner: properties of histories (review88)', () => {
  test('H1–H6 over random histories: slots within parallelism, no more pods injected than replicas, none twice, no write after the verdict and a final phase only sealed, nothing written twice, and a verdict once settled', () => {
    fc.assert(fc.property(setupArb({ steps: 40, delayFrom: 10 }), holds), propsRuns(2500));
    // Long histories, seeds 11–14 of review88 found F1 there (H5).
    fc.assert(fc.property(setupArb({ steps: 90, delayFrom: 10 }), holds), propsRuns(1000));
    assert.ok(seen.get('H5 looked again') >= 300 && seen.get('renewals') >= 30 && seen.get('settled') >= 500, JSON.stringify(seen.n));
    for (const phase of ['Waiting', 'Running', 'Succeeded', 'Failed', 'Paused']) assert.ok(seen.get(`status ${phase}`) >= 50, JSON.stringify(seen.n));
  });

  test('the same with most injections held in flight and landing later, within their window only', () => {
    fc.assert(fc.property(setupArb({ steps: 40, delayFrom: 3 }), holds), propsRuns(1200));
    assert.ok(seen.get('in-flight injection landed') >= 50 && seen.get('in-flight injection dropped') >= 50, JSON.stringify(seen.n));
  });

  // The two worlds below are broken on purpose: the checker must find what it says it finds,
  // or the properties above could pass without looking.
  test('teeth: a world whose LIST is from before the last look and whose Lease is lost injects a pod twice (H3; now and then it breaks H2, H4 or H5 first), and the checker says so', () => {
    const r = fc.check(fc.property(setupArb({ steps: 40, delayFrom: 10 }), (s) => {
      const v = run(s, 'stale');
      if (v.length) throw new Error(v.join('\n'));
    }), { numRuns: 2000, endOnFailure: true, ...(process.env.EPHEMERA_PROPS_SEED ? { seed: Number(process.env.EPHEMERA_PROPS_SEED) } : {}) });
    assert.ok(r.failed, 'no violation found in a broken world');
    assert.match(String((r.errorInstance as Error | undefined)?.message), /^H[2-5] /);
    if (process.env.EPHEMERA_DEBUG) console.log('stale world caught after', r.numRuns, 'runs');
  });

  test('teeth: a world that loses the Lease at every look (README: "deleted by hand") breaks what the Lease keeps — replicas (H2), or a sealed verdict (H4) — and the checker says so', () => {
    const r = fc.check(fc.property(setupArb({ steps: 40, delayFrom: 10 }), (s) => {
      const v = run(s, 'lease');
      if (v.length) throw new Error(v.join('\n'));
    }), { numRuns: 4000, endOnFailure: true, ...(process.env.EPHEMERA_PROPS_SEED ? { seed: Number(process.env.EPHEMERA_PROPS_SEED) } : {}) });
    assert.ok(r.failed, 'no violation found in a broken world');
    assert.match(String((r.errorInstance as Error | undefined)?.message), /^H[24] /);
    if (process.env.EPHEMERA_DEBUG) console.log('lost Lease caught after', r.numRuns, 'runs');
  });
});
