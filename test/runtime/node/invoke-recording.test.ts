// `ephemera invoke --event` of what `ephemera relay --sink record:PATH` writes: envelopes,
// one per line, as a production relay leaves them (cut off, of several clusters, old).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ENVELOPE_TYPE } from '../../../functions/api/envelope.ts';
import { startApiServer } from '../../../functions/cluster/index.ts';
import { runCli } from '../../support/cli.ts';
import { kubectlShortfall, kubectlVersion, skipOutsideCi } from '../../support/kubectl.ts';

const STORY1 = 'test/fixtures/stories/story1-state.yaml';
const JOB = 'hello-world-ephemeral-job';
const dir = mkdtempSync(join(tmpdir(), 'ephemera-invoke-recording-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let seq = 0;
/** One line as the record sink writes it. */
function line(kind: 'Pod' | 'EphemeralJob', name: string, o: { time?: string; cluster?: string } = {}): string {
  seq++;
  return JSON.stringify({
    specversion: '1.0', id: `rec-${seq}`, source: 'ephemera-relay/prod-0', type: ENVELOPE_TYPE, time: o.time ?? '2026-01-01T00:20:30.000Z',
    subject: `${kind}/default/${name}`, datacontenttype: 'application/json', ...(o.cluster ? { cluster: o.cluster } : {}),
    data: { kind, event: 'MODIFIED', namespace: 'default', name, ...(kind === 'Pod' ? { jobs: [JOB] } : {}) },
  });
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

type Out = { actions: { verb: string; kind: string; subresource?: string; name: string }[] };
const injected = (stdout: string): string[] => (JSON.parse(stdout) as Out).actions.filter((a) => a.subresource === 'ephemeralcontainers').map((a) => a.name);

describe('invoke --event: a recording whose last line was cut off', () => {
  test('an unterminated last line that is not JSON is skipped with a note naming it; the lines before are replayed (review75 M1)', async () => {
    const cut = line('Pod', 'helloworld-865cd8865b-xmtrv').slice(0, 70);
    const events = file('cut.jsonl', `${line('EphemeralJob', JOB)}\n${line('Pod', 'helloworld-865cd8865b-nl8lq')}\n${cut}`);
    const r = await runCli(['invoke', '--state', STORY1, '--event', events, '--now', '2026-01-01T00:20:30Z', '--output', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^ephemera invoke: note: \S+cut\.jsonl: line 3: skipped: not JSON \(.*\) and not ended by a newline, so cut off mid-write/m);
    assert.deepEqual(injected(r.stdout), ['helloworld-865cd8865b-nl8lq']);
  });

  test('any other line that is not JSON still refuses the file (exit 2), naming it: in the middle, a last line ended by a newline, the only line', async () => {
    const job = line('EphemeralJob', JOB);
    const cases: [string, string, RegExp][] = [
      ['middle.jsonl', `${job}\n{"specversion":"1.0","id\n${job}\n`, /middle\.jsonl: line 2: not JSON/],
      ['middle-unterminated.jsonl', `${job}\n{"specversion":"1.0","id\n${job}`, /middle-unterminated\.jsonl: line 2: not JSON/],
      ['terminated.jsonl', `${job}\n{"specversion":"1.0","id\n`, /terminated\.jsonl: line 2: not JSON/],
      ['only.jsonl', '{"specversion":"1.0","id', /only\.jsonl: line 1: not JSON/],
    ];
    for (const [name, text, message] of cases) {
      const r = await runCli(['invoke', '--state', STORY1, '--event', file(name, text), '--now', '2026-01-01T00:20:30Z']);
      assert.equal(r.code, 2, `${name}: ${r.stderr}`);
      assert.match(r.stderr, message, name);
    }
  });
});

describe('invoke --event: a recording of several clusters', () => {
  test('is refused (exit 2), naming the clusters and how to split it: they were merged into one state, and with --apply applied to one cluster (review75 M4)', async () => {
    const events = file('two-clusters.jsonl', `${[line('EphemeralJob', JOB, { cluster: 'prod-eu' }), line('Pod', 'helloworld-865cd8865b-nl8lq', { cluster: 'prod-us' }), line('EphemeralJob', JOB, { cluster: 'prod-us' })].join('\n')}\n`);
    const r = await runCli(['invoke', '--state', STORY1, '--event', events, '--now', '2026-01-01T00:20:30Z']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /two-clusters\.jsonl: events of 2 clusters \(prod-eu: 1 event, prod-us: 2 events\); invoke replays one cluster at a time.*jq -c 'select\(\.cluster == "prod-eu"\)' \S+two-clusters\.jsonl > prod-eu\.jsonl/);
    assert.equal(r.stdout, '', 'nothing was planned');
  });

  test('envelopes naming a cluster beside envelopes naming none are two clusters: refused (review76)', async () => {
    const events = file('named-and-not.jsonl', `${[line('EphemeralJob', JOB, { cluster: 'prod-eu' }), line('Pod', 'helloworld-865cd8865b-nl8lq')].join('\n')}\n`);
    const r = await runCli(['invoke', '--state', STORY1, '--event', events, '--now', '2026-01-01T00:20:30Z', '--output', 'json']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /events of 2 clusters \(prod-eu: 1 event, \(no cluster named\): 1 event\).*select\(\.cluster == "prod-eu"\)/);
  });

  test('one cluster named on every envelope is replayed', async () => {
    const events = file('one-cluster.jsonl', `${[line('EphemeralJob', JOB, { cluster: 'prod-eu' }), line('Pod', 'helloworld-865cd8865b-nl8lq', { cluster: 'prod-eu' })].join('\n')}\n`);
    const r = await runCli(['invoke', '--state', STORY1, '--event', events, '--now', '2026-01-01T00:20:30Z', '--output', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(injected(r.stdout), ['helloworld-865cd8865b-nl8lq']);
  });
});

describe('invoke --event: the clock of a recording', () => {
  const recording = (): string => file('old.jsonl', `${[line('EphemeralJob', JOB, { time: '2026-01-01T00:20:30.000Z' }), line('Pod', 'helloworld-865cd8865b-nl8lq', { time: '2026-01-01T00:21:00.000Z' })].join('\n')}\n`);
  type Timed = Out & { requeueAfterSeconds: number | null };

  test('without --now, each envelope is planned at its own time, with a note: not today, when the job\'s TTL has long passed (review75 M3)', async () => {
    const r = await runCli(['invoke', '--state', STORY1, '--event', recording(), '--output', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Timed;
    assert.deepEqual(out.actions.filter((a) => a.verb === 'delete').map((a) => `${a.kind} ${a.name}`), [], 'no TTL deletion production never made');
    assert.deepEqual(injected(r.stdout), ['helloworld-865cd8865b-nl8lq'], 'what production did at 00:20:30');
    assert.equal(out.requeueAfterSeconds, 1740, 'the pod\'s event planned at 00:21:00: 1800 s after the job\'s creation at 00:20:00');
    assert.match(r.stderr, /^ephemera invoke: note: no --now: each recorded envelope is planned at its own time \(2026-01-01T00:20:30\.000Z … 2026-01-01T00:21:00\.000Z\); --now RFC3339 sets one clock for every event$/m);
  });

  test('--now still sets one clock for every event, and no note', async () => {
    const late = await runCli(['invoke', '--state', STORY1, '--event', recording(), '--now', '2026-01-01T01:00:00Z', '--output', 'json']);
    assert.equal(late.code, 0, late.stderr);
    assert.deepEqual((JSON.parse(late.stdout) as Out).actions.filter((a) => a.verb === 'delete').map((a) => `${a.kind} ${a.name}`), [`EphemeralJob ${JOB}`], 'ttlSecondsAfterCreated has passed at 01:00');
    assert.doesNotMatch(late.stderr, /its own time/);
    const early = await runCli(['invoke', '--state', STORY1, '--event', recording(), '--now', '2026-01-01T00:20:30Z', '--output', 'json']);
    assert.equal((JSON.parse(early.stdout) as Timed).requeueAfterSeconds, 1770, 'both events at 00:20:30');
  });
});

describe('invoke --event: a recording and the state it goes with', () => {
  test('a state without any of the objects the events name gets a note saying so, not only "no actions" (review75 M2)', async () => {
    const events = file('no-state.jsonl', `${[line('EphemeralJob', JOB), line('Pod', 'helloworld-865cd8865b-nl8lq')].join('\n')}\n`);
    const nodeOnly = file('node-only.yaml', 'apiVersion: v1\nkind: Node\nmetadata: {name: kruise-worker}\n');
    const r = await runCli(['invoke', '--state', nodeOnly, '--event', events, '--now', '2026-01-01T00:20:30Z']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^no actions$/m);
    assert.match(r.stderr, /^ephemera invoke: note: the state \(\S+node-only\.yaml\) has none of the \d+ objects the events name: invoke reads the objects from --state, an event only says which changed; capture the cluster's state with the recording/m);
    const withState = await runCli(['invoke', '--state', STORY1, '--event', events, '--now', '2026-01-01T00:20:30Z']);
    assert.doesNotMatch(withState.stderr, /has none of/, 'the state has them');
  });
});

describe('the README\'s capture of the state that goes with a recording', () => {
  // Any kubectl does (1.20 passes); outside CI a missing one skips, under CI it fails (review81 M2).
  const missing = kubectlShortfall(kubectlVersion(), 0);
  test('kubectl get … > state.yaml gives a --state that replays as production: the claims Lease updated, not created anew (review75 M2)', { skip: skipOutsideCi(missing) }, async () => {
    assert.equal(missing, undefined, missing);
    // The cluster a minute in: the first pod's check ran and exited 0, its claim on the job's Lease in ephemera-locks.
    const first = await runCli(['invoke', '--state', STORY1, '--now', '2026-01-01T00:20:30Z', '--output', 'json']);
    const objects = (JSON.parse(first.stdout) as { objects: { kind: string; metadata: { name: string }; status?: Record<string, unknown> }[] }).objects.filter((o) => o.kind !== 'Event');
    const done = objects.find((o) => o.metadata.name === 'helloworld-865cd8865b-nl8lq');
    if (done?.status) done.status.ephemeralContainerStatuses = [{ name: 'helloworld-ec', state: { terminated: { exitCode: 0 } } }];
    const server = await startApiServer({ objects });
    try {
      const kubeconfig = file('capture-kubeconfig', server.kubeconfigYaml());
      const state = join(dir, 'captured.yaml');
      // As the README has it.
      const capture = `LOCKS=ephemera-locks
{ kubectl get pods,nodes,ephemeraljobs.apps.kruise.io,containerrecreaterequests.apps.kruise.io -A -o yaml
  echo ---
  kubectl get leases.coordination.k8s.io -n "$LOCKS" -o yaml
} > ${JSON.stringify(state)}`;
      // Not spawnSync: the API server answering kubectl runs on this process's event loop.
      const r = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
        const child = spawn('bash', ['-c', capture], { env: { ...process.env, KUBECONFIG: kubeconfig }, stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stderr }));
      });
      assert.equal(r.code, 0, r.stderr);
      const events = file('captured.jsonl', `${line('Pod', 'helloworld-865cd8865b-nl8lq', { time: '2026-01-01T00:21:00.000Z' })}\n`);
      const replay = await runCli(['invoke', '--state', state, '--event', events, '--output', 'json'], { EPHEMERA_LOCK_NAMESPACE: 'ephemera-locks' });
      assert.equal(replay.code, 0, replay.stderr);
      const actions = (JSON.parse(replay.stdout) as Out).actions;
      assert.deepEqual(actions.filter((a) => a.kind === 'Lease').map((a) => a.verb), ['update'], 'the job\'s claims record, as production has it');
      assert.deepEqual(injected(replay.stdout), ['helloworld-865cd8865b-xmtrv'], 'the next pod gets its turn');
    } finally {
      await server.close();
    }
  });
});
