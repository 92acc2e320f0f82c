import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { ENVELOPE_TYPE, type Envelope } from '../../functions/api/envelope.ts';
import type { Pod } from '../../functions/api/pod.ts';
import type { EngineDeps } from '../../functions/engine/engine.ts';
import { startApiServer, type ApiServer } from '../../functions/cluster/index.ts';
import { grantChecked, shippedAuthorization, TOKENS } from './shipped-rbac.ts';
import { engineDeps } from './engine-deps.ts';

/** Objects from a YAML fixture (multi-document). */
export function fixture(path: string): Record<string, unknown>[] {
  return parseAllDocuments(readFileSync(path, 'utf8')).map((d) => d.toJS() as Record<string, unknown>);
}

/** The stories' fixtures are dated 2026-01-01; their handlers run a minute after the job was created. */
export const STORY_NOW = new Date('2026-01-01T00:21:00Z');

/**
 * A fake API server seeded with objects, and engine deps for it (one lock holder per call).
 * `now` is the engine's clock; the server keeps real time unless given serverClock.
 */
export async function world(objects: unknown[], now: () => Date = () => STORY_NOW, serverClock?: () => Date): Promise<{ server: ApiServer; deps: (holder?: string) => EngineDeps }> {
  return worldWith({ objects, now, ...(serverClock ? { serverClock } : {}) });
}

/** ephemera's own CRD (status keeps unknown fields under `ephemera`) and one mirroring OpenKruise's (prunes them). */
export const CRDS: readonly { label: string; crd: Record<string, unknown> }[] = [
  { label: "ephemera's CRD", crd: fixture('infra/crds/ephemeraljob.yaml')[0] ?? {} },
  { label: "OpenKruise's CRD", crd: fixture('test/fixtures/crds/openkruise-like-ephemeraljob.yaml')[0] ?? {} },
];

/** What a world can be built with besides its objects. */
export interface WorldOptions {
  objects: unknown[];
  now?: () => Date;
  serverClock?: () => Date;
  /** The engine instances' local monotonic clock in ms (the claim window); default real. */
  monotonic?: () => number;
  leaseSeconds?: number;
  skewSeconds?: number;
  /** Which EphemeralJob CRD the server has installed (default: ephemera's own). */
  crd?: unknown;
  /** Ask for gzip, as against a real cluster (default: not, the embedded cluster's kubeconfig says so). */
  compression?: boolean;
  /** The functions' lock namespace (default ephemera-system; production's default is ephemera-locks). */
  lockNamespace?: string;
  /** Tokens of the functions' user besides its own, that `deps(holder, token)` may use (shippedAuthorization). */
  functionsTokens?: string[];
}

/** Like world(), with every knob: clocks, claim window, the installed CRD. */
export async function worldWith(o: WorldOptions): Promise<{ server: ApiServer; deps: (holder?: string, token?: string) => EngineDeps }> {
  const objects = o.crd === undefined ? o.objects : [o.crd, ...o.objects];
  // The functions as deployed: the shipped RBAC enforced (their Leases in this world's lock namespace).
  const lockNamespace = o.lockNamespace ?? 'ephemera-system';
  const server = grantChecked(await startApiServer({ objects, authorization: shippedAuthorization(lockNamespace, o.functionsTokens), ...(o.serverClock ? { clock: o.serverClock } : {}) }));
  const deps = (holder = 'engine-a', token: string = TOKENS.functions): EngineDeps => engineDeps(server.kubeConfig({ token }), {
    holder,
    lockNamespace,
    clock: o.now ?? (() => STORY_NOW),
    ...(o.leaseSeconds !== undefined ? { leaseSeconds: o.leaseSeconds } : {}),
    ...(o.skewSeconds !== undefined ? { skewSeconds: o.skewSeconds } : {}),
    ...(o.monotonic ? { monotonic: o.monotonic } : {}),
    ...(o.compression !== undefined ? { compression: o.compression } : {}),
  });
  return { server, deps };
}

/** A world built by worldWith, given to `body`, and its server closed after it, however it ends. */
export async function inWorld(o: WorldOptions, body: (w: { server: ApiServer; deps: (holder?: string) => EngineDeps }) => Promise<void>): Promise<void> {
  const w = await worldWith(o);
  try {
    await body(w);
  } finally {
    await w.server.close();
  }
}

let seq = 0;
/** The envelope the relay would send for an object. */
export function envelopeFor(kind: 'Pod' | 'EphemeralJob', namespace: string, name: string, event: Envelope['data']['event'] = 'MODIFIED'): Envelope {
  seq++;
  return {
    specversion: '1.0', id: `test-${seq}`, source: 'test', type: ENVELOPE_TYPE, time: new Date().toISOString(),
    subject: `${kind}/${namespace}/${name}`, data: { kind, event, namespace, name },
  };
}

/** Pods as the server has them now. */
export function pods(server: ApiServer, namespace = 'default'): Pod[] {
  return server.store.list({ apiVersion: 'v1', kind: 'Pod', namespace }) as unknown as Pod[];
}

/** Our injected containers' names per pod. */
export function injected(server: ApiServer): Record<string, string[]> {
  return Object.fromEntries(pods(server).map((p) => [p.metadata.name, (p.spec.ephemeralContainers ?? []).map((c) => c.name)]));
}

/** Pods whose injected container has not terminated yet (what parallelism bounds). */
export function inFlight(server: ApiServer): string[] {
  return pods(server)
    .filter((p) => (p.spec.ephemeralContainers ?? []).length > 0)
    .filter((p) => !(p.status?.ephemeralContainerStatuses ?? []).some((s) => s.state?.terminated))
    .map((p) => p.metadata.name);
}

/** Play the kubelet for one pod: its ephemeral containers exit with this code. */
export function finish(server: ApiServer, name: string, exitCode: number, namespace = 'default'): void {
  const pod = server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace, name }) as unknown as Pod;
  const statuses = (pod.spec.ephemeralContainers ?? []).map((c) => ({ name: c.name, state: { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error' } } }));
  server.store.put({ ...pod, status: { ...pod.status, ephemeralContainerStatuses: statuses } });
}

/** The job's status as stored. */
export function jobStatus(server: ApiServer, name: string, namespace = 'default'): Record<string, unknown> {
  const job = server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace, name }) as { status?: Record<string, unknown> } | undefined;
  return job?.status ?? {};
}

/**
 * `pods` Running pods web-0… (labels app=web, created a second apart) and the EphemeralJob
 * `probe` selecting them, with one short container (`true`) targeting their `app` container.
 */
export function probeJobObjects(o: { pods: number; parallelism: number; replicas?: number; ttlSecondsAfterFinished?: number }): unknown[] {
  const pods = Array.from({ length: o.pods }, (_, i) => ({
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: `web-${i}`, namespace: 'default', uid: `pod-uid-${i}`, labels: { app: 'web' }, creationTimestamp: `2026-01-01T00:00:0${i}Z` },
    spec: { containers: [{ name: 'app', image: 'nginx' }] },
    status: { phase: 'Running' },
  }));
  const job = {
    apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob',
    metadata: { name: 'probe', namespace: 'default', uid: 'job-uid', creationTimestamp: '2026-01-01T00:20:00Z' },
    spec: {
      selector: { matchLabels: { app: 'web' } }, parallelism: o.parallelism,
      ...(o.replicas !== undefined ? { replicas: o.replicas } : {}),
      ...(o.ttlSecondsAfterFinished !== undefined ? { ttlSecondsAfterFinished: o.ttlSecondsAfterFinished } : {}),
      template: { ephemeralContainers: [{ name: 'probe', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'app', command: ['true'] }] },
    },
  };
  return [...pods, job];
}
