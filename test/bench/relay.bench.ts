// Relay figures, all from ONE relay process run as production runs it (relay/Dockerfile:
// the esbuild bundle with the relay's Node flags, `relay --sink record:PATH`), watching the
// fake API server (this process) with 10,000 pods and 100 EphemeralJobs. Counted: memory
// and CPU time in /proc/<relay pid>; queue messages as lines the record sink appended
// (one line = one message the queue would get); events as the relay's own seen counter.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer, type ApiServer } from '../../functions/cluster/index.ts';
import { buildBundle, RELAY_NODE_FLAGS } from '../../relay/build.ts';
import { job } from '../support/relay-world.ts';
import { figure } from './report.ts';

const PODS = 10_000;
const JOBS = 100;
const DUE = 50; // pods whose sidecar termination is due (the resync must send these)
const PORT = 18089;
const SOURCE = 'issue 11';
const POD = { apiVersion: 'v1', kind: 'Pod' } as const;

type Obj = { metadata: Record<string, unknown> & { name: string; namespace: string; labels: Record<string, string> }; status: { containerStatuses: Record<string, unknown>[] } & Record<string, unknown> };

function realisticPod(i: number): Record<string, unknown> {
  const due = i < DUE;
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: `app-${i}`, namespace: `ns-${i % 20}`, labels: { app: `app-${i % JOBS}`, tier: 'web', 'pod-template-hash': 'abc123' }, annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-01-01T00:00:00Z', note: 'x'.repeat(200) }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u', controller: true }] },
    spec: {
      nodeName: `node-${i % 50}`, serviceAccountName: 'default', restartPolicy: due ? 'Never' : 'Always',
      containers: [
        { name: 'app', image: 'registry.example.com/app:1.2.3', args: ['--port=8080', '--verbose'], env: Array.from({ length: 12 }, (_, k) => ({ name: `VAR_${k}`, value: `value-${k}` })), resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } }, ports: [{ containerPort: 8080 }], volumeMounts: [{ name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }] },
        { name: 'log-shipper', image: 'fluent/fluent-bit:3', env: [{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: due || i % 10 === 0 ? 'true' : 'false' }] },
      ],
      volumes: [{ name: 'kube-api-access', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3607 } }] } }],
    },
    status: {
      phase: 'Running', podIP: '10.0.0.1', hostIP: '192.168.0.1', conditions: [{ type: 'Ready', status: 'True' }, { type: 'PodScheduled', status: 'True' }],
      containerStatuses: [
        { name: 'app', ready: !due, restartCount: 0, image: 'registry.example.com/app:1.2.3', imageID: 'sha256:'.padEnd(71, 'a'), containerID: 'containerd://'.padEnd(77, 'b'), state: due ? { terminated: { exitCode: 0, reason: 'Completed' } } : { running: { startedAt: '2026-01-01T00:00:00Z' } } },
        { name: 'log-shipper', ready: true, restartCount: 0, state: { running: {} } },
      ],
    },
  };
}

/** Memory (KiB) and CPU time (ms: user + system, and system alone) of a process, from /proc. */
function proc(pid: number): { rssKb: number; hwmKb: number; cpuMs: number; sysMs: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
  // Fields after the command name: utime and stime are the 12th and 13th, in clock ticks (100/s).
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return { rssKb: kb('VmRSS'), hwmKb: kb('VmHWM'), cpuMs: (Number(stat[11]) + Number(stat[12])) * 10, sysMs: Number(stat[12]) * 10 };
}

/** The sum of one relay metric, from its /metrics. */
async function metric(name: string): Promise<number> {
  // A poll after a quiet spell can race the server's keep-alive close ("other side closed"): once more.
  const scrape = (): Promise<string> => fetch(`http://127.0.0.1:${PORT}/metrics`).then((r) => r.text());
  const text = await scrape().catch(scrape);
  return text.split('\n').filter((l) => l.startsWith(name)).reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Wait until `f` gives the same value twice in a row 500 ms apart (the relay has settled). */
async function settled(f: () => number | Promise<number>, atLeast = 0): Promise<number> {
  let last = -1;
  for (let i = 0; i < 600; i++) {
    const v = await f();
    if (v === last && v >= atLeast) return v;
    last = v;
    await sleep(500);
  }
  return last;
}

interface Run {
  server: ApiServer;
  child: ChildProcess;
  pid: number;
  out: string;
  logs: string[];
  lines(): { event: string; subject: string }[];
}

async function start(dir: string): Promise<Run> {
  const objects: unknown[] = [];
  for (let i = 0; i < PODS; i++) objects.push(realisticPod(i));
  for (let j = 0; j < JOBS; j++) objects.push({ ...job(`job-${j}`, { app: `app-${j}` }), metadata: { name: `job-${j}`, namespace: `ns-${j % 20}` } });
  const server = await startApiServer({ objects, bookmarkIntervalMs: 5000 });
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, server.kubeconfigYaml());
  const bundle = join(dir, 'ephemera.mjs');
  await buildBundle(bundle);
  const out = join(dir, 'out.jsonl');
  writeFileSync(out, '');
  const child = spawn(process.execPath, [...RELAY_NODE_FLAGS, ...(process.env.RELAY_BENCH_EXTRA ?? '').split(/\s+/).filter(Boolean), bundle, 'relay', '--sink', `record:${out}`], {
    env: { ...process.env, KUBECONFIG: kubeconfig, EPHEMERA_RELAY_LISTEN: `127.0.0.1:${PORT}`, EPHEMERA_RELAY_LEADER_ELECTION: 'false', EPHEMERA_RELAY_RESYNC_SECONDS: '20', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // A relay that exits before the bench stops it (a bad flag in RELAY_BENCH_EXTRA) fails the
  // bench at once: its phases would otherwise wait minutes for messages that never come.
  child.once('exit', (code, signal) => {
    if (!child.killed) throw new Error(`the relay exited before the bench stopped it (code ${code}, signal ${signal}); see its stderr above`);
  });
  const logs: string[] = [];
  child.stdout?.on('data', (b: Buffer) => logs.push(...b.toString('utf8').split('\n').filter(Boolean)));
  const lines = (): { event: string; subject: string }[] => readFileSync(out, 'utf8').split('\n').filter(Boolean).map((l) => {
    const e = JSON.parse(l) as { subject: string; data: { event: string } };
    return { event: e.data.event, subject: e.subject };
  });
  return { server, child, pid: child.pid ?? 0, out, logs, lines };
}

/** Apply `change` to pods app-<from>..app-<to-1>, `rounds` times each. */
function change(server: ApiServer, [from, to]: [number, number], rounds: number, edit: (p: Obj, round: number) => Obj): number {
  let n = 0;
  for (let r = 0; r < rounds; r++) {
    for (let i = from; i < to; i++) {
      const p = server.store.get({ ...POD, namespace: `ns-${i % 20}`, name: `app-${i}` }) as unknown as Obj;
      server.store.put(edit(p, r));
      n++;
    }
  }
  return n;
}

// Irrelevant: an annotation, the restart count, and a label no job selects on.
const irrelevant = (p: Obj, r: number): Obj => ({ ...p, metadata: { ...p.metadata, labels: { ...p.metadata.labels, tier: `web-${r}` }, annotations: { touched: String(r) } }, status: { ...p.status, containerStatuses: p.status.containerStatuses.map((s) => ({ ...s, restartCount: r + 1 })) } });
// Relevant: the app label moves the pod to the next job of its namespace (job j selects
// app-j and lives in ns-(j % 20)), so the jobs selecting it change every time.
const relevant = (p: Obj): Obj => ({ ...p, metadata: { ...p.metadata, labels: { ...p.metadata.labels, app: `app-${(Number(p.metadata.labels.app?.slice(4)) + 20) % JOBS}` } } });

/** Irrelevant changes (annotation + restartCount): right after the list, and right after a forced re-list. */
async function irrelevantPhase(run: Run, about: (from: number, to: number) => () => number): Promise<void> {
  const touched = about(DUE, DUE + 1000);
  const before = touched();
  let n = change(run.server, [DUE, DUE + 1000], 1, irrelevant);
  await settled(() => metric('ephemera_relay_events_seen_total'));
  const lists = run.server.requests.filter((r) => r.verb === 'list').length;
  run.server.compact();
  run.server.faults.resetWatches();
  for (let i = 0; i < 200 && run.server.requests.filter((r) => r.verb === 'list').length === lists; i++) await sleep(100);
  await settled(() => run.server.faults.openWatches);
  n += change(run.server, [DUE, DUE + 1000], 1, (p) => irrelevant(p, 7));
  await settled(() => metric('ephemera_relay_events_seen_total'));
  await sleep(1500);
  figure({ name: 'queue messages per irrelevant pod change', value: (touched() - before) / n, unit: 'messages/change', what: `record lines about those pods appended for ${n} annotation + restartCount + unselected-label changes: 1,000 pods right after the initial list, the same 1,000 right after a forced re-list (410)`, goal: { op: '<=', bound: 0, source: SOURCE } });
}

/** Relevant changes (a label), `rounds` in a row per pod; messages counted per change. */
async function relevantPhase(run: Run, counted: () => number, range: [number, number], rounds: number): Promise<void> {
  const before = counted();
  const n = change(run.server, [range[0], range[1]], rounds, relevant);
  await sleep(1500);
  await settled(counted);
  const name = rounds === 1 ? 'queue messages per relevant pod change, alone' : `queue messages per relevant pod change, bursts of ${rounds}`;
  const what = rounds === 1 ? `record lines about those pods for ${n} label changes that move the pod to another job, one per pod` : `record lines about those pods for ${n} label changes that move the pod to another job, ${rounds} in a row per pod (coalescing window 1 s)`;
  figure({ name, value: (counted() - before) / n, unit: 'messages/change', what, goal: { op: '<=', bound: rounds === 1 ? 1 : 0.3, source: SOURCE } });
}

/** End to end: decode → trim → fingerprint → filter → envelope → queue → sink, CPU of the relay only. */
async function throughputPhase(run: Run): Promise<void> {
  const seen0 = await metric('ephemera_relay_events_seen_total');
  const filtered0 = await metric('ephemera_relay_events_filtered_total');
  const ticks0 = run.logs.filter((l) => l.includes('periodic resync')).length;
  const wall0 = performance.now();
  const { cpuMs: cpu0, sysMs: sys0 } = proc(run.pid);
  const n = change(run.server, [0, PODS], 3, relevant);
  await settled(() => metric('ephemera_relay_events_seen_total'), seen0 + n);
  await settled(() => run.lines().length);
  const after = proc(run.pid);
  const cpu = (after.cpuMs - cpu0) / 1000;
  const sys = (after.sysMs - sys0) / 1000;
  const seen = (await metric('ephemera_relay_events_seen_total')) - seen0;
  const filtered = (await metric('ephemera_relay_events_filtered_total')) - filtered0;
  const ticks = run.logs.filter((l) => l.includes('periodic resync')).length - ticks0;
  const wall = (performance.now() - wall0) / 1000;
  figure({ name: 'relay events per CPU-second, end to end', value: Math.round(seen / cpu), unit: 'events/CPU-s', what: `${seen} watch events (label changes moving all ${PODS} pods to another job, 3 rounds; ${filtered} of them not forwarded) over ${cpu.toFixed(2)} s of relay CPU (user+system from /proc, ${sys.toFixed(2)} s of it system, includes the 500 ms /metrics polls and ${ticks} periodic resync(s) over ${wall.toFixed(1)} s wall), to the record sink`, goal: { op: '>=', bound: 20_000, source: SOURCE } });
}

/** One periodic resync (every 20 s here): RESYNC lines recorded after the initial list, per tick. */
async function resyncPhase(run: Run, initial: number): Promise<void> {
  const ticks = (): number => run.logs.filter((l) => l.includes('periodic resync')).length;
  const resyncs = (): number => run.lines().slice(initial).filter((l) => l.event === 'RESYNC').length;
  const ticks0 = ticks();
  const resync0 = resyncs();
  for (let i = 0; i < 300 && ticks() === ticks0; i++) await sleep(100);
  await sleep(2000);
  const sent = resyncs() - resync0;
  figure({ name: 'envelopes per periodic resync per unfinished job or due pod', value: sent / (JOBS + DUE), unit: 'envelopes/object', what: `RESYNC lines recorded in one periodic resync (${sent}) over ${JOBS} unfinished jobs + ${DUE} due pods, of ${PODS} pods watched; LIST requests during it: 0 by construction (replayed from the cache)`, goal: { op: '<=', bound: 1, source: SOURCE } });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'relay-bench-'));
  const run = await start(dir);
  // Lines about pods app-<from>..app-<to-1> (periodic resyncs touch only jobs and pods below DUE).
  const about = (from: number, to: number) => (): number => run.lines().filter((l) => {
    const i = Number(/^Pod\/[^/]+\/app-(\d+)$/.exec(l.subject)?.[1] ?? -1);
    return i >= from && i < to;
  }).length;
  const only = process.env.RELAY_BENCH_ONLY; // e.g. "e2e" while profiling
  try {
    for (let i = 0; i < 600 && !(await fetch(`http://127.0.0.1:${PORT}/readyz`).then((r) => r.ok, () => false)); i++) await sleep(100);
    // The first list sends each unfinished job and each pod whose sidecars are due, once —
    // not every pod a job selects (each of those was one more reconcile of its job).
    const initial = await settled(() => run.lines().length, JOBS + DUE);
    figure({ name: 'queue messages at a relay start', value: initial, unit: 'messages', what: `record lines once ${PODS} pods + ${JOBS} jobs (every pod selected by one) were listed: ${run.lines().filter((l) => l.subject.startsWith('EphemeralJob/')).length} about jobs, ${run.lines().filter((l) => l.subject.startsWith('Pod/')).length} about pods (${DUE} have due sidecars)`, goal: { op: '<=', bound: JOBS + DUE, source: 'issue 10 (a relay start is O(jobs), not O(pods))' } });
    const afterList = proc(run.pid);
    figure({ name: 'relay peak RSS through the initial list', value: afterList.hwmKb / 1024, unit: 'MiB', what: `VmHWM of the relay process (bundle, ${RELAY_NODE_FLAGS.join(' ')}) once ${PODS} pods + ${JOBS} jobs were listed and ${initial} envelopes recorded (RSS then ${(afterList.rssKb / 1024).toFixed(1)} MiB)`, goal: { op: '<=', bound: 150, source: SOURCE } });
    if (!only) {
      await irrelevantPhase(run, about);
      await relevantPhase(run, about(2000, 2500), [2000, 2500], 1);
      await relevantPhase(run, about(3000, 3500), [3000, 3500], 10);
    }
    // The resync waits for a tick (every 20 s); the throughput phase follows it at once, so
    // no periodic resync falls inside its CPU window.
    if (!only) await resyncPhase(run, initial);
    await throughputPhase(run);
    const end = proc(run.pid);
    figure({ name: 'relay peak RSS, whole run', value: end.hwmKb / 1024, unit: 'MiB', what: `VmHWM of the relay process after the list, a forced re-list, ${PODS * 3 + 7500} changes and a resync (RSS now ${(end.rssKb / 1024).toFixed(1)} MiB)`, goal: { op: '<=', bound: 150, source: SOURCE } });
  } finally {
    run.child.kill('SIGTERM');
    await new Promise((r) => run.child.once('exit', r));
    await run.server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
