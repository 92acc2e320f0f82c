// List + watch for one kind, keeping only trimmed objects. Our own reflector instead of
// client-node's informer because (1) the informer caches whole objects (10,000 pods would
// not fit the memory goal) and (2) it stops for good on a reset stream, while the relay
// must keep going. Semantics follow client-go's reflector: list, watch from the list's
// resourceVersion with bookmarks, resume after a clean close, re-list on 410 Gone (and on
// errors, with backoff), and on every list emit RESYNC for what is there and DELETED for
// what vanished during the gap.
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../functions/engine/logger.ts';
import { backoffMs } from './backoff.ts';

export type ReflectorEvent = 'ADDED' | 'MODIFIED' | 'DELETED' | 'RESYNC';

export interface ReflectorOptions<T> {
  kind: string;
  /** Collection path, e.g. /api/v1/pods or /api/v1/namespaces/ns/pods. */
  path: string;
  /** One page of the LIST (raw JSON items and the continue token / resourceVersion). */
  listPage(cont: string | undefined): Promise<{ items: unknown[]; resourceVersion: string; continue?: string }>;
  /** Trim an object; null to ignore it (unreadable). */
  trim(raw: unknown): T | null;
  keyOf(obj: T): string;
  /**
   * What the cache keeps per object: a compact JSON string of the fields that matter
   * (not the object: strings cost a third of the memory). Equal strings = nothing changed.
   */
  fingerprint(obj: T): string;
  /** The (trimmed) object back from its fingerprint, for deletions seen only by a re-list. */
  fromFingerprint(fp: string): T;
  onEvent(type: ReflectorEvent, obj: T, previous: string | undefined): void;
  /** Called after each completed list (ready after the first). */
  onListed?(): void;
  onRestart?(reason: string): void;
  logger: Logger;
}

interface WatchHandle {
  abort(): void;
}

/** One kind's list+watch loop with a trimmed cache. */
export class Reflector<T> {
  /** key → fingerprint of the object as last seen. */
  readonly cache = new Map<string, string>();
  private resourceVersion = '';
  private stopped = false;
  private handle: WatchHandle | undefined;
  private failures = 0;
  private readonly opts: ReflectorOptions<T>;
  private readonly watcher: Watch;

  constructor(kc: KubeConfig, opts: ReflectorOptions<T>) {
    this.opts = opts;
    this.watcher = new Watch(kc);
  }

  /** Lists, then watches until stop(); resolves after the first list. */
  async start(): Promise<void> {
    await this.relist('initial list');
    void this.watchLoop();
  }

  stop(): void {
    this.stopped = true;
    this.handle?.abort();
  }

  /** Re-list now (periodic resync, or after becoming leader): RESYNC all, DELETED the gone. */
  async relist(reason: string): Promise<void> {
    // Emit page by page, keeping only the keys seen (not every object) for the deletion
    // diff: the peak stays one page of objects, not the whole cluster.
    const seen = new Set<string>();
    let cont: string | undefined;
    let rv: string;
    do {
      const page = await this.opts.listPage(cont);
      for (const item of page.items) {
        const obj = this.opts.trim(item);
        if (!obj) continue;
        const key = this.opts.keyOf(obj);
        seen.add(key);
        const previous = this.cache.get(key);
        this.cache.set(key, this.opts.fingerprint(obj));
        this.opts.onEvent('RESYNC', obj, previous);
      }
      cont = page.continue || undefined;
      rv = page.resourceVersion;
    } while (cont);
    for (const [key, old] of this.cache) {
      if (seen.has(key)) continue;
      this.cache.delete(key);
      this.opts.onEvent('DELETED', this.opts.fromFingerprint(old), old);
    }
    this.resourceVersion = rv;
    this.opts.logger.debug({ kind: this.opts.kind, reason, objects: seen.size, resourceVersion: rv }, 'listed');
    this.opts.onListed?.();
  }

  private async watchLoop(): Promise<void> {
    while (!this.stopped) {
      const outcome = await this.watchOnce();
      if (this.stopped) return;
      if (outcome === 'closed') continue; // clean close: resume from the last resourceVersion
      this.opts.onRestart?.(outcome);
      await sleep(backoffMs(this.failures, 250, 30_000));
      try {
        await this.relist(outcome);
        this.failures = 0;
      } catch (err) {
        this.failures++;
        this.opts.logger.warn({ kind: this.opts.kind, err: (err as Error).message }, 're-list failed; will retry');
      }
    }
  }

  /** One watch request; resolves how it ended: 'closed' (clean), 'gone' (410) or 'error: …'. */
  private watchOnce(): Promise<string> {
    return new Promise((resolve) => {
      let gone = false;
      const onEvent = (type: string, obj: unknown): void => {
        if (type === 'ERROR') {
          gone = (obj as { code?: number }).code === 410;
          return;
        }
        this.apply(type, obj);
      };
      const onDone = (err: unknown): void => {
        this.handle = undefined;
        if (gone || (err as { statusCode?: number } | null)?.statusCode === 410) resolve('gone');
        else if (err) resolve(`error: ${(err as Error).message ?? String(err)}`);
        else resolve('closed');
      };
      const query = { allowWatchBookmarks: true, resourceVersion: this.resourceVersion, timeoutSeconds: 300 };
      this.watcher.watch(this.opts.path, query, onEvent, onDone).then(
        (controller) => (this.handle = controller),
        (err: unknown) => resolve(`error: ${(err as Error).message}`),
      );
    });
  }

  private apply(type: string, raw: unknown): void {
    const rv = (raw as { metadata?: { resourceVersion?: string } })?.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
    if (type === 'BOOKMARK') return;
    const obj = this.opts.trim(raw);
    if (!obj) return;
    const key = this.opts.keyOf(obj);
    const previous = this.cache.get(key);
    if (type === 'DELETED') this.cache.delete(key);
    else this.cache.set(key, this.opts.fingerprint(obj));
    this.opts.onEvent(type === 'ADDED' ? 'ADDED' : type === 'DELETED' ? 'DELETED' : 'MODIFIED', obj, previous);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}
