// Warnings: legal but risky specs, each at most 120 characters, no control characters.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { warning, warningsFor } from '../../functions/webhook/warnings.ts';
import { container, job, spec } from './support.ts';

const C0 = 'spec.template.ephemeralContainers[0]';
const withSc = (securityContext: unknown) => job(spec({ template: { ephemeralContainers: [container({ securityContext })] } }));

test('a plain job has no warnings', () => assert.deepEqual(warningsFor(job()), []));

test('risky security settings are each warned about at their path', () => {
  const w = warningsFor(withSc({ privileged: true, allowPrivilegeEscalation: true, runAsUser: 0, capabilities: { add: ['SYS_PTRACE', 'CHOWN', 'sys_admin'] } }));
  assert.deepEqual(w, [
    `${C0}.securityContext.privileged: privileged container has full access to the node`,
    `${C0}.securityContext.allowPrivilegeEscalation: lets processes gain privileges`,
    `${C0}.securityContext.runAsUser: runs as root (UID 0)`,
    `${C0}.securityContext.capabilities.add: adds SYS_PTRACE, sys_admin`,
  ]);
});

test('procMount Unmasked is warned about: only a pod with hostUsers false takes it, the others are failed (review91 F2)', () => {
  assert.deepEqual(warningsFor(withSc({ procMount: 'Unmasked' })), [`${C0}.securityContext.procMount: Unmasked: a pod without hostUsers: false is failed`]);
  assert.deepEqual(warningsFor(withSc({ procMount: 'Default' })), []);
});

test('hostProcess true is warned about: only a Windows HostProcess pod takes it, the others are failed; the spec.os rules are not (most pods set no spec.os)', () => {
  assert.deepEqual(warningsFor(withSc({ windowsOptions: { hostProcess: true } })), [`${C0}.securityContext.windowsOptions.hostProcess: non-HostProcess pods are failed`]);
  assert.deepEqual(warningsFor(withSc({ windowsOptions: { hostProcess: false, runAsUserName: 'ContainerUser' }, seccompProfile: { type: 'RuntimeDefault' } })), []);
});

test('safe security settings are not warned about', () => {
  assert.deepEqual(warningsFor(withSc({ privileged: false, runAsUser: 1000, capabilities: { add: ['CHOWN'] } })), []);
});

test('parallelism 0 and a user-set KRUISE_EJOB_ID are warned about', () => {
  const w = warningsFor(job(spec({ parallelism: 0, template: { ephemeralContainers: [container({ env: [{ name: 'KRUISE_EJOB_ID', value: 'x' }] })] } })));
  assert.deepEqual(w, [
    'spec.parallelism: is 0: no container will be injected until it is raised',
    `${C0}.env: KRUISE_EJOB_ID is set by the controller; this value will be replaced`,
  ]);
});

test('a template field Kubernetes 1.33 does not know is warned about at its path (injections ask for fieldValidation=Strict)', () => {
  const w = warningsFor(job(spec({ template: { ephemeralContainers: [container({ comand: ['sh'], securityContext: { runAsNonRot: true }, env: [{ name: 'A', valueFrom: { fileKeyRef: { path: 'p', key: 'k' } } }] })] } })));
  assert.deepEqual([...w].sort(), [
    `${C0}.comand: unknown field: refused unless the cluster knows it`,
    `${C0}.env[0].valueFrom.fileKeyRef: unknown field: refused unless the cluster knows it`,
    `${C0}.securityContext.runAsNonRot: unknown field: refused unless the cluster knows it`,
  ]);
  assert.ok(w.every((x) => x.length <= 120));
});

test('warnings are capped in number and length', () => {
  const many = Array.from({ length: 30 }, (_, i) => container({ name: `c${i}`, securityContext: { privileged: true } }));
  const w = warningsFor(job(spec({ template: { ephemeralContainers: many } })));
  assert.equal(w.length, 10);
  assert.equal(w.at(-1), 'and 21 more warnings');
  const long = warning(['spec', 'x'.repeat(300)], 'message\nwith\u0007control');
  assert.equal(long.length, 120);
  assert.equal(warning(['spec'], 'a\nb\u0000c'), 'spec: a b c');
});
