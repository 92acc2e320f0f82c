// What kube-apiserver refuses in an ephemeral container whatever the pod, as the planner's
// spec parse judges it (phase Error) and the embedded API server refuses it: neither
// stricter (a job kube-apiserver and OpenKruise run must run) nor looser (a job whose every
// injection would be refused is named at once). Reviews of 2026-11-27.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { omitEmpty } from '../../functions/api/container-rules.ts';
import { parseEjobSpec, type EphemeralJobObject } from '../../functions/api/ephemeraljob.ts';
import type { Pod } from '../../functions/api/pod.ts';
import { plan } from '../../functions/ejob/planner.ts';

const ok = { name: 'probe', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File' };
const parse = (c: Record<string, unknown>): { ok: true } | { ok: false; message: string } => {
  const r = parseEjobSpec({ selector: { matchLabels: { app: 'x' } }, template: { ephemeralContainers: [c] } });
  return r.ok ? { ok: true } : r;
};

test('runs what kube-apiserver takes: unknown keys (dropped on decode), zero values, unset policies, env nulls, relaxed env names, a BOM in the image', () => {
  for (const [what, c] of Object.entries({
    'an unknown key': { ...ok, foo: 1 },
    'a mistyped field': { ...ok, imagePullpolicy: 'Always' },
    'resources: {}': { ...ok, resources: {} },
    'resources with null fields': { ...ok, resources: { limits: null } },
    'securityContext: {}': { ...ok, securityContext: {} },
    'policies "" (defaulted)': { ...ok, imagePullPolicy: '', terminationMessagePolicy: '' },
    'policies null': { ...ok, imagePullPolicy: null },
    'env: null': { ...ok, env: null },
    'an env value null': { ...ok, env: [{ name: 'A', value: null }] },
    'an env name with a space (relaxed since 1.32)': { ...ok, env: [{ name: 'MY VAR', value: 'x' }] },
    'an image starting with U+FEFF (Go TrimSpace keeps it)': { ...ok, image: '\ufeffbusybox' },
    'readOnly mounts': { ...ok, volumeMounts: [{ name: 'a', mountPath: '/a', readOnly: true, mountPropagation: 'HostToContainer' }] },
    // OpenKruise sends a typed v1.Pod: Go's omitempty drops empty lists and maps, and so does the planner (omitEmpty).
    'ports: []': { ...ok, ports: [] },
    'resizePolicy: []': { ...ok, resizePolicy: [] },
    'resources: {limits: {}}': { ...ok, resources: { limits: {} } },
    'an env value from a field': { ...ok, env: [{ name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }] },
    'targetContainerName: null (Go: no target)': { ...ok, targetContainerName: null },
    'Bidirectional propagation in a privileged container': { ...ok, securityContext: { privileged: true }, volumeMounts: [{ name: 'a', mountPath: '/a', mountPropagation: 'Bidirectional' }] },
  })) assert.deepEqual(parse(c), { ok: true }, what);
});

test('the planner injects what OpenKruise sends: no empty lists, no empty maps in resources (the API server would refuse them)', () => {
  const job: EphemeralJobObject = { metadata: { name: 'j', namespace: 'ns', uid: 'u', resourceVersion: '1', creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { selector: { matchLabels: { app: 'x' } }, template: { ephemeralContainers: [{ ...ok, ports: [], command: [], resources: { limits: {} } }] } } };
  const pod: Pod = { metadata: { name: 'p', namespace: 'ns', uid: 'pu', labels: { app: 'x' }, creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { containers: [{ name: 'app' }] }, status: { phase: 'Running' } };
  const p = plan({ job, pods: [pod] }, new Date('2026-01-01T00:01:00Z'));
  const sent = (p.actions.find((a) => a.subresource === 'ephemeralcontainers')?.body as { spec: { ephemeralContainers: Record<string, unknown>[] } }).spec.ephemeralContainers[0];
  assert.ok(sent && !('ports' in sent) && !('command' in sent) && !('resources' in sent), JSON.stringify(sent));
});

test('what is sent is what OpenKruise sends: no empty lists, no empty maps in resources', () => {
  assert.deepEqual(omitEmpty({ ...ok, ports: [], command: [], resources: { limits: {}, requests: { cpu: '1' } }, lifecycle: {} }), { ...ok, resources: { requests: { cpu: '1' } }, lifecycle: {} });
  assert.deepEqual(omitEmpty({ ...ok, resources: { limits: {} } }), ok);
});

test('names what kube-apiserver refuses in every pod: fields ephemeral containers may not set, even empty ones, and the rest', () => {
  for (const [what, c, field] of [
    ['ports', { ...ok, ports: [{ containerPort: 80 }] }, 'ports'],
    ['lifecycle: {} (a pointer: set even empty)', { ...ok, lifecycle: {} }, 'lifecycle'],
    ['livenessProbe: {}', { ...ok, livenessProbe: {} }, 'livenessProbe'],
    ['resources with a limit', { ...ok, resources: { limits: { cpu: '1' } } }, 'resources'],
    ['an env name with =', { ...ok, env: [{ name: 'A=B', value: 'x' }] }, 'env[0].name'],
    ['a mount without a path', { ...ok, volumeMounts: [{ name: 'a' }] }, 'volumeMounts[0].mountPath'],
    ['a mount path twice', { ...ok, volumeMounts: [{ name: 'a', mountPath: '/x' }, { name: 'b', mountPath: '/x' }] }, 'volumeMounts[1].mountPath'],
    ['a subPath', { ...ok, volumeMounts: [{ name: 'a', mountPath: '/x', subPath: 'y' }] }, 'volumeMounts[0].subPath'],
    ['runAsUser -1', { ...ok, securityContext: { runAsUser: -1 } }, 'securityContext.runAsUser'],
    ['an image with a trailing newline', { ...ok, image: 'busybox\n' }, 'image'],
    ['a name with a dot', { ...ok, name: 'a.b' }, 'name'],
    ['an unknown pull policy', { ...ok, imagePullPolicy: 'Sometimes' }, 'imagePullPolicy'],
    ['an env value and valueFrom', { ...ok, env: [{ name: 'A', value: 'x', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }] }, 'env[0].valueFrom'],
    ['valueFrom with no source', { ...ok, env: [{ name: 'A', valueFrom: {} }] }, 'env[0].valueFrom'],
    ['a secretKeyRef without key', { ...ok, env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 's' } } }] }, 'env[0].valueFrom.secretKeyRef.key'],
    ['envFrom with no source', { ...ok, envFrom: [{}] }, 'envFrom[0]'],
    ['a configMapRef without a name', { ...ok, envFrom: [{ configMapRef: {} }] }, 'envFrom[0].configMapRef.name'],
    ['a volumeDevice without a path', { ...ok, volumeDevices: [{ name: 'b' }] }, 'volumeDevices[0].devicePath'],
    ['Bidirectional propagation, not privileged', { ...ok, volumeMounts: [{ name: 'a', mountPath: '/a', mountPropagation: 'Bidirectional' }] }, 'volumeMounts[0].mountPropagation'],
    ['privileged without privilege escalation', { ...ok, securityContext: { privileged: true, allowPrivilegeEscalation: false } }, 'securityContext'],
  ] as const) {
    const r = parse(c);
    assert.equal(r.ok, false, what);
    assert.match((r as { message: string }).message, new RegExp(`spec\\.template\\.ephemeralContainers\\[0\\]\\.${field.replace(/[.[\]]/g, '\\$&')}: `), what);
  }
});
