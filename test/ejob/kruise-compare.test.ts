// Where ephemera's verdict differs from OpenKruise's on the same pods (review88): OpenKruise's
// calculateStatus and the per-pod and per-container rules it calls (pkg/controller/ephemeraljob,
// kruise 07169cf), written out below, against plan() over random pods. Every class of (ephemera,
// OpenKruise) phases where exactly one is final, or both are and differ, must be one README
// "Next to OpenKruise" (or DESIGN) explains: a new class fails here with an example.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { Pod } from '../../functions/api/pod.ts';
import { plan } from '../../functions/ejob/planner.ts';
import { cfg, failedReason, foreignNamesakeO, isActiveO, mainStatus, makeJob, makePod, matchesO, podArb, templateNames, type PodSpec } from '../support/ejob-props.ts';
import type { ContainerStatus } from '../../functions/api/pod.ts';
import { propsRuns, Seen } from '../support/props.ts';

/** OpenKruise's parseEphemeralContainerStatus: Succeeded, Failed, Running, Waiting, Unknown. */
type KState = 'S' | 'F' | 'R' | 'W' | 'U';
function kruiseContainer(s: ContainerStatus['state']): KState {
  const t = s?.terminated;
  if (t && t.finishedAt !== undefined && t.exitCode === 0) return 'S';
  if (t && t.exitCode !== 0) return 'F';
  if (s?.running) return 'R';
  if (s?.waiting) return s.waiting.reason === 'RunContainerError' ? 'F' : 'W';
  return 'U';
}

/** OpenKruise's parseEphemeralPodStatus: the template's names, whoever's the container is. */
function kruisePod(p: Pod, names: readonly string[]): KState {
  const c = { S: 0, R: 0, W: 0 };
  for (const st of p.status?.ephemeralContainerStatuses ?? []) {
    if (!names.includes(st.name)) continue;
    const k = kruiseContainer(st.state);
    if (k === 'F') return 'F';
    if (k !== 'U') c[k]++;
  }
  if (c.S > 0 && c.S === names.length) return 'S';
  if (c.R > 0) return 'R';
  if (c.W > 0) return 'W';
  return 'U';
}

/** OpenKruise's filterPods and calculateStatus (ephemeraljob_controller.go 374–435 at 07169cf). */
function kruisePhase(pods: readonly Pod[], names: readonly string[], o: { replicas: number | undefined; pastDeadline: boolean }): string {
  const sorted = [...pods].sort((a, b) => Date.parse(String(a.metadata.creationTimestamp)) - Date.parse(String(b.metadata.creationTimestamp)) || (a.metadata.name < b.metadata.name ? -1 : 1));
  const targets: Pod[] = [];
  for (const p of sorted) {
    if (!matchesO(p) || !isActiveO(p) || foreignNamesakeO(p, names)) continue;
    if (o.replicas === undefined || targets.length < o.replicas) targets.push(p);
  }
  const c: Record<KState, number> = { S: 0, F: 0, R: 0, W: 0, U: 0 };
  for (const t of targets) c[kruisePod(t, names)]++;
  const replicas = o.replicas ?? targets.length;
  let phase: string;
  if (targets.length === 0) phase = 'Waiting';
  else if (c.S === replicas && c.S > 0) phase = 'Succeeded';
  else if (c.R > 0) phase = 'Running';
  else if (c.F === replicas) phase = 'Failed';
  else if (c.W === replicas) phase = 'Waiting';
  else phase = 'Unknown';
  // The deadline overrides Waiting, Unknown and Running only: a result wins over it.
  if ((phase === 'Waiting' || phase === 'Unknown' || phase === 'Running') && o.pastDeadline) phase = 'Failed';
  return phase;
}

/** Each class where the verdicts differ, and why (README "Next to OpenKruise", DESIGN). */
const EXPLAINED: Record<string, string> = {
  'ephemera Failed/PodsFailed vs OpenKruise Unknown': 'mixed results end Failed (OpenKruise\'s #2514); a pod the containers cannot go into fails at once',
  'ephemera Succeeded vs OpenKruise Unknown': 'an exit 0 without finishedAt counts (a kubelet always sets it); with replicas above the pods that match, the job ends with those; injected pods are targets first',
  'ephemera Failed/PodsFailed vs OpenKruise Waiting': 'CreateContainerError, InvalidImageName and ErrImageNeverPull fail the pod, as RunContainerError does',
  'ephemera Failed/PodsGone vs OpenKruise Unknown': 'replicas went to pods that are gone or ended: the job finishes rather than wait for good',
  'ephemera Failed/PodsGone vs OpenKruise Waiting': 'the same',
  'ephemera Failed/PodsFailed vs OpenKruise Running': 'a failed container beside a running one fails the pod (DESIGN: outcomes count results)',
  'ephemera Failed/DeadlineExceeded vs OpenKruise Succeeded': 'past the deadline, the results decide only when they came by it (review88 F3): here a pod exited after it',
  'ephemera Succeeded vs OpenKruise Failed': 'the class above past the deadline: OpenKruise\'s deadline fails its Unknown, where ephemera\'s results came by the deadline (or say no time) and stand',
};

/** Classes that only some cases may be in, and which. */
const ONLY: Record<string, { when: string; holds: (s: Case, pods: readonly Pod[]) => boolean }> = {
  // Those before it, the results decide, as OpenKruise's.
  'ephemera Failed/DeadlineExceeded vs OpenKruise Succeeded': { when: 'a pod exited after the deadline', holds: (s) => !s.exitedEarly },
  'ephemera Succeeded vs OpenKruise Failed': { when: 'exits by the deadline or without a time', holds: (s, pods) => s.late && (s.exitedEarly || pods.some((p) => (p.status?.ephemeralContainerStatuses ?? []).some((c) => c.state?.terminated !== undefined && c.state.terminated.finishedAt === undefined))) },
};

interface Case {
  pods: PodSpec[];
  replicas: number | undefined;
  two: boolean;
  /** Looked at 20 minutes after creation (past the 600 s deadline), or after 1 minute. */
  late: boolean;
  /** Containers that exited did so before the deadline (5 minutes after creation), or 3 s before the look. */
  exitedEarly: boolean;
}

describe('EphemeralJob verdicts next to OpenKruise\'s (review88)', () => {
  test('every class of pods whose verdict differs from OpenKruise\'s calculateStatus is one README explains', () => {
    const seen = new Seen();
    const created = Date.parse('2026-01-01T00:30:00Z');
    const examples = new Map<string, string>();
    const arb: fc.Arbitrary<Case> = fc.record({ pods: fc.array(podArb, { maxLength: 5 }), replicas: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }), two: fc.boolean(), late: fc.boolean(), exitedEarly: fc.boolean() });
    fc.assert(fc.property(arb, (s) => {
      const j = { parallelism: 10, replicas: s.replicas, paused: false, deadline: 600, twoContainers: s.two, status: undefined };
      const now = created + (s.late ? 1200 : 60) * 1000;
      const names = templateNames(j);
      const endedAt = s.late && s.exitedEarly ? created + 300_000 : now - 3000;
      const pods = s.pods.map((p, i) => makePod(i, { ...p, owner: p.owner === 'ours-partial' ? 'ours' : p.owner }, names, { now, endedAt }));
      const p = plan({ job: makeJob(j, now), pods, lease: { view: { kind: 'absent' }, serverNow: new Date(now), cfg } }, new Date(now));
      const st = mainStatus(p.actions);
      const ours = st?.phase ?? 'Waiting';
      const theirs = kruisePhase(pods, names, { replicas: s.replicas, pastDeadline: s.late });
      const final = (x: string): boolean => x === 'Succeeded' || x === 'Failed';
      if (ours === theirs || (!final(ours) && !final(theirs))) return;
      const reason = failedReason(st);
      const key = `ephemera ${ours}${reason ? '/' + reason : ''} vs OpenKruise ${theirs}`;
      const example = JSON.stringify({ replicas: s.replicas, late: s.late, exitedEarly: s.exitedEarly, pods: pods.filter((x) => matchesO(x) && isActiveO(x)).map((x) => ({ name: x.metadata.name, ecs: (x.spec.ephemeralContainers ?? []).map((c) => c.name), statuses: (x.status?.ephemeralContainerStatuses ?? []).map((c) => c.state) })) });
      assert.ok(EXPLAINED[key], `a class README does not explain: ${key}, e.g. ${example}`);
      const only = ONLY[key];
      if (only) assert.ok(only.holds(s, pods), `${key} without ${only.when}: ${example}`);
      seen.add(key);
      if (!examples.has(key)) examples.set(key, example);
    }), propsRuns(20000));
    if (process.env.EPHEMERA_DEBUG) console.log(seen.n, examples);
    // Not vacuous: the classes the generator reaches most still turn up.
    for (const key of ['ephemera Failed/PodsFailed vs OpenKruise Unknown', 'ephemera Succeeded vs OpenKruise Unknown', 'ephemera Failed/DeadlineExceeded vs OpenKruise Succeeded']) assert.ok(seen.get(key) >= 5, `${key}: ${seen.get(key)} (${JSON.stringify(seen.n)})`);
  });
});
