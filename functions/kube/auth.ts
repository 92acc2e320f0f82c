// Per-request credentials shared by both Kube implementations: where the Authorization
// header comes from, and the one retry a 401 earns.
import { KubeError } from './errors.ts';

/** Where a request's Authorization header comes from, for credentials that expire or rotate. */
export interface KubeAuth {
  /** The Authorization header value for the next request ('' sends none). */
  header(): Promise<string>;
  /** Forget the cached credential after a 401, so the next header() reads or signs a fresh one. */
  invalidate(): void;
  /**
   * The client certificate the last header() came with, when the credential is one (an exec
   * plugin's ExecCredential may return a certificate instead of a token, as Teleport's does);
   * undefined: the endpoint's own, if any.
   */
  clientCertificate?(): ClientCertificate | undefined;
  /** Where the credential comes from and what a refusal of it usually means, for the 401's message. */
  source?: string;
}

/** A client certificate and its key (PEM). */
export interface ClientCertificate {
  cert: string | Buffer;
  key: string | Buffer;
}

/** A fixed bearer token (a kubeconfig's `token`). */
export function bearerAuth(token: string): KubeAuth {
  return { header: () => Promise.resolve(`Bearer ${token}`), invalidate: () => {} };
}

/**
 * A 401 means the token expired early or was rotated: read a fresh one and try once more.
 * A second 401 is an authentication failure, terminal (status 401), never retried.
 */
export async function withFreshCredentialOn401<T>(auth: KubeAuth, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof KubeError) || err.status !== 401 || err.reason === 'CredentialError') throw err;
    auth.invalidate();
    try {
      return await fn();
    } catch (again) {
      if (again instanceof KubeError && again.status === 401) {
        const source = auth.source ? ` (${auth.source})` : '';
        throw new KubeError({ status: 401, reason: 'Unauthorized', message: `the API server refused a freshly read credential${source}: ${again.message}`, cause: again });
      }
      throw again;
    }
  }
}
