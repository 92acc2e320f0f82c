// API cost per pod event for the SidecarTerminator, with N = 100 and 1,000 Job pods in the
// namespace (it must not depend on N). Every event is built as production builds it: the
// relay trims the pod (relay/trim.ts) and its filter and envelope (relay/envelope.ts)
// decide whether anything is sent, with the trimmed snapshot inside, so routing reads no
// more than it does in production. Counted at the fake API server's request log:
//   not-due       main still running: the relay forwards nothing (0 messages, 0 requests)
//   act           due: the CRR is created (reads, writes, Event)
//   waiting       due, the CRR already there: reads only, nothing written
//   no-snapshot   due, CRR there, envelope without its snapshot (the SQS > 1 MiB fallback)
import type { Envelope } from '../../functions/api/envelope.ts';
import { Pod } from '../../functions/api/pod.ts';
import { handle } from '../../functions/engine/engine.ts';
import { podEnvelope, withoutSnapshot } from '../../relay/envelope.ts';
import { trimPod } from '../../relay/trim.ts';
import { jobPolicy, mainAndSidecar, NoDaemon, NS, sidecarWorld, type SidecarWorld } from '../support/sidecar-world.ts';
import { figure } from './report.ts';

type Tally = { events: number; messages: number; requests: number; reads: number; nodeGets: number; leases: number; writes: number; bytes: number };
const tally = (): Tally => ({ events: 0, messages: 0, requests: 0, reads: 0, nodeGets: 0, leases: 0, writes: 0, bytes: 0 });
const name = (i: number): string => `job-${String(i).padStart(5, '0')}`;
const SAMPLES = 50;
const KINDS = ['not-due', 'act', 'waiting', 'no-snapshot'] as const;
type Kind = (typeof KINDS)[number];

/** The envelope the relay would send for the pod as it is now (no EphemeralJobs in the namespace), or null when it sends none. */
function relayEnvelope(w: SidecarWorld, pod: string): Envelope | null {
  const routed = podEnvelope('MODIFIED', trimPod(Pod.parse(w.pod(pod))), [], { relayId: 'bench', now: new Date() });
  return 'envelope' in routed ? routed.envelope : null;
}

async function count(w: SidecarWorld, t: Tally, envelope: Envelope | null): Promise<void> {
  w.server.requests.clear();
  t.events++;
  if (!envelope) return;
  t.messages++;
  await handle(envelope, w.deps());
  const log = w.server.requests;
  t.requests += log.totals().requests;
  t.reads += log.totals((r) => r.method === 'GET').requests;
  t.bytes += log.totals((r) => r.method === 'GET').bytes;
  t.nodeGets += log.totals((r) => r.method === 'GET' && r.path.startsWith('/api/v1/nodes/')).requests;
  t.leases += log.totals((r) => r.path.includes('/leases')).requests;
  t.writes += log.totals((r) => r.method !== 'GET').requests;
}

async function measure(n: number): Promise<Record<Kind, Tally>> {
  // Nobody executes the CRRs, so "waiting" stays waiting.
  const w = await sidecarWorld(Array.from({ length: n }, (_, i) => mainAndSidecar(name(i))), { kubelet: (server) => new NoDaemon(server, jobPolicy({ mainExit: () => 'run' })) });
  const out = Object.fromEntries(KINDS.map((k) => [k, tally()])) as Record<Kind, Tally>;
  try {
    for (let i = 0; i < 2; i++) {
      w.clock.advance(1);
      w.kubelet.tick(); // main and sidecar running: not due
    }
    for (let i = 0; i < SAMPLES; i++) await count(w, out['not-due'], relayEnvelope(w, name(i)));
    for (let i = 0; i < SAMPLES; i++) finishMain(w, name(i));
    for (let i = 0; i < SAMPLES; i++) await count(w, out.act, relayEnvelope(w, name(i)));
    for (let i = 0; i < SAMPLES; i++) await count(w, out.waiting, relayEnvelope(w, name(i)));
    for (let i = 0; i < SAMPLES; i++) {
      const e = relayEnvelope(w, name(i));
      await count(w, out['no-snapshot'], e && withoutSnapshot(e));
    }
    return out;
  } finally {
    await w.close();
  }
}

/** The main container exits 0 (the pod becomes due); written as the kubelet would, through the store. */
function finishMain(w: SidecarWorld, pod: string): void {
  const p = w.server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: NS, name: pod }) as unknown as { status: { containerStatuses: { name: string; state: Record<string, unknown> }[] } };
  const main = p.status.containerStatuses.find((s) => s.name === 'main')!;
  main.state = { terminated: { exitCode: 0, reason: 'Completed', startedAt: '2026-01-01T00:00:00Z', finishedAt: '2026-01-01T00:00:05Z' } };
  w.server.store.put(p);
}

const per = (t: Tally, k: keyof Tally): number => (t.events ? t[k] / t.events : 0);
const WHERE = 'counted at the fake API server (request log) per pod event, 50 events, envelopes built by the relay (trimPod + podEnvelope, snapshot included)';
const results = new Map<number, Record<Kind, Tally>>();
for (const n of [100, 1000]) results.set(n, await measure(n));
for (const [n, r] of results) {
  figure({ name: `sidecar not-due: messages/event, N=${n}`, value: per(r['not-due'], 'messages'), unit: 'messages', what: `relay envelopes sent for a Job pod whose main still runs (relay filter on the trimmed pod); ${WHERE}`, goal: { op: '<=', bound: 0, source: 'issue 5: forward only pods that may be due' } });
  figure({ name: `sidecar act: requests/event, N=${n}`, value: per(r.act, 'requests'), unit: 'requests', what: `all requests (reads + CRR create + Event) for a due pod; ${WHERE}` });
  figure({ name: `sidecar act: node GETs/event, N=${n}`, value: per(r.act, 'nodeGets'), unit: 'requests', what: `GETs of /api/v1/nodes/* for a due pod; ${WHERE}`, goal: { op: '<=', bound: 1, source: 'issue 3: at most one node GET, only for a due pod' } });
  figure({ name: `sidecar act: Lease requests/event, N=${n}`, value: per(r.act, 'leases'), unit: 'requests', what: `requests to /leases for a due pod (the terminator's writes are fenced, no lock); ${WHERE}`, goal: { op: '<=', bound: 0, source: 'issue 3 review: no Lease' } });
  figure({ name: `sidecar waiting: reads/event, N=${n}`, value: per(r.waiting, 'reads'), unit: 'requests', what: `GETs for a due pod whose CRR exists (pod, node, CRR), writes: ${per(r.waiting, 'writes')}; ${WHERE}` });
  figure({ name: `sidecar waiting: bytes read/event, N=${n}`, value: Math.round(per(r.waiting, 'bytes')), unit: 'bytes', what: `response bytes of those GETs; ${WHERE}` });
  figure({ name: `sidecar no-snapshot: reads/event, N=${n}`, value: per(r['no-snapshot'], 'reads'), unit: 'requests', what: `GETs for the same event sent without its snapshot (the SQS > 1 MiB fallback); ${WHERE}` });
}
const small = results.get(100)!;
const big = results.get(1000)!;
figure({
  name: 'sidecar waiting: bytes read/event, N=1000 over N=100', value: per(big.waiting, 'bytes') / per(small.waiting, 'bytes'), unit: 'ratio',
  what: 'response bytes per due-pod event with 1,000 Job pods in the namespace divided by the same with 100 (1.0: independent of N)',
});
