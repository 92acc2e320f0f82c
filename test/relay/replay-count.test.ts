// The delivery queue counts the entries a replay queued (`replayQueued`, which bounds a
// replay to half the queue) instead of scanning its maps on every fill. The count must be
// the number of replay-flagged slots at every step, whatever happens: live adds (also while
// a batch is in flight), holds, requeues, replays, a sink that fails entries, for good or not,
// or is down; and back to 0 once drained (a leak would keep replays waiting for good, a
// double decrement would let them overfill). Random histories, seeded; from a reviewer's
// property test of 1eef2c4.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { silentLogger } from '../../functions/engine/logger.ts';
import { DeliveryQueue } from '../../relay/delivery-queue.ts';
import { messageFor, type Queued } from '../../relay/envelope.ts';
import type { SendOutcome } from '../../relay/sinks/sink.ts';

/** What the property reads of the queue's private state. */
interface Inside {
  pending: Map<string, { replay?: boolean }>;
  retrying: Map<string, { replay?: boolean }>;
  held: Map<string, { replay?: boolean }>;
  inFlight: Map<string, { replay?: boolean }>;
  backfills: unknown[];
  replayQueued: number;
  replayRoom: number;
}

/** mulberry32: a small seeded generator, so a failing seed replays. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function counted(q: DeliveryQueue, where: string): void {
  const s = q as unknown as Inside;
  let flagged = 0;
  for (const m of [s.pending, s.retrying, s.held, s.inFlight]) for (const slot of m.values()) if (slot.replay) flagged++;
  for (const slot of s.held.values()) assert.ok(!slot.replay, `${where}: a held slot is a live one`);
  assert.equal(s.replayQueued, flagged, `${where}: replayQueued ${s.replayQueued}, flagged slots ${flagged}`);
  assert.ok(s.replayQueued >= 0 && s.replayQueued <= s.replayRoom, `${where}: replayQueued ${s.replayQueued} outside [0, ${s.replayRoom}]`);
}

async function history(seed: number): Promise<void> {
  const r = rng(seed);
  let now = 1_000;
  let mode: 'random' | 'ok' | 'down' = 'random';
  const item = (): Queued => ({ kind: 'Pod', event: 'MODIFIED', namespace: 'ns', name: `k${Math.floor(r() * 12)}`, uid: [undefined, 'a', 'b'][Math.floor(r() * 3)], at: now });
  const q: DeliveryQueue = new DeliveryQueue({
    capacity: 1 + Math.floor(r() * 12), windowMs: Math.floor(r() * 3), batchMax: 1 + Math.floor(r() * 4), logger: silentLogger, now: () => now,
    backoff: { minMs: 10, maxMs: 80, random: () => 1 },
    build: (x) => messageFor(x, { relayId: 't' }, undefined),
    hooks: { resyncNeeded: () => Array.from({ length: Math.floor(r() * 8) }, item).values() },
    sink: { name: 'random', send: async (messages): Promise<SendOutcome[]> => {
      counted(q, `seed ${seed}, in a send`);
      // Live events while the batch is in flight (newer states of keys being sent).
      while (mode === 'random' && r() < 0.5) q.add(item(), r() < 0.3 ? 20 : 0);
      await Promise.resolve();
      if (mode === 'down' || (mode === 'random' && r() < 0.1)) throw new Error('down');
      return messages.map((): SendOutcome => {
        if (mode === 'ok') return { ok: true };
        const x = r();
        return x < 0.55 ? { ok: true } : x < 0.9 ? { ok: false, error: 'throttled' } : { ok: false, error: 'refused', permanent: true };
      });
    } },
  });
  try {
    for (let step = 0; step < 400; step++) {
      const x = r();
      if (step === 250) mode = 'ok';
      if (x < 0.35) q.add(item(), r() < 0.3 ? Math.floor(r() * 40) : 0);
      else if (x < 0.45) q.requeue(item());
      else if (x < 0.52) q.backfill(Array.from({ length: Math.floor(r() * 10) }, item).values());
      else if (x < 0.7) now += Math.floor(r() * 50);
      else if (x < 0.8) await new Promise((res) => setTimeout(res, 1));
      else if (x < 0.83 && step < 250) mode = r() < 0.5 ? 'down' : 'random';
      else await q.flush();
      counted(q, `seed ${seed}, step ${step}`);
    }
    mode = 'ok';
    const inside = q as unknown as Inside;
    for (let i = 0; i < 200 && (q.depth > 0 || inside.backfills.length > 0); i++) {
      now += 100;
      await q.flush();
      await new Promise((res) => setTimeout(res, 1));
      counted(q, `seed ${seed}, draining`);
    }
    assert.deepEqual({ depth: q.depth, replays: inside.backfills.length, replayQueued: inside.replayQueued }, { depth: 0, replays: 0, replayQueued: 0 }, `seed ${seed}: drained`);
  } finally {
    await q.stop();
  }
}

test('the count of a replay\'s entries in the queue is always the flagged slots, and 0 once drained (random histories)', { timeout: 60_000 }, async () => {
  for (let seed = 1; seed <= Number(process.env.EPHEMERA_REPLAY_COUNT_SEEDS ?? 100); seed++) await history(seed);
});
