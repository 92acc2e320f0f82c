// API cost per pod event for an EphemeralJob over N pods (issue: "a pod event must not
// cost a LIST of every pod of the job"). For N = 100 and 1,000 matched pods it runs a job
// with parallelism 2, plays the kubelet, and measures through the fake API server's
// request log: the requests and bytes read per pod event, split into events that change
// nothing (a matched pod's unrelated update), events that move a pod on without freeing a
// slot, and events that free a slot (the next pod is injected), plus the full reconcile.
import { handle } from '../../functions/engine/engine.ts';
import { envelopeFor, finish, inFlight, world } from '../support/ejob-world.ts';

function podsAndJob(n: number): unknown[] {
  const objects: unknown[] = [];
  for (let i = 0; i < n; i++) {
    objects.push({
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name: `app-${String(i).padStart(5, '0')}`, namespace: 'default', labels: { app: 'web', tier: 'frontend' }, creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString() },
      spec: { nodeName: 'node-1', containers: [{ name: 'app', image: 'nginx:1.27', env: [{ name: 'MODE', value: 'prod' }], resources: { requests: { cpu: '100m', memory: '128Mi' } } }] },
      status: { phase: 'Running', podIP: '10.0.0.1', containerStatuses: [{ name: 'app', ready: true, restartCount: 0, image: 'nginx:1.27', state: { running: { startedAt: '2026-01-01T00:00:00Z' } } }] },
    });
  }
  objects.push({
    apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob',
    metadata: { name: 'probe', namespace: 'default', generation: 1, creationTimestamp: '2026-01-01T01:00:00Z' },
    spec: { selector: { matchLabels: { app: 'web' } }, parallelism: 2, template: { ephemeralContainers: [{ name: 'probe', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'app', command: ['true'] }] } },
  });
  return objects;
}

type Tally = { events: number; requests: number; bytes: number; lists: number; ms: number[] };
const tally = (): Tally => ({ events: 0, requests: 0, bytes: 0, lists: 0, ms: [] });
const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? 0;

async function measure(n: number): Promise<Record<string, Tally>> {
  const { server, deps } = await world(podsAndJob(n), () => new Date('2026-01-01T01:01:00Z'));
  const out = { full: tally(), noop: tally(), progress: tally(), slotFree: tally() };
  const reads = (r: { method: string }) => r.method === 'GET';
  const run = async (t: Tally, fn: () => Promise<unknown>): Promise<void> => {
    server.requests.clear();
    const started = performance.now();
    await fn();
    t.ms.push(performance.now() - started);
    const all = server.requests.totals(reads);
    t.events++;
    t.requests += server.requests.totals().requests;
    t.bytes += all.bytes;
    t.lists += server.requests.filter((r) => r.method === 'GET' && /\/pods$/.test(r.path)).length;
  };
  try {
    await run(out.full, () => handle(envelopeFor('EphemeralJob', 'default', 'probe', 'ADDED'), deps()));
    for (let round = 0; round < 20; round++) {
      const other = `app-${String(n - 1 - round).padStart(5, '0')}`; // a matched pod, not in flight
      await run(out.noop, () => handle(envelopeFor('Pod', 'default', other), deps()));
      const [a, b] = inFlight(server);
      if (!a || !b) break;
      setRunning(server, a);
      await run(out.progress, () => handle(envelopeFor('Pod', 'default', a), deps()));
      finish(server, a, 0);
      await run(out.slotFree, () => handle(envelopeFor('Pod', 'default', a), deps()));
    }
    return out;
  } finally {
    await server.close();
  }
}

function setRunning(server: Awaited<ReturnType<typeof world>>['server'], name: string): void {
  const pod = server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name }) as unknown as { status: Record<string, unknown> };
  pod.status.ephemeralContainerStatuses = [{ name: 'probe', state: { running: { startedAt: '2026-01-01T01:00:30Z' } } }];
  server.store.put(pod);
}

const rows: string[] = [];
for (const n of [100, 1000]) {
  const r = await measure(n);
  for (const [kind, t] of Object.entries(r)) {
    rows.push(`N=${String(n).padEnd(5)} ${kind.padEnd(9)} events=${String(t.events).padEnd(3)} requests/event=${(t.requests / t.events).toFixed(1).padEnd(5)} bytes read/event=${Math.round(t.bytes / t.events).toString().padEnd(8)} pod LISTs/event=${(t.lists / t.events).toFixed(2)}  event→actions applied p50=${pct(t.ms, 50).toFixed(1)}ms p99=${pct(t.ms, 99).toFixed(1)}ms`);
  }
}
process.stdout.write(`EphemeralJob API cost per event (parallelism 2; requests include the Lease lock and writes; latency is handle() over loopback HTTP to the in-process API server)\n${rows.join('\n')}\n`);
