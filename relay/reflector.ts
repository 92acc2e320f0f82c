// List + watch for one resource, owned by ONE loop, as client-go's reflector does
// (tools/cache/reflector.go): list (paged) → watch from the list's resourceVersion with
// bookmarks → when the watch ends, resume it from the last resourceVersion seen, or, on
// 410 Gone, back off and list again. A watch answered 404 or 403 (the CRD was deleted, the
// right to watch revoked) also backs off and lists again: only the list knows what to make of
// it (an `absent` resource, reported and emptied, or a failed list retried with backoff);
// watching again would fail the same way forever and report nothing. A watch that ends
// without moving on (an ERROR event, a broken stream, or closed within a second with no
// object event or bookmark: client-go's "very short watch") backs off longer each time in a
// row, as client-go's does, so a proxy or an API server that ends watches at once is not
// asked again every few milliseconds. A quiet watch that simply ran its time is routine.
// Because only this loop lists, a re-list never runs beside a live watch: the deletion diff
// cannot invent a DELETED for an object added during the list, and the resume
// resourceVersion never goes backwards. Our own loop instead of client-node's informer
// because the informer caches whole objects (10,000 pods would not fit the memory goal) and
// stops for good on a reset stream.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../functions/engine/logger.ts';
import { jitteredBackoffMs } from './backoff.ts';
import { ListError, retryAfterMs, UnreadableWatchLine, watchRaw, type ListPage } from './raw-list.ts';

/** What the loop tells its owner; RESYNC = found by a list (or replayed from the cache). */
export type ReflectorEvent = 'ADDED' | 'MODIFIED' | 'DELETED' | 'RESYNC';

/** An object as the cache keeps it: its key and a compact JSON form of what matters. */
export interface Decoded<T> {
  key: string;
  /** Equal fingerprints = nothing relevant changed. Kept instead of the object (a third of the memory). */
  fingerprint: string;
  object: T;
}

/** One raw object could not be read: why, and its key when the key itself was readable. */
export interface Unreadable {
  key: string;
  error: string;
}

export interface ReflectorOptions<T> {
  kind: string;
  /** Collection path, e.g. /api/v1/pods or /api/v1/namespaces/ns/pods. */
  path: string;
  kubeConfig: KubeConfig;
  /**
   * One page of the LIST (see raw-list.ts), each item handed to `each` as soon as it has
   * arrived (listRaw's `map`): the reflector decodes it and takes it there (see list()), so an
   * item's raw JSON is dropped at once and a page of large objects is never whole in memory
   * (review82 H1); the page's items are not read. `signal` aborts it on stop().
   */
  listPage(cont: string | undefined, signal: AbortSignal, each: (raw: unknown) => void): Promise<ListPage<unknown>>;
  /** Trim and fingerprint a raw object, from a list or a watch alike (one normal form). */
  decode(raw: unknown): Decoded<T> | Unreadable;
  /** The object back from its fingerprint (deletions seen only by a re-list; replays). */
  fromFingerprint(fp: string): T;
  /**
   * The object's uid: a list that finds another uid under a cached key (the object was
   * deleted and created again under its name during a gap) reports the old one DELETED first.
   */
  uid(object: T): string | undefined;
  /**
   * `changed`: the fingerprint differs from the cached one (always true for DELETED);
   * `previous`: the cached fingerprint this event replaces or removes, if there was one.
   */
  onEvent(type: ReflectorEvent, d: Decoded<T>, changed: boolean, previous: string | undefined): void;
  onSynced?(): void;
  /** A watch ended without moving on (or with 410 Gone): why, and how long the loop waits before it watches or lists again. */
  onRestart?(reason: string, waitMs: number): void;
  /**
   * A list after silent watches (relistReason) found `changes` the watches never brought: a
   * stream that does not reach us (a proxy that buffers it, a half-open connection).
   */
  onMissed?(changes: number, reason: string): void;
  /** A LIST failed and is retried with backoff (not one that says the resource is absent). */
  onListFailure?(): void;
  onUnreadable?(bad: Unreadable): void;
  logger: Logger;
  backoff?: { minMs: number; maxMs: number; random?: () => number };
  /** Server-side watch timeout (client-go picks 5–10 min). */
  watchTimeoutSeconds?: number;
  /** A watch with no byte (event or bookmark) for this long is ended and resumed (default 150 s; relistReason). */
  watchIdleMs?: number;
  /**
   * A list answered with one of `statuses` means "this resource is not here for us" (no CRD,
   * no list right): the loop counts as synced with nothing cached and lists again, five
   * times backing off as after a failed list, then every `retryMs`, so a CRD installed later
   * (or a 404 for a moment) is picked up. Any other failure keeps the backoff.
   * A watch answered 404 or 403 goes back to the list, so a CRD deleted (or a right revoked)
   * while the loop runs is reported the same way. A status in `keep` says only that the
   * objects cannot be seen (403: a right revoked, maybe for a moment), not that they are gone:
   * those cached are kept, not reported DELETED, and the list that works again tells what
   * changed meanwhile (the others, 404: the CRD and with it every object is gone).
   */
  absent?: { statuses: readonly number[]; keep?: readonly number[]; retryMs: number; onChange(absent: Absent | undefined): void };
}

/** Why a resource counts as absent: the status and message of the list that said so. */
export interface Absent {
  status: number;
  message: string;
}

/**
 * `events`: the object events and bookmarks the watch brought (what moves it on; not ERROR);
 * `ms`: how long it lasted; `relist`: the error was a 404 or 403 (see RELIST_STATUSES), or a
 * line that could not be read (its event is known only to a list).
 */
type WatchEnd = { kind: 'closed'; events: number; ms: number } | { kind: 'idle'; events: number; ms: number } | { kind: 'gone'; events: number; ms: number } | { kind: 'error'; message: string; relist: boolean; retryAfterMs: number; events: number; ms: number } | { kind: 'stopped' };

/** Watch statuses (HTTP or in an ERROR event) that send the loop back to the list: the resource or our right to it went. */
const RELIST_STATUSES = new Set([404, 403]);

/** Watch event types that move a watch on (client-go counts these; an ERROR does not). */
const PROGRESS = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK']);

/** Lists that came back absent retried after the backoff's wait before the absent retry's (relay defaults: ~0.2, 0.4, 0.8, 1.6, 3.2 s, then every 60 s). */
const QUICK_ABSENT_LISTS = 5;

/** A watch closed with no event sooner than this is a failure (client-go reflector's "very short watch"). */
const SHORT_WATCH_MS = 1000;

/** One resource's list+watch loop with a fingerprint cache. */
export class Reflector<T> {
  /** key → fingerprint of the object as last seen. */
  readonly cache = new Map<string, string>();
  private resourceVersion = '';
  private stopped = false;
  private abortWatch: (() => void) | undefined;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  /** Aborts a list in progress when the loop is stopped (a slow LIST must not hold shutdown). */
  private readonly stopping = new AbortController();
  private synced = false;
  private absentNow: Absent | undefined;
  /** When its LISTs began failing in a row (performance.now), if they do. */
  private failingSince: number | undefined;
  /** The next list follows silent watches (onMissed); the changes the current list found. */
  private afterSilence = false;
  private listChanges = 0;
  private lastListError: string | undefined;
  private readonly syncedOnce: Promise<void>;
  private resolveSynced: () => void = () => undefined;
  private readonly opts: ReflectorOptions<T>;

  constructor(opts: ReflectorOptions<T>) {
    this.opts = opts;
    this.syncedOnce = new Promise((r) => (this.resolveSynced = r));
  }

  /** Starts the loop (returns at once); `synced()` resolves after the first complete list. */
  start(): void {
    this.loop ??= this.run();
  }

  /** Resolves once the first list completed (never, if stopped before). */
  whenSynced(): Promise<void> {
    return this.syncedOnce;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Why the LISTs fail, while they do ("LIST /api/v1/pods: HTTP 403: …"); undefined once one works. */
  listFailure(): string | undefined {
    return this.failingSince === undefined ? undefined : this.lastListError;
  }

  /** How long its LISTs have failed in a row (0: the last one worked, or none failed); the relay's readiness reads it. */
  listFailingForMs(): number {
    return this.failingSince === undefined ? 0 : performance.now() - this.failingSince;
  }

  /** What it lists, for messages. */
  get path(): string {
    return this.opts.path;
  }

  /** The resourceVersion the next watch resumes from. */
  get lastResourceVersion(): string {
    return this.resourceVersion;
  }

  /** The cached object of `key` (namespace/name), decoded, if the cache has it. */
  get(key: string): T | undefined {
    const fp = this.cache.get(key);
    return fp === undefined ? undefined : this.opts.fromFingerprint(fp);
  }

  /**
   * Every cached object, decoded (a replay: the informer's resync, no LIST). `maybe` skips
   * fingerprints that cannot match before paying for their decoding.
   */
  *cached(maybe: (fingerprint: string) => boolean = () => true): Generator<T> {
    for (const fp of this.cache.values()) if (maybe(fp)) yield this.opts.fromFingerprint(fp);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    this.abortWatch?.();
    this.wake?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    // Lists and watches in a row that did not move on. A list that works after lists that
    // failed (or came back absent) ends an outage and starts the count over; a list that works
    // right after a watch ended with 410 or was refused (404/403) does not, so a watch that
    // fails so after every list waits longer each time instead of listing the whole resource
    // every few hundred milliseconds (both found in review).
    let failures = 0;
    /** Why the next step is a list; undefined: watch. */
    let listFor: string | undefined = 'initial list';
    /** Since the loop began listing this time, a list failed or came back absent. */
    let listsFailed = false;
    /** Lists that came back absent since a watch last ran. */
    let absentLists = 0;
    /** Watches in a row that went silent (no event or bookmark for idleMs). */
    let idleRun = 0;
    while (!this.stopped) {
      if (listFor !== undefined) {
        let asked = 0;
        const listed = await this.list(listFor).then(() => true, (err: unknown) => {
          asked = askedWait(err);
          return this.listFailed(err, failures);
        });
        if (listed !== true) listsFailed = true;
        if (listed === 'absent') {
          // The first few lists again come as the backoff's, then every retryMs: a 404 for a
          // moment, or a CRD installed just after the relay started, is found within seconds
          // (npm run chaos seed 11146: both relays met one 404 at their start, then idled a
          // minute, as client-go's reflector, which backs off to at most 30 s, would not).
          const retryMs = this.opts.absent?.retryMs ?? 0;
          await this.sleep(absentLists < QUICK_ABSENT_LISTS ? Math.min(retryMs, this.backoff(absentLists)) : retryMs);
          absentLists++;
          continue;
        }
        if (!listed) {
          // The server's Retry-After, when longer (client-go waits what it is asked, too).
          await this.sleep(Math.max(this.backoff(failures++), asked));
          continue;
        }
        if (listsFailed) failures = 0;
        listsFailed = false;
      }
      const end = await this.watchOnce();
      if (end.kind === 'stopped') return;
      idleRun = end.kind === 'idle' ? idleRun + 1 : 0;
      // Listed, then watched: what comes next depends only on how the watch ended (and
      // whether the watch before it went silent too).
      listFor = relistReason(end, idleRun);
      // The list it causes starts the count over: every second silent watch lists, not every one after it.
      if (listFor !== undefined) idleRun = 0;
      const routine = routineEnd(end);
      // Only a watch that ran ends a run of absent lists: lists answering 404 and 200 in
      // turn, each watch refused at once (an API server behind the balancer that does not
      // serve the CRD yet), must not list every job again every few hundred ms (review); a
      // watch that ran a while and then was refused or expired does end it (review).
      if (watchRan(end)) absentLists = 0;
      failures = routine ? 0 : longUsefulWatch(end) ? 1 : failures + 1;
      const wait = Math.max(this.backoff(failures), end.kind === 'error' ? end.retryAfterMs : 0);
      this.ended(end, { routine, wait, relist: listFor !== undefined });
      await this.sleep(wait);
    }
  }

  /**
   * Tell how a watch ended. A silent one is not a failure by itself: an API server sends no
   * bookmark for a quiet resource before its first event, nor where its watch cache is off
   * (final read); what the list after two of them finds tells (onMissed).
   */
  private ended(end: WatchEnd, at: { routine: boolean; wait: number; relist: boolean }): void {
    if (at.relist) this.afterSilence = end.kind === 'idle';
    if (end.kind === 'idle') return void this.opts.logger.debug({ kind: this.opts.kind, path: this.opts.path, reason: restartReason(end), relist: at.relist }, 'watch resumed');
    if (!at.routine) this.opts.onRestart?.(restartReason(end), at.wait);
  }

  private listFailed(err: unknown, failures: number): false | 'absent' {
    if (this.stopped) return false;
    const e = err as { statusCode?: number; message?: string };
    if (e.statusCode !== undefined && this.opts.absent?.statuses.includes(e.statusCode)) return this.markAbsent({ status: e.statusCode, message: e.message ?? String(err) });
    this.opts.onListFailure?.();
    this.failingSince ??= performance.now();
    this.lastListError = (e.message ?? String(err)).slice(0, 300);
    this.opts.logger.warn({ kind: this.opts.kind, path: this.opts.path, attempt: failures + 1, status: e.statusCode, err: e.message ?? String(err) }, this.synced ? 're-list failed; retrying' : 'initial list failed; retrying');
    return false;
  }

  /** The resource is not here for us: synced, with nothing cached (gone) or what was cached (cannot be seen: `keep`). */
  private markAbsent(absent: Absent): 'absent' {
    // Absent is an answer, not a failure (its own gauge says it): a list that failed before
    // it must not keep the relay unready for good (review).
    this.failingSince = undefined;
    if (this.absentNow?.status !== absent.status) this.opts.absent?.onChange(absent);
    this.absentNow = absent;
    if (!this.opts.absent?.keep?.includes(absent.status)) for (const key of this.cache.keys()) this.forget(key);
    this.resourceVersion = '';
    this.markSynced();
    return 'absent';
  }

  private markSynced(): void {
    if (!this.synced) {
      this.synced = true;
      this.resolveSynced();
    }
    this.opts.onSynced?.();
  }

  private backoff(failures: number): number {
    const b = this.opts.backoff ?? { minMs: 200, maxMs: 30_000 };
    return jitteredBackoffMs(failures, b.minMs, b.maxMs, b.random);
  }

  /**
   * LIST page by page, each object decoded and taken (emitted if new or changed) as soon as it
   * has arrived, before the next is read; then DELETED for what the list no longer has. Runs
   * only while no watch does. Nothing of a page is kept (the peak is one raw object, not a
   * page nor the cluster): a page's decoded objects, held until its end, were the first
   * thousands of trimmed objects V8 saw, all alive at each young-generation GC, so it marked
   * the trim's allocation sites "tenure" (allocation-site pretenuring) and from then on made
   * every trimmed object in the old generation, the watch's too, each dead after its event:
   * old-generation GCs twice as often, 60–70% more bytes promoted, about a quarter fewer events
   * per CPU-second in the relay bench (twenty-fifth round; an answer's prefix is emitted even
   * if the rest fails, as earlier pages always were). A later page that fails for now is asked
   * for again (page()); a list that still fails is retried whole by the loop.
   */
  private async list(reason: string): Promise<void> {
    // Kept until a list works: one that fails after silent watches must not lose the check,
    // nor the changes it took before it failed (each object is taken as it arrives; review89).
    const afterSilence = this.afterSilence;
    const seen = new Set<string>();
    let cont: string | undefined;
    let rv: string | undefined;
    // An item it cannot read is still there: its key is seen (its cached state, if any, kept),
    // so the re-list does not report a living object DELETED.
    const each = (raw: unknown): void => this.guard(raw, (d) => this.listed(d, seen), (key) => seen.add(key));
    do {
      const page = await this.page(cont, each);
      // Every page of one list is the same snapshot; its version is the first page's.
      rv ??= page.resourceVersion;
      cont = page.continue;
    } while (cont && !this.stopped);
    if (this.stopped) return;
    for (const key of this.cache.keys()) if (!seen.has(key)) this.forget(key);
    this.resourceVersion = rv;
    this.opts.logger.debug({ kind: this.opts.kind, reason, objects: seen.size, resourceVersion: rv }, 'listed');
    this.afterSilence = false;
    if (afterSilence && this.listChanges > 0) this.opts.onMissed?.(this.listChanges, reason);
    this.listChanges = 0;
    this.failingSince = undefined;
    if (this.absentNow) {
      this.absentNow = undefined;
      this.opts.absent?.onChange(undefined);
    }
    this.markSynced();
  }

  /**
   * One page of the list. A later page that fails for now (429, 5xx, a reset, a timeout) is
   * asked for again with the same continue token, which keeps the list's snapshot, after the
   * backoff or the server's Retry-After, at most PAGE_RETRIES times: restarting from the first
   * page on any error, a list of 20 pages under a 30% refusal rate almost never finished
   * (review90 M2). client-go's pager does not retry a page either, but its REST client sends
   * each request again after a 429 or 5xx with Retry-After, up to 10 times (rest/with_retry.go).
   * Anything else fails the list, which the loop starts again: a 410 Expired (the snapshot is
   * compacted, as client-go's pager then lists anew), a 404 or 403 (the resource or the right to
   * it went; listFailed tells), and the first page, whose retry is a new list anyway. The items
   * a failed page handed on before it failed are handed on again: the cache makes them no change.
   */
  private async page(cont: string | undefined, each: (raw: unknown) => void): Promise<ListPage<unknown>> {
    for (let retries = 0; ; retries++) {
      try {
        return await this.opts.listPage(cont, this.stopping.signal, each);
      } catch (err) {
        if (cont === undefined || this.stopped || retries >= PAGE_RETRIES || !pageRetryable(err)) throw err;
        const wait = Math.max(this.backoff(retries), askedWait(err));
        const e = err as { statusCode?: number; message?: string };
        this.opts.onListFailure?.();
        this.failingSince ??= performance.now();
        this.lastListError = (e.message ?? String(err)).slice(0, 300);
        this.opts.logger.warn({ kind: this.opts.kind, path: this.opts.path, retry: retries + 1, status: e.statusCode, err: e.message ?? String(err), retryInMs: Math.round(wait) }, 'a list page failed; asking for the same page again');
        await this.sleep(wait);
        if (this.stopped) throw err;
      }
    }
  }

  private listed(d: Decoded<T>, seen: Set<string>): void {
    seen.add(d.key);
    let previous = this.cache.get(d.key);
    // Another object under the same name (deleted and created again during the gap): the old
    // one's own DELETED first, so whoever cared about it hears it went; the new one is new.
    if (previous !== undefined && previous !== d.fingerprint && this.replaced(previous, d.object)) {
      this.opts.onEvent('DELETED', { key: d.key, fingerprint: previous, object: this.opts.fromFingerprint(previous) }, true, previous);
      previous = undefined;
    }
    this.cache.set(d.key, d.fingerprint);
    if (previous !== d.fingerprint) this.listChanges++;
    this.opts.onEvent('RESYNC', d, previous !== d.fingerprint, previous);
  }

  /** Is `object` another object than the one cached as `previous` (another uid)? Only asked of changed fingerprints. */
  private replaced(previous: string, object: T): boolean {
    return this.opts.uid(this.opts.fromFingerprint(previous)) !== this.opts.uid(object);
  }

  /** Decode one raw object, never throwing: a decoder's exception is the object's Unreadable. */
  private decode(raw: unknown): Decoded<T> | Unreadable {
    try {
      return this.opts.decode(raw);
    } catch (err) {
      return { key: keyHint(raw), error: (err as Error).message ?? String(err) };
    }
  }

  /** Decode one raw object and hand it on; a bad object is reported (and its key to `bad`), never thrown. */
  private guard(raw: unknown, use: (d: Decoded<T>) => void, bad?: (key: string) => void): void {
    this.take(this.decode(raw), use, bad);
  }

  /** Hand a decoded object on, or report one that could not be read (and its key to `bad`); never throws. */
  private take(d: Decoded<T> | Unreadable, use: (d: Decoded<T>) => void, bad?: (key: string) => void): void {
    if ('error' in d) {
      bad?.(d.key);
      return void this.opts.onUnreadable?.(d);
    }
    try {
      use(d);
    } catch (err) {
      bad?.(d.key);
      this.opts.onUnreadable?.({ key: d.key, error: (err as Error).message ?? String(err) });
    }
  }

  /** One watch request from the current resourceVersion; resolves how it ended. */
  private watchOnce(): Promise<WatchEnd> {
    return new Promise((resolve) => {
      if (this.stopped) return resolve({ kind: 'stopped' });
      let events = 0;
      /** The status codes of the ERROR events it brought. */
      const codes: number[] = [];
      let failed: string | undefined;
      /** The longest wait an ERROR event asked for (its Status' retryAfterSeconds). */
      let asked = 0;
      const started = performance.now();
      const timeoutSeconds = this.opts.watchTimeoutSeconds ?? 300 + Math.floor(Math.random() * 300);
      const query = { allowWatchBookmarks: 'true', resourceVersion: this.resourceVersion, timeoutSeconds: String(timeoutSeconds) };
      const handle = watchRaw(this.opts.kubeConfig, this.opts.path, query, {
        // Bookmarks come about once a minute; a watch silent for much longer is resumed.
        idleMs: this.opts.watchIdleMs ?? 150_000,
        onEvent: (type, obj) => {
          if (PROGRESS.has(type)) events++;
          if (type !== 'ERROR') return this.apply(type, obj);
          // An ERROR event ends the watch as an error (client-go); 410 means list again.
          const status = obj as { code?: number; message?: string; details?: { retryAfterSeconds?: unknown } } | null;
          if (typeof status?.code === 'number') codes.push(status.code);
          asked = Math.max(asked, retryAfterMs(status?.details?.retryAfterSeconds) ?? 0);
          failed ??= `watch ERROR ${status?.code ?? '?'}: ${status?.message ?? 'no message'}`;
        },
        // Counted and logged as an unreadable object; the watch then ends and the loop lists again.
        onLineError: (error) => this.opts.onUnreadable?.({ key: '?', error: `${error} (the watch ends; listing again)` }),
        done: (err, idle) => {
          this.abortWatch = undefined;
          if (this.stopped) return resolve({ kind: 'stopped' });
          const seen = { events, ms: performance.now() - started };
          resolve(idle === true ? { kind: 'idle', ...seen } : watchEnd(err, { codes, failed, asked }, seen));
        },
      });
      this.abortWatch = () => handle.abort();
    });
  }

  private apply(type: string, raw: unknown): void {
    const rv = (raw as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;
    if (typeof rv === 'string' && rv !== '') this.resourceVersion = rv;
    if (type === 'BOOKMARK') return;
    this.guard(raw, (d) => {
      const previous = this.cache.get(d.key);
      if (type === 'DELETED') this.cache.delete(d.key);
      else this.cache.set(d.key, d.fingerprint);
      const changed = type === 'DELETED' || previous !== d.fingerprint;
      this.opts.onEvent(type === 'ADDED' ? 'ADDED' : type === 'DELETED' ? 'DELETED' : 'MODIFIED', d, changed, previous);
    }, (key) => {
      // A deletion whose last state cannot be read is still a deletion: the object as cached goes.
      // A watch brought it: no change a list found (review92 B1: counted, it was told as missed at the next list after silence).
      if (type === 'DELETED') this.forget(key, false);
    });
  }

  /** The cached object of `key` is gone: DELETED with its cached state (nothing when not cached). */
  private forget(key: string, byList = true): void {
    const old = this.cache.get(key);
    if (old === undefined) return;
    if (byList) this.listChanges++;
    this.cache.delete(key);
    this.opts.onEvent('DELETED', { key, fingerprint: old, object: this.opts.fromFingerprint(old) }, true, old);
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const t = setTimeout(done, ms);
      t.unref();
      function done(): void {
        clearTimeout(t);
        resolve();
      }
      this.wake = done;
    }).finally(() => (this.wake = undefined));
  }
}

/**
 * How a watch ended: `codes`, the status codes of its ERROR events; `failed`, the first ERROR
 * event it brought (as text), if any; `asked`, the longest wait one of them asked for.
 */
function watchEnd(err: unknown, errors: { codes: number[]; failed: string | undefined; asked: number }, seen: { events: number; ms: number }): WatchEnd {
  const status = (err as { statusCode?: number } | null)?.statusCode;
  const all = status === undefined ? errors.codes : [...errors.codes, status];
  if (all.includes(410)) return { kind: 'gone', ...seen };
  const message = err ? ((err as Error).message ?? String(err)) : errors.failed;
  const retryAfterMs = Math.max(askedWait(err), errors.asked);
  if (message !== undefined) return { kind: 'error', message, relist: err instanceof UnreadableWatchLine || all.some((c) => RELIST_STATUSES.has(c)), retryAfterMs, ...seen };
  return { kind: 'closed', ...seen };
}

/** Times a later page of a list is asked for again before the list starts over (client-go's REST client: maxRetries 10). */
const PAGE_RETRIES = 10;

/**
 * A page worth asking for again with its continue token: refused for now (429, a 5xx, no
 * status: a reset, a timeout, an answer cut off). Not a 410 (the snapshot is gone: list anew)
 * nor any other 4xx (a 404 or 403 says something of the resource; the list's handling reads it).
 */
function pageRetryable(err: unknown): boolean {
  if (!(err instanceof ListError)) return true;
  return err.statusCode === 429 || err.statusCode === 0 || err.statusCode >= 500;
}

/** The wait a refused LIST or WATCH asked for (its Retry-After), 0 if none. */
function askedWait(err: unknown): number {
  return err instanceof ListError ? (err.retryAfterMs ?? 0) : 0;
}

/**
 * The watch ran against a served resource, however it ended: for a second or more. One that
 * ended at once, even with an event or a 410, proves nothing (review: lists answering 404 and
 * 200 in turn, with such watches, listed every job again every few ms).
 */
function watchRan(end: WatchEnd): boolean {
  return end.kind !== 'stopped' && end.ms >= SHORT_WATCH_MS;
}

/**
 * A clean close after events or bookmarks, or after a quiet while, is routine
 * (timeoutSeconds): the watch is resumed after a short pause and the failure count starts over.
 * So is a silent watch we ended (its second in a row lists: relistReason).
 */
function routineEnd(end: WatchEnd): boolean {
  return end.kind === 'idle' || (end.kind === 'closed' && (end.events > 0 || end.ms >= SHORT_WATCH_MS));
}

/**
 * A watch that brought events for a while (a second or more) and then broke — a proxy or
 * NAT reset — moved on: its failure is the first of a new run, not one more of an old one
 * (client-go's backoff forgets after a quiet while). Not a refusal (404/403), which lists
 * again, nor a watch that errs right after an event, whose waits must still grow.
 */
function longUsefulWatch(end: WatchEnd): boolean {
  return end.kind === 'error' && !end.relist && end.events > 0 && end.ms >= SHORT_WATCH_MS;
}

/**
 * Why the loop lists after this watch (410 Gone, a 404 or 403, a line it could not read, a
 * second silent watch in a row), or undefined: it watches again. A watch silent for idleMs
 * (the API server sends a bookmark about once a minute, when it sends them) is resumed once;
 * a second in a row lists: a stream that never reaches us (a proxy that buffers it, a
 * half-open connection each time) would otherwise be resumed from the same resourceVersion
 * for ever, every change lost (review), where a list brings the state every few minutes at
 * worst, and tells whether changes were missed (onMissed).
 */
function relistReason(end: WatchEnd, idleRun: number): string | undefined {
  if (end.kind === 'gone') return 'watch expired (410 Gone)';
  if (end.kind === 'error' && end.relist) return `watch ended: ${end.message}`;
  if (end.kind === 'idle' && idleRun >= IDLE_WATCHES_BEFORE_LIST) return `${idleRun} watches in a row brought no event or bookmark`;
  return undefined;
}

/** Silent watches in a row after which the loop lists again (relistReason). */
const IDLE_WATCHES_BEFORE_LIST = 2;

/** Why a watch is restarted, for the log and the restart count. */
function restartReason(end: WatchEnd): string {
  if (end.kind === 'gone') return '410 Gone';
  if (end.kind === 'error') return end.message;
  if (end.kind === 'idle') return `no event or bookmark for ${(end.ms / 1000).toFixed(end.ms < 10_000 ? 1 : 0)} s (a half-open connection, or a proxy that buffers the stream?)`;
  return 'the watch closed at once, without an event or bookmark';
}

/** namespace/name of a raw object, as far as it can be read (for logs of bad objects). */
function keyHint(raw: unknown): string {
  const m = (raw as { metadata?: { namespace?: unknown; name?: unknown } } | null)?.metadata;
  return `${typeof m?.namespace === 'string' ? m.namespace : '?'}/${typeof m?.name === 'string' ? m.name : '?'}`;
}
