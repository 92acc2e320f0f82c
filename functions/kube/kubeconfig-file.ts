// A `kubeconfig` cluster source without @kubernetes/client-node (whose KubeConfig would put
// ~1 MB into the Lambda bundle): the KUBECONFIG file's current context, or the in-cluster
// service account, as a KubeEndpoint and a KubeAuth. It reads what a static kubeconfig
// holds (server, CA, client certificate, token, token file); exec plugins and auth
// providers are refused with a pointer to the eks and secret sources.
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import * as z from 'zod';
import { formatZodIssues } from '../api/field-path.ts';
import { bearerAuth, type KubeAuth } from './auth.ts';
import { cjsExports } from './cjs-import.ts';
import { refuseInsecureWithCa, type KubeEndpoint } from './endpoint.ts';

/** An endpoint and, when the kubeconfig names one, where its bearer token comes from. */
export interface KubeConnection {
  endpoint: KubeEndpoint;
  auth?: KubeAuth;
}

/** The part of a kubeconfig file (clientcmd v1 Config) this loader reads. */
export const KubeconfigFile = z.object({
  'current-context': z.string().min(1, 'a current-context'),
  contexts: z.array(z.object({ name: z.string(), context: z.object({ cluster: z.string().min(1), user: z.string().optional() }) })),
  clusters: z.array(z.object({ name: z.string(), cluster: z.object({
    server: z.url(),
    'certificate-authority': z.string().optional(),
    'certificate-authority-data': z.base64().optional(),
    'insecure-skip-tls-verify': z.boolean().optional(),
    'tls-server-name': z.string().optional(),
    'disable-compression': z.boolean().optional(),
    'proxy-url': z.string().optional(),
  }) })),
  users: z.array(z.object({ name: z.string(), user: z.object({
    token: z.string().optional(),
    tokenFile: z.string().optional(),
    'client-certificate': z.string().optional(),
    'client-certificate-data': z.base64().optional(),
    'client-key': z.string().optional(),
    'client-key-data': z.base64().optional(),
    exec: z.unknown().optional(),
    'auth-provider': z.unknown().optional(),
    username: z.string().optional(),
  }).nullable() })).default([]),
});
type KubeconfigFile = z.infer<typeof KubeconfigFile>;

const SA = '/var/run/secrets/kubernetes.io/serviceaccount';
/** How long a token file is trusted before it is read again (kubelet rotates projected tokens). */
const TOKEN_FILE_TTL_MS = 60_000;

/** KUBECONFIG (its first file) if set, else the in-cluster service account; an Error says what is missing. */
export async function loadKubeconfigConnection(env: Record<string, string | undefined> = process.env): Promise<KubeConnection> {
  const file = env.KUBECONFIG?.split(':').find((f) => f !== '');
  if (file) return fromFile(file);
  if (env.KUBERNETES_SERVICE_HOST) return inCluster(env.KUBERNETES_SERVICE_HOST, env.KUBERNETES_SERVICE_PORT ?? '443');
  throw new Error('neither KUBECONFIG nor KUBERNETES_SERVICE_HOST is set: point KUBECONFIG at a kubeconfig file, run in a pod, or use an eks or secret cluster source');
}

function inCluster(host: string, port: string): KubeConnection {
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return { endpoint: { server, ca: readFileSync(join(SA, 'ca.crt')) }, auth: tokenFileAuth(join(SA, 'token')) };
}

async function fromFile(file: string): Promise<KubeConnection> {
  // The YAML parser (~110 KB) loads only here: an eks or secret deployment never compiles it.
  const { parse } = await cjsExports(import('yaml'));
  let doc: unknown;
  try {
    doc = parse(readFileSync(file, 'utf8'));
  } catch (err) {
    // The parser's first line says what and where (line, column); the lines after it quote
    // the file, token and all, and this message is logged (security review).
    throw new Error(`kubeconfig ${file} cannot be read: ${(err as Error).message.split('\n')[0]?.trim()}`, { cause: err });
  }
  const r = KubeconfigFile.safeParse(doc);
  if (!r.success) throw new Error(`kubeconfig ${file} is malformed: ${formatZodIssues(r.error.issues, '')}`);
  return connectionFor(r.data, file);
}

function connectionFor(kc: KubeconfigFile, file: string): KubeConnection {
  const name = kc['current-context'];
  const context = kc.contexts.find((c) => c.name === name)?.context;
  if (!context) throw new Error(`kubeconfig ${file}: current-context "${name}" is not among its contexts`);
  const cluster = kc.clusters.find((c) => c.name === context.cluster)?.cluster;
  if (!cluster) throw new Error(`kubeconfig ${file}: context "${name}" names cluster "${context.cluster}", which the file does not define`);
  const user = (context.user ? kc.users.find((u) => u.name === context.user)?.user : undefined) ?? {};
  if (user.exec || user['auth-provider'] || user.username) {
    throw new Error(`kubeconfig ${file}: user "${context.user}" authenticates with ${user.exec ? 'an exec plugin' : user['auth-provider'] ? 'an auth provider' : 'basic auth'}, which the functions do not run; use a token, a token file or a client certificate, or an eks or secret cluster source`);
  }
  const path = (p: string): string => (isAbsolute(p) ? p : join(dirname(file), p));
  const endpoint = tlsOf(cluster, user, path);
  refuseInsecureWithCa({ insecure: !!endpoint.insecureSkipTlsVerify, ca: !!endpoint.ca }, `kubeconfig ${file}: cluster "${context.cluster}"`);
  const auth = user.token ? bearerAuth(user.token) : user.tokenFile ? tokenFileAuth(path(user.tokenFile)) : undefined;
  return auth ? { endpoint, auth } : { endpoint };
}

type Cluster = KubeconfigFile['clusters'][number]['cluster'];
type User = NonNullable<KubeconfigFile['users'][number]['user']>;

/** The server and TLS material; file references are relative to the kubeconfig (`path`). */
function tlsOf(cluster: Cluster, user: User, path: (p: string) => string): KubeEndpoint {
  const material = (data: string | undefined, ref: string | undefined): Buffer | undefined => (data ? Buffer.from(data, 'base64') : ref ? readFileSync(path(ref)) : undefined);
  const endpoint: KubeEndpoint = { server: cluster.server };
  const ca = material(cluster['certificate-authority-data'], cluster['certificate-authority']);
  const cert = material(user['client-certificate-data'], user['client-certificate']);
  const key = material(user['client-key-data'], user['client-key']);
  if (ca) endpoint.ca = ca;
  if (cert) endpoint.cert = cert;
  if (key) endpoint.key = key;
  if (cluster['insecure-skip-tls-verify']) endpoint.insecureSkipTlsVerify = true;
  if (cluster['tls-server-name']) endpoint.tlsServerName = cluster['tls-server-name'];
  if (cluster['disable-compression']) endpoint.disableCompression = true;
  if (cluster['proxy-url']) endpoint.proxyUrl = cluster['proxy-url'];
  return endpoint;
}

/** A token read from a file, again after a minute or a 401 (rotated service-account tokens). */
export function tokenFileAuth(file: string, now: () => number = Date.now): KubeAuth {
  let cached: { token: string; at: number } | undefined;
  return {
    header: () => {
      if (!cached || now() - cached.at > TOKEN_FILE_TTL_MS) {
        try {
          cached = { token: readFileSync(file, 'utf8').trim(), at: now() };
        } catch (err) {
          return Promise.reject(new Error(`cannot read the token file ${file}: ${(err as Error).message}`, { cause: err }));
        }
      }
      return Promise.resolve(`Bearer ${cached.token}`);
    },
    invalidate: () => {
      cached = undefined;
    },
  };
}
