// What a pod is for a job is kept beside a pod that can never change (pod-state.ts
// keptFacts, targets.ts ageKey): a warm instance gets the same frozen object for an unchanged
// pod at every LIST. A property over random pods and random orders of questions, for two
// jobs asking of the same pods: a deeply frozen pod (kept) answers exactly as a plain copy
// of it (worked out every time), and the targets chosen from either are the same. Targets
// are sorted once per frozen list of frozen pods (targets.ts sortedTargets): asked again,
// with another budget, job, selector or template, they are still those of plain copies.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { EphemeralJobSpec } from '../../functions/api/ephemeraljob.ts';
import { deepFreeze } from '../../functions/api/frozen.ts';
import { EJOB_ID_ENV } from '../../functions/api/names.ts';
import type { Pod } from '../../functions/api/pod.ts';
import { holdsSlot, ownedContainers, podState, slotHolders } from '../../functions/ejob/pod-state.ts';
import { compareAge, selectTargets } from '../../functions/ejob/targets.ts';

const JOBS = ['job-a', 'job-b'] as const;
const NAMES = ['probe', 'debug', 'app'] as const;

const state = fc.oneof(
  fc.constant(undefined),
  fc.constant({ running: { startedAt: '2026-01-01T00:00:00Z' } }),
  fc.constantFrom('ContainerCreating', 'ImagePullBackOff', 'RunContainerError', 'InvalidImageName').map((reason) => ({ waiting: { reason } })),
  fc.constantFrom(0, 1, 137).map((exitCode) => ({ terminated: { exitCode } })),
);

const ephemeral = fc.record({
  name: fc.constantFrom(...NAMES),
  owner: fc.constantFrom<string | undefined>(...JOBS, undefined),
  state,
});

const pod: fc.Arbitrary<Pod> = fc.record({
  i: fc.nat({ max: 50 }),
  second: fc.option(fc.nat({ max: 59 }), { nil: undefined }),
  phase: fc.constantFrom('Running', 'Pending', 'Succeeded', 'Failed'),
  deleting: fc.boolean(),
  app: fc.constantFrom('web', 'db'),
  ephemeral: fc.array(ephemeral, { maxLength: 3 }),
}).map((r) => ({
  metadata: {
    name: `p${r.i}`, namespace: 'ns', uid: `u${r.i}`, labels: { app: r.app },
    ...(r.second === undefined ? {} : { creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, r.second)).toISOString() }),
    ...(r.deleting ? { deletionTimestamp: '2026-01-01T00:01:00Z' } : {}),
  },
  spec: {
    containers: [{ name: 'app' }],
    ephemeralContainers: r.ephemeral.map((e) => ({ name: e.name, ...(e.owner === undefined ? {} : { env: [{ name: EJOB_ID_ENV, value: e.owner }] }) })),
  },
  status: {
    phase: r.phase,
    ephemeralContainerStatuses: r.ephemeral.flatMap((e) => (e.state === undefined ? [] : [{ name: e.name, state: e.state }])),
  },
}) as Pod);

const question = fc.record({ ask: fc.constantFrom('owned', 'state', 'slot'), job: fc.constantFrom(...JOBS) });

function answer(q: { ask: string; job: string }, p: Pod): unknown {
  if (q.ask === 'owned') return ownedContainers(p, q.job).map((c) => c.name);
  return q.ask === 'state' ? podState(p, q.job) : holdsSlot(p, q.job);
}

function spec(replicas: number | undefined, other: { app?: string; container?: { name: string; targetContainerName: string } } = {}): EphemeralJobSpec {
  const container = other.container ?? { name: 'probe', targetContainerName: 'app' };
  return { selector: { matchLabels: { app: other.app ?? 'web' } }, template: { ephemeralContainers: [{ ...container, image: 'busybox' }] }, ...(replicas === undefined ? {} : { replicas }) } as EphemeralJobSpec;
}

/** One request for targets: which job, with what spec, and the Lease's budget if it was read. */
const ask = fc.record({
  job: fc.constantFrom(...JOBS),
  replicas: fc.option(fc.nat({ max: 6 }), { nil: undefined }),
  app: fc.constantFrom('web', 'db'),
  // The template's container: as usual, aimed at a container the pods lack (unfit), or named like theirs (unfit).
  container: fc.constantFrom({ name: 'probe', targetContainerName: 'app' }, { name: 'probe', targetContainerName: 'sidecar' }, { name: 'app', targetContainerName: 'app' }, { name: 'debug', targetContainerName: 'app' }),
  budget: fc.option(fc.record({ left: fc.nat({ max: 5 }), claimed: fc.uniqueArray(fc.nat({ max: 50 }).map((i) => `p${i}`), { maxLength: 4 }).map((names) => new Set(names)) }), { nil: undefined }),
});

const seen = (r: ReturnType<typeof selectTargets>): unknown => ({ targets: r.targets.map((t) => [t.pod.metadata.name, t.state, t.why]), skipped: r.skipped });

describe('pod facts kept beside frozen pods', () => {
  test('a kept pod answers every question, for either job and in any order, as a plain copy does', () => {
    fc.assert(fc.property(pod, fc.array(question, { minLength: 1, maxLength: 12 }), (p, questions) => {
      const kept = deepFreeze(structuredClone(p));
      for (const q of questions) assert.deepEqual(answer(q, kept), answer(q, structuredClone(p)), `${q.ask} for ${q.job}`);
    }), { numRuns: 500 });
  });

  test('targets, slot holders and age order are the same from kept pods as from plain ones, asked again and by another job', () => {
    const pods = fc.uniqueArray(pod, { selector: (p) => p.metadata.name, maxLength: 12 });
    fc.assert(fc.property(pods, fc.option(fc.nat({ max: 6 }), { nil: undefined }), fc.array(fc.constantFrom(...JOBS), { minLength: 1, maxLength: 4 }), (list, replicas, jobs) => {
      const kept = list.map((p) => deepFreeze(structuredClone(p)));
      for (const job of jobs) {
        assert.deepEqual(seen(selectTargets(spec(replicas), job, kept)), seen(selectTargets(spec(replicas), job, list)));
        assert.deepEqual(slotHolders(kept, job).map((p) => p.metadata.name), slotHolders(list, job).map((p) => p.metadata.name));
      }
      assert.deepEqual([...kept].sort(compareAge).map((p) => p.metadata.name), [...list].sort(compareAge).map((p) => p.metadata.name));
    }), { numRuns: 300 });
  });

  test('answers are kept for a deeply frozen pod only: a plain pod changed in place is worked out anew', () => {
    const p = { metadata: { name: 'p', namespace: 'ns', uid: 'u', creationTimestamp: '2026-01-01T00:00:01Z' }, spec: { containers: [{ name: 'app' }], ephemeralContainers: [{ name: 'probe', env: [{ name: EJOB_ID_ENV, value: 'job-a' }] }] }, status: { phase: 'Running', ephemeralContainerStatuses: [{ name: 'probe', state: { running: {} } }] } } as Pod;
    const kept = deepFreeze(structuredClone(p));
    // Kept: the same answer object every time, and it cannot be changed by a caller.
    assert.equal(ownedContainers(kept, 'job-a'), ownedContainers(kept, 'job-a'));
    assert.ok(Object.isFrozen(ownedContainers(kept, 'job-a')));
    assert.notEqual(ownedContainers(p, 'job-a'), ownedContainers(p, 'job-a'));
    assert.equal(podState(p, 'job-a'), 'running');
    assert.equal(holdsSlot(p, 'job-a'), true);
    const older = { ...p, metadata: { ...p.metadata, name: 'q', creationTimestamp: '2026-01-01T00:00:02Z' } } as Pod;
    assert.deepEqual([p, older].sort(compareAge).map((x) => x.metadata.name), ['p', 'q']);
    // In place, as a test or a plain caller may: the next answers follow.
    p.status = { phase: 'Running', ephemeralContainerStatuses: [{ name: 'probe', state: { terminated: { exitCode: 1 } } }] } as Pod['status'];
    p.metadata.creationTimestamp = '2026-01-01T00:00:03Z';
    assert.equal(podState(p, 'job-a'), 'failed');
    assert.equal(holdsSlot(p, 'job-a'), false);
    assert.deepEqual([p, older].sort(compareAge).map((x) => x.metadata.name), ['q', 'p']);
    p.spec.ephemeralContainers = [];
    assert.equal(podState(p, 'job-a'), 'pending');
  });

  test('a pod that changed is a new object, and is worked out anew', () => {
    const running = deepFreeze({ metadata: { name: 'p', namespace: 'ns', uid: 'u' }, spec: { containers: [{ name: 'app' }], ephemeralContainers: [{ name: 'probe', env: [{ name: EJOB_ID_ENV, value: 'job-a' }] }] }, status: { phase: 'Running', ephemeralContainerStatuses: [{ name: 'probe', state: { running: {} } }] } } as Pod);
    assert.equal(podState(running, 'job-a'), 'running');
    assert.equal(holdsSlot(running, 'job-a'), true);
    const ended = deepFreeze({ ...structuredClone(running), status: { phase: 'Running', ephemeralContainerStatuses: [{ name: 'probe', state: { terminated: { exitCode: 0 } } }] } } as Pod);
    assert.equal(podState(ended, 'job-a'), 'succeeded');
    assert.equal(holdsSlot(ended, 'job-a'), false);
    // The first object still answers for what it was.
    assert.equal(podState(running, 'job-a'), 'running');
    assert.equal(podState(running, 'job-b'), 'pending');
    assert.equal(podState(running, 'job-a'), 'running');
  });

  test('targets sorted once per frozen list are those of plain copies, asked again with other budgets, jobs, selectors and templates', () => {
    const pods = fc.uniqueArray(pod, { selector: (p) => p.metadata.name, maxLength: 12 });
    fc.assert(fc.property(pods, fc.array(ask, { minLength: 1, maxLength: 8 }), (list, asks) => {
      const kept = Object.freeze(list.map((p) => deepFreeze(structuredClone(p))));
      for (const a of asks) {
        const s = spec(a.replicas, { app: a.app, container: a.container });
        assert.deepEqual(seen(selectTargets(s, a.job, kept, a.budget)), seen(selectTargets(s, a.job, structuredClone(list), a.budget)), JSON.stringify({ ...a, budget: a.budget && { ...a.budget, claimed: [...a.budget.claimed] } }));
      }
    }), { numRuns: 400 });
  });

  test('a frozen list of frozen pods is sorted once; a list that can change, or pods that can, every time', () => {
    const pods = [0, 1, 2].map((i) => ({ metadata: { name: `p${i}`, namespace: 'ns', uid: `u${i}`, labels: { app: 'web' }, creationTimestamp: `2026-01-01T00:00:0${i}Z` }, spec: { containers: [{ name: 'app' }] }, status: { phase: 'Running' } }) as Pod);
    const targetsOf = (list: readonly Pod[], s = spec(undefined)): ReturnType<typeof selectTargets>['targets'] => selectTargets(s, 'job-a', list).targets;
    // Kept: the same target objects again, even with a budget, and they cannot be changed.
    const kept = Object.freeze(pods.map((p) => deepFreeze(structuredClone(p))));
    const first = targetsOf(kept);
    assert.equal(first.length, 3);
    first.forEach((t, i) => assert.equal(selectTargets(spec(undefined), 'job-a', kept, { left: 3, claimed: new Set() }).targets[i], t));
    assert.ok(first.every((t) => Object.isFrozen(t)));
    // Another template or selector is sorted apart: the pods lack the container it aims at.
    assert.deepEqual(targetsOf(kept, spec(undefined, { container: { name: 'probe', targetContainerName: 'sidecar' } })).map((t) => t.state), ['failed', 'failed', 'failed']);
    assert.deepEqual(targetsOf(kept, spec(undefined, { app: 'db' })), []);
    assert.deepEqual(targetsOf(kept).map((t) => t.state), ['pending', 'pending', 'pending']);
    // A list that can change is sorted every time: a pod added shows.
    const open = pods.map((p) => deepFreeze(structuredClone(p)));
    assert.equal(targetsOf(open).length, 3);
    open.push(deepFreeze({ ...structuredClone(pods[0] as Pod), metadata: { ...(pods[0] as Pod).metadata, name: 'p3', uid: 'u3' } }));
    assert.equal(targetsOf(open).length, 4);
    // Pods that can change, in a frozen list, are sorted every time too.
    const plain = Object.freeze(pods.map((p) => structuredClone(p)));
    assert.notEqual(targetsOf(plain)[0], targetsOf(plain)[0]);
    (plain[0] as Pod).metadata.labels = { app: 'db' };
    assert.equal(targetsOf(plain).length, 2);
  });
});
