// The last word on an error no command handled: what happened, in one line, and what to do.
import { CliError, rootCause } from './cli-error.ts';

const HINTS: [RegExp, string][] = [
  [/No active cluster!/, 'no cluster configured: the kubeconfig (KUBECONFIG or ~/.kube/config) has no current context with a cluster; choose one with kubectl config use-context NAME, or run in a pod'],
  [/ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|ECONNRESET|fetch failed|socket hang up/, 'cannot reach the API server ($cause); check that the cluster is running and that the kubeconfig\'s server address is right'],
  [/EADDRINUSE/, 'an address is already in use ($cause); choose another with the command\'s listen variable or flag (--help names it)'],
  [/ENOENT.*kube|kubeconfig/i, 'the kubeconfig cannot be read ($cause); set KUBECONFIG to an existing file'],
];

/** One line for any error: a CliError's own message, or the root cause with a hint. */
export function explain(err: unknown): string {
  if (err instanceof CliError) return err.message;
  const cause = rootCause(err).replace(/\s+/g, ' ').trim();
  const hint = HINTS.find(([re]) => re.test(cause) || (err instanceof Error && re.test(err.message)));
  return hint ? hint[1].replace('$cause', cause) : `${cause} (LOG_LEVEL=debug shows the stack)`;
}
