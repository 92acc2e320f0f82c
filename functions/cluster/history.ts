// The API server's own history of writes: every object it stored or removed, in order, with
// the request that caused it (verb, subresource, who asked), and every write it refused.
// Invariants of a whole-system run are checked from this record, never from the clients' logs.
import type { KubeObject, ObjectStore, StoreEvent } from './store.ts';

/** What made a write: an HTTP request (its verb, subresource and actor) or in-process code. */
export interface WriteCause {
  /** create, update, patch, delete; `store` for writes made in-process (kubelet, seeding, GC). */
  verb: string;
  /** '', 'status' or 'ephemeralcontainers'. */
  subresource: string;
  /** Who asked: the request's bearer token, else its User-Agent; `in-process` for the rest. */
  actor: string;
}

/** One stored write, as the watch would show it, plus its cause. */
export interface WriteRecord extends WriteCause {
  /** Position in the history (1, 2, …). */
  seq: number;
  /** Server time of the write, ISO 8601 with milliseconds. */
  time: string;
  type: StoreEvent['type'];
  /** The object after the write (for DELETED, its last state), with its new resourceVersion. */
  object: KubeObject;
}

/** A write the server answered with an error (status ≥ 400), injected faults excluded. */
export interface RejectedWrite {
  time: string;
  verb: string;
  path: string;
  status: number;
  actor: string;
  /** The Status message the client got. */
  message?: string;
}

const IN_PROCESS: WriteCause = { verb: 'store', subresource: '', actor: 'in-process' };

/** Records every write of one store, and the refused writes the HTTP layer reports. */
export class WriteHistory {
  readonly writes: WriteRecord[] = [];
  readonly rejected: RejectedWrite[] = [];
  private cause: WriteCause = IN_PROCESS;
  private readonly listeners = new Set<(w: WriteRecord) => void>();
  private readonly clock: () => Date;

  constructor(store: ObjectStore, clock: () => Date) {
    this.clock = clock;
    store.subscribe((e) => this.record(e));
  }

  /** Runs a synchronous write with its cause; every store event it emits is attributed to it. */
  during<T>(cause: WriteCause, fn: () => T): T {
    const before = this.cause;
    this.cause = cause;
    try {
      return fn();
    } finally {
      this.cause = before;
    }
  }

  /** Notes a refused write (validation, conflict, not found…). */
  reject(r: Omit<RejectedWrite, 'time'>): void {
    this.rejected.push({ time: this.clock().toISOString(), ...r });
  }

  /** Calls fn synchronously on every new write (before the request is answered); returns the unsubscribe. */
  onWrite(fn: (w: WriteRecord) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Forgets everything recorded so far. */
  clear(): void {
    this.writes.length = 0;
    this.rejected.length = 0;
  }

  private record(e: StoreEvent): void {
    const w: WriteRecord = { seq: this.writes.length + 1, time: this.clock().toISOString(), type: e.type, ...this.cause, object: e.object };
    this.writes.push(w);
    for (const fn of [...this.listeners]) fn(w);
  }
}
