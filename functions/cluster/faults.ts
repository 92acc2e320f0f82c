// Failure injection for the fake API server: error answers and dropped connections, before or
// after a write is applied, slow and stalled requests, and watch streams that end or break on
// demand. Every fault that fires is counted by kind (`fired`), so a run can report what it did.
import type { ActiveWatch } from './watch.ts';

/** Which requests a fault hits and how. Give `status` (an error answer), `reset`, `delayMs` or `hold`. */
export interface FaultSpec {
  /** HTTP method (GET, POST, PUT, PATCH, DELETE); any when unset. */
  method?: string;
  /** A substring of the request path (e.g. `/pods/web-1`, `/ephemeralcontainers`). */
  pathIncludes?: string;
  /** Only watch requests (true) or only non-watch requests (false); both when unset. */
  watch?: boolean;
  /** HTTP status to answer with, as a metav1.Status body. */
  status?: number;
  /** Drop the connection without an answer instead. */
  reset?: boolean;
  /** How many matching requests fail (default 1; Infinity for all). */
  times?: number;
  /** Status reason (defaults to the usual one for the code). */
  reason?: string;
  message?: string;
  /**
   * The object the Status names (details.name), as kube-apiserver's NotFound, AlreadyExists
   * and Conflict do. A 404 without it names nothing, as for a path the server does not serve.
   */
  name?: string;
  /** Sets a Retry-After header and details.retryAfterSeconds (429, 503). */
  retryAfterSeconds?: number;
  /**
   * Apply the request first, then answer with `status` or drop the connection: the client
   * sees a failure although its write took effect (a lost response, a proxy timeout).
   */
  after?: boolean;
  /** Hold the request this long before handling it (a slow or, past the client's timeout, stalled server). */
  delayMs?: number;
  /** Hold the request until this settles (a write that hangs until the test says so; after `delayMs`, if both). */
  hold?: Promise<unknown>;
  /** Only requests of this actor (bearer token, else User-Agent). */
  actor?: string;
  /** The kind this fault is counted under in `fired` (default: derived from the spec, e.g. "503 after write"). */
  label?: string;
}

/** An added fault: how many times it fired, and a way to remove it. */
export interface Fault {
  readonly spec: FaultSpec;
  readonly hits: number;
  remove(): void;
}

interface Entry {
  spec: FaultSpec;
  left: number;
  hits: number;
}

/** The request facts a fault matches on. */
export interface FaultTarget {
  method: string;
  path: string;
  watch: boolean;
  actor?: string;
}

/** The failure switchboard exposed as `server.faults`. */
export class Faults {
  private readonly entries: Entry[] = [];
  private readonly watches = new Set<ActiveWatch>();
  private readonly counts = new Map<string, number>();

  /** Adds a fault; the first matching fault with hits left fires, in the order added. */
  add(spec: FaultSpec): Fault {
    if (spec.status === undefined && !spec.reset && !spec.delayMs && !spec.hold) throw new Error('faults.add needs a status, reset: true, delayMs or hold');
    if (spec.delayMs !== undefined && !(spec.delayMs >= 0)) throw new Error(`faults.add: delayMs must be ≥ 0, got ${spec.delayMs}`);
    if (spec.status !== undefined && (spec.status < 400 || spec.status > 599)) throw new Error(`faults.add: status must be 400..599, got ${spec.status}`);
    const entry: Entry = { spec, left: spec.times ?? 1, hits: 0 };
    this.entries.push(entry);
    return {
      spec,
      get hits() {
        return entry.hits;
      },
      remove: () => {
        const i = this.entries.indexOf(entry);
        if (i >= 0) this.entries.splice(i, 1);
      },
    };
  }

  /** Removes every fault. */
  clear(): void {
    this.entries.length = 0;
  }

  /** Ends every open watch stream cleanly; returns how many. Informers resume from their version. */
  closeWatches(): number {
    const all = [...this.watches];
    all.forEach((w) => w.end());
    this.count('watch closed', all.length);
    return all.length;
  }

  /** Cuts every open watch connection abruptly; returns how many. */
  resetWatches(): number {
    const all = [...this.watches];
    all.forEach((w) => w.reset());
    this.count('watch reset', all.length);
    return all.length;
  }

  /** Adds n to the count of a kind of fault (for faults played outside this class, e.g. compaction). */
  count(kind: string, n = 1): void {
    if (n > 0) this.counts.set(kind, (this.counts.get(kind) ?? 0) + n);
  }

  /** How many faults fired, by kind. */
  fired(): Record<string, number> {
    return Object.fromEntries([...this.counts].sort(([a], [b]) => a.localeCompare(b)));
  }

  /** How many watch streams are open now. */
  get openWatches(): number {
    return this.watches.size;
  }

  /** @internal The fault this request triggers (counting it), if any. */
  take(t: FaultTarget): FaultSpec | undefined {
    const e = this.entries.find((x) => x.left > 0 && matches(x.spec, t));
    if (!e) return undefined;
    e.left--;
    e.hits++;
    this.count(e.spec.label ?? labelOf(e.spec));
    return e.spec;
  }

  /** @internal Tracks an open watch until it closes. */
  track(w: ActiveWatch): () => void {
    this.watches.add(w);
    return () => this.watches.delete(w);
  }
}

function matches(s: FaultSpec, t: FaultTarget): boolean {
  if (s.method && s.method.toUpperCase() !== t.method) return false;
  if (s.pathIncludes && !t.path.includes(s.pathIncludes)) return false;
  if (s.watch !== undefined && s.watch !== t.watch) return false;
  if (s.actor !== undefined && s.actor !== t.actor) return false;
  return true;
}

/** "429", "reset after write", "slow 200 ms"… */
export function labelOf(s: FaultSpec): string {
  const what = s.reset ? 'reset' : s.status !== undefined ? String(s.status) : `slow ${s.delayMs} ms`;
  const delayed = (s.reset || s.status !== undefined) && s.delayMs ? ` after ${s.delayMs} ms` : '';
  return `${what}${delayed}${s.after ? ' after write' : ''}`;
}
