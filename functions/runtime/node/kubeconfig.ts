// Which cluster a command acts on, chosen explicitly (--kubeconfig FILE or --in-cluster) and
// checked before anything runs: a kubeconfig that cannot be read, names no cluster or has no
// current context, or a server that does not answer, stops the command with one line that
// says what to fix instead of client-node's "No active cluster!" or "fetch failed".
import { existsSync } from 'node:fs';
import { KubeConfig, VersionApi, type ObservableMiddleware } from '@kubernetes/client-node';
// The observable stub's `of` is not re-exported at the root; middleware must return it.
import { of } from '@kubernetes/client-node/dist/gen/rxjsStub.js';
import { isKubeError } from '../../kube/errors.ts';
import { contextProblem, prepareKubeConfig } from '../../kube/kubeconfig-endpoint.ts';
import { SERVICE_ACCOUNT_TOKEN, useTokenFiles } from '../../kube/token-files.ts';
import { CliError, rootCause } from './cli-error.ts';

/** Where client-node's loadFromCluster reads the pod's service account. */
const SERVICE_ACCOUNT_CA = '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt';

/** Where to find the cluster. */
export type ClusterSource = { kubeconfig: string } | { inCluster: true };

/** A loaded configuration and the words that tell a person which cluster it is. */
export interface Cluster {
  kc: KubeConfig;
  server: string;
  context: string;
  /** "kubeconfig FILE" or "in-cluster service account". */
  source: string;
}

/** Load and check a kubeconfig file or the in-cluster service account. */
export function loadCluster(from: ClusterSource): Cluster {
  const kc = new KubeConfig();
  if ('inCluster' in from) {
    if (!process.env.KUBERNETES_SERVICE_HOST) {
      throw new CliError('--in-cluster: KUBERNETES_SERVICE_HOST is not set, so this is not running in a pod; use --kubeconfig FILE outside a cluster', 2);
    }
    // client-node reads these only at the first request: without them, the answer was
    // "cannot reach the API server (ENOENT …ca.crt)", which sends one to check the network.
    const missing = [SERVICE_ACCOUNT_CA, SERVICE_ACCOUNT_TOKEN].filter((f) => !existsSync(f));
    if (missing.length > 0) {
      throw new CliError(`--in-cluster: no service-account token or CA is mounted in this pod (${missing.join(' and ')} missing); mount them (automountServiceAccountToken: true) or use --kubeconfig FILE`, 2);
    }
    kc.loadFromCluster();
    prepared(kc);
    return { kc, server: kc.getCurrentCluster()?.server ?? '', context: kc.getCurrentContext(), source: 'in-cluster service account' };
  }
  const file = from.kubeconfig;
  if (!existsSync(file)) throw new CliError(`kubeconfig ${file} does not exist; pass --kubeconfig with the path of a kubeconfig file`, 2);
  try {
    kc.loadFromFile(file);
    useTokenFiles(kc, file);
  } catch (err) {
    throw new CliError(`kubeconfig ${file} cannot be read: ${rootCause(err).replace(/\s+/g, ' ').slice(0, 160)}; fix the file or pass another with --kubeconfig`, 2, { cause: err });
  }
  const checked = checkContext(kc, file);
  prepared(kc);
  return { kc, ...checked, source: `kubeconfig ${file}` };
}

/** The kubeconfig checked and its proxies set (kubeconfig-endpoint.ts prepareKubeConfig), or a usage error. */
function prepared(kc: KubeConfig): void {
  try {
    prepareKubeConfig(kc);
  } catch (err) {
    throw new CliError((err as Error).message, 2, { cause: err });
  }
}

function checkContext(kc: KubeConfig, file: string): { server: string; context: string } {
  const problem = contextProblem(kc, `kubeconfig ${file}`, `kubectl --kubeconfig ${file}`);
  if (problem) throw new CliError(`${problem}; or pass another file with --kubeconfig`, 2);
  return { server: kc.getCurrentCluster()?.server ?? '', context: kc.getCurrentContext() };
}

/** One line naming the cluster: `https://… (context prod, kubeconfig ~/.kube/config)`. */
export function describeCluster(c: Cluster): string {
  return `${c.server} (context ${c.context}, ${c.source})`;
}

/** Ask the server for its version; an unreachable or refusing server is a CliError naming it. */
export async function probeCluster(c: Cluster, timeoutMs = 5_000): Promise<void> {
  const timeout: ObservableMiddleware = {
    pre: (req) => {
      req.setSignal(AbortSignal.timeout(timeoutMs));
      return of(req);
    },
    post: (res) => of(res),
  };
  try {
    await c.kc.makeApiClient(VersionApi).getCode({ middleware: [timeout], middlewareMergeStrategy: 'append' });
  } catch (err) {
    // Whatever answers 404 on /version is not a kube-apiserver (a wrong host or port, a path
    // prefix, a proxy's page): "try again" would not help (review 63 L10).
    const answer = answered(err);
    if (answer?.code === 404) {
      const where = c.source.startsWith('kubeconfig') ? 'the server address in the kubeconfig' : 'KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT';
      throw new CliError(`the server ${describeCluster(c)} answered HTTP 404 on /version${answer.message ? ` (${answer.message})` : ''}: this URL does not serve the Kubernetes API; check ${where}`, 1, { cause: err });
    }
    throw unreachable(c, err);
  }
}

/** The one-line error for a server that did not answer, or answered with an error (its own words kept). */
export function unreachable(c: Cluster, err: unknown): CliError {
  const answer = answered(err);
  if (!answer) return new CliError(`cannot reach the API server ${describeCluster(c)}: ${rootCause(err)}; check that the cluster is running and that the kubeconfig's server address and credentials are right`, 1, { cause: err });
  const said = `HTTP ${answer.code}${answer.message ? `: ${answer.message}` : ''}`;
  const what = answer.code === 401 ? `refused these credentials (${said}); check the kubeconfig's user: its token or certificate may have expired`
    : answer.code === 403 ? `forbade it (${said}); check what these credentials may do (RBAC)`
      : `answered with an error (${said}); it may be starting or overloaded: try again, or check its health`;
  return new CliError(`the API server ${describeCluster(c)} ${what}`, 1, { cause: err });
}

/** The HTTP code and the server's message of an error answer (a KubeError, or client-node's ApiException), if there was one. */
function answered(err: unknown): { code: number; message: string } | undefined {
  if (isKubeError(err) && err.status > 0) return { code: err.status, message: err.message };
  const e = err as { code?: unknown; body?: unknown };
  if (!(err instanceof Error) || typeof e.code !== 'number' || e.code < 400) return undefined;
  // client-node keeps no body for some codes (401): its own "Message:" line is all there is.
  const body = typeof e.body === 'string' ? e.body : e.body === undefined ? '' : JSON.stringify(e.body);
  let message = body.trim().slice(0, 300) || (/^Message: (.*)$/m.exec(err.message)?.[1] ?? '');
  try {
    const status = JSON.parse(body) as { message?: unknown };
    if (typeof status.message === 'string') message = status.message;
  } catch {
    // not a metav1.Status: the text as it came (a proxy's page, cut)
  }
  return { code: e.code, message: message.replace(/\s+/g, ' ') };
}
