// A template field the API server does not know — misspelt, or newer than the cluster — is
// not dropped: ephemera injects with fieldValidation=Strict (planner.ts inject), so the
// injection is refused (422, as handlers/patch.go answers a strategic merge patch), told on
// the pod and the job, and nothing runs without the field. The embedded server judges a
// Pod's ephemeral containers by the fields kube-apiserver 1.33 decodes (api/container-fields.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { unknownFields } from '../../functions/api/container-fields.ts';
import { handle } from '../../functions/engine/engine.ts';
import { envelopeFor, injected, inWorld } from '../support/ejob-world.ts';

const NS = 'default';

function objects(container: Record<string, unknown>): unknown[] {
  const pod = {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: 'web-0', namespace: NS, uid: 'pod-uid-0', labels: { app: 'web' }, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { containers: [{ name: 'app', image: 'nginx' }] },
    status: { phase: 'Running' },
  };
  const job = {
    apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob',
    metadata: { name: 'probe', namespace: NS, uid: 'job-uid', creationTimestamp: '2026-01-01T00:20:00Z' },
    spec: { selector: { matchLabels: { app: 'web' } }, parallelism: 1, template: { ephemeralContainers: [{ name: 'probe', image: 'busybox', ...container }] } },
  };
  return [pod, job];
}

type StoredEvent = { reason?: string; message?: string; involvedObject?: { kind?: string } };

describe('template fields the API server does not know', () => {
  test('unknownFields names every unknown key by its path, at every level the types describe, and drops only those', () => {
    const c = { name: 'p', comand: ['sh'], securityContext: { runAsNonRot: true, runAsUser: 1000, capabilities: { add: ['X'], dorp: ['Y'] } }, env: [{ name: 'A', value: '1' }, { name: 'B', valuefrom: {} }], resources: { anything: 1 } };
    const { unknown, known } = unknownFields([c], 'spec.ephemeralContainers');
    assert.deepEqual(unknown, [
      'spec.ephemeralContainers[0].comand',
      'spec.ephemeralContainers[0].securityContext.runAsNonRot',
      'spec.ephemeralContainers[0].securityContext.capabilities.dorp',
      'spec.ephemeralContainers[0].env[1].valuefrom',
    ]);
    assert.deepEqual(known, [{ name: 'p', securityContext: { runAsUser: 1000, capabilities: { add: ['X'] } }, env: [{ name: 'A', value: '1' }, { name: 'B' }], resources: { anything: 1 } }], 'a field an ephemeral container may not set is known (validation refuses it), its insides not judged');
    const plain = [{ name: 'p', image: 'busybox', env: [{ name: 'A', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }], securityContext: { appArmorProfile: { type: 'RuntimeDefault' } } }];
    const none = unknownFields(plain, 'x');
    assert.deepEqual(none.unknown, []);
    assert.equal(none.known, plain, 'nothing unknown: the same value, not a copy');
  });

  test('a misspelt field: the injection is refused, nothing is injected, the pod and the job say which field', async () => {
    // kube-apiserver's answer quotes the whole patch before the field: a long template must not push it out of the Warning.
    const args = Array.from({ length: 100 }, (_, i) => `argument-${i}`);
    await inWorld({ objects: objects({ comand: ['sleep', '1'], args }) }, async ({ server, deps }) => {
      const r = await handle(envelopeFor('EphemeralJob', NS, 'probe', 'ADDED'), deps());
      assert.equal(r.keys[0]?.outcome, 'refused', JSON.stringify(r.keys[0]));
      const sent = server.requests.entries.filter((e) => e.path.endsWith('/ephemeralcontainers'));
      assert.deepEqual(sent.map((e) => [e.query.fieldValidation, e.status]), [['Strict', 422]]);
      assert.deepEqual(injected(server)['web-0'] ?? [], [], 'nothing ran without the field');
      const warnings = server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: NS }).map((e) => e as StoredEvent).filter((e) => e.reason === 'ActionRefused');
      for (const kind of ['Pod', 'EphemeralJob']) {
        const w = warnings.find((e) => e.involvedObject?.kind === kind);
        // kube-apiserver names the pod's list ([0] here); the Warning, the template's container (review91 F5).
        assert.match(w?.message ?? '', /strict decoding error: unknown field "spec\.template\.ephemeralContainers\[0\]\(probe\)\.comand"/, `${kind}: ${w?.message}`);
      }
    });
  });

  test('the same job spelt right is injected, with every field it names', async () => {
    await inWorld({ objects: objects({ command: ['sleep', '1'], securityContext: { appArmorProfile: { type: 'RuntimeDefault' } } }) }, async ({ server, deps }) => {
      await handle(envelopeFor('EphemeralJob', NS, 'probe', 'ADDED'), deps());
      assert.deepEqual(injected(server)['web-0'], ['probe']);
    });
  });
});
