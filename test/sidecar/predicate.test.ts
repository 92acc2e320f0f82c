import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Pod } from '../../functions/api/pod.ts';
import { containerRoles, sidecarInfo } from '../../functions/sidecar/env.ts';
import { DEFAULT_SIDECAR_OPTIONS } from '../../functions/sidecar/config.ts';
import { dueFromSnapshot, podDue, trimPodForSidecar } from '../../functions/sidecar/predicate.ts';
import { podStrategy } from '../../functions/sidecar/strategy.ts';
import { decodePod } from '../../relay/trim.ts';
import { basePod, env, exited, podWith, running, SIDECAR_ENV } from './support.ts';

describe('sidecar classification by env', () => {
  const cases: { name: string; env: { name: string; value?: string }[]; sidecar: boolean; withImage?: string; ignore?: boolean }[] = [
    { name: 'no env: main', env: [], sidecar: false },
    { name: 'true', env: [SIDECAR_ENV], sidecar: true },
    { name: 'uppercase TRUE', env: [env('KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', 'TRUE')], sidecar: true },
    { name: 'mixed case True', env: [env('KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', 'True')], sidecar: true },
    { name: 'false', env: [env('KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', 'false')], sidecar: false },
    { name: 'yes is not true', env: [env('KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', 'yes')], sidecar: false },
    { name: 'valueFrom (no value) does not mark', env: [env('KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT')], sidecar: false },
    { name: 'non-empty WITH_IMAGE alone', env: [env('KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE', 'exit:1')], sidecar: true, withImage: 'exit:1' },
    { name: 'empty WITH_IMAGE', env: [env('KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE', '')], sidecar: false },
    { name: 'duplicate name: the last entry wins, like the kubelet', env: [SIDECAR_ENV, env('KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', 'false')], sidecar: false },
    { name: 'ignore exit code, any case', env: [SIDECAR_ENV, env('KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE', 'tRuE')], sidecar: true, ignore: true },
    { name: 'ignore exit code alone does not mark a sidecar', env: [env('KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE', 'true')], sidecar: false },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const info = sidecarInfo({ name: 'c', env: c.env });
      assert.equal(info !== null, c.sidecar);
      if (info) {
        assert.equal(info.withImage, c.withImage);
        assert.equal(info.ignoreExitCode, c.ignore ?? false);
      }
    });
  }

  test('native sidecars (init containers with restartPolicy Always) are reported, never classified as sidecars', () => {
    const p = podWith({ spec: { initContainers: [{ name: 'proxy', restartPolicy: 'Always', env: [SIDECAR_ENV] }, { name: 'setup', env: [SIDECAR_ENV] }] } });
    const roles = containerRoles(p);
    assert.deepEqual(roles.nativeSidecars, ['proxy']);
    assert.deepEqual(roles.sidecars.map((s) => s.name), ['log-shipper']);
    assert.deepEqual(roles.mains, ['main']);
  });
});

describe('due-pod predicate', () => {
  const notDue: { name: string; pod: Pod; reason: RegExp }[] = [
    { name: 'deleting', pod: podWith({ metadata: { deletionTimestamp: '2026-01-01T00:01:30Z' } }), reason: /being deleted/ },
    { name: 'pending', pod: podWith({ status: { phase: 'Pending' } }), reason: /Pending/ },
    { name: 'no status', pod: { ...basePod(), status: undefined }, reason: /no status phase/ },
    { name: 'restartPolicy Always', pod: podWith({ spec: { restartPolicy: 'Always' } }), reason: /restartPolicy is Always/ },
    { name: 'restartPolicy unset (defaults to Always)', pod: podWith({ spec: { restartPolicy: undefined } }), reason: /restartPolicy is Always/ },
    { name: 'main still running', pod: podWith({ statuses: [running('main'), running('log-shipper')] }), reason: /main container main has not terminated/ },
    { name: 'main failed under OnFailure', pod: podWith({ spec: { restartPolicy: 'OnFailure' }, statuses: [exited('main', 2), running('log-shipper')] }), reason: /main exited 2 under restartPolicy OnFailure/ },
    { name: 'sidecars already done', pod: podWith({ statuses: [exited('main', 0), exited('log-shipper', 0)] }), reason: /all sidecars have terminated/ },
    { name: 'no sidecars', pod: podWith({ containers: [{ name: 'main' }, { name: 'other' }], statuses: [exited('main', 0), running('other')] }), reason: /^no sidecar containers$/ },
    {
      name: 'only native sidecars',
      pod: podWith({ containers: [{ name: 'main' }], spec: { initContainers: [{ name: 'proxy', restartPolicy: 'Always', env: [SIDECAR_ENV] }] }, statuses: [exited('main', 0)] }),
      reason: /only native sidecars/,
    },
    { name: 'missing statuses', pod: podWith({ statuses: [exited('main', 0)] }), reason: /no state reported yet for container log-shipper/ },
    { name: 'status without state', pod: podWith({ statuses: [{ name: 'main' }, running('log-shipper')] }), reason: /no state reported yet for container main/ },
  ];
  for (const c of notDue) {
    test(`not due: ${c.name}`, () => {
      const r = podDue(c.pod);
      assert.equal(r.due, false);
      if (!r.due) assert.match(r.reason, c.reason);
    });
  }

  test('due: Never, main exited 0, sidecar running', () => {
    const r = podDue(basePod());
    assert.ok(r.due);
    assert.equal(r.restartPolicy, 'Never');
    assert.equal(r.mainsSucceeded, true);
    assert.deepEqual(r.unterminated.map((s) => s.name), ['log-shipper']);
  });

  test('due: Never, main failed (the pod still has to end)', () => {
    const r = podDue(podWith({ statuses: [exited('main', 1), running('log-shipper')] }));
    assert.ok(r.due);
    assert.equal(r.mainsSucceeded, false);
  });

  test('due: OnFailure, main exited 0; only the unterminated sidecars are listed', () => {
    const containers = [{ name: 'main' }, { name: 'a', env: [SIDECAR_ENV] }, { name: 'b', env: [SIDECAR_ENV] }];
    const r = podDue(podWith({ containers, spec: { restartPolicy: 'OnFailure' }, statuses: [exited('main', 0), exited('a', 0), running('b')] }));
    assert.ok(r.due);
    assert.deepEqual(r.unterminated.map((s) => s.name), ['b']);
  });

  test('due: a sidecar restarted by the kubelet is not terminated', () => {
    const r = podDue(podWith({ spec: { restartPolicy: 'OnFailure' }, statuses: [exited('main', 0), { name: 'log-shipper', restartCount: 1, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 137 } } }] }));
    assert.ok(r.due);
  });

  test('a pod with only sidecars (no main) is due once it runs', () => {
    const r = podDue(podWith({ containers: [{ name: 'log-shipper', env: [SIDECAR_ENV] }], statuses: [running('log-shipper')] }));
    assert.ok(r.due);
  });
});

describe('the predicate on snapshots', () => {
  test('an absent or unreadable snapshot cannot be judged (null), never "not due"', () => {
    assert.equal(dueFromSnapshot(undefined), null);
    assert.equal(dueFromSnapshot({ metadata: { name: 'x' } }), null);
    const badEnv = { ...basePod(), spec: { ...basePod().spec, containers: [{ name: 'main', env: [{ value: 'no name' }] }] } };
    assert.equal(dueFromSnapshot(badEnv), null);
  });

  test('a trimmed pod gets the same verdict as the full pod, and drops what the predicate does not read', () => {
    const pods = [
      basePod(),
      podWith({ statuses: [running('main'), running('log-shipper')] }),
      podWith({ spec: { restartPolicy: 'OnFailure' }, statuses: [exited('main', 3), running('log-shipper')] }),
      podWith({ containers: [{ name: 'main' }], spec: { initContainers: [{ name: 'proxy', restartPolicy: 'Always' }] }, statuses: [exited('main', 0)] }),
      podWith({ metadata: { deletionTimestamp: '2026-01-01T00:01:30Z' } }),
    ];
    for (const p of pods) {
      const trimmed = JSON.parse(JSON.stringify(trimPodForSidecar(p))) as unknown;
      assert.deepEqual(dueFromSnapshot(trimmed), podDue(p));
    }
    const t = trimPodForSidecar(basePod());
    assert.equal(t.spec.containers[0]?.image, undefined);
    assert.equal((t.spec.containers[1] as Record<string, unknown>).securityContext, undefined);
  });

  test('a sidecar marked only by WITH_IMAGE (virtual-kubelet pods) keeps its mark through both trims: still due (review64 SC7)', () => {
    // Only a differential test between the two trims pinned this: a change to both that kept
    // only KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT made such pods "no sidecar containers".
    const mark = env('KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE', 'example.com/exit:1');
    const full = podWith({ containers: [{ name: 'main' }, { name: 'log-shipper', image: 'shipper', env: [env('OTHER', 'x'), mark] }], statuses: [exited('main', 0), running('log-shipper')] });
    const d = podDue(full);
    assert.ok(d.due, JSON.stringify(d));
    const trimmed = trimPodForSidecar(full);
    assert.deepEqual(trimmed.spec.containers[1]?.env, [mark], 'the mark is kept, other env dropped');
    assert.deepEqual(dueFromSnapshot(JSON.parse(JSON.stringify(trimmed)) as unknown), d);
    const decoded = decodePod(JSON.parse(JSON.stringify(full)));
    assert.ok('object' in decoded);
    assert.deepEqual(podDue(decoded.object), d, 'the relay\'s own decoding and trim keep it too');
  });
});

describe("a main container's own restart policy and rules (Kubernetes 1.35's container restart rules, on by default)", () => {
  const main = basePod().spec.containers[0]!;
  const withMain = (extra: Record<string, unknown>, podPolicy: 'Never' | 'OnFailure', exitCode: number): Pod => podWith({
    containers: [{ ...main, ...extra } as Pod['spec']['containers'][number], ...basePod().spec.containers.slice(1)],
    spec: { restartPolicy: podPolicy },
    statuses: [exited(main.name, exitCode), running('log-shipper')],
  });
  const rule = { restartPolicyRules: [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }] };
  // Kubernetes 1.35 alpha, 1.36 beta: the kubelet restarts the whole pod in place (KEP-5532; review71).
  const allRule = { restartPolicyRules: [{ action: 'RestartAllContainers', exitCodes: { operator: 'In', values: [42] } }] };
  const restarting = (pod: Pod, status: string): Pod => ({ ...pod, status: { ...pod.status, conditions: [{ type: 'Ready', status: 'False' }, { type: 'AllContainersRestarting', status }] } });
  const sidecarRule = podWith({
    containers: [{ name: 'main' }, { name: 'a', env: [SIDECAR_ENV], ...allRule } as Pod['spec']['containers'][number], { name: 'b', env: [SIDECAR_ENV] }],
    statuses: [exited('main', 0), exited('a', 42), running('b')],
  });
  const cases: [string, Pod, boolean | RegExp][] = [
    ['a Never pod whose main container has a RestartAllContainers rule for 42 and exited 42: not final, the whole pod restarts in place (review71)', withMain(allRule, 'Never', 42), /exited 42 under a RestartAllContainers rule: the kubelet restarts every container of the pod in place/],
    ['the same exiting 1: no rule matches, final (failed)', withMain(allRule, 'Never', 1), false],
    ['the first matching rule decides: Restart before RestartAllContainers restarts the container alone', withMain({ restartPolicyRules: [...rule.restartPolicyRules, ...allRule.restartPolicyRules] }, 'Never', 42), /exited 42 under a restartPolicyRules rule/],
    ['a pod the kubelet is restarting in place (condition AllContainersRestarting=True) is not due, whatever its exits show (review71)', restarting(withMain({}, 'Never', 0), 'True'), /restarting every container of the pod in place \(condition AllContainersRestarting=True/],
    ['once that restart is over (AllContainersRestarting=False) the exits count again', restarting(withMain({}, 'Never', 0), 'False'), true],
    ['a sidecar that exited with a code its RestartAllContainers rule names restarts the main containers too: not due (review71)', sidecarRule, /sidecar a exited 42 under a RestartAllContainers rule/],
    ['a Never pod whose main container restarts OnFailure and exited 1: not final', withMain({ restartPolicy: 'OnFailure' }, 'Never', 1), /exited 1 under its container restartPolicy OnFailure: the kubelet restarts it/],
    ['a Never pod whose main container has a Restart rule for 42 and exited 42: not final', withMain(rule, 'Never', 42), /exited 42 under a restartPolicyRules rule/],
    ['the same exiting 1: no rule matches, the pod\'s Never makes it final (failed)', withMain(rule, 'Never', 1), false],
    ['an OnFailure pod whose main container is restartPolicy Never and exited 1: final (failed), not waited on for good', withMain({ restartPolicy: 'Never' }, 'OnFailure', 1), false],
    ['an OnFailure pod whose main container exited 1 with no policy of its own: the kubelet restarts it', withMain({}, 'OnFailure', 1), /under restartPolicy OnFailure: the kubelet restarts it/],
  ];
  for (const [name, pod, want] of cases) {
    test(name, () => {
      const d = podDue(pod);
      if (want instanceof RegExp) assert.ok(!d.due && want.test(d.reason), JSON.stringify(d));
      else assert.ok(d.due && d.mainsSucceeded === want, JSON.stringify(d));
      assert.deepEqual(dueFromSnapshot(trimPodForSidecar(pod)), d, 'a snapshot trimmed for the SidecarTerminator decides the same');
      const decoded = decodePod(JSON.parse(JSON.stringify(pod)));
      assert.ok('object' in decoded);
      assert.equal(podDue(decoded.object).due, d.due, 'the relay\'s own decoding and trim decide the same');
    });
  }
});

describe('a long strategy annotation is not kept whole (review82: an annotation may hold 256 KiB)', () => {
  const STRATEGY = 'ephemera.io/sidecar-termination';
  const annotated = (value: string): Pod => podWith({ metadata: { annotations: { [STRATEGY]: value, other: 'x'.repeat(1000) } } });
  const kept = (value: string): string | undefined => {
    const d = decodePod(JSON.parse(JSON.stringify(annotated(value))));
    assert.ok(!('error' in d), JSON.stringify(d));
    return d.object.metadata.annotations?.[STRATEGY];
  };

  test('the relay keeps a short stand-in, which changes with the value and names no strategy', () => {
    const long = 'x'.repeat(200_000);
    const a = kept(long);
    assert.ok(a !== undefined && a.length < 100, `${a?.length} characters kept`);
    assert.notEqual(kept(`${long}y`), a, 'a change of the value is still a change');
    assert.equal(kept(long), a, 'the same value, the same stand-in');
    assert.equal(podStrategy(trimPodForSidecar(annotated(long)), { ...DEFAULT_SIDECAR_OPTIONS }).ok, false, 'refused as the whole value is');
  });

  test('a long value that names a strategy keeps it; a short one is kept as it is', () => {
    assert.equal(kept(`  crr${' '.repeat(500)}`), 'crr');
    assert.equal(kept(' ephemeral-signal '), ' ephemeral-signal ');
  });

  test('the refusal quotes at most 64 characters of the value', () => {
    const choice = podStrategy(annotated('y'.repeat(100_000)), { ...DEFAULT_SIDECAR_OPTIONS });
    assert.equal(choice.ok, false);
    assert.ok(!choice.ok && choice.reason.length < 200, !choice.ok ? `${choice.reason.length}` : '');
  });
});
