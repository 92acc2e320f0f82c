// Relay figures: (1) resident memory of a relay process watching 10,000 pods and 100 jobs
// (goal < 150 MiB); (2) events per second through the relay's per-event path on one core;
// (3) queue messages per pod status change, alone and in bursts (goal ≤ 1, well under in bursts).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '../../functions/api/pod.ts';
import { silentLogger } from '../../functions/engine/logger.ts';
import { startApiServer } from '../../functions/cluster/index.ts';
import { buildBundle, RELAY_NODE_FLAGS } from '../../relay/build.ts';
import { Coalescer } from '../../relay/coalesce.ts';
import { makeEnvelope } from '../../relay/envelope.ts';
import { filterPod } from '../../relay/filter.ts';
import { startRelay } from '../../relay/relay.ts';
import { podFingerprint, trimPod, type JobView } from '../../relay/trim.ts';
import { CollectingSink, job } from '../support/relay-world.ts';

function realisticPod(i: number, ns: string): Record<string, unknown> {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: `app-${i}`, namespace: ns, labels: { app: `app-${i % 100}`, tier: 'web', 'pod-template-hash': 'abc123' }, annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-01-01T00:00:00Z', note: 'x'.repeat(200) }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u', controller: true }] },
    spec: {
      nodeName: `node-${i % 50}`, serviceAccountName: 'default',
      containers: [
        { name: 'app', image: 'registry.example.com/app:1.2.3', args: ['--port=8080', '--verbose'], env: Array.from({ length: 12 }, (_, k) => ({ name: `VAR_${k}`, value: `value-${k}` })), resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } }, ports: [{ containerPort: 8080 }], volumeMounts: [{ name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }] },
        { name: 'log-shipper', image: 'fluent/fluent-bit:3', env: [{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: i % 10 === 0 ? 'true' : 'false' }] },
      ],
      volumes: [{ name: 'kube-api-access', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3607 } }] } }],
    },
    status: { phase: 'Running', podIP: '10.0.0.1', hostIP: '192.168.0.1', conditions: [{ type: 'Ready', status: 'True' }, { type: 'PodScheduled', status: 'True' }], containerStatuses: [{ name: 'app', ready: true, restartCount: 0, image: 'registry.example.com/app:1.2.3', imageID: 'sha256:'.padEnd(71, 'a'), containerID: 'containerd://'.padEnd(77, 'b'), state: { running: { startedAt: '2026-01-01T00:00:00Z' } } }, { name: 'log-shipper', ready: true, restartCount: 0, state: { running: {} } }] },
  };
}

async function memory(): Promise<string> {
  const objects: unknown[] = [];
  for (let i = 0; i < 10_000; i++) objects.push(realisticPod(i, `ns-${i % 20}`));
  for (let j = 0; j < 100; j++) objects.push({ ...job(`job-${j}`, { app: `app-${j}` }), metadata: { name: `job-${j}`, namespace: `ns-${j % 20}` } });
  const server = await startApiServer({ objects });
  const dir = mkdtempSync(join(tmpdir(), 'relay-bench-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, server.kubeconfigYaml());
  // As production runs it (relay/Dockerfile): the bundle, with the relay's Node flags.
  const bundle = join(dir, 'ephemera.mjs');
  await buildBundle(bundle);
  const child = spawn(process.execPath, [...RELAY_NODE_FLAGS, bundle, 'relay', '--sink', `record:${join(dir, 'out.jsonl')}`], {
    env: { ...process.env, KUBECONFIG: kubeconfig, EPHEMERA_RELAY_LISTEN: '127.0.0.1:18089', EPHEMERA_RELAY_LEADER_ELECTION: 'false', LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  });
  try {
    for (let i = 0; i < 600; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const ok = await fetch('http://127.0.0.1:18089/readyz').then((r) => r.ok, () => false);
      if (ok) break;
    }
    await new Promise((r) => setTimeout(r, 2000));
    const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
    const lines = readFileSync(join(dir, 'out.jsonl'), 'utf8').split('\n').length - 1;
    return `relay process RSS (bundle, ${RELAY_NODE_FLAGS.join(' ')}) with 10,000 pods + 100 jobs watched: ${(Number(rss) / 1024).toFixed(1)} MiB (goal < 150 MiB); initial list forwarded ${lines} envelopes`;
  } finally {
    child.kill('SIGTERM');
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function throughput(): string {
  const pods = Array.from({ length: 1000 }, (_, i) => realisticPod(i, 'ns') as unknown as Pod);
  const jobs: JobView[] = Array.from({ length: 100 }, (_, j) => ({ namespace: 'ns', name: `job-${j}`, selector: { matchLabels: { app: `app-${j}` } }, finished: false }));
  let sent = 0;
  const coalescer = new Coalescer({ windowMs: 1_000_000, maxPending: 100_000, flush: (b) => (sent += b.length) });
  const n = 200_000;
  const start = performance.now();
  let forwarded = 0;
  for (let i = 0; i < n; i++) {
    const raw = pods[i % pods.length] as Pod;
    const pod = trimPod(raw);
    podFingerprint(pod);
    const v = filterPod(pod, jobs);
    if (v.forward) {
      coalescer.add(makeEnvelope({ kind: 'Pod', event: 'MODIFIED', object: pod, relayId: 'b', now: new Date() }));
      forwarded++;
    }
  }
  const secs = (performance.now() - start) / 1000;
  coalescer.stop();
  return `per-event path (trim + fingerprint + filter + envelope + coalesce), one core: ${Math.round(n / secs).toLocaleString('en')} events/s (${forwarded} forwarded of ${n}${sent ? `, ${sent} flushed` : ''})`;
}

async function messagesPerChange(burst: number): Promise<string> {
  const objects: unknown[] = [job('j', { app: 'web' })];
  for (let i = 0; i < 100; i++) objects.push({ ...realisticPod(i, 'default'), metadata: { name: `web-${i}`, namespace: 'default', labels: { app: 'web' } } });
  const server = await startApiServer({ objects });
  const sink = new CollectingSink();
  const relay = await startRelay({ kubeConfig: server.kubeConfig(), sink, namespaces: [], relayId: 'b', coalesceMs: 1000, resyncSeconds: 3600, bufferMax: 10_000, logger: silentLogger });
  try {
    await relay.flush();
    sink.clear();
    let changes = 0;
    for (let round = 0; round < burst; round++) {
      for (let i = 0; i < 100; i++) {
        const p = server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: `web-${i}` }) as unknown as { status: { containerStatuses: { restartCount: number }[] } };
        p.status.containerStatuses[0] = { ...p.status.containerStatuses[0], restartCount: round + 1 } as { restartCount: number };
        server.store.put(p);
        changes++;
      }
    }
    await new Promise((r) => setTimeout(r, 1500));
    await relay.flush();
    return `queue messages per pod status change, bursts of ${burst} per pod: ${(sink.got.length / changes).toFixed(3)} (${sink.got.length} messages for ${changes} changes)`;
  } finally {
    await relay.stop();
    await server.close();
  }
}

process.stdout.write(`${throughput()}\n`);
process.stdout.write(`${await messagesPerChange(1)}\n`);
process.stdout.write(`${await messagesPerChange(10)}\n`);
process.stdout.write(`${await memory()}\n`);
