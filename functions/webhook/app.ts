// The webhook as a hono app: the one piece every runtime (Node, Workers, Lambda URL) serves.
// It knows no runtime; adapters call app.fetch. Malformed input gets a 400 that says what
// is wrong; nothing a client sends is answered with a 500.
import { Hono } from 'hono';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { parseAdmissionReview } from './admission.ts';
import type { AdmissionReviewRequest } from './admission.ts';
import { BadReviewError, review } from './review.ts';

/** The path the ValidatingWebhookConfiguration points at (controller-runtime's naming). */
export const WEBHOOK_PATH = '/validate-apps-kruise-io-v1alpha1-ephemeraljob';

/**
 * Largest body accepted: an object and its oldObject, each up to etcd's 1.5 MiB, plus the
 * envelope. The API server itself refuses bigger requests long before they reach us.
 */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** What the app reports per request; runtimes plug in their logger (pino, console). */
export interface WebhookLog {
  decision(entry: { uid: string; operation: string; name?: string; allowed: boolean; errors: number; warnings: number }): void;
  rejected(entry: { status: number; message: string }): void;
  failed(error: unknown): void;
}

export interface WebhookAppOptions {
  log?: WebhookLog;
}

const silent: WebhookLog = { decision: () => {}, rejected: () => {}, failed: () => {} };

/** Build the app; no state is kept between requests. */
export function createWebhookApp(options: WebhookAppOptions = {}): Hono {
  const log = options.log ?? silent;
  const app = new Hono();
  const fail = (c: Context, status: 400 | 404 | 405 | 413 | 500, message: string): Response => {
    if (status !== 500) log.rejected({ status, message });
    return c.json(statusBody(status, message), status);
  };
  app.get('/healthz', (c) => c.text('ok'));
  app.post(
    WEBHOOK_PATH,
    bodyLimit({ maxSize: MAX_BODY_BYTES, onError: (c) => fail(c, 413, `body larger than ${MAX_BODY_BYTES} bytes`) }),
    async (c) => {
      const parsed = parseReview(await c.req.text());
      if (!parsed.ok) return fail(c, 400, parsed.message);
      try {
        const out = review(parsed.review.request);
        const r = out.response;
        log.decision({
          uid: r.uid, operation: parsed.review.request.operation, name: parsed.review.request.name,
          allowed: r.allowed, errors: r.status?.details?.causes?.length ?? 0, warnings: r.warnings?.length ?? 0,
        });
        return c.json(out);
      } catch (err) {
        if (err instanceof BadReviewError) return fail(c, 400, err.message);
        throw err;
      }
    },
  );
  app.all(WEBHOOK_PATH, (c) => {
    c.header('Allow', 'POST');
    return fail(c, 405, `method ${c.req.method} not allowed; POST an AdmissionReview`);
  });
  app.notFound((c) => fail(c, 404, `no route ${c.req.method} ${c.req.path}; POST AdmissionReviews to ${WEBHOOK_PATH}`));
  app.onError((err, c) => {
    log.failed(err);
    return fail(c, 500, 'internal error');
  });
  return app;
}

type Parsed = { ok: true; review: AdmissionReviewRequest } | { ok: false; message: string };

/** Text → AdmissionReview, or a message saying exactly what is wrong with it. */
export function parseReview(text: string): Parsed {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, message: `body is not JSON: ${(err as Error).message}` };
  }
  const r = parseAdmissionReview(json);
  return r.ok ? r : { ok: false, message: `not an admission.k8s.io/v1 AdmissionReview: ${r.message}` };
}

/** A metav1.Status body for error answers, so API server logs show a readable reason. */
function statusBody(code: number, message: string): Record<string, unknown> {
  const reason = { 400: 'BadRequest', 404: 'NotFound', 405: 'MethodNotAllowed', 413: 'RequestEntityTooLarge' }[code] ?? 'InternalError';
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message };
}
