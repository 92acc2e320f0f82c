import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The relay's Prometheus metrics, on a registry of its own (no module-level state). */
export function createMetrics(): {
  registry: Registry;
  seen: Counter<'kind' | 'type'>;
  forwarded: Counter<'kind'>;
  filtered: Counter<'kind' | 'reason'>;
  coalesced: Counter;
  sendSeconds: Histogram;
  bufferDepth: Gauge;
  watchRestarts: Counter<'kind'>;
  leader: Gauge;
} {
  const registry = new Registry();
  const c = { registers: [registry] };
  return {
    registry,
    seen: new Counter({ name: 'ephemera_relay_events_seen_total', help: 'Watch and list events seen', labelNames: ['kind', 'type'] as const, ...c }),
    forwarded: new Counter({ name: 'ephemera_relay_events_forwarded_total', help: 'Envelopes handed to the sink', labelNames: ['kind'] as const, ...c }),
    filtered: new Counter({ name: 'ephemera_relay_events_filtered_total', help: 'Events not forwarded, by reason', labelNames: ['kind', 'reason'] as const, ...c }),
    coalesced: new Counter({ name: 'ephemera_relay_events_coalesced_total', help: 'Events merged into a pending one for the same key', ...c }),
    sendSeconds: new Histogram({ name: 'ephemera_relay_send_duration_seconds', help: 'Time to send one batch to the sink', buckets: [0.001, 0.005, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], ...c }),
    bufferDepth: new Gauge({ name: 'ephemera_relay_buffer_depth', help: 'Keys waiting for the sink to recover', ...c }),
    watchRestarts: new Counter({ name: 'ephemera_relay_watch_restarts_total', help: 'Watches restarted after 410 Gone or an error', labelNames: ['kind'] as const, ...c }),
    leader: new Gauge({ name: 'ephemera_relay_leader', help: '1 while this replica forwards', ...c }),
  };
}
export type RelayMetrics = ReturnType<typeof createMetrics>;
