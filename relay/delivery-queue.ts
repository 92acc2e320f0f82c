// The relay's only queue: between the watch and the sink, keyed by object, with a fixed
// capacity. It merges three jobs that used to be separate (and unbounded):
// - coalescing: a key's first event opens its window; later ones replace it (latest wins).
//   An object is its key and its uid: a pod deleted and created again under its name is two
//   objects, and the old one's last event (its DELETED, naming the jobs that cared about it)
//   is never replaced by the new one's, which would name other jobs (data.jobs concerns the
//   envelope's own pod). The two go in separate batches, the old one first unless it is
//   backing off;
// - outage buffering: what the sink could not take stays as the latest state per key;
// - workqueue semantics (client-go): a key is queued once however often it is added, and a
//   key being sent is never sent again in parallel (its newer state waits its turn); a
//   requeue (requeue()) adds nothing for an object that already waits. A sink takes one send
//   at a time, or as many as its `concurrency` (the memory sink: one key each), so there a
//   slow key holds one worker while the others take the keys that come due (review80 M1:
//   one slow handling held every other key for the whole handling timeout);
// - holding: a change that only starts ephemeral containers (pod-event.ts startsOnly: an
//   injection's echo, a container's start) may wait up to `holdMs` for the next change of
//   its key, which ends the hold at once (a short container's exit goes as one event with
//   everything before it); unreplaced, it is sent when the hold ends. Held keys wait apart
//   from `pending`, so a hold never delays another key;
// - per-key backoff (client-go's ItemExponentialFailureRateLimiter): a failed key waits
//   its own exponential delay, so one failing key never slows the others. The whole queue
//   backs off only when a batch with a key that had not failed before failed entirely
//   (the sink, not a key, is down); a batch of keys already backing off says nothing new.
//   A sink with several sends under way (the memory sink) fails keys only, never itself.
// Memory is bounded by `capacity` entries whatever happens to the sink; past it, new keys
// are not queued but a resync is requested once the sink takes envelopes again, so the need
// to reconcile is replayed from the watch cache, never silently lost. Replays are pulled
// lazily, only as fast as the queue has room (a replay bigger than the queue still ends),
// and a replay's entries take half of it at most: the rest stays for live events (fill()).
// What waits is a small record per key (relay/envelope.ts's Queued); the envelope a sink
// gets is built from it only when it is sent.
import type { Logger } from '../functions/engine/logger.ts';
import { jitteredBackoffMs } from './backoff.ts';
import { queuedKey, type Message, type Queued } from './envelope.ts';
import type { ReplayScope } from './replay.ts';
import type { SendOutcome, Sink } from './sinks/sink.ts';

/** What the queue reports as it works (metrics). */
export interface DeliveryHooks {
  /** Envelopes the sink acknowledged, per kind, and how long the send took. */
  delivered?(kind: string, count: number): void;
  sent?(seconds: number): void;
  /** Entries the sink failed (will be retried). */
  failed?(count: number): void;
  /** Entries the sink refused for good (logged, not retried). */
  rejected?(count: number): void;
  /** An event replaced a queued one for the same object. */
  coalesced?(): void;
  /** A new key found the queue full. */
  overflowed?(): void;
  /** The queue overflowed and the sink works again: what to replay (pulled as room allows). */
  resyncNeeded(): Iterator<Queued>;
}

export interface DeliveryQueueOptions {
  sink: Sink;
  /** Most keys queued or in flight at once. */
  capacity: number;
  /** Coalescing window per key (ms). */
  windowMs: number;
  /** Most envelopes handed to the sink in one call. */
  batchMax?: number;
  logger: Logger;
  hooks: DeliveryHooks;
  backoff?: { minMs: number; maxMs: number; random?: () => number };
  /** Milliseconds clock (tests; default: monotonic). */
  now?: () => number;
  /**
   * The message for a queued event, built just before it is sent. The relay adds a live
   * pod's snapshot from its watch cache here, so 10,000 queued keys cost small records, not
   * 10,000 envelopes with copies of trimmed pods. `sameId`: the id of the failed try of
   * this very state, for its message to keep (see Slot.sentId).
   */
  build(q: Queued, sameId?: string): Message;
}

interface Slot {
  item: Queued;
  /** When the oldest undelivered state of this key was queued (for the age metric and health). */
  queuedAt: number;
  /** Order of creation: of two objects of one key (a pod and its same-name replacement), the earlier goes first (takeDue). */
  seq: number;
  due: number;
  /** Failed sends of this key in a row (its own backoff); forgotten once it is delivered. */
  failures: number;
  /** When its hold ended, for a key that was held: it waits for the sink only from then (stalledMs). */
  releasedAt?: number;
  /** Queued by a replay (fill()): counted in `replayQueued` until it leaves the queue. */
  replay?: boolean;
  /**
   * The message id of a try of this state the sink did not acknowledge: the retry keeps it,
   * so a FIFO queue that did take the first try (its answer lost to a timeout) drops the
   * second as a duplicate (review: each try had a new MessageDeduplicationId). A newer state
   * of the key gets a new id.
   */
  sentId?: string;
}

/** Failures in a row after which a replayed entry leaves the replay's share even while the sink takes nothing. */
const REPLAY_FAILURES_KEPT = 5;

/** A bounded, keyed, coalescing queue in front of a sink. */
export class DeliveryQueue {
  private readonly pending = new Map<string, Slot>();
  private seq = 0;
  /** Live slots per object key and uid, and the keys with more than one uid (count). */
  private readonly perObject = new Map<string, Map<string, number>>();
  /** The object keys with slots of more than one uid (a pod and its same-name replacement). */
  private readonly multiObject = new Set<string>();
  /** Failed keys waiting out their own backoff (kept apart: `pending` stays in due order). */
  private readonly retrying = new Map<string, Slot>();
  private retryingDue = Infinity;
  /** Keys whose only queued change may wait for a newer one (holding), apart like `retrying`. */
  private readonly held = new Map<string, Slot>();
  private heldDue = Infinity;
  private inFlight = new Map<string, Slot>();
  /** Sends under way (at most `concurrency`). */
  private readonly sending = new Set<Promise<void>>();
  private readonly concurrency: number;
  private overflowed = false;
  /** Replays waiting to be pulled into the queue, oldest first. */
  /** Replays: the first is being pulled in; at most one waits behind it (backfill()). */
  private readonly backfills: { items: Iterator<Queued>; scope: ReplayScope }[] = [];
  private failures = 0;
  private retryAt = 0;
  private lastAckAt: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private stopped = false;
  private readonly opts: DeliveryQueueOptions;
  private readonly now: () => number;
  /** Replays take this many entries of the queue at most (half of it; see fill()). */
  private readonly replayRoom: number;
  /** Entries a replay queued that are still in the queue (pending, in flight or backing off). */
  private replayQueued = 0;

  constructor(opts: DeliveryQueueOptions) {
    this.opts = opts;
    // A monotonic clock: these times are only compared with each other, and a wall clock
    // stepped back (NTP, a VM restored) stopped delivery for as long as the step (time review).
    this.now = opts.now ?? (() => performance.now());
    this.replayRoom = Math.max(1, Math.floor(opts.capacity / 2));
    this.concurrency = Math.max(1, opts.sink.concurrency ?? 1);
  }

  /** Keys queued or being sent: the real backlog. */
  get depth(): number {
    return this.pending.size + this.inFlight.size + this.retrying.size + this.held.size;
  }

  /**
   * Queue the latest state of a key; false when the queue was full (a resync will follow).
   * `holdMs` > 0: this change may wait that long for a newer one of its key (see the header);
   * a change without it ends the key's hold (sent within the coalescing window).
   */
  add(item: Queued, holdMs = 0): boolean {
    const key = slotKey(item);
    const held = this.held.get(key);
    if (held) {
      latest(held.item, item);
      this.opts.hooks.coalesced?.();
      if (holdMs === 0) this.unhold(key, held, this.now() + this.opts.windowMs);
      return true;
    }
    // A key backing off keeps its delay (a failing key must not be retried by every event).
    const slot = this.pending.get(key) ?? this.retrying.get(key);
    if (slot) {
      latest(slot.item, item);
      slot.sentId = undefined;
      this.opts.hooks.coalesced?.();
      return true;
    }
    if (this.depth >= this.opts.capacity) {
      if (!this.overflowed) this.opts.logger.warn({ capacity: this.opts.capacity }, 'delivery queue full: new keys wait for a resync once the sink drains it');
      this.overflowed = true;
      this.opts.hooks.overflowed?.();
      return false;
    }
    const now = this.now();
    if (holdMs > 0) {
      const due = now + Math.max(holdMs, this.opts.windowMs);
      this.held.set(key, { item, queuedAt: now, due, failures: 0, seq: this.seq++ });
      this.count(item, 1);
      this.heldDue = Math.min(this.heldDue, due);
    } else {
      this.pending.set(key, { item, queuedAt: now, due: now + this.opts.windowMs, failures: 0, seq: this.seq++ });
      this.count(item, 1);
    }
    this.wakeBy(now + this.opts.windowMs);
    return true;
  }

  /**
   * Queue a key a handler asked to look at again (`item`: its state now): nothing when its
   * object already waits (queued, held or backing off), which will be sent anyway and is as
   * new; a requeue is not a change, so it never replaces a queued state nor ends a hold.
   */
  requeue(item: Queued): boolean {
    const key = slotKey(item);
    if (this.pending.has(key) || this.held.has(key) || this.retrying.has(key)) return true;
    // A full queue: false, and no overflow. The caller knows the key and asks again later;
    // an overflow would replay the whole cache for it, and with a queue of 1 or 2 the keys a
    // handler requeues kept replays going for good (review).
    if (this.depth >= this.opts.capacity) return false;
    return this.add(item);
  }

  /** A held key joins `pending` (at its end), due at `due`. */
  private unhold(key: string, slot: Slot, due: number): void {
    this.held.delete(key);
    slot.due = due;
    slot.releasedAt = this.now();
    this.pending.set(key, slot);
    this.wakeBy(due);
  }

  /** Make sure the timer fires by `at`: one set for a later key (backing off, held) is moved. */
  private wakeBy(at: number): void {
    if (this.timer && this.timerAt > at) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.schedule();
  }

  /** Drop the replays not yet sent (the relay lost the lead: the new leader replays its own). */
  dropReplays(): void {
    this.backfills.length = 0;
  }

  /**
   * Queue a replay; its events are pulled in as the queue has room. One replay waits behind
   * the one being pulled in, at most: a newer one takes its place unless it is narrower
   * ('due' behind a waiting 'all', which sends everything 'due' would). A replay reads the
   * cache as it goes, so the one left is as new. Without this, a sink down for hours left
   * one replay per periodic resync waiting (review).
   */
  backfill(items: Iterator<Queued>, scope: ReplayScope = 'all'): void {
    const waiting = this.backfills.length > 1 ? this.backfills.at(-1) : undefined;
    if (!waiting) this.backfills.push({ items, scope });
    else if (!(waiting.scope === 'all' && scope === 'due')) this.backfills[this.backfills.length - 1] = { items, scope };
    this.kick();
  }

  /** Seconds since the oldest undelivered state was queued (0 when nothing waits). */
  oldestAgeSeconds(): number {
    // A key held on purpose (an injection's echo waiting for the pod's next change) is not
    // undelivered: it counts from the end of its hold, as stalledMs does (review: the gauge
    // read 15–20 s during every injection, so an alert on it paged for nothing).
    let oldest = Infinity;
    for (const slots of [this.pending, this.inFlight, this.retrying]) for (const s of slots.values()) oldest = Math.min(oldest, Math.max(s.queuedAt, s.releasedAt ?? -Infinity));
    return oldest === Infinity ? 0 : Math.max(0, this.now() - oldest) / 1000;
  }

  /**
   * How long the sink has taken nothing while something waited for it (ms; 0 when nothing
   * waits): from the later of the oldest entry waiting and the last acknowledgement. A held
   * key waits on purpose, not for the sink: it counts only from the end of its hold.
   */
  stalledMs(): number {
    let oldest = Infinity;
    for (const slots of [this.pending, this.inFlight, this.retrying]) for (const s of slots.values()) oldest = Math.min(oldest, Math.max(s.queuedAt, s.releasedAt ?? -Infinity));
    if (oldest === Infinity) return 0;
    return Math.max(0, this.now() - Math.max(oldest, this.lastAckAt ?? -Infinity));
  }

  /** Make every queued key due now and wait until what can be sent was tried (tests, shutdown). */
  async flush(): Promise<void> {
    const now = this.now();
    for (const s of this.pending.values()) s.due = Math.min(s.due, now);
    for (const [key, s] of this.held) this.unhold(key, s, now);
    this.kick();
    while (this.sending.size > 0) await Promise.all(this.sending);
  }

  /** Stop sending (no send starts after this) and wait for the sends under way; queued entries are dropped with the process. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await Promise.all(this.sending);
  }

  /** Start sends of what is due, up to the sink's concurrency; each goes on while keys are due. */
  private kick(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.sending.size < this.concurrency) {
      const batch = this.takeNext();
      if (batch.length === 0) break;
      const send: Promise<void> = this.work(batch).finally(() => {
        this.sending.delete(send);
        // A timer another worker left may be set for later than what this send's end makes
        // due (its key's newer state, its retry): set anew (review83 M1: 250 ms became 5 s).
        clearTimeout(this.timer);
        this.timer = undefined;
        this.schedule();
      });
      this.sending.add(send);
    }
    this.schedule();
  }

  /** The next batch, or none while stopped or while the sink backs off. */
  private takeNext(): Slot[] {
    return this.stopped || this.now() < this.retryAt ? [] : this.takeDue();
  }

  /** Send `first`, then further due batches, one at a time, until nothing is due or the sink is backing off. */
  private async work(first: Slot[]): Promise<void> {
    for (let batch = first; batch.length > 0; batch = this.takeNext()) {
      const started = performance.now();
      let outcomes: SendOutcome[];
      try {
        // Built here and not kept: only the sink holds the messages while it sends.
        outcomes = await this.opts.sink.send(batch.map((s) => this.message(s)));
      } catch (err) {
        outcomes = batch.map(() => ({ ok: false, error: (err as Error).message ?? String(err) }));
      }
      this.opts.hooks.sent?.((performance.now() - started) / 1000);
      this.settle(batch, outcomes);
    }
  }

  private message(s: Slot): Message {
    const m = this.opts.build(s.item, s.sentId);
    s.sentId = m.id;
    return m;
  }

  private takeDue(): Slot[] {
    this.fill();
    const now = this.now();
    this.releaseRetries(now);
    this.releaseHeld(now);
    const batch: Slot[] = [];
    const keys = new Set<string>();
    const max = this.opts.batchMax ?? this.opts.sink.batchMax ?? 100;
    const waits = this.waiting();
    // Insertion order is (nearly) due order: stop at the first key still inside its window,
    // and at a second object of a key in the batch (a pod and its same-name replacement):
    // it goes in the next batch, once this one is settled, so a key is never sent twice at once.
    // Of two objects of one key the earlier goes first, and the later waits while the earlier
    // is sent, retried or held (review64 R2: the replacement's ADDED went before the retry of
    // the old pod's DELETED). A key another send has under way waits for it (waiting()).
    for (const [key, s] of this.pending) {
      const objectKey = queuedKey(s.item);
      if (waits(s, objectKey)) continue;
      if (batch.length >= max || s.due > now || keys.has(objectKey)) break;
      keys.add(objectKey);
      this.pending.delete(key);
      this.inFlight.set(key, s);
      batch.push(s);
    }
    return batch;
  }

  /**
   * Whether a pending slot must wait for another of its key: one being sent (by another of
   * the sink's workers), or an earlier object of its key anywhere in the queue (firstOfKeys).
   * With one send at a time and one object per key, as nearly always, none waits.
   */
  private waiting(): (s: Slot, objectKey: string) => boolean {
    const first = this.firstOfKeys();
    const busy = this.inFlight.size > 0 ? new Set(Array.from(this.inFlight.values(), (s) => queuedKey(s.item))) : undefined;
    if (first === undefined && busy === undefined) return () => false;
    return (s, objectKey) => busy?.has(objectKey) === true || (first !== undefined && (first.get(objectKey) ?? s) !== s);
  }

  /** When the first pending slot that need not wait for another of its key is due (Infinity: none). */
  private pendingDue(): number {
    const waits = this.waiting();
    for (const s of this.pending.values()) if (!waits(s, queuedKey(s.item))) return s.due;
    return Infinity;
  }

  /**
   * For each key with more than one object queued (a pod and its same-name replacement, each
   * its own slot), the earliest slot; undefined when there is none, as nearly always.
   */
  private firstOfKeys(): Map<string, Slot> | undefined {
    if (this.multiObject.size === 0) return undefined;
    // Only those keys' slots are looked up (by slot key), not the whole queue: with the memory
    // sink's one-key sends this ran per send, and one such key made draining 10,000 keys
    // quadratic, 9.6 s (review83 L1).
    const first = new Map<string, Slot>();
    for (const objectKey of this.multiObject) {
      for (const uid of this.perObject.get(objectKey)?.keys() ?? []) {
        const key = uid === '' ? objectKey : `${objectKey} ${uid}`;
        for (const slots of [this.pending, this.inFlight, this.retrying, this.held]) {
          const s = slots.get(key);
          const earlier = first.get(objectKey);
          if (s !== undefined && (earlier === undefined || s.seq < earlier.seq)) first.set(objectKey, s);
        }
      }
    }
    return first;
  }

  /**
   * Pull replayed envelopes while the queue has room and the replay's entries in it are
   * fewer than half of it; they are due at once. A replay allowed the whole queue kept it
   * full while it ran when the cache is bigger than the queue: every live event of a new key
   * overflowed, and each overflow asked for another whole replay, over and over while live
   * traffic lasted. With half for the replay, a live event overflows only when live entries
   * fill the rest (the sink really is behind), and the replay that follows is needed: it
   * reads the overflowed key's latest state from the watch cache. Counting the replay's own
   * entries (not the depth) means live keys held or backing off never keep a replay waiting
   * while the queue has room (review found that with the depth as the bound).
   */
  private fill(): void {
    const now = this.now();
    while (this.backfills.length > 0 && this.replayHasRoom()) {
      const next = this.backfills[0]?.items.next();
      if (!next || next.done) {
        this.backfills.shift();
        // An overflow while it ran asks for the next replay now: waiting for an ack could wait
        // for good in a quiet cluster once this replay's last entries are acknowledged (review).
        this.maybeResync();
        continue;
      }
      const key = slotKey(next.value);
      const held = this.held.get(key);
      // A replay is due at once: it ends a hold.
      if (held) {
        latest(held.item, next.value);
        this.unhold(key, held, now);
        continue;
      }
      const slot = this.pending.get(key) ?? this.retrying.get(key);
      if (slot) {
        latest(slot.item, next.value);
        // What the cache holds now may be newer than the try that failed (review).
        slot.sentId = undefined;
      } else {
        this.pending.set(key, { item: next.value, queuedAt: now, due: now, failures: 0, replay: true, seq: this.seq++ });
        this.count(next.value, 1);
        this.replayQueued++;
      }
    }
  }

  /** A replay may queue another entry: the queue has room, and the replay's entries take less than half of it. */
  private replayHasRoom(): boolean {
    return this.depth < this.opts.capacity && this.replayQueued < this.replayRoom;
  }

  /** A slot left the queue (delivered or dropped for good). */
  private gone(slot: Slot): void {
    if (slot.replay) this.replayQueued--;
    this.count(slot.item, -1);
  }

  /** @internal How many object keys have live slots (tests: none once everything is delivered). */
  get objectsTracked(): number {
    return this.perObject.size;
  }

  /**
   * Slots per object key and uid (`delta` for one made or gone), and how many keys have slots
   * of more than one uid (a pod and its same-name replacement): takeDue orders those only
   * while there are any. Two slots of one uid (one in flight, its newer state queued) are one
   * object: they never go together anyway.
   */
  private count(item: Queued, delta: number): void {
    const key = queuedKey(item);
    const uid = item.uid ?? '';
    let uids = this.perObject.get(key);
    if (uids === undefined) this.perObject.set(key, (uids = new Map()));
    const objectsBefore = uids.size;
    const n = (uids.get(uid) ?? 0) + delta;
    if (n <= 0) uids.delete(uid);
    else uids.set(uid, n);
    if (objectsBefore < 2 && uids.size >= 2) this.multiObject.add(key);
    if (objectsBefore >= 2 && uids.size < 2) this.multiObject.delete(key);
    if (uids.size === 0) this.perObject.delete(key);
  }

  /** Failed keys whose backoff is over go back to the end of `pending`, due now. */
  private releaseRetries(now: number): void {
    if (now >= this.retryingDue) this.retryingDue = this.release(this.retrying, now);
  }

  /** Held keys whose hold is over go to the end of `pending`, due now. */
  private releaseHeld(now: number): void {
    if (now >= this.heldDue) this.heldDue = this.release(this.held, now, (s) => (s.releasedAt = now));
  }

  /** Move the slots of `from` that are due by `now` to the end of `pending` (due now); the earliest due left. */
  private release(from: Map<string, Slot>, now: number, released: (s: Slot) => void = () => {}): number {
    let next = Infinity;
    for (const [key, s] of from) {
      if (s.due > now) {
        next = Math.min(next, s.due);
        continue;
      }
      from.delete(key);
      s.due = now;
      released(s);
      this.pending.set(key, s);
    }
    return next;
  }

  private settle(batch: Slot[], outcomes: SendOutcome[]): void {
    const failed: { slot: Slot; error: string; retryAfterMs?: number | undefined }[] = [];
    const acked = new Map<string, number>();
    batch.forEach((slot, i) => {
      const o = outcomes[i] ?? { ok: false, error: 'the sink gave no outcome for this entry' };
      this.inFlight.delete(slotKey(slot.item));
      if (o.ok) acked.set(slot.item.kind, (acked.get(slot.item.kind) ?? 0) + 1);
      else if (o.permanent) this.reject(slot, o.error);
      else failed.push({ slot, error: o.error, retryAfterMs: o.retryAfterMs });
      if (o.ok || o.permanent) this.gone(slot);
    });
    for (const [kind, n] of acked) this.opts.hooks.delivered?.(kind, n);
    if (acked.size > 0) {
      this.lastAckAt = this.now();
      this.failures = 0;
      this.maybeResync();
    }
    if (failed.length === 0) return;
    this.opts.hooks.failed?.(failed.length);
    // A sink with several sends under way (the memory sink, one key each) fails keys, not
    // itself: its failures back off per key only, or one slow or failing key would hold the
    // others' sends again (review80 M1).
    const sinkDown = this.concurrency === 1 && failed.length === batch.length && failed.some((f) => f.slot.failures === 0);
    for (const f of failed) this.requeueFailed(f.slot, sinkDown, f.retryAfterMs ?? 0);
    if (sinkDown) this.backOff(failed.length, failed[0]?.error ?? '');
    // Every one of a batch of keys already retrying reads as what it is, not as a partial failure (operability review).
    else this.opts.logger.warn({ sink: this.opts.sink.name, failed: failed.length, keys: failed.slice(0, 5).map((f) => queuedKey(f.slot.item)), err: failed[0]?.error }, failed.length === batch.length ? 'sink took none of the batch; those keys back off' : 'sink did not take some envelopes; those keys back off');
  }

  private reject(slot: Slot, error: string): void {
    this.opts.hooks.rejected?.(1);
    this.opts.logger.error({ key: queuedKey(slot.item), err: error }, 'the sink refused an envelope for good; dropped');
  }

  /**
   * A failed key waits its own backoff, or what the sink was asked to wait when that is
   * longer (`askedMs`: the API server's Retry-After, review90 L1), with its newer state if one
   * was queued meanwhile (latest wins), and keeps its age.
   */
  private requeueFailed(slot: Slot, sinkDown: boolean, askedMs: number): void {
    const key = slotKey(slot.item);
    const newer = this.pending.get(key) ?? this.held.get(key);
    this.pending.delete(key);
    this.held.delete(key);
    const b = this.opts.backoff ?? { minMs: 200, maxMs: 30_000 };
    const due = this.now() + Math.max(jitteredBackoffMs(slot.failures, b.minMs, b.maxMs, b.random), askedMs);
    // The newer state (a live change queued meanwhile) is merged into this slot: one entry left.
    if (newer?.replay) this.replayQueued--;
    if (newer) this.count(newer.item, -1);
    // A key the sink fails while it takes others backs off as a live one, out of the replay's
    // share: such entries held that share for good, so no replay moved on again (review).
    // While the sink takes nothing (no acknowledgement since it last failed a whole batch)
    // they stay in it, or the replay would fill the queue and live events overflow (review)
    // — for a few failures: a sink that fails only the replay's keys looks the same.
    const keep = slot.replay === true && (sinkDown || this.failures > 0) && slot.failures + 1 < REPLAY_FAILURES_KEPT;
    if (slot.replay && !keep) this.replayQueued--;
    const next: Slot = { item: newer?.item ?? slot.item, queuedAt: Math.min(newer?.queuedAt ?? Infinity, slot.queuedAt), seq: Math.min(newer?.seq ?? Infinity, slot.seq), due, failures: slot.failures + 1, releasedAt: slot.releasedAt, ...(keep ? { replay: true } : {}), ...(newer === undefined && slot.sentId !== undefined ? { sentId: slot.sentId } : {}) };
    this.retrying.set(key, next);
    this.retryingDue = Math.min(this.retryingDue, due);
  }

  private backOff(count: number, error: string): void {
    const b = this.opts.backoff ?? { minMs: 200, maxMs: 30_000 };
    const wait = jitteredBackoffMs(this.failures++, b.minMs, b.maxMs, b.random);
    this.retryAt = this.now() + wait;
    this.opts.logger.warn({ sink: this.opts.sink.name, failed: count, queued: this.depth, retryInMs: wait, err: error }, 'sink did not take every envelope; retrying those');
  }

  private maybeResync(): void {
    // One replay at a time: an overflow during a replay asks for another after it.
    if (!this.overflowed || this.backfills.length > 0) return;
    this.overflowed = false;
    this.opts.logger.warn({}, 'the sink takes envelopes again after the queue overflowed: resyncing from the watch cache');
    this.backfills.push({ items: this.opts.hooks.resyncNeeded(), scope: 'all' });
  }

  /** Wake up for the next due key or the end of a backoff. */
  private schedule(): void {
    if (this.sending.size >= this.concurrency || this.stopped || this.timer || (this.pending.size === 0 && this.retrying.size === 0 && this.held.size === 0 && this.backfills.length === 0)) return;
    // A replay waiting for room wakes the queue at once only if it has room now; else it
    // waits for a key to go (a settled batch runs fill() again), not on a zero timer. A key
    // waiting for another send of its key is woken by that send's end, not by a timer.
    const replayNow = this.backfills.length > 0 && this.replayHasRoom();
    const at = Math.max(Math.min(this.pendingDue(), this.retryingDue, this.heldDue, replayNow ? 0 : Infinity), this.retryAt);
    if (at === Infinity) return;
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.kick();
    }, Math.max(0, at - this.now()));
    this.timer.unref();
  }
}

/**
 * The slot of a queued event: its object, the key and the uid (an event without a uid, such
 * as the Lease sweep's, has a slot of its own per key). Events of one slot coalesce.
 */
function slotKey(q: Queued): string {
  const key = queuedKey(q);
  return q.uid === undefined ? key : `${key} ${q.uid}`;
}

/**
 * Latest wins: a queued object takes its newer event's fields, in place (same slot: same
 * uid). The record the queue holds has usually been promoted to the old generation by then;
 * replacing it by the newer one made a dead old-generation object per coalesced event,
 * copying the fields makes none, and equal strings (the same jobs) keep the old copy.
 */
function latest(into: Queued, from: Queued): void {
  into.event = from.event;
  into.at = from.at;
  into.resourceVersion = from.resourceVersion;
  into.snapshot = from.snapshot;
  if (!sameNames(into.jobs, from.jobs)) into.jobs = from.jobs;
}

function sameNames(a: string[] | undefined, b: string[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
