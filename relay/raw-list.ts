// LIST as raw JSON, through the KubeConfig's own authentication and TLS (the same request
// path client-node's Watch uses). Not the typed list calls: their objects come back
// re-serialised (dates as `…00.000Z`, no `kind`), so a fingerprint of a listed object would
// differ from the same object seen on the watch, and every first change after a list would
// be forwarded for nothing.
import { createConfiguration, HttpMethod, RequestContext, type KubeConfig } from '@kubernetes/client-node';

/** One page of a LIST: raw items, the snapshot's resourceVersion and the continue token. */
export interface ListPage {
  items: unknown[];
  resourceVersion: string;
  continue?: string;
}

/** A LIST answered with an error status (kept apart so the loop can tell 410 from the rest). */
export class ListError extends Error {
  readonly statusCode: number;
  constructor(statusCode: number, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ListError';
    this.statusCode = statusCode;
  }
}

/** GET `path` (a collection) with `limit`/`continue`; throws ListError or the transport's error. */
export async function listRaw(kc: KubeConfig, path: string, query: { limit: number; continue?: string | undefined; timeoutMs: number }): Promise<ListPage> {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('no current cluster in the kubeconfig');
  const url = new URL(server + path);
  url.searchParams.set('limit', String(query.limit));
  if (query.continue) url.searchParams.set('continue', query.continue);
  const ctx = new RequestContext(url.toString(), HttpMethod.GET);
  ctx.setSignal(AbortSignal.timeout(query.timeoutMs));
  await kc.applySecurityAuthentication(ctx);
  const res = await createConfiguration().httpApi.send(ctx).toPromise();
  const text = await res.body.text();
  if (res.httpStatusCode !== 200) throw new ListError(res.httpStatusCode, `LIST ${path}: HTTP ${res.httpStatusCode}: ${statusMessage(text)}`);
  const body = JSON.parse(text) as { items?: unknown; metadata?: { resourceVersion?: string; continue?: string } };
  if (!Array.isArray(body.items)) throw new ListError(500, `LIST ${path}: the answer has no items array`);
  return { items: body.items, resourceVersion: body.metadata?.resourceVersion ?? '', continue: body.metadata?.continue || undefined };
}

function statusMessage(text: string): string {
  try {
    return (JSON.parse(text) as { message?: string }).message ?? text.slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
}
