import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Read at scrape time: the delivery queue's real backlog. */
export interface QueueProbe {
  depth(): number;
  oldestAgeSeconds(): number;
}

/** Counts per two label values, as plain numbers. */
type Tally = Map<string, Map<string, number>>;

function bump(t: Tally, a: string, b: string): void {
  let inner = t.get(a);
  if (inner === undefined) t.set(a, (inner = new Map()));
  inner.set(b, (inner.get(b) ?? 0) + 1);
}

/** Hand what was counted since the last read to the counter. */
function flush<L extends string>(t: Tally, counter: Counter<L>, names: [L, L]): void {
  for (const [a, inner] of t) {
    for (const [b, n] of inner) {
      if (n === 0) continue;
      counter.inc({ [names[0]]: a, [names[1]]: b } as Partial<Record<L, string>>, n);
      inner.set(b, 0);
    }
  }
}

/** The relay's Prometheus metrics, on a registry of its own (no module-level state). */
export function createMetrics(opts: { process?: boolean } = {}): {
  registry: Registry;
  seen: Counter<'kind' | 'type'>;
  /**
   * Count one event seen / filtered: plain numbers, added to `seen` / `filtered` when they
   * are read. Counter.inc with labels builds a hash string per call, which on every watch
   * event was a measurable share of the relay's CPU and garbage.
   */
  countSeen(kind: string, type: string): void;
  countFiltered(kind: string, reason: string): void;
  forwarded: Counter<'kind'>;
  filtered: Counter<'kind' | 'reason'>;
  coalesced: Counter;
  sendFailures: Counter;
  rejected: Counter;
  overflowed: Counter;
  unreadable: Counter<'kind'>;
  sendSeconds: Histogram;
  bufferDepth: Gauge;
  oldestUndelivered: Gauge;
  watchRestarts: Counter<'kind'>;
  listFailures: Counter<'kind'>;
  leader: Gauge;
  leaderTransitions: Counter;
  leaderElectionFailures: Counter;
  absent: Gauge<'kind'>;
  leaseSweeps: Counter;
  /** Point the backlog gauges at the queue (they are computed when scraped). */
  observeQueue(probe: QueueProbe): void;
} {
  const registry = new Registry();
  // With `process` (the one relay a CLI process runs): the process's own metrics (CPU,
  // memory, event-loop lag, handles), the first signs of a relay short of its CPU request or
  // near its memory limit (operability review). Not for every relay: prom-client's GC
  // observer is never removed, and kept each registry, and its relay, for the life of a
  // process that starts many (tests, the bench; final read).
  if (opts.process === true) collectDefaultMetrics({ register: registry });
  const c = { registers: [registry] };
  let probe: QueueProbe | undefined;
  const seen: Tally = new Map();
  const filtered: Tally = new Map();
  const metrics = {
    registry,
    seen: new Counter({ name: 'ephemera_relay_events_seen_total', help: 'Watch and list events seen', labelNames: ['kind', 'type'] as const, ...c, collect() {
      flush(seen, this, ['kind', 'type']);
    } }),
    countSeen: (kind: string, type: string) => bump(seen, kind, type),
    countFiltered: (kind: string, reason: string) => bump(filtered, kind, reason),
    forwarded: new Counter({ name: 'ephemera_relay_events_forwarded_total', help: 'Envelopes the sink acknowledged', labelNames: ['kind'] as const, ...c }),
    filtered: new Counter({ name: 'ephemera_relay_events_filtered_total', help: 'Events not forwarded, by reason', labelNames: ['kind', 'reason'] as const, ...c, collect() {
      flush(filtered, this, ['kind', 'reason']);
    } }),
    coalesced: new Counter({ name: 'ephemera_relay_events_coalesced_total', help: 'Events that replaced a queued one for the same key', ...c }),
    sendFailures: new Counter({ name: 'ephemera_relay_send_failures_total', help: 'Envelopes the sink failed to take (retried)', ...c }),
    rejected: new Counter({ name: 'ephemera_relay_events_rejected_total', help: 'Envelopes the sink refused for good (dropped, logged)', ...c }),
    overflowed: new Counter({ name: 'ephemera_relay_queue_overflows_total', help: 'New keys not queued because the queue was full (a resync follows)', ...c }),
    unreadable: new Counter({ name: 'ephemera_relay_objects_unreadable_total', help: 'Listed or watched objects that could not be parsed (logged with their key)', labelNames: ['kind'] as const, ...c }),
    sendSeconds: new Histogram({ name: 'ephemera_relay_send_duration_seconds', help: 'Time to send one batch to the sink', buckets: [0.001, 0.005, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], ...c }),
    bufferDepth: new Gauge({ name: 'ephemera_relay_buffer_depth', help: 'Keys queued or being sent to the sink', ...c, collect() {
      this.set(probe?.depth() ?? 0);
    } }),
    oldestUndelivered: new Gauge({ name: 'ephemera_relay_oldest_undelivered_seconds', help: 'Age of the oldest event not yet acknowledged by the sink', ...c, collect() {
      this.set(probe?.oldestAgeSeconds() ?? 0);
    } }),
    listFailures: new Counter({ name: 'ephemera_relay_list_failures_total', help: 'LIST requests (a whole list or one of its pages) that failed and are retried with backoff (a 403 or 404 that says the resource is absent excepted: see ephemera_relay_resource_absent); while it grows the relay sees no change of that kind', labelNames: ['kind'] as const, ...c }),
    watchRestarts: new Counter({ name: 'ephemera_relay_watch_restarts_total', help: 'Watches restarted after 410 Gone, an error (an ERROR event too) or a close with no event or bookmark; and lists after silent watches that found changes the watches never brought', labelNames: ['kind'] as const, ...c }),
    leader: new Gauge({ name: 'ephemera_relay_leader', help: '1 while this replica forwards', ...c }),
    leaderElectionFailures: new Counter({ name: 'ephemera_relay_leader_election_failures_total', help: 'Leader election rounds that failed with an error (not: the Lease is held by another replica); while they fail for a minute, /readyz says why', ...c }),
    leaderTransitions: new Counter({ name: 'ephemera_relay_leader_transitions_total', help: 'Times this replica became leader or stopped being it (flapping shows here, not in the gauge between scrapes; each gain replays the cache)', ...c }),
    absent: new Gauge({ name: 'ephemera_relay_resource_absent', help: '1 while a kind\'s list answers 404/403 (no CRD or no list right): its controller is idle', labelNames: ['kind'] as const, ...c }),
    leaseSweeps: new Counter({ name: 'ephemera_relay_lease_sweeps_total', help: 'EphemeralJob keys sent because a claims Lease names a job the watch cache does not have (the functions then delete the Lease)', ...c }),
    observeQueue(p: QueueProbe) {
      probe = p;
    },
  };
  // Every series of a known kind from the start, at 0 (Prometheus' advice): a rate() over a
  // series born at its first increment misses that increment, and an alert on a rate of 0
  // gets no data instead of firing (operability review).
  for (const kind of ['Pod', 'EphemeralJob']) {
    for (const counter of [metrics.forwarded, metrics.unreadable, metrics.watchRestarts, metrics.listFailures]) counter.inc({ kind }, 0);
    metrics.absent.set({ kind }, 0);
  }
  return metrics;
}
export type RelayMetrics = ReturnType<typeof createMetrics>;
