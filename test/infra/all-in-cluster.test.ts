// The all-in-cluster manifest's container, run as the Deployment would run it: the same
// args and the ConfigMap's environment, against the embedded API server. It must do the
// job (inject, finish) with its Leases where the manifest's RBAC allows them; and so must the
// manifest with its grants limited to some namespaces (infra/kubernetes/namespaced.ts), refused
// in any other.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { serviceAccountUser, SimKubelet, startApiServer, type ApiServer } from '../../functions/cluster/index.ts';
import { createKube } from '../../functions/kube/client.ts';
import { KubeError } from '../../functions/kube/errors.ts';
import { namespacedManifests } from '../../infra/kubernetes/namespaced.ts';
import { FunctionsConfig } from '../../functions/config.ts';
import { applyPlan } from '../../functions/engine/apply.ts';
import { silentLogger } from '../../functions/engine/logger.ts';
import { RelayConfig } from '../../relay/config.ts';
import { apiError, ScriptedKube } from '../support/scripted-kube.ts';
import { CLI } from '../support/cli.ts';
import { jobStatus } from '../support/ejob-world.ts';
import { eventually, pod } from '../support/relay-world.ts';
import { INSTALLS } from '../support/shipped-rbac.ts';

type Doc = { kind: string; data?: Record<string, string>; spec?: { template: { spec: { containers: { args: string[] }[] } } } };

/** Web pods and an EphemeralJob `check` selecting them, in a namespace. */
function workload(namespace: string): unknown[] {
  const job = {
    apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob',
    metadata: { name: 'check', namespace, uid: `aic-job-${namespace}` },
    spec: { selector: { matchLabels: { app: 'web' } }, parallelism: 1, template: { ephemeralContainers: [{ name: 'probe', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'main' }] } },
  };
  const inNs = (p: Record<string, unknown>): Record<string, unknown> => ({ ...p, metadata: { ...(p.metadata as object), namespace } });
  return [inNs(pod('web-1', { app: 'web' })), inNs(pod('web-2', { app: 'web' })), job];
}

/**
 * The manifest's container run as its Deployment runs it (its args, its ConfigMap's
 * environment), as its ServiceAccount with the manifest's RBAC enforced: a verb or namespace
 * the manifest leaves out is a 403 here as on a real cluster. `body` runs while it does.
 */
async function inCluster(docs: Doc[], namespaces: string[], body: (server: ApiServer, out: { stdout: () => string; stderr: () => string }) => Promise<void>): Promise<void> {
  const config = docs.find((d) => d.kind === 'ConfigMap')!.data!;
  const args = docs.find((d) => d.kind === 'Deployment')!.spec!.template.spec.containers[0]!.args;
  const server = await startApiServer({ objects: namespaces.flatMap(workload), authorization: { users: { sa: serviceAccountUser('ephemera-system', 'ephemera') }, rbac: docs } });
  const dir = mkdtempSync(join(tmpdir(), 'ephemera-aic-'));
  writeFileSync(join(dir, 'kubeconfig'), server.kubeconfigYaml({ token: 'sa' }));
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, ...config, KUBECONFIG: join(dir, 'kubeconfig'), EPHEMERA_RELAY_ID: 'ephemera-0', EPHEMERA_RELAY_CLUSTER: 'east', EPHEMERA_RELAY_LISTEN: '127.0.0.1:0', EPHEMERA_RELAY_COALESCE_MS: '20', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  try {
    await body(server, { stdout: () => stdout, stderr: () => stderr });
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('close', r));
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Until the job `check` in each namespace has succeeded, a kubelet ending its containers step by step (no timer). */
async function succeeded(server: ApiServer, namespaces: string[], stderr: () => string): Promise<void> {
  const kubelet = new SimKubelet(server, { ephemeral: () => ({ exitCode: 0 }) });
  await eventually(() => {
    kubelet.tick();
    for (const ns of namespaces) assert.equal(jobStatus(server, 'check', ns).phase, 'Succeeded', `${ns}: ${stderr().slice(-2000)}`);
  }, 30_000);
}

test('`ephemera relay --sink memory` with the manifest\'s configuration runs a job to completion', async () => {
  const docs = parseAllDocuments(readFileSync('infra/kubernetes/all-in-cluster.yaml', 'utf8')).map((d) => d.toJS() as Doc);
  await inCluster(docs, ['default'], async (server, out) => {
    await succeeded(server, ['default'], out.stderr);
    assert.deepEqual(server.requests.entries.filter((e) => e.status === 401 || e.status === 403).map((e) => `${e.verb} ${e.path} ${e.status}`), [], 'the manifest grants every request it made');
    const leases = server.requests.entries.filter((e) => e.path.includes('/leases')).map((e) => e.path.split('/')[5]);
    assert.deepEqual([...new Set(leases)].sort(), ['ephemera-locks', 'ephemera-system'], 'leader Lease in ephemera-system, per-key Leases in ephemera-locks');
    // Every log line names the replica and its cluster: several relays log to one place (operability review).
    const lines = out.stdout().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { relay?: string; cluster?: string });
    assert.ok(lines.length > 0 && lines.every((l) => l.relay === 'ephemera-0' && l.cluster === 'east'), out.stdout().slice(0, 2000));
  });
});

test('limited to two namespaces (infra/kubernetes/namespaced.ts), it runs the jobs there and may not touch a third (review94 L3)', async () => {
  const files = INSTALLS['all-in-cluster'].files.map((path) => ({ path, text: readFileSync(path, 'utf8') }));
  const docs = parseAllDocuments(namespacedManifests(files, { namespaces: ['team-a', 'team-b'] })).map((d) => d.toJS() as Doc);
  await inCluster(docs, ['team-a', 'team-b', 'team-c'], async (server, out) => {
    await succeeded(server, ['team-a', 'team-b'], out.stderr);
    assert.deepEqual(jobStatus(server, 'check', 'team-c'), {}, 'the job in team-c is not its to run');
    assert.deepEqual(server.requests.entries.filter((e) => e.denied).map((e) => `${e.verb} ${e.path} ${e.status}`), [], 'it asks only where it may: its ConfigMap names the namespaces of its grants');
    const kube = createKube(server.kubeConfig({ token: 'sa' }));
    const refused = (err: unknown): boolean => err instanceof KubeError && err.status === 403;
    await assert.rejects(kube.list('v1', 'Pod', 'team-c'), refused);
    await assert.rejects(kube.perform({ verb: 'patch', apiVersion: 'v1', kind: 'Pod', subresource: 'ephemeralcontainers', namespace: 'team-c', name: 'web-1', body: { spec: { ephemeralContainers: [] } }, patchType: 'strategic', reason: 'test' }), refused);
    await assert.rejects(kube.list('v1', 'Pod', undefined), refused, 'nor list the cluster\'s pods');
  });
});

test('the manifest\'s handling deadline outlasts one API call that stalls on every try', async () => {
  const docs = parseAllDocuments(readFileSync('infra/kubernetes/all-in-cluster.yaml', 'utf8')).map((d) => d.toJS() as Doc);
  const config = docs.find((d) => d.kind === 'ConfigMap')!.data!;
  // How many times apply sends one action that keeps failing transiently, counted, not assumed.
  const kube = new ScriptedKube().answer(...Array.from({ length: 50 }, () => apiError(504, 'Timeout')));
  const action = { kind: 'Pod', apiVersion: 'v1', namespace: 'default', name: 'web-1', verb: 'patch', body: {}, reason: 'probe' } as const;
  await assert.rejects(applyPlan([action], { kube, logger: silentLogger, minTimeoutMs: 1 }));
  const tries = kube.performed.length;
  assert.ok(tries > 1, 'apply retries transient failures');
  const apiTimeoutMs = FunctionsConfig.parse(config).EPHEMERA_API_TIMEOUT_MS;
  const relay = RelayConfig.parse(config);
  // relay/cli.ts gives the memory sink EPHEMERA_RELAY_SEND_TIMEOUT_SECONDS as its deadline.
  const deadlineMs = relay.EPHEMERA_RELAY_SEND_TIMEOUT_SECONDS * 1000;
  assert.ok(deadlineMs > apiTimeoutMs * tries, `handling deadline ${deadlineMs} ms ≤ API timeout ${apiTimeoutMs} ms × ${tries} tries`);
  assert.ok(relay.EPHEMERA_RELAY_DELIVERY_GRACE_SECONDS * 1000 > deadlineMs, '/readyz does not fail during one long handling');
});
