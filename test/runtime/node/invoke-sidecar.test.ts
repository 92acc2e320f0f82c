// `ephemera invoke` replaying a recorded watch stream of Job pods (test/fixtures/sidecar/,
// written by record.ts): the sidecar terminator acts on exactly the pods that are due.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { runCli } from '../../support/cli.ts';

const STATE = 'test/fixtures/sidecar/recording-state.yaml';
const RECORDING = 'test/fixtures/sidecar/recording.jsonl';
const NOW = '2026-01-01T00:00:10Z';
const uid = (n: number): string => `5eed0000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const dir = mkdtempSync(join(tmpdir(), 'ephemera-invoke-sidecar-'));
after(() => rmSync(dir, { recursive: true, force: true }));

type Action = { verb: string; kind: string; subresource?: string; name: string; body?: Record<string, unknown> };
type Out = { actions: Action[]; requeueAfterSeconds: number | null; objects: { kind: string; metadata: { name: string }; spec?: Record<string, unknown>; status?: Record<string, unknown> }[] };

async function invoke(...args: string[]): Promise<Out> {
  const r = await runCli(['invoke', ...args, '--output', 'json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Out;
}

/** Writes other than Events, as "verb kind[/sub] name". */
const writes = (o: Out): string[] => o.actions.filter((a) => a.kind !== 'Event').map((a) => `${a.verb} ${a.kind}${a.subresource ? `/${a.subresource}` : ''} ${a.name}`).sort();
const eventsOn = (o: Out): string[] => [...new Set(o.actions.filter((a) => a.kind === 'Event').map((a) => (a.body?.involvedObject as { name: string }).name))].sort();

const EXPECTED = [
  `create ContainerRecreateRequest sidecar-termination-${uid(1)}`,
  `create ContainerRecreateRequest sidecar-termination-${uid(4)}-ignore-exit-code`,
  'patch Pod done-vk',
  'patch Pod/ephemeralcontainers done-signal',
  'patch Pod/status done-ignore-exit-code',
];

describe('ephemera invoke on recorded sidecar pod events', () => {
  test('acts on exactly the due pods, once each, whatever the number of events per pod', async () => {
    const out = await invoke('--state', STATE, '--event', RECORDING, '--now', NOW);
    assert.deepEqual(writes(out), EXPECTED);
    assert.deepEqual(eventsOn(out), ['done-crr', 'done-ignore-exit-code', 'done-signal', 'done-vk']);
    assert.equal(out.requeueAfterSeconds, 120, 'look again in stuckAfterSeconds in case nobody stops the sidecar');
    const vk = out.objects.find((o) => o.metadata.name === 'done-vk') as unknown as { spec: { containers: { image: string }[] } };
    assert.deepEqual(vk.spec.containers.map((c) => c.image), ['example/job:1', 'example/exit0:1']);
    const ended = out.objects.find((o) => o.metadata.name === 'done-ignore-exit-code') as unknown as { status: { phase: string } };
    assert.equal(ended.status.phase, 'Succeeded');
  });

  test('the recording holds many events per pod, and the pods nobody should touch', () => {
    const lines = readFileSync(RECORDING, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { object: { metadata: { name: string } } });
    const perPod = Map.groupBy(lines, (l) => l.object.metadata.name);
    for (const name of ['done-crr', 'still-running', 'failing-onfailure', 'native-sidecar', 'no-sidecar']) {
      assert.ok((perPod.get(name)?.length ?? 0) >= 3, `${name}: ${perPod.get(name)?.length ?? 0} events`);
    }
  });

  test('replayed twice, the second pass writes nothing', async () => {
    const twice = join(dir, 'twice.jsonl');
    const text = readFileSync(RECORDING, 'utf8');
    writeFileSync(twice, text + text);
    const out = await invoke('--state', STATE, '--event', twice, '--now', NOW);
    assert.deepEqual(writes(out), EXPECTED);
  });

  test('without --event every object is reconciled once: the same writes', async () => {
    const out = await invoke('--state', STATE, '--now', NOW);
    assert.deepEqual(writes(out), EXPECTED);
  });

  test('with the daemon-less strategy as the installation default, the crr pods get signal containers', async () => {
    const r = await runCli(['invoke', '--state', STATE, '--event', RECORDING, '--now', NOW, '--output', 'json'], { EPHEMERA_SIDECAR_STRATEGY: 'ephemeral-signal' });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Out;
    assert.deepEqual(writes(out), [
      'patch Pod done-vk',
      'patch Pod/ephemeralcontainers done-crr',
      'patch Pod/ephemeralcontainers done-ignore-exit-code',
      'patch Pod/ephemeralcontainers done-signal',
      'patch Pod/status done-ignore-exit-code',
    ]);
  });

  test('a recorded pod with malformed env entries is skipped; the other pods are still handled', async () => {
    const lines = readFileSync(RECORDING, 'utf8').trim().split('\n');
    const bad = lines.map((l) => {
      const ev = JSON.parse(l) as { object: { metadata: { name: string }; spec: { containers: { env?: unknown }[] } } };
      if (ev.object.metadata.name === 'done-crr') for (const c of ev.object.spec.containers) if (c.env) c.env = [{ value: 'true' }];
      return JSON.stringify(ev);
    });
    const file = join(dir, 'bad-env.jsonl');
    writeFileSync(file, `${bad.join('\n')}\n`);
    const r = await runCli(['invoke', '--state', STATE, '--event', file, '--now', NOW, '--output', 'json'], { LOG_LEVEL: 'info' });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Out;
    assert.deepEqual(writes(out), EXPECTED.filter((w) => !w.includes(uid(1))));
    assert.match(r.stderr, /unreadable pod: spec\.containers\[1\]\.env\[0\]\.name/);
  });
});
