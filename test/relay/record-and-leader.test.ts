import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { Envelope } from '../../functions/api/envelope.ts';
import { silentLogger } from '../../functions/engine/logger.ts';
import { createKube } from '../../functions/kube/client.ts';
import { startApiServer } from '../../functions/cluster/index.ts';
import { parseEnv } from '../../functions/config.ts';
import { leaderElection, RelayConfig } from '../../relay/config.ts';
import { startRelay, type Relay } from '../../relay/relay.ts';
import { leaseName } from '../../functions/engine/lock.ts';
import { startElection } from '../../relay/leader.ts';
import type { Message } from '../../relay/envelope.ts';
import { memorySink } from '../../relay/sinks/memory.ts';
import { recordSink } from '../../relay/sinks/record.ts';
import { CLI, runCli } from '../support/cli.ts';
import { fixture } from '../support/ejob-world.ts';
import { CollectingSink, eventually, FAST_BACKOFF, job, pod } from '../support/relay-world.ts';

const dir = mkdtempSync(join(tmpdir(), 'ephemera-record-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('record sink → ephemera invoke', () => {
  test('what the relay records, invoke replays through the same routing', async () => {
    const objects = fixture('test/fixtures/stories/story1-state.yaml');
    const server = await startApiServer({ objects });
    const recording = join(dir, 'events.jsonl');
    writeFileSync(recording, '');
    const relay = await startRelay({ kubeConfig: server.kubeConfig(), sink: recordSink(recording), namespaces: [], relayId: 'rec', coalesceMs: 10, resyncSeconds: 3600, bufferMax: 100, logger: silentLogger });
    await relay.flush();
    // A pod the job selects changes: a live event, naming the job.
    const podRef = { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'helloworld-865cd8865b-nl8lq' } as const;
    const stored = server.store.get(podRef) as unknown as { spec: Record<string, unknown> };
    server.store.put({ ...stored, spec: { ...stored.spec, nodeName: 'node-9' } } as never);
    await eventually(async () => {
      await relay.flush();
      assert.ok(readFileSync(recording, 'utf8').includes('"kind":"Pod"'));
    });
    await relay.stop();
    await server.close();
    const lines = readFileSync(recording, 'utf8').trim().split('\n');
    const subjects = lines.map((l) => Envelope.parse(JSON.parse(l))).map((e) => `${e.data.kind} ${e.data.name} ${JSON.stringify(e.data.jobs ?? null)}`);
    // The job (from its list, and from the replay after the pods' list), not its 4 pods; then the changed pod.
    assert.deepEqual([...new Set(subjects)], ['EphemeralJob hello-world-ephemeral-job null', 'Pod helloworld-865cd8865b-nl8lq ["hello-world-ephemeral-job"]']);

    const state = join(dir, 'state.json');
    writeFileSync(state, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
    const r = await runCli(['invoke', '--state', state, '--event', recording, '--now', '2026-01-01T00:21:00Z', '--output', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { actions: { subresource?: string; name: string }[] };
    assert.deepEqual(out.actions.filter((a) => a.subresource === 'ephemeralcontainers').map((a) => a.name), ['helloworld-865cd8865b-nl8lq'], 'replaying every event still injects once, oldest first');
  });
});

describe('ephemera relay --sink record:PATH beside production', () => {
  test('records while another relay holds the leader Lease, and leaves that Lease alone: election is off for a record sink unless EPHEMERA_RELAY_LEADER_ELECTION is set (review75 H1)', async () => {
    const ref = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'ephemera-system', name: leaseName('relay', 'leader') } as const;
    // Production's relay leads, and keeps leading (its Lease outlasts the test).
    const held = { ...ref, metadata: { name: ref.name, namespace: ref.namespace }, spec: { holderIdentity: 'prod-relay-7d9f', leaseDurationSeconds: 3600, acquireTime: new Date().toISOString(), renewTime: new Date().toISOString() } };
    const server = await startApiServer({ objects: [...fixture('test/fixtures/stories/story1-state.yaml'), held] });
    const kubeconfig = join(dir, 'h1-kubeconfig');
    writeFileSync(kubeconfig, server.kubeconfigYaml());
    const recording = join(dir, 'h1.jsonl');
    const { EPHEMERA_RELAY_LEADER_ELECTION: _unset, ...env } = process.env;
    const child = spawn(process.execPath, [CLI, 'relay', '--sink', `record:${recording}`], { env: { ...env, KUBECONFIG: kubeconfig, EPHEMERA_RELAY_LISTEN: '127.0.0.1:0', EPHEMERA_RELAY_ID: 'laptop', EPHEMERA_RELAY_COALESCE_MS: '10' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    try {
      await eventually(() => assert.match(readFileSync(recording, 'utf8'), /"subject":"EphemeralJob\/default\/hello-world-ephemeral-job"/), 10_000);
      const running = JSON.parse(out.split('\n').find((l) => l.includes('"relay running"')) ?? '{}') as { leaderElection?: string };
      assert.match(running.leaderElection ?? '', /^off: the record sink records beside the relay that leads/, 'the start line says so');
      assert.equal((server.store.get(ref) as unknown as { spec: { holderIdentity: string } }).spec.holderIdentity, 'prod-relay-7d9f', 'production keeps the lead');
      assert.equal(statSync(recording).mode & 0o777, 0o600, 'the file it created is its owner\'s only (review75 L4)');
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('close', r));
      await server.close();
    }
    assert.equal((server.store.get(ref) as unknown as { spec: { holderIdentity: string } }).spec.holderIdentity, 'prod-relay-7d9f', 'nor released on stop');
  });

  test('EPHEMERA_RELAY_LEADER_ELECTION decides when set; unset, on for sqs and memory, off for record', () => {
    const on = (env: Record<string, string>, sink: 'sqs' | 'memory' | 'record'): boolean => leaderElection(parseEnv(RelayConfig, env), sink).on;
    assert.deepEqual([on({}, 'sqs'), on({}, 'memory'), on({}, 'record')], [true, true, false]);
    assert.deepEqual([on({ EPHEMERA_RELAY_LEADER_ELECTION: 'true' }, 'record'), on({ EPHEMERA_RELAY_LEADER_ELECTION: 'false' }, 'sqs')], [true, false]);
  });
});

describe('stopping a leader relay', () => {
  test('what is queued is sent before the leader Lease is released, so a successor does not start before it (review)', async () => {
    const server = await startApiServer({ objects: [job('j', { app: 'web' }), pod('web-1', { app: 'web' })] });
    const leaderLease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'ephemera-system', name: leaseName('relay', 'leader') } as const;
    const sink = new CollectingSink();
    /** Whether the leader Lease still stood when each message was sent. */
    const leaseStood: boolean[] = [];
    const watching = { async send(ms: Message[]) { for (const _ of ms) leaseStood.push(server.store.get(leaderLease) !== undefined); return sink.send(ms); }, name: 'watching' };
    // A coalescing window of a minute: a change is still queued when stop() comes.
    const relay = await startRelay({ kubeConfig: server.kubeConfig(), sink: watching, namespaces: [], relayId: 'a', coalesceMs: 60_000, resyncSeconds: 3600, bufferMax: 100, logger: silentLogger, election: { kube: createKube(server.kubeConfig()), lock: { namespace: 'ephemera-system', holder: 'a', leaseSeconds: 3, skewSeconds: 1 } } });
    try {
      await eventually(() => assert.ok(relay.isLeader()));
      await relay.flush();
      leaseStood.length = 0;
      server.store.put(pod('web-2', { app: 'web' }));
      await eventually(async () => assert.ok((await relay.metrics.bufferDepth.get()).values[0]?.value === 1));
      await relay.stop();
      assert.ok(sink.subjects().includes('ADDED Pod/default/web-2'), sink.subjects().join(', '));
      assert.deepEqual(leaseStood, [true], 'sent while this relay still led');
      assert.equal(server.store.get(leaderLease), undefined, 'then the Lease was released');
    } finally {
      await server.close();
    }
  });
});

describe('stopping a leader relay with a replay under way', () => {
  test('what it has yet to replay is dropped, not sent before the Lease is released: the successor replays its own cache (review)', async () => {
    const server = await startApiServer({ objects: Array.from({ length: 9 }, (_, i) => job(`j-${i}`, { app: 'web' })) });
    const sink = new CollectingSink();
    const relay = await startRelay({ kubeConfig: server.kubeConfig(), sink, namespaces: [], relayId: 'a', coalesceMs: 10, resyncSeconds: 3600, bufferMax: 2, logger: silentLogger, backoff: { minMs: 20, maxMs: 100 },
      election: { kube: createKube(server.kubeConfig()), lock: { namespace: 'ephemera-system', holder: 'a', leaseSeconds: 3, skewSeconds: 1 } } });
    try {
      await eventually(() => assert.ok(relay.isLeader()));
      await eventually(async () => {
        await relay.flush();
        assert.equal(new Set(sink.subjects().map((s) => s.split(' ')[1])).size, 9);
        assert.equal((await relay.metrics.bufferDepth.get()).values[0]?.value, 0);
      });
      sink.clear();
      sink.hang();
      // A replay of all 9 objects: its first entry is handed to a sink that does not answer yet,
      // the rest waits behind it in a queue of 2.
      relay.resync('became leader', 'all');
      await eventually(() => assert.ok(sink.offered > 0));
      const stopped = relay.stop();
      await new Promise((r) => setTimeout(r, 100));
      sink.release();
      await stopped;
      assert.ok(sink.subjects().length <= 2, `sent on stop: ${sink.subjects().join(', ')}`);
    } finally {
      await server.close();
    }
  });
});

describe('relay replicas: Lease leader election', () => {
  test('only the leader forwards; when it stops, the other takes over and resyncs', async () => {
    const server = await startApiServer({ objects: [job('j', { app: 'web' }), pod('web-1', { app: 'web' })] });
    const lock = (holder: string) => ({ namespace: 'ephemera-system', holder, leaseSeconds: 3, skewSeconds: 1 });
    const base = { kubeConfig: server.kubeConfig(), namespaces: [], coalesceMs: 10, resyncSeconds: 3600, bufferMax: 100, logger: silentLogger };
    const sinkA = new CollectingSink();
    const sinkB = new CollectingSink();
    const a = await startRelay({ ...base, sink: sinkA, relayId: 'a', election: { kube: createKube(server.kubeConfig()), lock: lock('a') } });
    await eventually(() => assert.ok(a.isLeader()));
    const b = await startRelay({ ...base, sink: sinkB, relayId: 'b', election: { kube: createKube(server.kubeConfig()), lock: lock('b') } });
    try {
      await eventually(async () => {
        await a.flush();
        assert.ok(sinkA.subjects().includes('RESYNC EphemeralJob/default/j'));
      });
      server.store.put(pod('web-2', { app: 'web' }));
      await eventually(async () => {
        await a.flush();
        assert.ok(sinkA.subjects().includes('ADDED Pod/default/web-2'));
      });
      await b.flush();
      assert.equal(b.isLeader(), false);
      assert.deepEqual(sinkB.got, [], 'a follower forwards nothing');
      const lists = server.requests.filter((r) => r.verb === 'list').length;
      await a.stop(); // releases the Lease
      await eventually(async () => {
        await b.flush();
        assert.ok(b.isLeader());
        assert.ok(sinkB.subjects().includes('RESYNC EphemeralJob/default/j'), 'the new leader looks at every job once (whose reconcile reads its pods)');
      }, 10_000);
      assert.equal(server.requests.filter((r) => r.verb === 'list').length, lists, 'from its watch cache, not a new list');
    } finally {
      await b.stop();
      await server.close();
    }
  });
});

describe('a relay that lost the lead', () => {
  test('stops bringing back the keys its handlers requeue; the new leader has them (review)', async () => {
    const server = await startApiServer({ objects: [job('j', { app: 'web' }), pod('web-1', { app: 'web' })] });
    const handled: boolean[] = [];
    const box: { a?: Relay } = {};
    // A running job's handler asks to look again soon, as the reconciler does while pods run.
    const sink = memorySink(async (e) => {
      if (e.data.kind !== 'EphemeralJob') return { requeueAfterSeconds: null };
      handled.push(box.a?.isLeader() ?? false);
      return { requeueAfterSeconds: 0.05 };
    }, (e, ms) => box.a?.requeue(e, ms));
    const a = await startRelay({ kubeConfig: server.kubeConfig(), sink, namespaces: [], relayId: 'a', coalesceMs: 10, resyncSeconds: 3600, bufferMax: 100, logger: silentLogger,
      election: { kube: createKube(server.kubeConfig()), lock: { namespace: 'ephemera-system', holder: 'a', leaseSeconds: 3, skewSeconds: 1 } } });
    box.a = a;
    try {
      await eventually(() => assert.ok(a.isLeader() && handled.length > 2));
      // Another replica holds the Lease now (a's renewals were too slow).
      const lease = server.store.list({ kind: 'Lease', namespace: 'ephemera-system' })[0] as unknown as { spec: Record<string, unknown> };
      server.store.put({ ...lease, spec: { ...lease.spec, holderIdentity: 'b', renewTime: new Date(Date.now() + 3_600_000).toISOString(), leaseDurationSeconds: 3600 } } as never);
      await eventually(() => assert.equal(a.isLeader(), false), 8000);
      await new Promise((r) => setTimeout(r, 500));
      const settled = handled.length;
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(handled.length, settled, 'still handling requeued keys after it lost the lead');
    } finally {
      await a.stop();
      await server.close();
    }
  });
});

describe('a relay that lost the lead replays nothing', () => {
  test('what it had still to replay after an overflow is dropped, and no overflow replay follows (review)', async () => {
    const server = await startApiServer({ objects: Array.from({ length: 9 }, (_, i) => job(`j-${i}`, { app: 'web' })) });
    const sink = new CollectingSink();
    sink.failing = true;
    const a = await startRelay({ kubeConfig: server.kubeConfig(), sink, namespaces: [], relayId: 'a', coalesceMs: 10, resyncSeconds: 3600, bufferMax: 2, logger: silentLogger, backoff: { minMs: 20, maxMs: 100 },
      election: { kube: createKube(server.kubeConfig()), lock: { namespace: 'ephemera-system', holder: 'a', leaseSeconds: 3, skewSeconds: 1 } } });
    try {
      await eventually(() => assert.ok(a.isLeader()));
      // The queue of 2 is full of what the sink fails: new pods overflow it.
      for (const name of ['web-new-1', 'web-new-2', 'web-new-3']) server.store.put(pod(name, { app: 'web' }));
      await eventually(async () => assert.ok((await a.metrics.overflowed.get()).values.reduce((n, v) => n + v.value, 0) > 0));
      const lease = server.store.list({ kind: 'Lease', namespace: 'ephemera-system' })[0] as unknown as { spec: Record<string, unknown> };
      server.store.put({ ...lease, spec: { ...lease.spec, holderIdentity: 'b', renewTime: new Date(Date.now() + 3_600_000).toISOString(), leaseDurationSeconds: 3600 } } as never);
      await eventually(() => assert.equal(a.isLeader(), false), 8000);
      sink.failing = false;
      await new Promise((r) => setTimeout(r, 1500));
      await a.flush();
      // At most the two entries it had queued while it led; before, its whole cache (twice).
      assert.ok(sink.subjects().length <= 2, sink.subjects().join(', '));
    } finally {
      await a.stop();
      await server.close();
    }
  });
});

describe('relay leader election does not thrash', () => {
  test('a failed renewal is retried within the lease; only renewals failing for a whole lease step down', async () => {
    const server = await startApiServer({ objects: [job('j', { app: 'web' })] });
    const relay = await startRelay({
      kubeConfig: server.kubeConfig(), sink: new CollectingSink(), namespaces: [], relayId: 'a', coalesceMs: 10, resyncSeconds: 3600, bufferMax: 100, logger: silentLogger, backoff: FAST_BACKOFF,
      election: { kube: createKube(server.kubeConfig()), lock: { namespace: 'ephemera-system', holder: 'a', leaseSeconds: 6, skewSeconds: 1 } },
    });
    try {
      await eventually(() => assert.ok(relay.isLeader()));
      const renewals = () => server.requests.filter((r) => r.verb === 'update' && r.path.includes('/leases/') && r.status === 200).length;
      const blip = server.faults.add({ method: 'PUT', pathIncludes: '/leases/', status: 500, times: 1 });
      let demoted = false;
      const watch = setInterval(() => (demoted ||= !relay.isLeader()), 10);
      const ok = renewals();
      await eventually(() => assert.ok(blip.hits === 1 && renewals() > ok, 'failed once, then renewed'), 10_000);
      clearInterval(watch);
      assert.equal(demoted, false, 'one failed renewal did not demote the leader');

      const outage = server.faults.add({ method: 'PUT', pathIncludes: '/leases/', status: 500, times: Infinity });
      await eventually(() => assert.equal(relay.isLeader(), false), 15_000);
      assert.ok(outage.hits >= 2, `stepped down after ${outage.hits} failed renewals`);
      outage.remove();
    } finally {
      await relay.stop();
      await server.close();
    }
  });
});

describe('a slow renewal', () => {
  test('renewals that each take 40% of the lease keep a steady leader: rounds start a period apart, not a period after the last one ended (review)', { timeout: 20_000 }, async () => {
    const server = await startApiServer({ objects: [] });
    server.faults.add({ method: 'PUT', pathIncludes: '/namespaces/ephemera-system/leases/', delayMs: 1200, times: Infinity, label: 'slow renewals' });
    const changes: boolean[] = [];
    const elector = startElection(createKube(server.kubeConfig()), { namespace: 'ephemera-system', holder: 'a', leaseSeconds: 3, skewSeconds: 1 }, silentLogger, { change: (v) => void changes.push(v) });
    try {
      await eventually(() => assert.ok(elector.isLeader()));
      await new Promise((r) => setTimeout(r, 7000));
      assert.deepEqual(changes, [true], 'led throughout');
      assert.ok(server.requests.filter((r) => r.verb === 'update').length >= 4, 'renewed all along');
    } finally {
      await elector.stop();
      await server.close();
    }
  });

  test('the leader steps down a lease after the last renewal it began, not after its answer came: a successor may take over from the renewTime it wrote (review)', { timeout: 20_000 }, async () => {
    const server = await startApiServer({ objects: [] });
    const elector = startElection(createKube(server.kubeConfig()), { namespace: 'ephemera-system', holder: 'a', leaseSeconds: 3, skewSeconds: 1 }, silentLogger, { change: () => {} });
    try {
      await eventually(() => assert.ok(elector.isLeader()));
      // The next renewal's write takes 2 s; every request after it fails.
      const slow = server.faults.add({ method: 'PUT', pathIncludes: '/namespaces/ephemera-system/leases/', delayMs: 2000, times: 1, label: 'a slow renewal' });
      while (slow.hits === 0) await new Promise((r) => setTimeout(r, 5));
      const sentAt = performance.now();
      server.faults.add({ pathIncludes: '/namespaces/ephemera-system/leases', status: 500, times: Infinity });
      await eventually(() => assert.equal(elector.isLeader(), false), 10_000);
      const ledFor = performance.now() - sentAt;
      // From the answer, it would lead until ~5 s after the write was sent (2 s + a lease).
      assert.ok(ledFor < 4000, `led ${Math.round(ledFor)} ms after its last renewal was sent`);
    } finally {
      await elector.stop();
      await server.close();
    }
  });
});

describe('a follower says whom it follows', () => {
  test('once per holder: a replica that starts while another leads logs that it forwards nothing, and who leads (review75: a recorder with election forced on was silent)', { timeout: 20_000 }, async () => {
    const ref = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'ephemera-system', name: leaseName('relay', 'leader') } as const;
    const lease = (holder: string): unknown => ({ ...ref, metadata: { name: ref.name, namespace: ref.namespace }, spec: { holderIdentity: holder, leaseDurationSeconds: 3600, acquireTime: new Date().toISOString(), renewTime: new Date().toISOString() } });
    const server = await startApiServer({ objects: [lease('prod-relay-1')] });
    const lines: { msg: string; leaderIs?: string }[] = [];
    const logger = { ...silentLogger, info: (o: object, msg: string) => void lines.push({ ...(o as { leaderIs?: string }), msg }), child: () => logger };
    const elector = startElection(createKube(server.kubeConfig()), { namespace: 'ephemera-system', holder: 'laptop', leaseSeconds: 3, skewSeconds: 1 }, logger as unknown as typeof silentLogger, { change: () => {} });
    try {
      await eventually(() => assert.equal(lines.length, 1));
      assert.equal(lines[0]?.leaderIs, 'prod-relay-1');
      assert.match(lines[0]?.msg ?? '', /^following: prod-relay-1 holds the leader Lease ephemera-system\/\S+; this replica forwards nothing until it takes it$/);
      // Rounds go on (every second); the same holder is not said again, a new one is.
      await new Promise((r) => setTimeout(r, 2500));
      assert.equal(lines.length, 1, 'said once');
      server.store.put({ ...(server.store.get(ref) as object), spec: (lease('prod-relay-2') as { spec: unknown }).spec } as never);
      await eventually(() => assert.deepEqual(lines.map((l) => l.leaderIs), ['prod-relay-1', 'prod-relay-2']), 5000);
      assert.equal(elector.isLeader(), false);
    } finally {
      await elector.stop();
      await server.close();
    }
  });
});

describe('a holder\'s renewTime ahead of the API server\'s clock', () => {
  test('a dead holder\'s Lease renewed "an hour ahead" is taken over once it has not changed for lease + skew, as client-go judges it, not an hour later (review95 F5)', { timeout: 20_000 }, async () => {
    const ref = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'ephemera-system', name: leaseName('relay', 'leader') } as const;
    // Written through an API server replica whose clock was an hour ahead; its holder is gone.
    const dead = { ...ref, metadata: { name: ref.name, namespace: ref.namespace }, spec: { holderIdentity: 'relay-old-pod', leaseDurationSeconds: 3, acquireTime: '2026-01-01T01:00:00.000000Z', renewTime: '2026-01-01T01:20:00.000000Z' } };
    const server = await startApiServer({ objects: [dead], clock: () => new Date('2026-01-01T00:20:00Z') });
    const elector = startElection(createKube(server.kubeConfig()), { namespace: 'ephemera-system', holder: 'relay-new-pod', leaseSeconds: 3, skewSeconds: 1 }, silentLogger, { change: () => {} });
    try {
      await eventually(() => assert.ok(elector.isLeader()), 15_000);
      const taken = server.store.get(ref) as unknown as { spec: { holderIdentity: string; renewTime: string } };
      assert.deepEqual([taken.spec.holderIdentity, taken.spec.renewTime.slice(0, 19)], ['relay-new-pod', '2026-01-01T00:20:00'], 'renewed at the server\'s time');
    } finally {
      await elector.stop();
      await server.close();
    }
  });
});

describe('stopping an election', () => {
  test('a follower whose round takes the Lease after stopRenewing does not become leader (no replay while stopping), and stop() gives the Lease back (review)', async () => {
    let expired = false;
    let gate: (() => void) | undefined;
    const calls: string[] = [];
    const renewTime = (): string => new Date(Date.now() - (expired ? 3_600_000 : 0)).toISOString();
    const kube = {
      get: async () => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'x', namespace: 'ns', resourceVersion: '7' }, spec: { holderIdentity: 'b', leaseDurationSeconds: 3, renewTime: renewTime(), acquireTime: renewTime() } }),
      serverNow: () => new Date(),
      list: async () => { throw new Error('not used'); },
      perform: async (a: { verb: string }) => {
        calls.push(a.verb);
        if (a.verb === 'update') await new Promise<void>((r) => (gate = r));
        return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'x', namespace: 'ns', resourceVersion: '8' }, spec: { holderIdentity: 'a' } };
      },
    } as unknown as Parameters<typeof startElection>[0];
    const changes: boolean[] = [];
    const elector = startElection(kube, { namespace: 'ns', holder: 'a', leaseSeconds: 3, skewSeconds: 1 }, silentLogger, { change: (v) => void changes.push(v) });
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(elector.isLeader(), false, 'b holds it');
    expired = true;
    await eventually(() => assert.ok(gate, 'a takeover is in flight'), 3000);
    elector.stopRenewing();
    gate?.();
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(changes, [], 'never led');
    await elector.stop();
    assert.deepEqual(calls, ['update', 'delete'], 'what it took is given back');
  });

  test('stopRenewing while a renewal is in flight keeps what it took: the Lease is released by stop() only, at its newest version (review)', async () => {
    let rv = 1;
    const calls: string[] = [];
    let gate: (() => void) | undefined;
    let slow = false;
    const lease = (): unknown => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'x', namespace: 'ns', resourceVersion: String(rv) }, spec: { holderIdentity: 'a', leaseDurationSeconds: 3, renewTime: new Date().toISOString(), acquireTime: new Date().toISOString() } });
    const deleted: unknown[] = [];
    const kube = {
      get: async () => lease(),
      serverNow: () => new Date(),
      list: async () => { throw new Error('not used'); },
      perform: async (a: { verb: string; preconditions?: unknown; body?: unknown }) => {
        calls.push(a.verb);
        if (a.verb === 'delete') deleted.push(a);
        if (a.verb === 'update' && slow) await new Promise<void>((r) => (gate = r));
        rv++;
        return lease();
      },
    } as unknown as Parameters<typeof startElection>[0];
    const elector = startElection(kube, { namespace: 'ns', holder: 'a', leaseSeconds: 3, skewSeconds: 1 }, silentLogger, { change: () => {} });
    await eventually(() => assert.ok(elector.isLeader()));
    slow = true;
    await eventually(() => assert.ok(gate, 'a renewal is in flight'), 3000);
    elector.stopRenewing();
    gate?.();
    await new Promise((r) => setTimeout(r, 50));
    assert.ok(!calls.includes('delete'), `released before stop(): ${calls.join(', ')}`);
    assert.ok(elector.isLeader(), 'still leads while the relay flushes');
    assert.ok(elector.leadsForMs() > 0);
    const updates = calls.filter((c) => c === 'update').length;
    await elector.stop();
    assert.equal(calls.at(-1), 'delete');
    assert.equal(calls.filter((c) => c === 'update').length, updates, 'no round after stopRenewing');
    assert.match(JSON.stringify(deleted[0]), new RegExp(`"resourceVersion":"${rv - 1}"`), 'the newest version is released');
    assert.equal(elector.isLeader(), false);
  });
});
