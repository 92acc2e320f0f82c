// A log of every request the fake API server answered, to measure API cost per event.

/** One request: what was asked and what it cost. */
export interface RequestRecord {
  method: string;
  path: string;
  /** Query parameters (last value wins). */
  query: Record<string, string>;
  /** HTTP status sent (0 when the connection was dropped by a fault). */
  status: number;
  /** Response body bytes (a watch keeps counting while it streams). */
  bytes: number;
  /** Request body bytes. */
  requestBytes: number;
  watch: boolean;
  /** The verb Kubernetes audit logs would name: get, list, watch, create, update, patch, delete, deletecollection. */
  verb: string;
  /** Who sent it: the bearer token, else the User-Agent ('' when neither). */
  actor?: string;
  /** Refused by authentication (401) or authorization (403), with the server's `authorization`. */
  denied?: boolean;
}

/** The request log exposed as `server.requests`. */
export class RequestLog {
  readonly entries: RequestRecord[] = [];

  /** Forgets everything logged so far (e.g. after test setup). */
  clear(): void {
    this.entries.length = 0;
  }

  /** Records matching a predicate. */
  filter(pred: (r: RequestRecord) => boolean): RequestRecord[] {
    return this.entries.filter(pred);
  }

  /** Requests and response bytes, optionally only those matching. */
  totals(pred: (r: RequestRecord) => boolean = () => true): { requests: number; bytes: number } {
    const hits = this.entries.filter(pred);
    return { requests: hits.length, bytes: hits.reduce((n, r) => n + r.bytes, 0) };
  }

  /** @internal */
  add(r: RequestRecord): RequestRecord {
    this.entries.push(r);
    return r;
  }
}
