// The RBAC the shipped manifests grant, for the embedded server to enforce (its
// `authorization`): tests that run the functions or the relay as their own identities then
// fail with kube-apiserver's 403 wherever the code asks for something the manifests leave out.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { serviceAccountUser, type ApiServer, type Authorization, type User } from '../../functions/cluster/index.ts';
import { FUNCTIONS_K8S_GROUP } from '../../infra/aws/functions-stack.ts';

const RBAC_KINDS = new Set(['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding']);

type Doc = { kind?: string; metadata?: { namespace?: string } };

/** The RBAC documents of shipped manifests; `ephemera-locks` moved to `lockNamespace` where a world keeps its Leases elsewhere. */
export function shippedRbac(files: string[], lockNamespace = 'ephemera-locks'): unknown[] {
  return files.flatMap((f) => parseAllDocuments(readFileSync(f, 'utf8')).map((d) => d.toJS() as Doc))
    .filter((d) => RBAC_KINDS.has(d?.kind ?? ''))
    .map((d) => (d.metadata?.namespace === 'ephemera-locks' ? { ...d, metadata: { ...d.metadata, namespace: lockNamespace } } : d));
}

const K = 'infra/kubernetes';
/**
 * Each install's files, as the README has them applied, the optional virtual-kubelet ones
 * included; `group`: the one Kubernetes group the install may bind, which the EKS access entry
 * maps the functions' role to (review94 L1: every other subject is defined by the same files).
 */
export const INSTALLS: Record<'eks' | 'token' | 'all-in-cluster', { files: string[]; group?: string }> = {
  eks: { files: ['relay/manifest.yaml', `${K}/functions-rbac.yaml`, `${K}/functions-rbac-eks.yaml`, `${K}/functions-rbac-virtual-kubelet.yaml`, `${K}/functions-rbac-virtual-kubelet-eks.yaml`], group: FUNCTIONS_K8S_GROUP },
  token: { files: ['relay/manifest.yaml', `${K}/functions-rbac.yaml`, `${K}/functions-rbac-token.yaml`, `${K}/functions-rbac-virtual-kubelet.yaml`, `${K}/functions-rbac-virtual-kubelet-token.yaml`] },
  'all-in-cluster': { files: [`${K}/all-in-cluster.yaml`, `${K}/functions-rbac-virtual-kubelet.yaml`, `${K}/functions-rbac-virtual-kubelet-all-in-cluster.yaml`, 'infra/webhook/validating-webhook-service.yaml'] },
};

/** The Lambda functions' user on EKS: its role's session, in the access entry's Kubernetes group. */
export const LAMBDA_USER: User = { username: 'arn:aws:sts::123456789012:assumed-role/ephemera-reconciler/ephemera-reconciler', groups: [FUNCTIONS_K8S_GROUP, 'system:authenticated'] };
/** Tokens of a world whose server enforces the shipped RBAC. */
export const TOKENS = { functions: 'functions', relay: 'relay', admin: 'admin' } as const;

/**
 * The functions as deployed with the Lambda setup on EKS (functions-rbac.yaml and its EKS
 * binding, and the virtual-kubelet files operators apply for such nodes), the relay as its
 * manifest has it, and an administrator for what a test does besides. `functionsTokens`
 * authenticate as the functions too (one per instance, so the request log and write
 * history name the instance: each Lambda invocation is the same role).
 */
export function shippedAuthorization(lockNamespace = 'ephemera-locks', functionsTokens: string[] = []): Authorization {
  return {
    users: {
      [TOKENS.functions]: LAMBDA_USER,
      // More tokens of the same user: several function instances told apart in the server's logs.
      ...Object.fromEntries(functionsTokens.map((t) => [t, LAMBDA_USER])),
      [TOKENS.relay]: serviceAccountUser('ephemera-system', 'ephemera-relay'),
      [TOKENS.admin]: { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] },
    },
    rbac: shippedRbac(INSTALLS.eks.files, lockNamespace),
  };
}

/**
 * A world's server: a client made without a token is the administrator's (the test's own
 * reads and writes), and close() checks that the shipped RBAC granted every request: the
 * functions tolerate some refusals by design (a 403 listing Events leaves failures counted
 * by the status), so a missing grant would otherwise pass unseen.
 */
export function grantChecked(server: ApiServer): ApiServer {
  return {
    ...server,
    kubeConfig: (o) => server.kubeConfig({ token: o?.token ?? TOKENS.admin }),
    kubeconfigYaml: (o) => server.kubeconfigYaml({ token: o?.token ?? TOKENS.admin }),
    async close() {
      await server.close();
      const denied = server.requests.entries.filter((e) => e.denied).map((e) => `${e.actor ?? ''}: ${e.verb} ${e.path} ${e.status}`);
      assert.deepEqual([...new Set(denied)], [], 'the shipped RBAC grants every request the code made');
    },
  };
}
