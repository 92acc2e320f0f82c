// The all-in-cluster manifest's container, run as the Deployment would run it: the same
// args and the ConfigMap's environment, against the embedded API server. It must do the
// job (inject, finish) with its Leases where the manifest's RBAC allows them.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { serviceAccountUser, SimKubelet, startApiServer } from '../../functions/cluster/index.ts';
import { FunctionsConfig } from '../../functions/config.ts';
import { applyPlan } from '../../functions/engine/apply.ts';
import { silentLogger } from '../../functions/engine/logger.ts';
import { RelayConfig } from '../../relay/config.ts';
import { apiError, ScriptedKube } from '../support/scripted-kube.ts';
import { CLI } from '../support/cli.ts';
import { jobStatus } from '../support/ejob-world.ts';
import { eventually, pod } from '../support/relay-world.ts';

type Doc = { kind: string; data?: Record<string, string>; spec?: { template: { spec: { containers: { args: string[] }[] } } } };

test('`ephemera relay --sink memory` with the manifest\'s configuration runs a job to completion', async () => {
  const docs = parseAllDocuments(readFileSync('infra/kubernetes/all-in-cluster.yaml', 'utf8')).map((d) => d.toJS() as Doc);
  const config = docs.find((d) => d.kind === 'ConfigMap')!.data!;
  const args = docs.find((d) => d.kind === 'Deployment')!.spec!.template.spec.containers[0]!.args;
  const job = {
    apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob',
    metadata: { name: 'check', namespace: 'default', uid: 'aic-job' },
    spec: { selector: { matchLabels: { app: 'web' } }, parallelism: 1, template: { ephemeralContainers: [{ name: 'probe', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'main' }] } },
  };
  // As its ServiceAccount, with the manifest's RBAC enforced: a verb or namespace the manifest leaves out is a 403 here as on a real cluster.
  const server = await startApiServer({ objects: [pod('web-1', { app: 'web' }), pod('web-2', { app: 'web' }), job], authorization: { users: { sa: serviceAccountUser('ephemera-system', 'ephemera') }, rbac: docs } });
  const kubelet = new SimKubelet(server, { ephemeral: () => ({ exitCode: 0 }) });
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
    await eventually(() => {
      kubelet.tick();
      assert.equal(jobStatus(server, 'check').phase, 'Succeeded', stderr.slice(-2000));
    }, 30_000);
    assert.deepEqual(server.requests.entries.filter((e) => e.status === 401 || e.status === 403).map((e) => `${e.verb} ${e.path} ${e.status}`), [], 'the manifest grants every request it made');
    const leases = server.requests.entries.filter((e) => e.path.includes('/leases')).map((e) => e.path.split('/')[5]);
    assert.deepEqual([...new Set(leases)].sort(), ['ephemera-locks', 'ephemera-system'], 'leader Lease in ephemera-system, per-key Leases in ephemera-locks');
    // Every log line names the replica and its cluster: several relays log to one place (operability review).
    const lines = stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { relay?: string; cluster?: string });
    assert.ok(lines.length > 0 && lines.every((l) => l.relay === 'ephemera-0' && l.cluster === 'east'), stdout.slice(0, 2000));
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('close', r));
    kubelet.stop();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
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
