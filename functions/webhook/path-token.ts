// An optional secret first path segment for a webhook that anyone on the internet can reach
// (the public Worker, review79 #3). With a token, only /<token>/validate-… and
// /<token>/healthz are served; every other request gets a bare 404 that names no path. The
// Kubernetes API allows any path in a webhook `url`, so the token goes there. Without a token
// the inner fetch serves every request as before. Runtime-free: Request, URL and WebCrypto
// only, so the Worker bundle stays free of Node built-ins.
import { WEBHOOK_PATH } from './app.ts';
import type { WebhookLog } from './app.ts';

/** What a token may be: one path segment that no URL encoding changes, long enough to guess at no cost. */
export const PATH_TOKEN_PATTERN = /^[A-Za-z0-9._~-]{16,256}$/;

/**
 * The secret's value: one token, or two separated by a comma while a rotation is under way
 * (the new one and the old: the API server keeps calling the old URL until the
 * ValidatingWebhookConfiguration names the new one). Undefined when a token is malformed or
 * there are more than two.
 */
export function parsePathTokens(value: string): readonly string[] | undefined {
  const tokens = value.split(',');
  return tokens.length <= 2 && tokens.every((t) => PATH_TOKEN_PATTERN.test(t)) ? tokens : undefined;
}

/** The paths served behind the token, as the inner fetch knows them. */
const SERVED = new Set([WEBHOOK_PATH, '/healthz']);

type Fetch = (request: Request) => Response | Promise<Response>;

const status = (code: 404 | 500, reason: string, message: string): Response =>
  new Response(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message }), {
    status: code,
    headers: { 'content-type': 'application/json' },
  });

const encoder = new TextEncoder();

async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)));
}

/** Equal digests, compared without an early exit: the time taken says nothing about where they differ. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ (b[i] ?? 0);
  return diff === 0;
}

/** Whether `given` is one of `digests`, every one compared: the time taken does not say which matched. */
function oneOf(given: Uint8Array, digests: readonly Uint8Array[]): boolean {
  let found = false;
  for (const d of digests) found = sameBytes(given, d) || found;
  return found;
}

/**
 * `(request, token) → Response`: `inner` behind the token, when one is set ('' counts as
 * unset; `NEW,OLD` serves both, for a rotation). A value parsePathTokens refuses is a
 * misconfiguration: every request gets a 500 and `log.failed` says why, rather than the
 * webhook being served openly.
 */
export function createPathTokenGate(inner: Fetch, log?: Pick<WebhookLog, 'failed'>): (request: Request, token: string | undefined) => Promise<Response> {
  let known: { value: string; digests: Promise<Uint8Array[]> | undefined } | undefined;
  return async (request, token) => {
    if (token === undefined || token === '') return inner(request);
    if (known?.value !== token) {
      const tokens = parsePathTokens(token);
      known = { value: token, digests: tokens && Promise.all(tokens.map(sha256)) };
    }
    if (known.digests === undefined) {
      log?.failed(new Error('EPHEMERA_WEBHOOK_TOKEN must be a token of 16 to 256 letters, digits, "-", ".", "_" or "~" (openssl rand -hex 32 makes one), or two joined by a comma while rotating; every request is refused until it is'));
      return status(500, 'InternalError', 'internal error');
    }
    const url = new URL(request.url);
    const slash = url.pathname.indexOf('/', 1);
    const rest = slash < 0 ? '' : url.pathname.slice(slash);
    const given = await sha256(slash < 0 ? '' : url.pathname.slice(1, slash));
    if (!oneOf(given, await known.digests) || !SERVED.has(rest)) return status(404, 'NotFound', 'not found');
    url.pathname = rest;
    return inner(new Request(url, request));
  };
}
