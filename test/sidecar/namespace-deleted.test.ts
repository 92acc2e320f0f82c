// A Job pod due for sidecar termination while its namespace is being deleted (a CI pipeline
// tearing its namespace down once the main container has exited): NamespaceLifecycle refuses
// the CRR and its Event, and that is no refusal to alarm on (review96 F1). Through real HTTP:
// the embedded API server marks the namespace Terminating and answers as kube-apiserver does.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { handle } from '../../functions/engine/engine.ts';
import { ALARM_REFUSED } from '../../functions/engine/apply.ts';
import { crrName } from '../../functions/sidecar/actions.ts';
import { envelopeFor } from '../support/ejob-world.ts';
import { capturedLogger } from '../support/log-lines.ts';
import { mainAndSidecar, NS, sidecarWorld, stateOf, type SidecarWorld } from '../support/sidecar-world.ts';

const STUCK_AFTER = 300;

/** A world whose pod job-1 has its main container exited (due) in namespace NS, which is a stored Namespace. */
async function dueInNamespace(): Promise<SidecarWorld> {
  const w = await sidecarWorld([mainAndSidecar('job-1')], { options: { stuckAfterSeconds: STUCK_AFTER }, objects: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }] });
  w.tickUntil('job-1', (p) => stateOf(p, 'main') === 'terminated 0');
  return w;
}

/** The creates the server answered: "resource status". */
const creates = (w: SidecarWorld): string[] => w.server.requests.filter((r) => r.verb === 'create').map((r) => `${r.path.split('/').at(-1) ?? ''} ${r.status}`);

describe("the pod's namespace being deleted (review96 F1)", () => {
  test('the CRR and its Event are not made: no alarm, no Warning tried, no refusal back-off; the pod\'s deletion is the last look', async (t) => {
    const w = await dueInNamespace();
    t.after(() => w.close());
    const core = w.server.kubeConfig().makeApiClient(CoreV1Api);
    // kubectl delete namespace: Terminating; the namespace controller has not reached the pod yet.
    await core.deleteNamespace({ name: NS });
    const { logger, lines } = capturedLogger();
    const crr = crrName(w.pod('job-1').metadata.uid!, 'sidecars');
    for (let look = 0; look < 2; look++) {
      const r = await handle(envelopeFor('Pod', NS, 'job-1'), { ...w.deps(), logger });
      assert.equal(r.keys[0]?.outcome, 'done', 'not refused');
      assert.deepEqual(r.keys[0]?.errors, undefined);
      assert.deepEqual(r.keys[0]?.notes?.filter((n) => n.endsWith('not made, its namespace is being deleted')).map((n) => n.split(' ')[2]), ['ContainerRecreateRequest', 'Event'], 'the CRR refused, and the Event that follows it moot too');
      assert.equal(r.requeueAfterSeconds, STUCK_AFTER, "the plan's own look (stuckAfterSeconds), not a refusal's 10 s or 120 s");
    }
    assert.deepEqual(lines.filter((l) => l.alarm !== undefined), [], `no ${ALARM_REFUSED} line for RefusedWritesAlarm to count`);
    assert.deepEqual(lines.filter((l) => l.level !== 'debug' && l.msg !== 'applied').map((l) => [l.level, l.action, l.status, l.msg]), [
      ['info', `create apps.kruise.io/v1alpha1 ContainerRecreateRequest ${NS}/${crr}`, 403, 'not made: its namespace is being deleted, and what it was for goes with it'],
      ['info', `create apps.kruise.io/v1alpha1 ContainerRecreateRequest ${NS}/${crr}`, 403, 'not made: its namespace is being deleted, and what it was for goes with it'],
    ]);
    assert.deepEqual(creates(w), ['containerrecreaterequests 403', 'containerrecreaterequests 403'], 'no ActionRefused Warning tried (a create there too), no Event');
    assert.deepEqual(w.crrs(), []);

    // The namespace controller deletes the pod: its event needs nothing, and the look the
    // plan asked for finds it gone and asks for no other.
    await core.deleteNamespacedPod({ namespace: NS, name: 'job-1' });
    const deleted = await handle(envelopeFor('Pod', NS, 'job-1', 'DELETED'), { ...w.deps(), logger });
    assert.deepEqual([deleted.keys, deleted.skipped.map((s) => s.reason), deleted.requeueAfterSeconds], [[], ['pod deleted'], null]);
    const last = await handle(envelopeFor('Pod', NS, 'job-1'), { ...w.deps(), logger });
    assert.deepEqual([last.keys[0]?.outcome, last.requeueAfterSeconds], ['gone', null]);
    assert.deepEqual(lines.filter((l) => l.alarm !== undefined), []);
  });

  test('the namespace already gone (the create raced the namespace controller): its 404 for the namespace is no alarm either', async (t) => {
    const w = await dueInNamespace();
    t.after(() => w.close());
    // The namespace controller's last step, the pod's deletion not seen yet by this reconcile.
    w.server.store.delete({ apiVersion: 'v1', kind: 'Namespace', name: NS });
    const { logger, lines } = capturedLogger();
    const r = await handle(envelopeFor('Pod', NS, 'job-1'), { ...w.deps(), logger });
    assert.equal(r.keys[0]?.outcome, 'done');
    assert.deepEqual(lines.filter((l) => l.alarm !== undefined), []);
    assert.deepEqual(lines.filter((l) => String(l.msg).startsWith('not made')).map((l) => l.status), [404]);
    assert.deepEqual(creates(w), ['containerrecreaterequests 404']);
  });

  test('a 403 without the NamespaceTerminating cause (RBAC) in the same Terminating namespace is still refused: alarmed and backed off from', async (t) => {
    const w = await dueInNamespace();
    t.after(() => w.close());
    const core = w.server.kubeConfig().makeApiClient(CoreV1Api);
    await core.deleteNamespace({ name: NS });
    // Authorization comes before admission: a missing right is answered as such, namespace or not.
    w.server.faults.add({ method: 'POST', pathIncludes: '/containerrecreaterequests', status: 403, reason: 'Forbidden', message: `containerrecreaterequests.apps.kruise.io is forbidden: User "ephemera" cannot create resource "containerrecreaterequests" in API group "apps.kruise.io" in the namespace "${NS}"`, times: Infinity });
    const { logger, lines } = capturedLogger();
    const r = await handle(envelopeFor('Pod', NS, 'job-1'), { ...w.deps(), logger });
    assert.equal(r.keys[0]?.outcome, 'refused');
    assert.deepEqual(lines.filter((l) => l.alarm === ALARM_REFUSED).map((l) => [l.status, l.msg]), [[403, 'refused by the API server']]);
    assert.deepEqual(creates(w), ['containerrecreaterequests 403', 'events 403'], 'its Warning was tried (and refused: the namespace is Terminating)');
    assert.equal(r.requeueAfterSeconds, 120, 'the Warning that cannot be written counts as met before: backed off');
  });
});

describe('a genuine refusal is unchanged (review96 F1)', () => {
  test("RBAC refusing the CRR: an alarm line, the ActionRefused Warning on the pod, and the refusal's 10 s look", async (t) => {
    const w = await dueInNamespace();
    t.after(() => w.close());
    w.server.faults.add({ method: 'POST', pathIncludes: '/containerrecreaterequests', status: 403, reason: 'Forbidden', message: `containerrecreaterequests.apps.kruise.io is forbidden: User "ephemera" cannot create resource "containerrecreaterequests" in API group "apps.kruise.io" in the namespace "${NS}"`, times: Infinity });
    const { logger, lines } = capturedLogger();
    const r = await handle(envelopeFor('Pod', NS, 'job-1'), { ...w.deps(), logger });
    assert.equal(r.keys[0]?.outcome, 'refused');
    assert.deepEqual(lines.filter((l) => l.alarm === ALARM_REFUSED).map((l) => [l.level, l.status, l.msg]), [['warn', 403, 'refused by the API server']]);
    assert.deepEqual(w.events('job-1'), ['Warning ActionRefused']);
    assert.equal(r.requeueAfterSeconds, 10);
  });
});
