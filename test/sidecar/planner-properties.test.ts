// Properties of the SidecarTerminator planner (functions/sidecar/planner.ts plan()) over
// generated pods (review88): mains and sidecars in every state, env marks (case, duplicates,
// WITH_IMAGE, IGNORE_EXIT_CODE), native sidecars, pod and container restart policies and
// rules, pod phases, deletion, nodes (normal, virtual-kubelet, missing, unknown), strategy
// annotations, CRRs present or not, signal containers already injected. Each over two
// arbitraries: `mixed` (anything) and `due` (pods whose mains have mostly ended). The oracles
// are DESIGN's "SidecarTerminator", OpenKruise's utils.go and the kubelet's restart rules.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { Container, ContainerStatus, Pod } from '../../functions/api/pod.ts';
import type { Action } from '../../functions/engine/plan.ts';
import { DEFAULT_SIDECAR_OPTIONS } from '../../functions/sidecar/config.ts';
import { plan, type CrrView, type SidecarObserved } from '../../functions/sidecar/planner.ts';
import { checkEach, reportedSeen, withFrozenWorld } from '../support/props.ts';

const NOW = new Date('2026-01-01T00:05:00Z');
const UIDP = 'pod-uid';

type CState = 'none' | 'waiting' | 'crashloop' | 'running' | 'exit0' | 'exit1' | 'exit137';
const C_STATES: CState[] = ['none', 'waiting', 'crashloop', 'running', 'exit0', 'exit1', 'exit137'];
interface CGen {
  role: 'main' | 'sidecar' | 'sidecar-TRUE' | 'sidecar-false' | 'sidecar-dup-true-false' | 'sidecar-dup-false-true' | 'image-only' | 'ignore' | 'ignore-image' | 'ignore-without-mark';
  state: CState;
  restartPolicy: 'none' | 'Never' | 'OnFailure' | 'Always';
  rule: 'none' | 'restart-on-1' | 'restart-all-on-1';
  runAsUser: boolean;
}
const cArb: fc.Arbitrary<CGen> = fc.record({
  role: fc.constantFrom<CGen['role']>('main', 'main', 'main', 'sidecar', 'sidecar', 'sidecar-TRUE', 'sidecar-false', 'sidecar-dup-true-false', 'sidecar-dup-false-true', 'image-only', 'ignore', 'ignore', 'ignore-image', 'ignore-without-mark'),
  state: fc.constantFrom(...C_STATES),
  restartPolicy: fc.constantFrom<CGen['restartPolicy']>('none', 'none', 'none', 'none', 'Never', 'OnFailure', 'Always'),
  rule: fc.constantFrom<CGen['rule']>('none', 'none', 'none', 'none', 'restart-on-1', 'restart-all-on-1'),
  runAsUser: fc.boolean(),
});
interface PGen {
  containers: CGen[];
  native: boolean;
  policy: 'Never' | 'OnFailure' | 'Always' | 'none';
  phase: 'Running' | 'Pending' | 'Succeeded' | 'Failed' | 'none';
  deleting: boolean;
  node: 'normal' | 'virtual-kubelet' | 'missing' | 'unknown' | 'absent';
  annotation: 'none' | 'crr' | 'ephemeral-signal' | ' crr ' | 'bogus';
  crr: 'none' | 'all' | 'some' | 'unserved';
  signalDone: boolean;
  sharePid: boolean;
  restartingAll: boolean;
  defaultStrategy: 'crr' | 'ephemeral-signal';
}
const mixedArb: fc.Arbitrary<PGen> = fc.record({
  containers: fc.array(cArb, { minLength: 1, maxLength: 5 }),
  native: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
  policy: fc.constantFrom<PGen['policy']>('Never', 'Never', 'OnFailure', 'OnFailure', 'Always', 'none'),
  phase: fc.constantFrom<PGen['phase']>('Running', 'Running', 'Running', 'Pending', 'Succeeded', 'Failed', 'none'),
  deleting: fc.integer({ min: 0, max: 6 }).map((n) => n === 0),
  node: fc.constantFrom<PGen['node']>('normal', 'normal', 'normal', 'virtual-kubelet', 'missing', 'unknown', 'absent'),
  annotation: fc.constantFrom<PGen['annotation']>('none', 'none', 'crr', 'ephemeral-signal', ' crr ', 'bogus'),
  crr: fc.constantFrom<PGen['crr']>('none', 'none', 'all', 'some', 'unserved'),
  signalDone: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
  sharePid: fc.integer({ min: 0, max: 8 }).map((n) => n === 0),
  restartingAll: fc.integer({ min: 0, max: 8 }).map((n) => n === 0),
  defaultStrategy: fc.constantFrom<PGen['defaultStrategy']>('crr', 'ephemeral-signal'),
});

/** Pods nearly due: Running, Never/OnFailure, mains ended (mostly 0), sidecars mostly running. */
const dueArb: fc.Arbitrary<PGen> = fc.record({
  containers: fc.tuple(
    fc.array(fc.record({ role: fc.constant<CGen['role']>('main'), state: fc.constantFrom<CState>('exit0', 'exit0', 'exit0', 'exit1', 'running'), restartPolicy: fc.constantFrom<CGen['restartPolicy']>('none', 'none', 'none', 'Never'), rule: fc.constantFrom<CGen['rule']>('none', 'none', 'none', 'none', 'restart-on-1', 'restart-all-on-1'), runAsUser: fc.boolean() }), { minLength: 1, maxLength: 2 }),
    fc.array(fc.record({ role: fc.constantFrom<CGen['role']>('sidecar', 'sidecar-TRUE', 'image-only', 'ignore', 'ignore-image', 'sidecar-dup-false-true'), state: fc.constantFrom<CState>('running', 'running', 'running', 'waiting', 'crashloop', 'exit0', 'exit1'), restartPolicy: fc.constant<CGen['restartPolicy']>('none'), rule: fc.constant<CGen['rule']>('none'), runAsUser: fc.boolean() }), { minLength: 1, maxLength: 3 }),
  ).map(([m, sc]) => [...m, ...sc]),
  native: fc.boolean(),
  policy: fc.constantFrom<PGen['policy']>('Never', 'OnFailure'),
  phase: fc.constantFrom<PGen['phase']>('Running', 'Running', 'Running', 'Succeeded', 'Failed'),
  deleting: fc.constant(false),
  node: fc.constantFrom<PGen['node']>('normal', 'normal', 'virtual-kubelet', 'unknown', 'absent'),
  annotation: fc.constantFrom<PGen['annotation']>('none', 'none', 'crr', 'ephemeral-signal', ' crr ', 'bogus'),
  crr: fc.constantFrom<PGen['crr']>('none', 'none', 'all', 'some', 'unserved'),
  signalDone: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
  sharePid: fc.integer({ min: 0, max: 8 }).map((n) => n === 0),
  restartingAll: fc.integer({ min: 0, max: 12 }).map((n) => n === 0),
  defaultStrategy: fc.constantFrom<PGen['defaultStrategy']>('crr', 'ephemeral-signal'),
});

const E = (name: string, value: string): { name: string; value: string } => ({ name, value });
const MARK = 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT';
const IMG = 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE';
const IGN = 'KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE';
function envOf(role: CGen['role']): { name: string; value: string }[] {
  switch (role) {
    case 'main': return [E('OTHER', 'true')];
    case 'sidecar': return [E(MARK, 'true')];
    case 'sidecar-TRUE': return [E(MARK, 'TRUE')];
    case 'sidecar-false': return [E(MARK, 'false')];
    case 'sidecar-dup-true-false': return [E(MARK, 'true'), E(MARK, 'false')];
    case 'sidecar-dup-false-true': return [E(MARK, 'false'), E(MARK, 'true')];
    case 'image-only': return [E(IMG, 'example/exit:1')];
    case 'ignore': return [E(MARK, 'true'), E(IGN, 'true')];
    case 'ignore-image': return [E(IMG, 'example/exit:1'), E(IGN, 'True')];
    case 'ignore-without-mark': return [E(IGN, 'true')];
  }
}
function stateOf(s: CState, name: string): ContainerStatus | undefined {
  const base = { name, image: 'docker.io/example/x:1', restartCount: 0 };
  switch (s) {
    case 'none': return undefined;
    case 'waiting': return { ...base, state: { waiting: { reason: 'ContainerCreating' } } };
    case 'crashloop': return { ...base, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 1, finishedAt: '2026-01-01T00:02:00Z' } } };
    case 'running': return { ...base, state: { running: { startedAt: '2026-01-01T00:00:05Z' } } };
    case 'exit0': return { ...base, state: { terminated: { exitCode: 0, finishedAt: '2026-01-01T00:03:00Z' } } };
    case 'exit1': return { ...base, state: { terminated: { exitCode: 1, finishedAt: '2026-01-01T00:03:00Z' } } };
    case 'exit137': return { ...base, state: { terminated: { exitCode: 137, finishedAt: '2026-01-01T00:03:00Z' } } };
  }
}

/** A container's restartPolicyRules (Kubernetes 1.34+), as the tests write them. */
type Rule = { action: string; exitCodes: { operator: string; values: number[] } };
const rulesOf = (c: Container): Rule[] => (c as { restartPolicyRules?: Rule[] }).restartPolicyRules ?? [];

function makePod(g: PGen): Pod {
  const containers = g.containers.map((c, i): Container => ({
    name: `c${i}`, image: 'example/x:1', env: envOf(c.role),
    ...(c.restartPolicy !== 'none' ? { restartPolicy: c.restartPolicy } : {}),
    ...(c.rule !== 'none' ? { restartPolicyRules: [{ action: c.rule === 'restart-on-1' ? 'Restart' : 'RestartAllContainers', exitCodes: { operator: 'In', values: [1] } }] } : {}),
    ...(c.runAsUser ? { securityContext: { runAsUser: 1000 } } : {}),
  }));
  const statuses = g.containers.flatMap((c, i) => stateOf(c.state, `c${i}`) ?? []);
  const eph = g.signalDone ? g.containers.flatMap((c, i) => (c.role !== 'main' ? [{ name: `ephemera-stop-c${i}`, image: 'busybox:1.36', targetContainerName: `c${i}`, env: [{ name: 'EPHEMERA_SIGNAL_TARGET', value: `c${i}` }] }] : [])) : [];
  return {
    metadata: { name: 'job-x', namespace: 'batch', uid: UIDP, resourceVersion: '7', creationTimestamp: '2026-01-01T00:00:00Z', ...(g.deleting ? { deletionTimestamp: '2026-01-01T00:04:00Z' } : {}), ...(g.annotation !== 'none' ? { annotations: { 'ephemera.io/sidecar-termination': g.annotation } } : {}) },
    spec: {
      nodeName: 'node-a', containers,
      ...(g.policy !== 'none' ? { restartPolicy: g.policy } : {}),
      ...(g.native ? { initContainers: [{ name: 'native', restartPolicy: 'Always' }] } : {}),
      ...(eph.length ? { ephemeralContainers: eph } : {}),
      ...(g.sharePid ? { shareProcessNamespace: true } : {}),
    },
    status: {
      ...(g.phase !== 'none' ? { phase: g.phase } : {}),
      containerStatuses: statuses,
      ...(g.restartingAll ? { conditions: [{ type: 'AllContainersRestarting', status: 'True' }] } : {}),
    },
  } as Pod;
}

function observed(g: PGen, pod: Pod): SidecarObserved {
  const sidecarNames = pod.spec.containers.filter(isSidecarO).map((c) => c.name);
  const crrs: Record<string, CrrView | null> = {};
  if (g.crr === 'all' || g.crr === 'some') {
    const list = g.crr === 'all' ? sidecarNames : sidecarNames.slice(0, 1);
    crrs[`sidecar-termination-${UIDP}`] = { name: `sidecar-termination-${UIDP}`, containers: list, createdAt: new Date('2026-01-01T00:04:30Z') };
  }
  const node = g.node === 'absent' ? undefined : ({ name: 'node-a', kind: g.node } as const);
  return { namespace: 'batch', name: 'job-x', pod, ...(node ? { node } : {}), crrs, ...(g.crr === 'unserved' ? { crrUnserved: true } : {}), options: { ...DEFAULT_SIDECAR_OPTIONS, defaultStrategy: g.defaultStrategy } };
}

// ---------- oracles ----------
const lastEnv = (c: Container, n: string): string | undefined => {
  let v: string | undefined;
  for (const e of c.env ?? []) if (e.name === n) v = e.value;
  return v;
};
/** ephemera's documented rule (README "Duplicate env entries: the last one counts"). */
const isSidecarO = (c: Container): boolean => (lastEnv(c, MARK) ?? '').toLowerCase() === 'true' || !!lastEnv(c, IMG);
const ignoresO = (c: Container): boolean => (lastEnv(c, IGN) ?? '').toLowerCase() === 'true';
const statusO = (p: Pod, n: string): ContainerStatus | undefined => (p.status?.containerStatuses ?? []).find((s) => s.name === n);
function exitFinalO(c: Container, policy: string, code: number): boolean {
  const rule = rulesOf(c).find((r) => (r.exitCodes.operator === 'In' ? r.exitCodes.values.includes(code) : !r.exitCodes.values.includes(code)));
  if (rule) return rule.action !== 'Restart' && rule.action !== 'RestartAllContainers';
  const pol = c.restartPolicy ?? policy;
  return !(pol === 'Always' || (pol === 'OnFailure' && code !== 0));
}
/** Nothing may be done to the pod's sidecars, whatever its mains did: deleting, not started, restarting all, nothing to stop. */
function heldO(p: Pod, policy: string, sidecars: readonly Container[]): boolean {
  if (p.metadata.deletionTimestamp || !p.status?.phase || p.status.phase === 'Pending' || (policy !== 'Never' && policy !== 'OnFailure')) return true;
  if ((p.status.conditions ?? []).some((c) => c.type === 'AllContainersRestarting' && c.status === 'True')) return true;
  if (sidecars.length === 0 || sidecars.every((c) => statusO(p, c.name)?.state?.terminated)) return true;
  // A sidecar's exit that restarts every container.
  return sidecars.some((c) => {
    const t = statusO(p, c.name)?.state?.terminated;
    return t !== undefined && !exitFinalO(c, policy, t.exitCode) && rulesOf(c).some((r) => r.action === 'RestartAllContainers' && r.exitCodes.values.includes(t.exitCode));
  });
}

/** May anything be done to this pod's sidecars at all, and did every main exit 0? */
function dueO(p: Pod): { due: boolean; mainsOk: boolean } {
  const policy = p.spec.restartPolicy ?? 'Always';
  const mains = p.spec.containers.filter((c) => !isSidecarO(c));
  const sidecars = p.spec.containers.filter(isSidecarO);
  const no = { due: false, mainsOk: true };
  if (heldO(p, policy, sidecars)) return no;
  for (const c of [...mains, ...sidecars]) if (!statusO(p, c.name)?.state) return no;
  let mainsOk = true;
  for (const c of mains) {
    const t = statusO(p, c.name)?.state?.terminated;
    if (!t || !exitFinalO(c, policy, t.exitCode)) return no;
    if (t.exitCode !== 0) mainsOk = false;
  }
  return { due: true, mainsOk };
}

const isEndPod = (a: Action): boolean => a.kind === 'Pod' && a.subresource === 'status';
const isCrr = (a: Action): boolean => a.kind === 'ContainerRecreateRequest';
const isSignal = (a: Action): boolean => a.kind === 'Pod' && a.subresource === 'ephemeralcontainers';
const isSwap = (a: Action): boolean => a.kind === 'Pod' && a.subresource === undefined && a.verb === 'patch';
const isStop = (a: Action): boolean => isCrr(a) || isSignal(a) || isSwap(a);
type Named = { name: string; image?: string; targetContainerName?: string };
const crrContainers = (a: Action): Named[] => (a.body as { spec: { containers: Named[] } }).spec.containers;
const signalContainers = (a: Action): Named[] => (a.body as { spec: { ephemeralContainers: Named[] } }).spec.ephemeralContainers;
/** The sidecars an action stops. */
const stopped = (a: Action): string[] => (isSignal(a) ? signalContainers(a).map((c) => c.targetContainerName ?? '') : crrContainers(a).map((c) => c.name));

/** Run `check` over both arbitraries, `runs` times each. */
const property = (runs: number, check: (g: PGen) => void): void => checkEach([['mixed', mixedArb], ['due', dueArb]] as const, runs, check);

const RUNS = 8000;
const seen = reportedSeen();

describe('SidecarTerminator planner: properties (review88)', () => {
  test('S1 no action at all on a pod with no opted-in sidecar (the last env entry counts), one being deleted, Pending or without a phase, with restartPolicy Always or unset, or on a missing node', () => {
    property(RUNS, (g) => {
      const pod = makePod(g);
      const p = plan(observed(g, pod), NOW);
      const opted = pod.spec.containers.some(isSidecarO);
      if (!opted || g.deleting || g.phase === 'Pending' || g.phase === 'none' || g.policy === 'Always' || g.policy === 'none' || g.node === 'missing') {
        assert.deepEqual(p.actions, []);
        seen.add('S1 nothing');
      }
    });
    assert.ok(seen.get('S1 nothing') >= 1000);
  });

  test('S2 a sidecar is stopped, or the pod ended, only when every main container\'s exit is final (Never: all terminated; OnFailure: all 0, unless their own policy or rule makes a failure final); never during a restart of all containers', () => {
    property(RUNS, (g) => {
      const pod = makePod(g);
      const acting = plan(observed(g, pod), NOW).actions.filter((a) => isStop(a) || isEndPod(a));
      if (acting.length === 0) return;
      assert.ok(dueO(pod).due, `acted (${acting.map((a) => a.reason).join('; ')}) on a pod not due`);
      seen.add('S2 acted');
    });
    assert.ok(seen.get('S2 acted') >= 300);
  });

  test('S3 the phase written is OpenKruise\'s (Succeeded iff every main container exited 0), never on a pod already Succeeded or Failed, and only under OnFailure or in the ignore-exit-code stage', () => {
    property(RUNS, (g) => {
      const pod = makePod(g);
      const ends = plan(observed(g, pod), NOW).actions.filter(isEndPod);
      if (ends.length === 0) return;
      assert.equal(ends.length, 1);
      assert.ok(pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed', 'ended a terminal pod');
      const phase = (ends[0]?.body as { status: { phase: string } }).status.phase;
      assert.equal(phase, dueO(pod).mainsOk ? 'Succeeded' : 'Failed');
      const unterminated = pod.spec.containers.filter((c) => isSidecarO(c) && !statusO(pod, c.name)?.state?.terminated);
      const ignoreStage = unterminated.length > 0 && unterminated.every(ignoresO);
      assert.ok(pod.spec.restartPolicy === 'OnFailure' || ignoreStage, 'phase written under Never outside the ignore-exit-code stage');
      seen.add(`S3 ended ${phase}`);
    });
    assert.ok(seen.get('S3 ended Succeeded') >= 100 && seen.get('S3 ended Failed') >= 10, JSON.stringify(seen.n));
  });

  test('S4 what is stopped is a sidecar not yet terminated: CRR containers (never on virtual-kubelet), signal targets (running ones only, never with shareProcessNamespace), image swaps (virtual-kubelet only, to the WITH_IMAGE value)', () => {
    property(RUNS, (g) => {
      const pod = makePod(g);
      const sidecar = new Set(pod.spec.containers.filter(isSidecarO).map((c) => c.name));
      for (const a of plan(observed(g, pod), NOW).actions) {
        if (isCrr(a)) {
          for (const { name } of crrContainers(a)) {
            assert.ok(sidecar.has(name), `CRR stops main ${name}`);
            assert.ok(!statusO(pod, name)?.state?.terminated, `CRR lists terminated ${name}`);
          }
          assert.ok(g.node !== 'virtual-kubelet', 'CRR on a virtual-kubelet node');
          seen.add('S4 crr');
        }
        if (isSignal(a)) {
          for (const c of signalContainers(a)) {
            assert.ok(sidecar.has(c.targetContainerName ?? ''), `signals main ${c.targetContainerName}`);
            assert.ok(statusO(pod, c.targetContainerName ?? '')?.state?.running, `signals a sidecar that is not running (${c.targetContainerName})`);
          }
          assert.ok(!g.sharePid, 'signal with shareProcessNamespace');
          seen.add('S4 signal');
        }
        if (isSwap(a)) {
          assert.equal(g.node, 'virtual-kubelet');
          for (const c of crrContainers(a)) {
            assert.ok(sidecar.has(c.name), `swaps main ${c.name}`);
            const spec = pod.spec.containers.find((x) => x.name === c.name);
            assert.equal(c.image, spec && lastEnv(spec, IMG));
          }
          seen.add('S4 swap');
        }
      }
    });
    for (const k of ['S4 crr', 'S4 signal', 'S4 swap']) assert.ok(seen.get(k) >= 50, JSON.stringify(seen.n));
  });

  test('S5 an ignore-exit-code sidecar is stopped only after the phase write (it requires it) or on a pod already terminal; under OnFailure every stop requires the phase write', () => {
    property(RUNS, (g) => {
      const pod = makePod(g);
      const terminal = pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
      const ignore = new Set(pod.spec.containers.filter((c) => isSidecarO(c) && ignoresO(c)).map((c) => c.name));
      for (const a of plan(observed(g, pod), NOW).actions.filter(isStop)) {
        const needsEnd = !terminal && g.node !== 'virtual-kubelet' && (pod.spec.restartPolicy === 'OnFailure' || stopped(a).some((n) => ignore.has(n)));
        if (needsEnd) {
          assert.ok([a.requires ?? []].flat().includes('end-pod'), `${a.reason} does not wait for the phase write`);
          seen.add('S5 gated');
        }
      }
    });
    assert.ok(seen.get('S5 gated') >= 50);
  });

  test('S6 idempotence: the plan applied (CRR created, phase set, signal containers added, images swapped), planning again creates, ends, injects and swaps nothing', () => {
    property(RUNS, (g) => {
      const pod = makePod(g);
      const o = observed(g, pod);
      const p = plan(o, NOW);
      if (!p.actions.some((a) => isStop(a) || isEndPod(a))) return;
      let pod2: Pod = { ...pod, metadata: { ...pod.metadata, resourceVersion: '8' } };
      const crrs = { ...o.crrs };
      for (const a of p.actions) {
        if (isCrr(a)) crrs[a.name] = { name: a.name, containers: crrContainers(a).map((c) => c.name), createdAt: NOW };
        if (isEndPod(a)) {
          const st = (a.body as { status: { phase: string; conditions: NonNullable<NonNullable<Pod['status']>['conditions']> } }).status;
          pod2 = { ...pod2, status: { ...pod2.status, phase: st.phase, conditions: [...(pod2.status?.conditions ?? []), ...st.conditions] } };
        }
        if (isSignal(a)) pod2 = { ...pod2, spec: { ...pod2.spec, ephemeralContainers: [...(pod2.spec.ephemeralContainers ?? []), ...signalContainers(a)] } };
        if (isSwap(a)) {
          const annotations = (a.body as { metadata?: { annotations?: Record<string, string> } }).metadata?.annotations ?? {};
          const swaps = crrContainers(a);
          pod2 = { ...pod2, metadata: { ...pod2.metadata, annotations: { ...(pod2.metadata.annotations ?? {}), ...annotations } }, spec: { ...pod2.spec, containers: pod2.spec.containers.map((c) => ({ ...c, image: swaps.find((s) => s.name === c.name)?.image ?? c.image })) } };
        }
      }
      const again = plan({ ...o, pod: pod2, crrs }, NOW).actions.filter((a) => isStop(a) || isEndPod(a));
      assert.deepEqual(again.map((a) => a.reason), [], 'second plan acts again');
      seen.add('S6 compared');
    });
    assert.ok(seen.get('S6 compared') >= 300);
  });

  test('S7 a plan is a function of its inputs: no hidden clock or randomness', () => {
    property(Math.round(RUNS / 5), (g) => {
      const o = observed(g, makePod(g));
      const runWith = (at: number, rnd: number): string => withFrozenWorld(at, rnd, () => JSON.stringify(plan(o, NOW)));
      assert.equal(runWith(0, 0), runWith(4e12, 0.999));
    });
  });

  test('S8 the order of the pod\'s container statuses changes nothing', () => {
    property(RUNS, (g) => {
      const pod = makePod(g);
      const o = observed(g, pod);
      const rev: Pod = { ...pod, status: { ...pod.status, containerStatuses: [...(pod.status?.containerStatuses ?? [])].reverse() } };
      assert.deepEqual(plan({ ...o, pod: rev }, NOW).actions, plan(o, NOW).actions);
    });
  });
});
