// Shared helpers for the fake API server tests: a server per test, typed clients, and
// assertions on metav1.Status errors.
/* eslint-disable @typescript-eslint/no-explicit-any -- watch events are raw JSON */
import assert from 'node:assert/strict';
import { after } from 'node:test';
import {
  ApiException, CoordinationV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig,
} from '@kubernetes/client-node';
import { startApiServer, type ApiServer, type ApiServerOptions, type StatusBody } from '../../functions/cluster/index.ts';

export interface Harness {
  server: ApiServer;
  kc: KubeConfig;
  core: CoreV1Api;
  coord: CoordinationV1Api;
  custom: CustomObjectsApi;
}

/** Starts a fake API server that is closed when the test file ends. */
export async function harness(opts: ApiServerOptions = {}): Promise<Harness> {
  const server = await startApiServer(opts);
  after(() => server.close());
  const kc = server.kubeConfig();
  return { server, kc, core: kc.makeApiClient(CoreV1Api), coord: kc.makeApiClient(CoordinationV1Api), custom: kc.makeApiClient(CustomObjectsApi) };
}

/** Call options that send a merge patch. */
export const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
/** Call options that send a strategic merge patch. */
export const strategicPatch = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

/** Awaits a rejected client-node call and returns the metav1.Status it carried. */
export async function rejects(p: Promise<unknown>, code: number): Promise<StatusBody> {
  try {
    await p;
  } catch (e) {
    if (!(e instanceof ApiException)) throw e;
    assert.equal(e.code, code, `expected HTTP ${code}, got ${e.code}: ${String(e.body)}`);
    const body = (typeof e.body === 'string' ? JSON.parse(e.body) : e.body) as StatusBody;
    assert.equal(body.kind, 'Status');
    assert.equal(body.code, code);
    return body;
  }
  return assert.fail(`expected HTTP ${code}, the call succeeded`);
}

/** A minimal valid pod. */
export function pod(name: string, extra: { labels?: Record<string, string>; namespace?: string; spec?: Record<string, unknown>; status?: Record<string, unknown> } = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace: extra.namespace ?? 'default', ...(extra.labels ? { labels: extra.labels } : {}) },
    spec: { containers: [{ name: 'app', image: 'nginx:1.27' }], ...extra.spec },
    ...(extra.status ? { status: extra.status } : {}),
  };
}

/** Polls until the predicate holds; fails with `what` after a generous bound (a hang guard, not a timing assertion). */
export async function eventually(pred: () => boolean, what: string, boundMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!pred()) {
    if (Date.now() - start > boundMs) assert.fail(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A raw watch over fetch: collects parsed events until the stream ends or stop() is called. */
export function rawWatch(url: string, path: string, query: Record<string, string>): { events: { type: string; object: any }[]; ended: Promise<void>; stop: () => void } {
  const ctl = new AbortController();
  const events: { type: string; object: any }[] = [];
  const u = new URL(url + path);
  u.searchParams.set('watch', 'true');
  for (const [k, v] of Object.entries(query)) u.searchParams.set(k, v);
  const ended = (async () => {
    const res = await fetch(u, { signal: ctl.signal });
    assert.equal(res.status, 200);
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of res.body!) {
        buf += decoder.decode(chunk as Uint8Array, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          events.push(JSON.parse(buf.slice(0, nl)));
          buf = buf.slice(nl + 1);
        }
      }
    } catch (e) {
      if ((e as Error).name !== 'AbortError') throw e;
    }
  })();
  return { events, ended, stop: () => ctl.abort() };
}
