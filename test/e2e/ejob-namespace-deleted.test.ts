// An EphemeralJob whose namespace is being deleted (review96 F1): NamespaceLifecycle refuses
// every create there, its Events included, and that is no refusal to alarm on, to tell in a
// Warning (a create there too) or to back off from. Through real HTTP: the embedded API
// server marks the namespace Terminating on DELETE and answers creates in it as kube-apiserver.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { ApiServer } from '../../functions/cluster/index.ts';
import { ALARM_REFUSED } from '../../functions/engine/apply.ts';
import { handle } from '../../functions/engine/engine.ts';
import { envelopeFor, jobStatus, probeJobObjects, worldWith } from '../support/ejob-world.ts';
import { capturedLogger, type LogLine } from '../support/log-lines.ts';

const NS = 'ci-1';

/**
 * probeJobObjects in NS, a stored Namespace; each pod holds a finalizer, which keeps it,
 * deleting, after its DELETE, as a grace period does on a real node (the embedded server
 * removes a pod without finalizers at once).
 */
function objects(o: { replicas?: number }): unknown[] {
  const inNs = probeJobObjects({ pods: 3, parallelism: 3, ...o }).map((x) => x as { kind: string; metadata: Record<string, unknown> })
    .map((x) => ({ ...x, metadata: { ...x.metadata, namespace: NS, ...(x.kind === 'Pod' ? { finalizers: ['example.com/grace'] } : {}) } }));
  return [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }, ...inNs];
}

/** `kubectl delete namespace NS`: Terminating, the namespace controller yet to reach its contents. */
async function deleteNamespace(server: ApiServer): Promise<void> {
  await server.kubeConfig().makeApiClient(CoreV1Api).deleteNamespace({ name: NS });
}

/** Creates the server answered, as "resource status" (the lock namespace's Leases named apart). */
const creates = (server: ApiServer): string[] => server.requests.filter((r) => r.verb === 'create').map((r) => `${r.path.includes(`/namespaces/${NS}/`) ? NS : 'elsewhere'} ${r.path.split('/').at(-1) ?? ''} ${r.status}`);
const moot = (lines: LogLine[]): unknown[] => lines.filter((l) => String(l.msg).startsWith('not made: its namespace is being deleted')).map((l) => [l.level, String(l.action).split(' ').slice(0, 3).join(' '), l.status]);
const ejobs = (server: ApiServer): CustomObjectsApi => server.kubeConfig().makeApiClient(CustomObjectsApi);

test("a job applied as its namespace is being deleted: its pods' EphemeralContainersInjected Events are not made, with no alarm and no Warning tried", async () => {
  const { server, deps } = await worldWith({ objects: objects({}), now: () => new Date() });
  try {
    await deleteNamespace(server);
    const { logger, lines } = capturedLogger();
    const r = await handle(envelopeFor('EphemeralJob', NS, 'probe', 'ADDED'), { ...deps(), logger });
    assert.equal(r.keys[0]?.outcome, 'done', 'not refused');
    assert.deepEqual(r.keys[0]?.actions.map((a) => `${a.verb} ${a.kind}`), ['create Lease', 'patch Pod', 'patch Pod', 'patch Pod', 'patch EphemeralJob'], 'the claim (in the lock namespace), the injections and the status are patches: admitted');
    assert.deepEqual(lines.filter((l) => l.alarm !== undefined), [], `no ${ALARM_REFUSED} line for RefusedWritesAlarm to count`);
    assert.deepEqual(moot(lines), [['info', 'create v1 Event', 403], ['info', 'create v1 Event', 403], ['info', 'create v1 Event', 403]]);
    assert.deepEqual(creates(server), ['elsewhere leases 201', `${NS} events 403`, `${NS} events 403`, `${NS} events 403`], 'no ActionRefused Warning tried');
    assert.equal(r.requeueAfterSeconds, null, "the plan's own look (none: the containers' ends bring the pods' events), not a refusal's 10 s");
  } finally {
    await server.close();
  }
});

test('the namespace controller reaches the pods first: the job finishes Failed (PodsGone), its JobFailed Event is not made and nothing alarms; its deletion then removes its Lease', async () => {
  const { server, deps } = await worldWith({ objects: objects({ replicas: 3 }), now: () => new Date() });
  try {
    await handle(envelopeFor('EphemeralJob', NS, 'probe', 'ADDED'), deps());
    await deleteNamespace(server);
    const core = server.kubeConfig().makeApiClient(CoreV1Api);
    for (const pod of ['web-0', 'web-1', 'web-2']) await core.deleteNamespacedPod({ namespace: NS, name: pod });
    server.requests.clear();
    const { logger, lines } = capturedLogger();
    const r = await handle(envelopeFor('Pod', NS, 'web-0'), { ...deps(), logger });
    assert.equal(r.keys[0]?.outcome, 'done');
    assert.deepEqual([jobStatus(server, 'probe', NS).phase, (jobStatus(server, 'probe', NS).conditions as { reason?: string }[]).at(-1)?.reason], ['Failed', 'PodsGone']);
    assert.deepEqual(lines.filter((l) => l.alarm !== undefined), []);
    assert.deepEqual(moot(lines), [['info', 'create v1 Event', 403]]);
    assert.deepEqual(creates(server), [`${NS} events 403`]);
    assert.equal(r.requeueAfterSeconds, 1800, "the plan's own look (the default TTL after the verdict), not a refusal's 10 s");

    // The namespace controller deletes the job: its last look deletes the job's Lease (a delete: admitted anywhere).
    await ejobs(server).deleteNamespacedCustomObject({ group: 'apps.kruise.io', version: 'v1alpha1', plural: 'ephemeraljobs', namespace: NS, name: 'probe' });
    const last = await handle(envelopeFor('EphemeralJob', NS, 'probe', 'DELETED'), { ...deps(), logger });
    assert.deepEqual(last.keys[0]?.actions.map((a) => `${a.verb} ${a.kind}`), ['delete Lease']);
    assert.equal(server.store.list({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'ephemera-system' }).length, 0);
    assert.deepEqual(lines.filter((l) => l.alarm !== undefined), []);
  } finally {
    await server.close();
  }
});
