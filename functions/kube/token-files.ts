// A kubeconfig file's `tokenFile` users, for client-node (the CLI's and the relay's
// KubeConfig). Apart from kubeconfig-endpoint.ts so that the yaml parser stays out of the
// bundles that never load a kubeconfig file through client-node.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';

/**
 * A kubeconfig user's `tokenFile` (clientcmd v1; kubectl reads it again every minute), which
 * client-node ignores (it reads only `token-file`, once): each such user of `file` gets
 * client-node's token-file provider, which reads the file again every minute, the path
 * taken from the file's directory as kubectl takes it. Without it the user's requests went
 * out anonymous (review).
 */
export function useTokenFiles(kc: KubeConfig, file: string): void {
  let raw: { users?: { name?: unknown; user?: { tokenFile?: unknown; token?: unknown; exec?: unknown; 'auth-provider'?: unknown } | null }[] } | undefined;
  try {
    raw = parse(readFileSync(file, 'utf8')) as typeof raw;
  } catch {
    return;
  }
  for (const entry of raw?.users ?? []) {
    const tokenFile = entry.user?.tokenFile;
    if (typeof tokenFile !== 'string' || tokenFile === '' || entry.user?.token || entry.user?.exec || entry.user?.['auth-provider']) continue;
    const user = kc.getUsers().find((u) => u.name === entry.name);
    if (user && !user.token && !user.authProvider) {
      Object.assign(user, { authProvider: { name: 'tokenFile', config: { tokenFile: isAbsolute(tokenFile) ? tokenFile : join(dirname(file), tokenFile) } } });
    }
  }
}

/** Where client-node's loadFromCluster reads the pod's service-account token. */
export const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** The files the KUBECONFIG variable lists (none when it is unset or empty). */
export function kubeconfigVariableFiles(env: Record<string, string | undefined> = process.env): string[] {
  return (env.KUBECONFIG ?? '').split(delimiter).filter((f) => f.trim() !== '');
}

/** The files client-node's loadFromDefault reads: KUBECONFIG's, else ~/.kube/config if there is one. */
export function defaultKubeconfigFiles(env: Record<string, string | undefined> = process.env): string[] {
  const listed = kubeconfigVariableFiles(env);
  if (listed.length > 0) return listed;
  const home = join(homedir(), '.kube', 'config');
  return existsSync(home) ? [home] : [];
}
