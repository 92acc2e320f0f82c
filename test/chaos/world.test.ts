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
      assert.ok(pods.length >= 5 && pods.length <= 40, `${at}: ${pods.length} pods`);
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
    }
  });
});
