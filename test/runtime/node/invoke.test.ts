import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { startApiServer } from '../../../functions/cluster/index.ts';
import { runCli } from '../../support/cli.ts';

const STORY1 = 'test/fixtures/stories/story1-state.yaml';
const STORY2 = 'test/fixtures/stories/story2-state.yaml';
const dir = mkdtempSync(join(tmpdir(), 'ephemera-invoke-'));
after(() => rmSync(dir, { recursive: true, force: true }));

type Out = { actions: Record<string, unknown>[]; requeueAfterSeconds: number | null; objects: { kind: string; metadata: { name: string }; status?: Record<string, unknown>; spec?: Record<string, unknown> }[] };

async function invokeJson(...args: string[]): Promise<Out> {
  const r = await runCli(['invoke', ...args, '--output', 'json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Out;
}

const job = (o: Out) => o.objects.find((x) => x.kind === 'EphemeralJob');
const pick = (o: Record<string, unknown> | undefined, keys: string[]): Record<string, unknown> => Object.fromEntries(keys.map((k) => [k, o?.[k]]));

describe('ephemera invoke', () => {
  test('prints exactly the contract: actions with verb/apiVersion/kind/subresource?/namespace/name/body?, requeue, objects', async () => {
    const out = await invokeJson('--state', STORY1, '--now', '2026-01-01T00:20:30Z');
    assert.deepEqual(Object.keys(out).sort(), ['actions', 'objects', 'requeueAfterSeconds']);
    for (const a of out.actions) {
      assert.deepEqual(Object.keys(a).filter((k) => !['verb', 'apiVersion', 'kind', 'subresource', 'namespace', 'name', 'body'].includes(k)), []);
    }
    const inject = out.actions.filter((a) => a.subresource === 'ephemeralcontainers');
    assert.deepEqual(inject.map((a) => a.name), ['helloworld-865cd8865b-nl8lq'], 'parallelism 1: only the oldest pod');
    const pod = out.objects.find((o) => o.metadata.name === 'helloworld-865cd8865b-nl8lq') as unknown as { spec: { ephemeralContainers: { name: string; env: { name: string; value: string }[] }[] } };
    assert.deepEqual(pod.spec.ephemeralContainers.map((c) => c.name), ['helloworld-ec']);
    assert.ok(pod.spec.ephemeralContainers[0]?.env.some((e) => e.name === 'KRUISE_EJOB_ID' && e.value === '0e1a5e00-0000-4000-8000-00000000e10b'));
    assert.equal(job(out)?.status?.match, 4);
    assert.equal(job(out)?.status?.waiting, 1);
    assert.equal(out.requeueAfterSeconds, 1770, 'ttlSecondsAfterCreated 1800 from creation, 30 s in');
  });

  test('one input and one --now print one document, byte for byte: seeded uids, one lock holder, the cluster\'s own clock (review75 L1)', async () => {
    const run = async (): Promise<string> => {
      const r = await runCli(['invoke', '--state', STORY1, '--now', '2026-01-01T00:20:30Z', '--output', 'json']);
      assert.equal(r.code, 0, r.stderr);
      return r.stdout;
    };
    const [a, b] = [await run(), await run()];
    assert.equal(a, b);
    const out = JSON.parse(a) as Out;
    const lease = out.objects.find((o) => o.kind === 'Lease') as unknown as { spec: { holderIdentity: string; renewTime: string } };
    assert.equal(lease.spec.holderIdentity, 'ephemera-invoke');
    assert.equal(lease.spec.renewTime, '2026-01-01T00:20:30.000000Z', 'stamped with --now, not --now plus the run\'s milliseconds');
    const uids = out.objects.map((o) => (o.metadata as { uid?: string }).uid ?? '');
    assert.equal(new Set(uids).size, uids.length, 'every object its own uid');
    for (const uid of uids) assert.match(uid, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  test('runs chain: one run\'s --output json document, or a plain array of objects, is the next run\'s --state (review75 L2)', async () => {
    const r = await runCli(['invoke', '--state', STORY1, '--now', '2026-01-01T00:20:30Z', '--output', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const first = JSON.parse(r.stdout) as Out;
    const asDocument = join(dir, 'first-output.json');
    writeFileSync(asDocument, r.stdout);
    const asArray = join(dir, 'first-objects.json');
    writeFileSync(asArray, JSON.stringify(first.objects));
    for (const state of [asDocument, asArray]) {
      // Ten seconds on, the claimed pod is still waiting: its slot stays taken, so nothing is injected.
      const next = await invokeJson('--state', state, '--now', '2026-01-01T00:20:40Z');
      assert.deepEqual(next.actions.filter((a) => a.subresource === 'ephemeralcontainers'), [], state);
      assert.equal(job(next)?.status?.waiting, 1, state);
      assert.equal(next.objects.length, first.objects.length, `${state}: every object of the first run's result is there`);
    }
  });

  test('--state from kubectl get all: kinds the in-memory cluster does not model are left out with one note, not refused (review77 L2)', async () => {
    const extra = [
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'helloworld', namespace: 'default' }, spec: {} },
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'other', namespace: 'default' }, spec: {} },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'helloworld', namespace: 'default' }, spec: {} },
    ];
    const state = join(dir, 'get-all.yaml');
    writeFileSync(state, `${readFileSync(STORY1, 'utf8')}\n---\n${extra.map((o) => JSON.stringify(o)).join('\n---\n')}\n`);
    const r = await runCli(['invoke', '--state', state, '--now', '2026-01-01T00:20:30Z', '--output', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /note: --state: left out 3 objects of kinds the in-memory cluster does not model \(the handlers read none of them\): apps\/v1 Deployment \(2\), v1 Service \(1\)/);
    const out = JSON.parse(r.stdout) as Out;
    assert.deepEqual(out.actions.filter((a) => a.subresource === 'ephemeralcontainers').map((a) => a.name), ['helloworld-865cd8865b-nl8lq']);
    assert.equal(out.objects.some((o) => o.kind === 'Deployment' || o.kind === 'Service'), false);
  });

  test('an empty --event file says it replayed nothing; pretty-printed JSON events get a hint (review77 L4)', async () => {
    const empty = join(dir, 'empty.jsonl');
    writeFileSync(empty, '');
    const r = await runCli(['invoke', '--state', STORY1, '--event', empty, '--now', '2026-01-01T00:20:30Z']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stderr.includes(`note: ${empty}: no events in it: nothing was replayed`), r.stderr);
    const pretty = join(dir, 'pretty.json');
    writeFileSync(pretty, `${JSON.stringify({ type: 'ADDED', object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a' } } }, null, 2)}\n${JSON.stringify({ type: 'MODIFIED', object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a' } } }, null, 2)}\n`);
    const p = await runCli(['invoke', '--state', STORY1, '--event', pretty]);
    assert.equal(p.code, 2);
    assert.match(p.stderr, /line 1: not JSON \(.*\): events go one per line, as kubectl get --raw '…\?watch=1' prints them \(or pipe pretty JSON through jq -c \.\)/);
  });

  test('a due pod on a node that no longer exists: "no actions", and why, whatever LOG_LEVEL (review86)', async () => {
    const state = join(dir, 'orphan.yaml');
    const pod = {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'job-1', namespace: 'batch', uid: '0f1e2d3c-0000-4000-8000-000000000009' },
      spec: { nodeName: 'node-gone', restartPolicy: 'Never', containers: [{ name: 'main', image: 'x' }, { name: 'log-shipper', image: 'y', env: [{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' }] }] },
      status: { phase: 'Running', containerStatuses: [{ name: 'main', state: { terminated: { exitCode: 0 } } }, { name: 'log-shipper', state: { running: {} } }] },
    };
    writeFileSync(state, [{ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a' } }, pod].map((o) => JSON.stringify(o)).join('\n---\n'));
    const r = await runCli(['invoke', '--state', state, '--now', '2026-01-01T00:00:00Z']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /no actions/i);
    assert.ok(r.stderr.includes('note: sidecar Pod/batch/job-1: pod batch/job-1 skipped: node node-gone no longer exists (the pod is orphaned; PodGC deletes it), its sidecars are not stopped'), r.stderr);
  });

  test('Story 2: a running injected sleep container reports the job Running', async () => {
    const out = await invokeJson('--state', STORY2, '--now', '2026-01-01T00:03:00Z');
    assert.equal(job(out)?.status?.phase, 'Running');
    assert.equal(job(out)?.status?.running, 1);
    assert.equal(out.actions.filter((a) => a.subresource === 'ephemeralcontainers').length, 0, 'never injected again');
  });

  test('replays a recorded event: the pod finishing frees the slot for the next pod', async () => {
    const first = await invokeJson('--state', STORY1, '--now', '2026-01-01T00:20:30Z');
    // The world after the first run, with the injected container finished (exit 0).
    const pod = first.objects.find((o) => o.metadata.name === 'helloworld-865cd8865b-nl8lq') as unknown as { status: Record<string, unknown> };
    pod.status.ephemeralContainerStatuses = [{ name: 'helloworld-ec', state: { terminated: { exitCode: 0 } } }];
    const state = join(dir, 'after.json');
    writeFileSync(state, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: first.objects.filter((o) => o.kind !== 'Event') }));
    const event = join(dir, 'event.json');
    writeFileSync(event, JSON.stringify({ type: 'MODIFIED', object: pod }));
    const out = await invokeJson('--state', state, '--event', event, '--now', '2026-01-01T00:21:00Z');
    assert.deepEqual(out.actions.filter((a) => a.subresource === 'ephemeralcontainers').map((a) => a.name), ['helloworld-865cd8865b-xmtrv']);
    assert.equal(job(out)?.status?.succeeded, 1);
    assert.equal(job(out)?.status?.phase, 'Running');
  });

  test('Story 1 recorded (record.ts): the first check exited 0, so the next pod gets its turn', async () => {
    const out = await invokeJson('--state', 'test/fixtures/stories/story1-recording-state.yaml', '--event', 'test/fixtures/stories/story1-recording.jsonl', '--now', '2026-01-01T00:20:03Z');
    assert.deepEqual(out.actions.filter((a) => a.subresource === 'ephemeralcontainers').map((a) => a.name), ['helloworld-865cd8865b-xmtrv']);
    assert.deepEqual(pick(job(out)?.status, ['phase', 'match', 'succeeded', 'failed', 'running', 'waiting']), { phase: 'Running', match: 4, succeeded: 1, failed: 0, running: 0, waiting: 1 });
  });

  test('Story 2 recorded (record.ts): the injected sleep started, so the job is Running', async () => {
    const out = await invokeJson('--state', 'test/fixtures/stories/story2-recording-state.yaml', '--event', 'test/fixtures/stories/story2-recording.jsonl', '--now', '2026-01-01T00:02:02Z');
    assert.equal(out.actions.filter((a) => a.subresource === 'ephemeralcontainers').length, 0, 'never injected again');
    assert.deepEqual(pick(job(out)?.status, ['phase', 'match', 'running', 'waiting']), { phase: 'Running', match: 1, running: 1, waiting: 0 });
  });

  test('JSON lines of events are replayed in order', async () => {
    const objects = parseAllDocuments(readFileSync(STORY2, 'utf8')).map((d) => d.toJS() as Record<string, unknown>);
    assert.equal(objects.length, 2);
    const lines = objects.map((o) => JSON.stringify({ type: 'ADDED', object: o })).join('\n');
    const events = join(dir, 'events.jsonl');
    writeFileSync(events, `${lines}\n`);
    const out = await invokeJson('--state', STORY2, '--event', events, '--now', '2026-01-01T00:03:00Z');
    assert.equal(job(out)?.status?.phase, 'Running');
  });

  test('--kubeconfig plans against a live API server and writes nothing; --apply writes', async () => {
    const objects = parseAllDocuments(readFileSync(STORY1, 'utf8')).map((d) => d.toJS() as Record<string, unknown>);
    const server = await startApiServer({ objects, clock: () => new Date(LIVE_NOW) });
    try {
      const kubeconfig = join(dir, 'kubeconfig.yaml');
      writeFileSync(kubeconfig, server.kubeconfigYaml());
      const injected = (): string[] => (server.store.list({ apiVersion: 'v1', kind: 'Pod', namespace: 'default' }) as unknown as { metadata: { name: string }; spec: { ephemeralContainers?: unknown[] } }[])
        .filter((p) => (p.spec.ephemeralContainers ?? []).length > 0).map((p) => p.metadata.name);
      const planned = await invokeJson('--kubeconfig', kubeconfig, '--state', STORY1, '--now', '2026-01-01T00:20:30Z');
      assert.deepEqual(planned.actions.filter((a) => a.subresource === 'ephemeralcontainers').map((a) => a.name), ['helloworld-865cd8865b-nl8lq']);
      assert.deepEqual(injected(), [], 'plan only');
      assert.deepEqual(server.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`), [], 'no write at all, not even a Lease');
      await invokeJson('--kubeconfig', kubeconfig, '--state', STORY1, '--now', '2026-01-01T00:20:30Z', '--apply');
      assert.deepEqual(injected(), ['helloworld-865cd8865b-nl8lq']);
    } finally {
      await server.close();
    }
  });

  test('bad input: a clear error naming the problem, exit code 2, no stack trace', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'apiVersion: v1\nkind: Pod\nmetadata: {}\n');
    // A sparse file: its size is what counts, and nothing of it is read (review75 L3).
    const huge = join(dir, 'huge.jsonl');
    writeFileSync(huge, '');
    truncateSync(huge, 600 * 1024 * 1024);
    const cases: [string[], RegExp][] = [
      [['--state', bad], /metadata\.name/],
      [['--state', STORY1, '--event', huge], /huge\.jsonl is 600 MiB, more than the 500 MiB a file may be \(it is read whole\): replay a part of it, e\.g\. one hour: jq -c/],
      [['--state', join(dir, 'missing.yaml')], /cannot read/],
      [['--state', STORY1, '--now', 'yesterday'], /--now must be an RFC 3339 time/],
      [['--state', STORY1, '--output', 'yaml'], /--output must be "json"/],
      [[], /--state FILE is required/],
      [['--kubeconfig', join(dir, 'no-such-kubeconfig')], /kubeconfig .*no-such-kubeconfig does not exist; pass --kubeconfig/],
      [['--kubeconfig', 'x', '--state', STORY1, '--namespace', 'a'], /--namespace only makes sense with --kubeconfig and no --state/],
      [['--frobnicate'], /Unknown option '--frobnicate'\nRun "ephemera invoke --help"/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(['invoke', ...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    }
  });

  test('an event that is neither a watch event nor an envelope is refused with its position', async () => {
    const events = join(dir, 'garbage.jsonl');
    writeFileSync(events, '{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a"}}}\n{"hello":1}\n');
    const r = await runCli(['invoke', '--state', STORY2, '--event', events]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /event 2: neither a watch event/);
  });

  test('a bad configuration variable stops it with the variable named, not a stack trace', async () => {
    const r = await runCli(['invoke', '--state', STORY1], { EPHEMERA_SIDECAR_STRATEGY: 'magic' });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /EPHEMERA_SIDECAR_STRATEGY: .*"crr"\|"ephemeral-signal"/);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
    // Spaces alone are an unset variable, as '' is (review77 H3); a value that is no image reference is refused.
    const blank = await runCli(['invoke', '--state', STORY1], { EPHEMERA_SIGNAL_IMAGE: 'Bad_Value' });
    assert.equal(blank.code, 2, blank.stderr);
    assert.match(blank.stderr, /EPHEMERA_SIGNAL_IMAGE: an image reference/);
    assert.doesNotMatch(blank.stderr, /\n\s+at /);
  });

  test('pods whose owner (a ReplicaSet) the state leaves out are kept through a run that deletes something', async () => {
    const objects = parseAllDocuments(readFileSync(STORY1, 'utf8')).map((d) => d.toJS() as { kind: string; metadata: Record<string, unknown> });
    for (const o of objects.filter((x) => x.kind === 'Pod')) o.metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'helloworld-865cd8865b', uid: '11111111-2222-4333-8444-555555555555', controller: true }];
    // A job finished long ago and past its TTL: the run deletes it, so the collector runs.
    const finished = {
      apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob',
      metadata: { name: 'old-check', namespace: 'default', uid: '0e1a5e00-0000-4000-8000-0000000001d0', generation: 1, creationTimestamp: '2025-12-31T00:00:00Z' },
      spec: { selector: { matchLabels: { app: 'helloworld' } }, ttlSecondsAfterFinished: 60, template: { ephemeralContainers: [{ name: 'old', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'helloworld' }] } },
      status: { phase: 'Succeeded', match: 0, succeeded: 0, failed: 0, running: 0, waiting: 0, completionTime: '2025-12-31T00:01:00Z' },
    };
    const state = join(dir, 'owned.json');
    writeFileSync(state, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [...objects, finished] }));
    const out = await invokeJson('--state', state, '--now', '2026-01-01T00:20:30Z');
    assert.ok(out.actions.some((a) => a.verb === 'delete' && a.kind === 'EphemeralJob' && a.name === 'old-check'), 'the run deleted the expired job');
    assert.deepEqual(out.actions.filter((a) => a.subresource === 'ephemeralcontainers').map((a) => a.name), ['helloworld-865cd8865b-nl8lq']);
    assert.equal(out.objects.filter((o) => o.kind === 'Pod').length, 4, 'every pod of the state is still there');
    assert.equal(out.objects.filter((o) => o.kind === 'EphemeralJob' && o.metadata?.name === 'old-check').length, 0);
    assert.equal(job(out)?.status?.match, 4);
  });

  test('the human summary gives each action its reason', async () => {
    const r = await runCli(['invoke', '--state', STORY1, '--now', '2026-01-01T00:20:30Z']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^patch Pod default\/helloworld-865cd8865b-nl8lq\/ephemeralcontainers: inject helloworld-ec for ephemeral job hello-world-ephemeral-job$/m);
    assert.match(r.stdout, /^patch EphemeralJob default\/hello-world-ephemeral-job\/status: status: Waiting match=4/m);
    assert.match(r.stdout, /^requeue after: 1770s$/m);
    // The README shows this very run: its example is what it prints (review78: an Event name with the old 32-bit hash).
    const readme = readFileSync('README.md', 'utf8');
    const shown = /npx ephemera invoke --state test\/fixtures\/stories\/story1-state\.yaml --now 2026-01-01T00:20:30Z\n```\n\n```\n([^`]*)```/.exec(readme)?.[1];
    assert.equal(shown, r.stdout);
  });

  test('--kubeconfig without --state lists the cluster\'s jobs and Job pods and plans for them; --namespace narrows it', async () => {
    const objects = parseAllDocuments(readFileSync(STORY1, 'utf8')).map((d) => d.toJS() as Record<string, unknown>);
    const server = await startApiServer({ objects, clock: () => new Date(LIVE_NOW) });
    try {
      const kubeconfig = join(dir, 'live.kubeconfig');
      writeFileSync(kubeconfig, server.kubeconfigYaml());
      const planned = await invokeJson('--kubeconfig', kubeconfig, '--now', '2026-01-01T00:20:30Z');
      assert.deepEqual(planned.actions.filter((a) => a.subresource === 'ephemeralcontainers').map((a) => a.name), ['helloworld-865cd8865b-nl8lq']);
      assert.deepEqual(server.requests.filter((r) => r.method !== 'GET').map((r) => r.path), [], 'plan only');
      const elsewhere = await invokeJson('--kubeconfig', kubeconfig, '--namespace', 'other', '--now', '2026-01-01T00:20:30Z');
      assert.deepEqual(elsewhere.actions, []);
      const lists = server.requests.filter((r) => r.verb === 'list').map((r) => r.path);
      assert.ok(lists.includes('/apis/apps.kruise.io/v1alpha1/namespaces/other/ephemeraljobs') && lists.includes('/api/v1/namespaces/other/pods'), lists.join(' '));
    } finally {
      await server.close();
    }
  });

  test('an unreachable API server is one line naming it, exit 1, not "no actions"', async () => {
    const server = await startApiServer();
    const kubeconfig = join(dir, 'gone.kubeconfig');
    writeFileSync(kubeconfig, server.kubeconfigYaml());
    await server.close();
    const r = await runCli(['invoke', '--kubeconfig', kubeconfig]);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^ephemera invoke: cannot reach the API server http:\/\/127\.0\.0\.1:\d+ \(context ephemera-fake, kubeconfig .*gone\.kubeconfig\): connect ECONNREFUSED .*; check that the cluster is running/);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  });

  test('a server that answers with an error is not "unreachable": one line with its code and its own words, exit 1', async () => {
    const cases: [Parameters<Awaited<ReturnType<typeof startApiServer>>['faults']['add']>[0], RegExp][] = [
      [{ pathIncludes: '/version', status: 401, times: Infinity }, /\) refused these credentials \(HTTP 401: Unauthorized\); check the kubeconfig's user/],
      [{ pathIncludes: '/version', status: 403, times: Infinity, message: 'forbidden: User "ci" cannot get path "/version"' }, /\) forbade it \(HTTP 403: forbidden: User "ci" cannot get path "\/version"\); check what these credentials may do/],
      [{ pathIncludes: 'ephemeraljobs', status: 500, times: Infinity, message: 'etcdserver: request timed out' }, /\) answered with an error \(HTTP 500: etcdserver: request timed out\); it may be starting or overloaded/],
    ];
    for (const [fault, message] of cases) {
      await withLiveServer([], [fault], async (kubeconfig) => {
        const r = await runCli(['invoke', '--kubeconfig', kubeconfig]);
        assert.equal(r.code, 1, r.stderr);
        assert.match(r.stderr, new RegExp(`^ephemera invoke: the API server http://127\\.0\\.0\\.1:\\d+ \\(context ephemera-fake, kubeconfig .*${message.source}`));
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      });
    }
  });

  test('--kubeconfig without --apply says on stderr that it was a plan only; -o json says its objects are not listed (review)', async () => {
    const plan = /^ephemera invoke: plan only, nothing was written \(--apply to write\)$/m;
    const objects = /^ephemera invoke: note: "objects" is empty: a live cluster's objects are not listed \(kubectl get shows them\)$/m;
    await withLiveServer(story1(), [], async (kubeconfig) => {
      const planned = await runCli(['invoke', '--kubeconfig', kubeconfig, '--now', '2026-01-01T00:20:30Z']);
      assert.equal(planned.code, 0, planned.stderr);
      assert.match(planned.stdout, /^patch Pod default\/helloworld-865cd8865b-nl8lq\/ephemeralcontainers: /m);
      assert.match(planned.stderr, plan);
      assert.ok(planned.stderr.startsWith('ephemera invoke: plan only'), 'its first line');
      assert.doesNotMatch(planned.stderr, objects, 'no document, no word about it');
      const json = await runCli(['invoke', '--kubeconfig', kubeconfig, '--now', '2026-01-01T00:20:30Z', '--output', 'json']);
      assert.equal(json.code, 0, json.stderr);
      assert.deepEqual(Object.keys(JSON.parse(json.stdout) as object).sort(), ['actions', 'objects', 'requeueAfterSeconds'], 'the contract\'s document');
      assert.match(json.stderr, plan);
      assert.match(json.stderr, objects);
      // --now away from the server's clock previews; with --apply it is refused, and nothing is written (review84 M1).
      const later = await runCli(['invoke', '--kubeconfig', kubeconfig, '--now', '2026-01-01T03:00:00Z']);
      assert.equal(later.code, 0, later.stderr);
      assert.match(later.stderr, plan);
      const refused = await runCli(['invoke', '--kubeconfig', kubeconfig, '--now', '2026-01-01T03:00:00Z', '--apply']);
      assert.equal(refused.code, 2, refused.stderr);
      // The server's clock as estimated when checked: its Date header and the moments since its answer came.
      assert.match(refused.stderr, /^ephemera invoke: --now 2026-01-01T03:00:00\.000Z cannot be used with --apply: the API server's clock says 2026-01-01T00:20:3\d\.\d{3}Z, and what is planned at another time would be written for real \(a deadline judged early fails a running job\); drop --apply to preview, or --now to apply\n$/);
      assert.equal(refused.stdout, '');
      const again = await runCli(['invoke', '--kubeconfig', kubeconfig, '--now', '2026-01-01T00:20:30Z']);
      assert.match(again.stdout, /^patch Pod default\/helloworld-865cd8865b-nl8lq\/ephemeralcontainers: /m, 'nothing was written: the same plan');
      const applied = await runCli(['invoke', '--kubeconfig', kubeconfig, '--now', '2026-01-01T00:20:30Z', '--apply']);
      assert.equal(applied.code, 0, applied.stderr);
      assert.doesNotMatch(applied.stderr, plan);
    });
    const inMemory = await runCli(['invoke', '--state', STORY1, '--now', '2026-01-01T00:20:30Z', '--output', 'json']);
    assert.equal(inMemory.stderr, '', 'in memory: the objects are listed, nothing to say');
  });

  test('--apply takes --now only within 5 s of the server\'s clock, either side, and only when the server says its time; --apply without --now plans at the server\'s clock, not this machine\'s (review92 G4, review95 F2)', async () => {
    const refusedAt = /^ephemera invoke: --now \S+ cannot be used with --apply: /;
    const at = (ms: number): string => new Date(Date.parse(LIVE_NOW) + ms).toISOString();
    for (const off of [6_000, 600_000, -6_000]) {
      await withLiveServer(story1(), [], async (kubeconfig, server) => {
        const before = server.history.writes.length;
        const r = await runCli(['invoke', '--kubeconfig', kubeconfig, '--now', at(off), '--apply']);
        assert.equal(r.code, 2, `--now ${off} ms off: ${r.stderr}`);
        assert.match(r.stderr, refusedAt);
        assert.equal(server.history.writes.length, before, 'nothing written');
      });
    }
    for (const off of [4_000, -4_000]) {
      await withLiveServer(story1(), [], async (kubeconfig) => {
        const r = await runCli(['invoke', '--kubeconfig', kubeconfig, '--now', at(off), '--apply']);
        assert.equal(r.code, 0, `--now ${off} ms off: ${r.stderr}`);
      });
    }
    // The wall clock is months ahead of the server's. Without --now the run plans at the
    // server's clock: a job 30 s old by it with a 600 s deadline is not failed (it was
    // planned at this machine's clock, unchecked: DeadlineExceeded, final once sealed).
    const withDeadline = story1().map((o) => (o.kind === 'EphemeralJob' ? { ...o, spec: { ...(o.spec as object), activeDeadlineSeconds: 600 } } : o));
    await withLiveServer(withDeadline, [], async (kubeconfig, server) => {
      const r = await runCli(['invoke', '--kubeconfig', kubeconfig, '--apply']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^patch Pod default\/helloworld-865cd8865b-nl8lq\/ephemeralcontainers: /m, r.stdout);
      const job = server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'default', name: 'hello-world-ephemeral-job' }) as { status?: { phase?: string; conditions?: { lastTransitionTime?: string }[] } };
      assert.notEqual(job.status?.phase, 'Failed');
      // The server's time (its Date, 00:20:30, and the moments the run took since), not this machine's months later.
      for (const c of job.status?.conditions ?? []) assert.match(c.lastTransitionTime ?? '', /^2026-01-01T00:20:3\dZ$/, 'stamped with the server\'s time');
      assert.ok((job.status?.conditions ?? []).length > 0, 'conditions were written');
    });
    // A server (a proxy in front of it) that says no time: --now cannot be checked, so it is refused.
    await withLiveServer(story1(), [], async (kubeconfig) => {
      const proxy = await dateless(readFileSync(kubeconfig, 'utf8'));
      try {
        const r = await runCli(['invoke', '--kubeconfig', proxy.kubeconfig, '--now', LIVE_NOW, '--apply']);
        assert.equal(r.code, 2, r.stderr);
        assert.match(r.stderr, /cannot be used with --apply: the API server did not say its time \(no Date header\)/);
        // Without --now: this machine's clock, as production's functions then do, and said so.
        const plain = await runCli(['invoke', '--kubeconfig', proxy.kubeconfig]);
        assert.equal(plain.code, 0, plain.stderr);
        assert.match(plain.stderr, /^ephemera invoke: note: the API server did not say its time \(no Date header\): planned at this machine's clock$/m);
      } finally {
        await proxy.close();
      }
    });
  });

  test('a URL that answers 404 on /version does not serve the Kubernetes API: check the server address, not "try again" (review)', async () => {
    await withLiveServer([], [{ pathIncludes: '/version', status: 404, times: Infinity }], async (kubeconfig) => {
      const r = await runCli(['invoke', '--kubeconfig', kubeconfig]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /^ephemera invoke: the server http:\/\/127\.0\.0\.1:\d+ \(context ephemera-fake, kubeconfig .*\) answered HTTP 404 on \/version( \(.*\))?: this URL does not serve the Kubernetes API; check the server address in the kubeconfig\n$/);
    });
  });

  test('a kubeconfig without clusters, without a current context or with one it lacks, or not YAML: one line naming the fix, exit 2', async () => {
    const cases: [string, RegExp][] = [
      ['apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n', /defines no clusters; add one \(kubectl --kubeconfig .* config set-cluster NAME --server URL\); or pass another file with --kubeconfig\n$/],
      ['apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "https://127.0.0.1:6443"}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\nusers:\n- name: u\n  user: {}\n', /has no current-context; choose one with: kubectl --kubeconfig .* config use-context NAME/],
      ['clusters: [unclosed\n', /cannot be read: .*; fix the file or pass another with --kubeconfig/],
      ['apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]\ncontexts: [{name: ctx, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {}}]\ncurrent-context: nope\n', /: current-context "nope" is not one of its contexts \(ctx\); choose one with: kubectl --kubeconfig .* config use-context NAME/],
    ];
    for (const [i, [text, message]] of cases.entries()) {
      const file = join(dir, `broken-${i}.kubeconfig`);
      writeFileSync(file, text);
      const r = await runCli(['invoke', '--kubeconfig', file]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
  });

  test('--help prints the options and exits 0', async () => {
    const r = await runCli(['invoke', '--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^usage: ephemera invoke --state FILE/);
    for (const flag of ['--event', '--now', '--output json', '--kubeconfig', '--namespace', '--apply']) assert.ok(r.stdout.includes(flag), flag);
    // The help and the error say the same of --namespace (review).
    const misuse = await runCli(['invoke', '--kubeconfig', 'x', '--event', 'y', '--namespace', 'a']);
    const when = /--namespace only makes sense (with --kubeconfig and no [^\n]*)/.exec(misuse.stderr)?.[1];
    assert.ok(when, misuse.stderr);
    assert.match(r.stdout.replace(/\s+/g, ' '), new RegExp(`--namespace NS ${when.replace(/-/g, '\\-')}: only this namespace`));
  });
});

/** A live API server holding `objects`, with `faults`, and a kubeconfig for it; closed after `body`. */
const LIVE_NOW = '2026-01-01T00:20:30Z';

async function withLiveServer(objects: unknown[], faults: Parameters<Awaited<ReturnType<typeof startApiServer>>['faults']['add']>[0][], body: (kubeconfig: string, server: Awaited<ReturnType<typeof startApiServer>>) => Promise<void>): Promise<void> {
  // The cluster's clock is the --now these tests give: --apply takes --now only at the server's own time.
  const server = await startApiServer({ objects, clock: () => new Date(LIVE_NOW) });
  for (const f of faults) server.faults.add(f);
  const kubeconfig = join(dir, `live-${Math.random().toString(36).slice(2)}.kubeconfig`);
  writeFileSync(kubeconfig, server.kubeconfigYaml());
  try {
    await body(kubeconfig, server);
  } finally {
    await server.close();
  }
}

/** A proxy in front of the server of `kubeconfigYaml` that drops the Date header from every answer, and a kubeconfig for it. */
async function dateless(kubeconfigYaml: string): Promise<{ kubeconfig: string; close: () => Promise<void> }> {
  const target = new URL(/server: (\S+)/.exec(kubeconfigYaml)?.[1] ?? 'http://missing');
  const proxy = http.createServer((req, res) => {
    res.sendDate = false;
    req.on('error', () => undefined);
    const out = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      const headers = { ...answer.headers };
      delete headers.date;
      res.writeHead(answer.statusCode ?? 502, headers);
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const kubeconfig = join(dir, `dateless-${Math.random().toString(36).slice(2)}.kubeconfig`);
  writeFileSync(kubeconfig, kubeconfigYaml.replace(target.origin, `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`));
  return { kubeconfig, close: () => new Promise<void>((resolve) => { proxy.closeAllConnections(); proxy.close(() => resolve()); }) };
}

const story1 = (): Record<string, unknown>[] => parseAllDocuments(readFileSync(STORY1, 'utf8')).map((d) => d.toJS() as Record<string, unknown>);
const REFUSE_INJECTION = { method: 'PATCH', pathIncludes: '/ephemeralcontainers', status: 403, times: Infinity, message: 'pods "x" is forbidden: User "ci" cannot patch resource "pods/ephemeralcontainers"' };

/** Two namespaces, a and b, each with a pod and a job selecting it; listing pods in b is forbidden. */
function twoNamespaces(): { objects: unknown[]; fault: typeof REFUSE_INJECTION & { watch: boolean } } {
  const pod = (ns: string): unknown => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: ns, labels: { app: 'x' }, creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { nodeName: 'n', containers: [{ name: 'helloworld', image: 'x' }] }, status: { phase: 'Running', containerStatuses: [{ name: 'helloworld', ready: true, restartCount: 0, state: { running: { startedAt: '2026-01-01T00:00:01Z' } } }] } });
  const job = (ns: string): unknown => ({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', metadata: { name: 'j', namespace: ns, creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { selector: { matchLabels: { app: 'x' } }, template: { ephemeralContainers: [{ name: 'ec', image: 'busybox', imagePullPolicy: 'Always', terminationMessagePolicy: 'File', targetContainerName: 'helloworld' }] } } });
  return {
    objects: [pod('a'), job('a'), pod('b'), job('b')],
    fault: { method: 'GET', pathIncludes: '/namespaces/b/pods', watch: false, status: 403, times: Infinity, message: 'pods is forbidden: User "ci" cannot list resource "pods" in namespace "b"' },
  };
}

type Reported = Out & { refused?: Record<string, unknown>[]; errors?: Record<string, unknown>[] };

describe('ephemera invoke: what went wrong is reported beside what was done', () => {
  test('a write the API server refuses: listed as refused with its answer, its Warning Event among the writes, exit 1 (-o json adds "refused")', async () => {
    await withLiveServer(story1(), [REFUSE_INJECTION], async (kubeconfig) => {
      const r = await runCli(['invoke', '--kubeconfig', kubeconfig, '--apply', '--now', '2026-01-01T00:20:30Z', '--output', 'json']);
      assert.equal(r.code, 1, r.stderr);
      const out = JSON.parse(r.stdout) as Reported;
      assert.deepEqual(out.refused?.map(({ body: _body, ...rest }) => rest), [{
        verb: 'patch', apiVersion: 'v1', kind: 'Pod', subresource: 'ephemeralcontainers', namespace: 'default', name: 'helloworld-865cd8865b-nl8lq',
        error: 'pods "x" is forbidden: User "ci" cannot patch resource "pods/ephemeralcontainers" (PATCH /api/v1/namespaces/default/pods/helloworld-865cd8865b-nl8lq/ephemeralcontainers?fieldValidation=Strict: HTTP 403 Forbidden)',
        status: 403,
      }]);
      const warning = out.actions.find((a) => a.kind === 'Event' && (a.body as { reason?: string } | undefined)?.reason === 'ActionRefused');
      assert.ok(warning, `the ActionRefused Warning it wrote is listed: ${JSON.stringify(out.actions.map((a) => `${a.verb} ${a.kind} ${a.name}`))}`);
      assert.equal(out.actions.filter((a) => a.subresource === 'ephemeralcontainers').length, 0, 'the refused injection is not among the writes');
      assert.match(r.stderr, /^ephemera invoke: the API server refused 1 write \(in "refused"\)$/m);
    });
    await withLiveServer(story1(), [REFUSE_INJECTION], async (kubeconfig) => {
      const r = await runCli(['invoke', '--kubeconfig', kubeconfig, '--apply', '--now', '2026-01-01T00:20:30Z']);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stdout, /^refused: patch Pod default\/helloworld-865cd8865b-nl8lq\/ephemeralcontainers: inject helloworld-ec for ephemeral job hello-world-ephemeral-job; the API server answered: pods "x" is forbidden: User "ci" cannot patch resource "pods\/ephemeralcontainers" \(PATCH \S+: HTTP 403 Forbidden\)$/m);
      assert.match(r.stdout, /^create Event default\/helloworld-865cd8865b-nl8lq\.\w+: record event ActionRefused on Pod default\/helloworld-865cd8865b-nl8lq$/m);
      assert.match(r.stderr, /^ephemera invoke: the API server refused 1 write \(the "refused:" lines\)$/m);
    });
  });

  test('a key that fails does not hide the others: what was done, then the error with the server\'s message, exit 1', async () => {
    const { objects, fault } = twoNamespaces();
    const forbidden = /^ephemera invoke: ejob EphemeralJob\/b\/j: pods is forbidden: User "ci" cannot list resource "pods" in namespace "b" \(GET \/api\/v1\/namespaces\/b\/pods\?\S+: HTTP 403 Forbidden\)$/m;
    await withLiveServer(objects, [fault], async (kubeconfig, server) => {
      const r = await runCli(['invoke', '--kubeconfig', kubeconfig, '--apply', '--now', '2026-01-01T00:20:30Z']);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stdout, /^patch Pod a\/p\/ephemeralcontainers: inject ec for ephemeral job j$/m, 'the writes made for a/j are shown');
      assert.match(r.stderr, forbidden);
      const injected = (server.store.list({ apiVersion: 'v1', kind: 'Pod', namespace: 'a' }) as unknown as { spec: { ephemeralContainers?: unknown[] } }[])[0]?.spec.ephemeralContainers;
      assert.equal(injected?.length, 1, 'a/p was injected on the cluster');
    });
    // With --event, each event's keys the same way; b's event first, and a's is handled all the same.
    await withLiveServer(objects, [fault], async (kubeconfig) => {
      const events = join(dir, 'two-namespaces.jsonl');
      writeFileSync(events, [...objects].reverse().filter((o) => (o as { kind: string }).kind === 'EphemeralJob').map((o) => JSON.stringify({ type: 'ADDED', object: o })).join('\n'));
      const r = await runCli(['invoke', '--kubeconfig', kubeconfig, '--event', events, '--now', '2026-01-01T00:20:30Z', '--output', 'json']);
      assert.equal(r.code, 1, r.stderr);
      const out = JSON.parse(r.stdout) as Reported;
      assert.deepEqual(out.actions.filter((a) => a.subresource === 'ephemeralcontainers').map((a) => `${a.namespace}/${a.name}`), ['a/p']);
      assert.deepEqual(out.errors, [{ controller: 'ejob', key: 'EphemeralJob/b/j', error: 'pods is forbidden: User "ci" cannot list resource "pods" in namespace "b" (GET /api/v1/namespaces/b/pods?labelSelector=app%3Dx: HTTP 403 Forbidden)', status: 403 }]);
      assert.match(r.stderr, forbidden);
    });
  });

  test('--now is RFC 3339 with Z or an offset, read the same in any time zone; a date that does not exist is refused', async () => {
    for (const [now, message] of [
      ['2026-01-01T00:20:30', /--now must be an RFC 3339 time with Z or an offset/],
      ['2026-02-30T00:00:00Z', /--now names a date or time of day that does not exist, got "2026-02-30T00:00:00Z"/],
      ['2026-01-01T24:00:00Z', /does not exist/],
    ] as const) {
      const r = await runCli(['invoke', '--state', STORY1, '--now', now], { TZ: 'America/New_York' });
      assert.equal(r.code, 2, `${now}: ${r.stderr}`);
      assert.match(r.stderr, message);
    }
    const offset = await runCli(['invoke', '--state', STORY1, '--now', '2026-01-01T01:20:30+01:00', '--output', 'json'], { TZ: 'America/New_York' });
    assert.equal(offset.code, 0, offset.stderr);
    assert.equal((JSON.parse(offset.stdout) as Out).requeueAfterSeconds, 1770, 'the same instant as 00:20:30Z');
  });

  test('a recording of kubectl get --raw \'…?watch=1&allowWatchBookmarks=true\': its BOOKMARK and ERROR events are skipped with a note', async () => {
    const lines = readFileSync('test/fixtures/stories/story1-recording.jsonl', 'utf8').trim().split('\n');
    const bookmark = JSON.stringify({ type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '12345', annotations: { 'k8s.io/initial-events-end': 'true' } } } });
    const expired = JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'too old resource version: 1 (5)', reason: 'Expired', code: 410 } });
    const events = join(dir, 'raw-watch.jsonl');
    writeFileSync(events, `${[lines[0], bookmark, ...lines.slice(1), expired].join('\n')}\n`);
    const r = await runCli(['invoke', '--state', 'test/fixtures/stories/story1-recording-state.yaml', '--event', events, '--now', '2026-01-01T00:20:03Z', '--output', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Out;
    assert.deepEqual(out.actions.filter((a) => a.subresource === 'ephemeralcontainers').map((a) => a.name), ['helloworld-865cd8865b-xmtrv'], 'the rest replayed as without them');
    assert.match(r.stderr, /^ephemera invoke: note: \S+raw-watch\.jsonl: event 2: skipped: a BOOKMARK carries only a resourceVersion/m);
    assert.match(r.stderr, /^ephemera invoke: note: \S+raw-watch\.jsonl: event 16: skipped: a watch ERROR \(410 Expired\): too old resource version: 1 \(5\); the relay would list again/m);
  });

  test('a document that is an event envelope is judged as one: its own issues, not the watch event\'s', async () => {
    const envelope = join(dir, 'env-bad.json');
    writeFileSync(envelope, JSON.stringify({ specversion: '1.0', id: 'x', source: 'ephemera-relay/r', type: 'io.ephemera.watch.v1', time: '2026-01-01T00:00:00Z', subject: 'Pod/default/Bad_Name', data: { kind: 'Pod', event: 'MODIFIED', namespace: 'default', name: 'Bad_Name' } }));
    const r = await runCli(['invoke', '--state', STORY2, '--event', envelope]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /env-bad\.json: an event envelope that fails its schema: data\.name: "Bad_Name" a lowercase RFC 1123 subdomain/);
    assert.doesNotMatch(r.stderr, /object: Invalid input/);
  });

  test('--state: the same object twice is refused naming both documents (a Node of that name is another object)', async () => {
    const pod = (labels: string): string => `apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: ${labels}}\nspec: {containers: [{name: c, image: x}]}\n`;
    const dup = join(dir, 'dup.yaml');
    writeFileSync(dup, `${pod('{a: "1"}')}---\napiVersion: v1\nkind: Node\nmetadata: {name: p}\n---\n${pod('{a: "2"}').replace('metadata: {', 'metadata: {namespace: default, ')}`);
    const r = await runCli(['invoke', '--state', dup]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /dup\.yaml: document 1 and document 3 are both Pod default\/p \(v1\); an object appears once \(kubectl create would answer AlreadyExists\)/);
  });

  test('--state: YAML merge keys (<<: *anchor) are honoured', async () => {
    const merged = join(dir, 'merge.yaml');
    writeFileSync(merged, [
      'apiVersion: v1', 'kind: List', 'items:',
      '- apiVersion: v1', '  kind: Pod', '  metadata: &meta {name: p1, namespace: default, creationTimestamp: "2026-01-01T00:00:00Z", labels: {app: x}}',
      '  spec: &spec {nodeName: n, containers: [{name: helloworld, image: x}]}',
      '  status: &status {phase: Running, containerStatuses: [{name: helloworld, ready: true, restartCount: 0, state: {running: {startedAt: "2026-01-01T00:00:01Z"}}}]}',
      '- apiVersion: v1', '  kind: Pod', '  metadata:', '    <<: *meta', '    name: p2', '  spec: *spec', '  status: *status',
      '- apiVersion: apps.kruise.io/v1alpha1', '  kind: EphemeralJob', '  metadata: {name: j, namespace: default, creationTimestamp: "2026-01-01T00:00:00Z"}',
      '  spec: {selector: {matchLabels: {app: x}}, parallelism: 2, template: {ephemeralContainers: [{name: ec, image: busybox, imagePullPolicy: Always, terminationMessagePolicy: File, targetContainerName: helloworld}]}}',
      '',
    ].join('\n'));
    const out = await invokeJson('--state', merged, '--now', '2026-01-01T00:00:30Z');
    const p2 = out.objects.find((o) => o.metadata.name === 'p2') as unknown as { metadata: { labels?: Record<string, string>; namespace?: string } };
    assert.deepEqual(p2.metadata.labels, { app: 'x' }, 'the labels merged from the anchor');
    assert.equal(job(out)?.status?.match, 2);
  });

  test('a pod of --state the relay cannot read is said so on stderr, without LOG_LEVEL', async () => {
    const odd = join(dir, 'odd.yaml');
    writeFileSync(odd, 'apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default, labels: {app: x}}\nspec: {containers: "nope"}\nstatus: {phase: Running}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: n}\n');
    const r = await runCli(['invoke', '--state', odd]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^ephemera invoke: note: Pod\/default\/p: skipped: unreadable pod: spec\.containers: Invalid input: expected array, received string$/m);
    assert.doesNotMatch(r.stderr, /note: .*Node/, 'the Node is no news');
  });

  test('--kubeconfig with --state reconciles the objects it names as the cluster has them, and says which the cluster lacks', async () => {
    await withLiveServer([], [], async (kubeconfig) => {
      const r = await runCli(['invoke', '--kubeconfig', kubeconfig, '--state', STORY1, '--now', '2026-01-01T00:20:30Z']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^no actions$/m);
      assert.match(r.stderr, /^ephemera invoke: note: EphemeralJob\/default\/hello-world-ephemeral-job: not in the cluster, nothing to do$/m);
      assert.match(r.stderr, /^ephemera invoke: note: Pod\/default\/helloworld-865cd8865b-nl8lq: not in the cluster, nothing to do$/m, 'a pod as a job');
    });
  });

  test('--kubeconfig with --state: a pod is routed as the cluster has it, not as the file has it; a pod the cluster lacks gets the job\'s note (review)', async () => {
    const named = join(dir, 'named.yaml');
    writeFileSync(named, [
      // Only a name: the cluster's pod, which the job selects, is what counts.
      'apiVersion: v1\nkind: Pod\nmetadata: {name: helloworld-865cd8865b-nl8lq, namespace: default}',
      'apiVersion: v1\nkind: Pod\nmetadata: {name: ghost, labels: {app: other}}\nspec: {containers: [{name: c, image: x}]}\nstatus: {phase: Running}',
      'apiVersion: apps.kruise.io/v1alpha1\nkind: EphemeralJob\nmetadata: {name: ghostjob, namespace: default}',
    ].join('\n---\n'));
    await withLiveServer(story1(), [], async (kubeconfig, server) => {
      const r = await runCli(['invoke', '--kubeconfig', kubeconfig, '--state', named, '--now', '2026-01-01T00:20:30Z']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^patch Pod default\/helloworld-865cd8865b-nl8lq\/ephemeralcontainers: inject helloworld-ec for ephemeral job hello-world-ephemeral-job$/m);
      assert.match(r.stderr, /^ephemera invoke: note: Pod\/default\/ghost: not in the cluster, nothing to do$/m);
      assert.match(r.stderr, /^ephemera invoke: note: EphemeralJob\/default\/ghostjob: not in the cluster, nothing to do$/m);
      assert.doesNotMatch(r.stderr, /unreadable/);
      const gets = server.requests.filter((q) => q.verb === 'get').map((q) => q.path);
      for (const path of ['/api/v1/namespaces/default/pods/helloworld-865cd8865b-nl8lq', '/api/v1/namespaces/default/pods/ghost', '/apis/apps.kruise.io/v1alpha1/namespaces/default/ephemeraljobs/ghostjob']) assert.ok(gets.includes(path), `GET ${path}: ${gets.join(' ')}`);
    });
    await withLiveServer(story1(), [{ method: 'GET', pathIncludes: '/pods/ghost', status: 403, times: Infinity, message: 'pods "ghost" is forbidden' }], async (kubeconfig) => {
      const r = await runCli(['invoke', '--kubeconfig', kubeconfig, '--state', named, '--now', '2026-01-01T00:20:30Z']);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /^ephemera invoke: cannot read Pod\/default\/ghost \(named by --state\) on http:\/\/127\.0\.0\.1:\d+ \(context ephemera-fake, kubeconfig .*\): pods "ghost" is forbidden \(HTTP 403\); check these credentials may get it\n$/);
    });
    // No EphemeralJob CRD: a 404 naming nothing is not a missing right (final read).
    await withLiveServer(story1(), [{ method: 'GET', pathIncludes: '/ephemeraljobs/ghostjob', status: 404, times: Infinity, message: 'the server could not find the requested resource' }], async (kubeconfig) => {
      const r = await runCli(['invoke', '--kubeconfig', kubeconfig, '--state', named, '--now', '2026-01-01T00:20:30Z']);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /^ephemera invoke: cannot read EphemeralJob\/default\/ghostjob \(named by --state\): http:\/\/127\.0\.0\.1:\d+ .* does not serve apps\.kruise\.io\/v1alpha1 EphemeralJob \(is its CRD installed\?\)\n$/);
    });
  });
});

test('an event about an object the state lacks gets a note, in memory as against a cluster (review)', async () => {
  const state = join(dir, 'empty-state.json');
  writeFileSync(state, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [] }));
  const events = join(dir, 'ghost-job.jsonl');
  writeFileSync(events, `${JSON.stringify({ specversion: '1.0', id: 'g-1', source: 'test', type: 'io.ephemera.watch.v1', time: '2026-01-01T00:20:00Z', subject: 'EphemeralJob/default/ghost', data: { kind: 'EphemeralJob', event: 'ADDED', namespace: 'default', name: 'ghost' } })}\n`);
  const r = await runCli(['invoke', '--state', state, '--event', events, '--now', '2026-01-01T00:20:03Z']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /^ephemera invoke: note: ejob EphemeralJob\/default\/ghost: not in the state, nothing to do$/m);
});
