// API cost per pod event for the SidecarTerminator, with N = 100 and 1,000 Job pods in the
// namespace (it must not depend on N). Kinds of event, measured through the fake API
// server's request log:
//   snapshot-skip  the relay's snapshot shows the pod is not due: routed away, no request
//   not-due        no snapshot, the live pod is not due: the pod GET only
//   act            due: the CRR is created (reads, Lease, writes, Event)
//   waiting        due, CRR already there: pod, node and CRR reads, nothing written
// plus event-to-actions-applied latency p50/p99 for "act".
import type { Envelope } from '../../functions/api/envelope.ts';
import { Pod } from '../../functions/api/pod.ts';
import { handle } from '../../functions/engine/engine.ts';
import { trimPodForSidecar } from '../../functions/sidecar/predicate.ts';
import { envelopeFor } from '../support/ejob-world.ts';
import { jobPolicy, mainAndSidecar, NoDaemon, NS, sidecarWorld } from '../support/sidecar-world.ts';

type Tally = { events: number; requests: number; reads: number; bytes: number; ms: number[] };
const tally = (): Tally => ({ events: 0, requests: 0, reads: 0, bytes: 0, ms: [] });
const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? 0;
const name = (i: number): string => `job-${String(i).padStart(5, '0')}`;
const SAMPLES = 50;

async function measure(n: number): Promise<Record<string, Tally>> {
  // Nobody executes the CRRs, so "waiting" stays waiting.
  const w = await sidecarWorld(Array.from({ length: n }, (_, i) => mainAndSidecar(name(i))), { kubelet: (server) => new NoDaemon(server, jobPolicy()) });
  const out = { 'snapshot-skip': tally(), 'not-due': tally(), act: tally(), waiting: tally() };
  const run = async (t: Tally, fn: () => Promise<unknown>): Promise<void> => {
    w.server.requests.clear();
    const started = performance.now();
    await fn();
    t.ms.push(performance.now() - started);
    t.events++;
    t.requests += w.server.requests.totals().requests;
    t.reads += w.server.requests.totals((r) => r.method === 'GET').requests;
    t.bytes += w.server.requests.totals((r) => r.method === 'GET').bytes;
  };
  try {
    // Two steps: every pod's main and sidecar are running (not due).
    for (let i = 0; i < 2; i++) {
      w.clock.advance(1);
      w.kubelet.tick();
    }
    for (let i = 0; i < SAMPLES; i++) {
      const pod = Pod.parse(w.pod(name(i)));
      const snap = withSnapshot(envelopeFor('Pod', NS, name(i)), trimPodForSidecar(pod));
      await run(out['snapshot-skip'], () => handle(snap, w.deps()));
      await run(out['not-due'], () => handle(envelopeFor('Pod', NS, name(i)), w.deps()));
    }
    w.clock.advance(1);
    w.kubelet.tick(); // every main exits 0: every pod is due
    for (let i = 0; i < SAMPLES; i++) await run(out.act, () => handle(envelopeFor('Pod', NS, name(i)), w.deps()));
    for (let i = 0; i < SAMPLES; i++) await run(out.waiting, () => handle(envelopeFor('Pod', NS, name(i)), w.deps()));
    return out;
  } finally {
    await w.close();
  }
}

function withSnapshot(e: Envelope, snapshot: unknown): Envelope {
  return { ...e, data: { ...e.data, snapshot: snapshot as Record<string, unknown> } };
}

const rows: string[] = [];
for (const n of [100, 1000]) {
  const r = await measure(n);
  for (const [kind, t] of Object.entries(r)) {
    rows.push(`N=${String(n).padStart(5)}  ${kind.padEnd(14)} ${(t.requests / t.events).toFixed(1).padStart(5)} req/event  ${(t.reads / t.events).toFixed(1).padStart(4)} reads  ${(t.bytes / t.events / 1024).toFixed(1).padStart(5)} KB read  p50 ${pct(t.ms, 50).toFixed(1)} ms  p99 ${pct(t.ms, 99).toFixed(1)} ms`);
  }
}
process.stdout.write(`sidecar terminator: API cost per pod event (${SAMPLES} events of each kind)\n${rows.join('\n')}\n`);
