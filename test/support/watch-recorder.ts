// Records watch streams from an API server over HTTP, as
// `kubectl get --raw '<path>?watch=1'` shows them: one JSON watch event per line.

/** A running recording; stop() ends the streams and returns the lines in resourceVersion order. */
export interface Recording {
  stop(): Promise<string[]>;
}

/**
 * Starts a watch on each collection path (e.g. `/api/v1/namespaces/default/pods`), as the
 * bearer of `token` when given: a world enforcing the shipped RBAC refuses an anonymous
 * watch (403; review75 M5: `npm run record` broke on it unseen).
 */
export async function recordWatch(baseUrl: string, paths: string[], o: { token?: string } = {}): Promise<Recording> {
  const lines: string[] = [];
  /** The resourceVersions the watches have brought, as they arrive (caughtUp polls this). */
  const seen = new Set<number>();
  const headers: Record<string, string> = o.token ? { authorization: `Bearer ${o.token}` } : {};
  const opened = await Promise.allSettled(paths.map(async (path) => {
    const res = await fetch(`${baseUrl}${path}?watch=1`, { headers });
    if (!res.ok || !res.body) throw new Error(`watch ${path}: HTTP ${res.status}`);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    const pump = (async (): Promise<void> => {
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += value;
        for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (line) {
            lines.push(line);
            seen.add(rvOf(line));
          }
        }
      }
    })();
    return { reader, pump };
  }));
  const streams = opened.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
  const refused = opened.find((o) => o.status === 'rejected');
  if (refused) {
    // Those that opened are closed, or they would hold the server open.
    for (const s of streams) await s.reader.cancel();
    throw refused.reason;
  }
  /**
   * Until every object a LIST of the paths shows now has arrived on the watches at that
   * version (a stream delivers in order, so everything before it has too), or `boundMs`:
   * a fixed pause lost the story's last event when the event loop was held up longer
   * (review76). A deletion after the last object's change still rides on the pause after.
   */
  const caughtUp = async (boundMs: number): Promise<void> => {
    const want = (await Promise.all(paths.map(async (path) => {
      const res = await fetch(`${baseUrl}${path}`, { headers });
      const list = (await res.json()) as { items?: { metadata: { resourceVersion: string } }[] };
      return (list.items ?? []).map((i) => Number(i.metadata.resourceVersion));
    }))).flat();
    const until = Date.now() + boundMs;
    while (Date.now() < until) {
      if (want.every((rv) => seen.has(rv))) return;
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return {
    async stop() {
      await caughtUp(10_000);
      await new Promise((r) => setTimeout(r, 200)); // a deletion after the last change
      for (const s of streams) await s.reader.cancel();
      await Promise.all(streams.map((s) => s.pump.catch(() => undefined)));
      return lines.sort((a, b) => rvOf(a) - rvOf(b));
    },
  };
}

/** A watch line's object's resourceVersion. */
function rvOf(line: string): number {
  return Number((JSON.parse(line) as { object: { metadata: { resourceVersion: string } } }).object.metadata.resourceVersion);
}
