// The schedule generator: a seed always gives the same world and fault plan, and every world
// stays inside the ranges the chaos run promises (and can converge: every job selects a pod
// that exists from the start, paused jobs are raised after they arrive).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeObject } from '../../functions/cluster/index.ts';
import { generate } from './world.ts';

type Obj = Record<string, unknown>;
const spec = (o: KubeObject): Obj => o.spec as Obj;

describe('chaos world generator', () => {
  test('the same seed gives the same schedule; another seed another one', () => {
    assert.deepEqual(generate(42), generate(42));
    assert.notDeepEqual(generate(42), generate(43));
  });

  test('200 seeds stay inside the promised ranges', () => {
    for (let seed = 0; seed < 200; seed++) {
      const s = generate(seed);
      const pods = s.arrivals.filter((a) => a.object.kind === 'Pod');
      const jobs = s.arrivals.filter((a) => a.object.kind === 'EphemeralJob');
      const at = `seed ${seed}`;
      const fresh = pods.filter((a) => a.object.metadata.name.startsWith('app-for-'));
      assert.ok(pods.length - fresh.length >= 5 && pods.length - fresh.length <= 40, `${at}: ${pods.length - fresh.length} pods`);
      assert.ok(jobs.length >= 1 && jobs.length <= 3, `${at}: ${jobs.length} jobs`);
      assert.ok(s.processes >= 2 && s.processes <= 4, `${at}: ${s.processes} processes`);
      for (const { object: job, atMs } of jobs) {
        const p = Number(spec(job).parallelism);
        assert.ok(p >= 0 && p <= 10, `${at}: parallelism ${p}`);
        if (p === 0) assert.ok(s.raises.some((r) => r.name === job.metadata.name && r.atMs > atMs), `${at}: paused job never raised after it arrives`);
        const labels = ((spec(job).selector as Obj).matchLabels as Record<string, string>);
        const selected = pods.filter((a) => a.atMs === 0 && a.object.metadata.namespace === job.metadata.namespace
          && Object.entries(labels).every(([k, v]) => (a.object.metadata.labels as Record<string, string>)[k] === v));
        assert.ok(selected.length > 0, `${at}: job ${job.metadata.name} selects no pod present from the start`);
        const names = ((spec(job).template as Obj).ephemeralContainers as { name: string }[]).map((c) => c.name);
        assert.ok(names.every((n) => n.endsWith(`-${job.metadata.name.slice('ejob-'.length)}`)), `${at}: container names not unique per job: ${names.join(', ')}`);
      }
      for (const { object: pod } of pods.filter((a) => spec(a.object).nodeName === 'vk-1')) {
        const sidecars = (spec(pod).containers as { name: string; env?: { name: string }[] }[]).filter((c) => c.name.startsWith('sidecar-'));
        assert.ok(sidecars.every((c) => c.env?.some((e) => e.name === 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE')), `${at}: a virtual-kubelet sidecar without an exit image could never stop`);
      }
      assert.ok(s.faults.every((f) => f.atMs < s.calmAfterMs), `${at}: a fault after the calm point`);
      for (const d of s.deletions ?? []) {
        const job = jobs.find((a) => a.object.metadata.name === d.name && a.object.metadata.namespace === d.namespace);
        assert.ok(job && d.atMs > job.atMs && d.atMs < s.calmAfterMs, `${at}: ${d.name} deleted at ${d.atMs}, not between its arrival and the calm point`);
        assert.equal(job.object.metadata.finalizers !== undefined, d.finalizer === true, `${at}: ${d.name}'s finalizer does not match its deletion`);
        const raise = s.raises.find((r) => r.name === d.name && r.namespace === d.namespace);
        if (raise) assert.ok(d.atMs > raise.atMs, `${at}: paused ${d.name} deleted before it was raised`);
        const after = d.recreateAfterMs;
        if (after !== undefined) assert.ok(fresh.some((a) => a.object.metadata.name === d.freshPod && a.atMs === d.atMs + after), `${at}: ${d.name} re-created without a fresh pod`);
      }
      assert.equal(fresh.length, (s.deletions ?? []).filter((d) => d.recreateAfterMs !== undefined).length, `${at}: fresh pods without a re-creation`);
    }
  });

  test('about a third of the schedules have one or two app pods no job\'s containers can go into (never app-0)', () => {
    let some = 0;
    for (let seed = 0; seed < 200; seed++) {
      const s = generate(seed);
      if (!s.unfit) continue;
      some++;
      assert.ok(s.unfit.length >= 1 && s.unfit.length <= 2, `seed ${seed}: ${s.unfit.length} unfit pods`);
      for (const key of s.unfit) {
        const pod = s.arrivals.find((a) => `${a.object.metadata.namespace}/${a.object.metadata.name}` === key)?.object;
        assert.ok(pod && pod.metadata.name !== 'app-0', `seed ${seed}: ${key}`);
        assert.deepEqual((spec(pod).containers as { name: string }[]).map((c) => c.name), ['web']);
      }
    }
    assert.ok(some >= 40 && some <= 100, `${some} of 200 schedules`);
  });

  test('about a third of the schedules delete jobs, with and without the finalizer, some re-created', () => {
    const all = Array.from({ length: 300 }, (_, seed) => generate(seed));
    const dels = all.flatMap((s) => s.deletions ?? []);
    const share = all.filter((s) => s.deletions).length / all.length;
    assert.ok(share > 0.25 && share < 0.45, `${share} of the schedules delete jobs`);
    assert.ok(dels.some((d) => d.finalizer) && dels.some((d) => !d.finalizer), 'finalizer both ways');
    assert.ok(dels.some((d) => d.recreateAfterMs !== undefined) && dels.some((d) => d.recreateAfterMs === undefined), 're-created and not');
  });

  test('a hold of injections starts after the first to third injection, at atMs at the latest; the seeds keep what they drew before (review97 F6)', () => {
    const held = Array.from({ length: 400 }, (_, seed) => generate(seed)).flatMap((s) => s.faults.filter((f) => f.kind === 'hold-injections').map((f) => ({ s, f })));
    assert.ok(held.length > 30 && held.length < 90, `${held.length} of 400 schedules hold injections`);
    for (const { s, f } of held) {
      assert.ok(f.afterInjection !== undefined && f.afterInjection >= 1 && f.afterInjection <= 3, `seed ${s.seed}: afterInjection ${f.afterInjection}`);
      assert.ok(s.calmAfterMs >= f.atMs + f.forMs, `seed ${s.seed}: calm point before the hold's end`);
    }
    assert.deepEqual(new Set(held.map(({ f }) => f.afterInjection)), new Set([1, 2, 3]));
    // Drawn last: the latest start and the length are those these seeds drew before afterInjection existed.
    const hold = (seed: number): unknown => generate(seed).faults.find((f) => f.kind === 'hold-injections');
    assert.deepEqual(hold(109), { atMs: 2219, kind: 'hold-injections', forMs: 11_911, afterInjection: 1 });
    assert.deepEqual(hold(122), { atMs: 481, kind: 'hold-injections', forMs: 14_735, afterInjection: 2 });
  });
});
