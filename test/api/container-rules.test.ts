// What kube-apiserver refuses in an ephemeral container whatever the pod, as the planner's
// spec parse judges it (phase Error) and the embedded API server refuses it: neither
// stricter (a job kube-apiserver and OpenKruise run must run) nor looser (a job whose every
// injection would be refused is named at once). Reviews of 2026-11-27.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ephemeralContainerProblems, omitEmpty, podBoundProblems, type ContainerProblem } from '../../functions/api/container-rules.ts';
import { parseEjobSpec, type EphemeralJobObject } from '../../functions/api/ephemeraljob.ts';
import type { Pod } from '../../functions/api/pod.ts';
import { plan } from '../../functions/ejob/planner.ts';

const ok = { name: 'probe', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File' };
// validEnvDownwardAPIFieldPathExpressions, as kube-apiserver lists them in its NotSupported message.
const ENV_PATHS = ['metadata.name', 'metadata.namespace', 'metadata.uid', 'spec.nodeName', 'spec.serviceAccountName', 'status.hostIP', 'status.hostIPs', 'status.podIP', 'status.podIPs'];
const RESOURCES = ['limits.cpu', 'limits.ephemeral-storage', 'limits.memory', 'requests.cpu', 'requests.ephemeral-storage', 'requests.memory'];
const PROFILE_TYPES = ['Localhost', 'RuntimeDefault', 'Unconfined'];
// apimachinery's IsQualifiedName wording.
const NAME_PART_MSG = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const PREFIX_MSG = "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
// apimachinery's IsDNS1123Subdomain and IsConfigMapKey wording.
const SUBDOMAIN_MSG = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const CONFIG_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
const env = (valueFrom: Record<string, unknown>): Record<string, unknown> => ({ ...ok, env: [{ name: 'A', valueFrom }] });
const envFrom = (source: Record<string, unknown>): Record<string, unknown> => ({ ...ok, envFrom: [source] });
const fieldRef = (ref: Record<string, unknown>): Record<string, unknown> => env({ fieldRef: ref });
const mount = (m: Record<string, unknown>): Record<string, unknown> => ({ ...ok, volumeMounts: [{ name: 'a', mountPath: '/a', ...m }] });
const security = (sc: Record<string, unknown>): Record<string, unknown> => ({ ...ok, securityContext: sc });
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
    'every path an env var may read, apiVersion v1 or unset (defaulted)': { ...ok, env: ENV_PATHS.map((fieldPath, i) => ({ name: `E${i}`, valueFrom: { fieldRef: i % 2 ? { fieldPath } : { apiVersion: 'v1', fieldPath } } })) },
    'a label and an annotation by key (an annotation key lowercased first)': { ...ok, env: [{ name: 'L', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app.kubernetes.io/name']" } } }, { name: 'A', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['Example.com/Key']" } } }] },
    'spec.host, the old name of spec.nodeName': { ...ok, env: [{ name: 'H', valueFrom: { fieldRef: { fieldPath: 'spec.host' } } }] },
    'a resourceFieldRef to a container resource or hugepages': { ...ok, env: [{ name: 'M', valueFrom: { resourceFieldRef: { resource: 'limits.memory' } } }, { name: 'H', valueFrom: { resourceFieldRef: { resource: 'requests.hugepages-2Mi', containerName: 'app' } } }] },
    'recursiveReadOnly Disabled on a writable mount': { ...ok, volumeMounts: [{ name: 'a', mountPath: '/a', recursiveReadOnly: 'Disabled' }] },
    'recursiveReadOnly Enabled and IfPossible on read-only mounts, propagation None or unset': { ...ok, volumeMounts: [{ name: 'a', mountPath: '/a', readOnly: true, recursiveReadOnly: 'Enabled', mountPropagation: 'None' }, { name: 'b', mountPath: '/b', readOnly: true, recursiveReadOnly: 'IfPossible' }] },
    'seccomp RuntimeDefault': { ...ok, securityContext: { seccompProfile: { type: 'RuntimeDefault' } } },
    'seccomp Localhost with a relative profile': { ...ok, securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: 'profiles/audit.json' } } },
    'seccomp Localhost with an empty profile (Go only checks it is set)': { ...ok, securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: '' } } },
    'AppArmor Unconfined': { ...ok, securityContext: { appArmorProfile: { type: 'Unconfined' } } },
    'AppArmor Localhost with a profile': { ...ok, securityContext: { appArmorProfile: { type: 'Localhost', localhostProfile: 'k8s-apparmor-example' } } },
    'AppArmor Localhost with a profile of 4095 bytes': { ...ok, securityContext: { appArmorProfile: { type: 'Localhost', localhostProfile: 'a'.repeat(4095) } } },
    'key refs to subdomain names, by config keys (dots, capitals, underscores)': { ...ok, env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'app.config', key: '.env' } } }, { name: 'B', valueFrom: { secretKeyRef: { name: 'db-creds', key: 'DB_PASSWORD-1.b' } } }] },
    'a config key of 253 characters': env({ configMapKeyRef: { name: 'cm', key: 'k'.repeat(253) } }),
    // ValidateConfigMapName(name, true): a trailing dash is masked as for generateName, the
    // last two bytes by "a" (apimachinery's maskTrailingDash), so `A-` is judged as `a`.
    'envFrom names with a trailing dash (masked, as a generateName)': { ...ok, envFrom: [{ configMapRef: { name: 'app-config-' } }, { secretRef: { name: 'A-' } }, { prefix: 'X_', secretRef: { name: `${'s'.repeat(253)}-` } }] },
    'procMount Default': security({ procMount: 'Default' }),
    // Unmasked needs a pod with hostUsers false: that is the pod's to say, not the template's.
    'procMount Unmasked': security({ procMount: 'Unmasked' }),
    'procMount null': security({ procMount: null }),
    // validateContainerResourceDivisor judges the canonical form: 1000m is 1, 1024Ki is 1Mi, 1000 is 1k; zero is unset (review91 F1).
    'divisors kube-apiserver allows, by their canonical form': { ...ok, env: [['limits.cpu', '1m'], ['requests.cpu', '1000m'], ['limits.cpu', 1], ['limits.cpu', '0'], ['limits.memory', '1Mi'], ['limits.memory', '1024Ki'], ['requests.memory', 1000], ['limits.ephemeral-storage', '1Ki'], ['limits.hugepages-2Mi', '1Gi'], ['limits.memory', '1e0'], ['requests.memory', '0.9765625Ki']].map(([resource, divisor], i) => ({ name: `D${i}`, valueFrom: { resourceFieldRef: { resource, divisor } } })) },
    'windowsOptions as Windows names them': security({ windowsOptions: { gmsaCredentialSpecName: 'webapp1', gmsaCredentialSpec: '{"CmsPlugins":["ActiveDirectory"]}', runAsUserName: 'NT AUTHORITY\\NETWORK SERVICE', hostProcess: false } }),
    'a runAsUserName with a DNS domain, one without': { ...ok, securityContext: { windowsOptions: { runAsUserName: 'corp.example.com\\svc-debug' } } },
    'devices and mounts apart': { ...ok, volumeMounts: [{ name: 'a', mountPath: '/a' }], volumeDevices: [{ name: 'b', devicePath: '/dev/b' }, { name: 'c', devicePath: '/dev/c' }] },
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
    ['envFrom with no source (named at the list, as validateEnvFrom does)', { ...ok, envFrom: [{}] }, 'envFrom'],
    ['an envFrom prefix with "="', { ...ok, envFrom: [{ prefix: 'A=', configMapRef: { name: 'cm' } }] }, 'envFrom[0].prefix'],
    ['a configMapRef without a name', { ...ok, envFrom: [{ configMapRef: {} }] }, 'envFrom[0].configMapRef.name'],
    ['a volumeDevice without a path', { ...ok, volumeDevices: [{ name: 'b' }] }, 'volumeDevices[0].devicePath'],
    ['Bidirectional propagation, not privileged', { ...ok, volumeMounts: [{ name: 'a', mountPath: '/a', mountPropagation: 'Bidirectional' }] }, 'volumeMounts[0].mountPropagation'],
    ['privileged without privilege escalation', { ...ok, securityContext: { privileged: true, allowPrivilegeEscalation: false } }, 'securityContext'],
    ['restartPolicyRules', { ...ok, restartPolicyRules: [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }] }, 'restartPolicyRules'],
    ['a configMapKeyRef to a name no ConfigMap can have', env({ configMapKeyRef: { name: 'My_CM', key: 'k' } }), 'env[0].valueFrom.configMapKeyRef.name'],
    ['a secretKeyRef to a key no Secret can have', env({ secretKeyRef: { name: 's', key: 'a b' } }), 'env[0].valueFrom.secretKeyRef.key'],
    ['an envFrom secretRef to a name no Secret can have', envFrom({ secretRef: { name: 'Bad_Name' } }), 'envFrom[0].secretRef.name'],
    ['a procMount that is none', security({ procMount: 'Masked' }), 'securityContext.procMount'],
  ] as const) {
    const r = parse(c);
    assert.equal(r.ok, false, what);
    assert.match((r as { message: string }).message, new RegExp(`spec\\.template\\.ephemeralContainers\\[0\\]\\.${field.replace(/[.[\]]/g, '\\$&')}: `), what);
  }
});

test("words what it refuses as kube-apiserver does (field, kind, detail): fieldRef, resourceFieldRef, recursiveReadOnly, seccomp and AppArmor profiles", () => {
  const FR = 'env[0].valueFrom.fieldRef';
  const RR = 'volumeMounts.recursiveReadOnly';
  const SP = 'securityContext.seccompProfile';
  const AA = 'securityContext.appArmorProfile';
  const cases: [string, Record<string, unknown>, ContainerProblem[]][] = [
    // validateObjectFieldSelector, through ConvertDownwardAPIFieldLabel
    ['a fieldRef without fieldPath', fieldRef({ apiVersion: 'v1' }), [{ field: `${FR}.fieldPath`, kind: 'required' }]],
    ['a fieldRef of another pod version', fieldRef({ apiVersion: 'v2', fieldPath: 'metadata.name' }), [{ field: `${FR}.fieldPath`, kind: 'invalid', value: 'metadata.name', message: 'error converting fieldPath: unsupported pod version: v2' }]],
    ['a path the API server does not know', fieldRef({ fieldPath: 'spec.containers' }), [{ field: `${FR}.fieldPath`, kind: 'invalid', value: 'spec.containers', message: 'error converting fieldPath: field label not supported: spec.containers' }]],
    ['a subscript on a field that takes none', fieldRef({ fieldPath: "metadata.name['x']" }), [{ field: `${FR}.fieldPath`, kind: 'invalid', value: "metadata.name['x']", message: "error converting fieldPath: field label does not support subscript: metadata.name['x']" }]],
    ['a pod field only volumes may read', fieldRef({ fieldPath: 'status.phase' }), [{ field: `${FR}.fieldPath`, kind: 'notSupported', value: 'status.phase', supported: ENV_PATHS }]],
    ['all the labels (env may read one label only)', fieldRef({ fieldPath: 'metadata.labels' }), [{ field: `${FR}.fieldPath`, kind: 'notSupported', value: 'metadata.labels', supported: ENV_PATHS }]],
    ['all the annotations', fieldRef({ apiVersion: 'v1', fieldPath: 'metadata.annotations' }), [{ field: `${FR}.fieldPath`, kind: 'notSupported', value: 'metadata.annotations', supported: ENV_PATHS }]],
    ['a label key that is no label key (named at the fieldRef)', fieldRef({ fieldPath: "metadata.labels['-bad']" }), [{ field: FR, kind: 'invalid', value: '-bad', message: NAME_PART_MSG }]],
    ['a label key with an upper-case prefix (annotation keys are lowercased, label keys not)', fieldRef({ fieldPath: "metadata.labels['Example.com/Key']" }), [{ field: FR, kind: 'invalid', value: 'Example.com/Key', message: PREFIX_MSG }]],
    // validateContainerResourceFieldSelector
    ['a resourceFieldRef without resource', env({ resourceFieldRef: { containerName: 'app' } }), [{ field: 'env[0].valueFrom.resourceFieldRef.resource', kind: 'required' }]],
    ['a resource no container has', env({ resourceFieldRef: { resource: 'limits.nvidia.com/gpu' } }), [{ field: 'env[0].valueFrom.resourceFieldRef.resource', kind: 'notSupported', value: 'limits.nvidia.com/gpu', supported: RESOURCES }]],
    // validateMountRecursiveReadOnly: the list's path, no index
    ['recursiveReadOnly of an unknown mode', mount({ readOnly: true, recursiveReadOnly: 'Always' }), [{ field: RR, kind: 'notSupported', value: 'Always', supported: ['Disabled', 'Enabled', 'IfPossible'] }]],
    ['recursiveReadOnly "" (a pointer: set)', mount({ readOnly: true, recursiveReadOnly: '' }), [{ field: RR, kind: 'notSupported', value: '', supported: ['Disabled', 'Enabled', 'IfPossible'] }]],
    ['recursiveReadOnly Enabled on a writable mount', mount({ recursiveReadOnly: 'Enabled' }), [{ field: RR, kind: 'forbidden', message: 'may only be specified when readOnly is true' }]],
    ['recursiveReadOnly IfPossible with HostToContainer propagation, not read-only', mount({ readOnly: false, recursiveReadOnly: 'IfPossible', mountPropagation: 'HostToContainer' }), [
      { field: RR, kind: 'forbidden', message: 'may only be specified when readOnly is true' },
      { field: RR, kind: 'forbidden', message: 'may only be specified when mountPropagation is None or not specified' },
    ]],
    // validateSeccompProfileField
    ['a seccomp profile without type', security({ seccompProfile: {} }), [{ field: `${SP}.type`, kind: 'required', message: 'type is required when seccompProfile is set' }]],
    ['a seccomp type that is none', security({ seccompProfile: { type: 'Default' } }), [{ field: `${SP}.type`, kind: 'notSupported', value: 'Default', supported: PROFILE_TYPES }]],
    ['seccomp Localhost without its profile', security({ seccompProfile: { type: 'Localhost' } }), [{ field: `${SP}.localhostProfile`, kind: 'required', message: 'must be set when seccomp type is Localhost' }]],
    ['seccomp Localhost with an absolute path that steps back', security({ seccompProfile: { type: 'Localhost', localhostProfile: '/profiles/../audit.json' } }), [
      { field: `${SP}.localhostProfile`, kind: 'invalid', value: '/profiles/../audit.json', message: 'must be a relative path' },
      { field: `${SP}.localhostProfile`, kind: 'invalid', value: '/profiles/../audit.json', message: "must not contain '..'" },
    ]],
    ['a seccomp profile path with RuntimeDefault', security({ seccompProfile: { type: 'RuntimeDefault', localhostProfile: 'x.json' } }), [{ field: `${SP}.localhostProfile`, kind: 'invalid', value: { type: 'RuntimeDefault', localhostProfile: 'x.json' }, message: 'can only be set when seccomp type is Localhost' }]],
    // ValidateAppArmorProfileField
    ['an AppArmor profile without type', security({ appArmorProfile: { localhostProfile: 'x' } }), [{ field: `${AA}.type`, kind: 'required', message: 'type is required when appArmorProfile is set' }]],
    ['an AppArmor type that is none', security({ appArmorProfile: { type: 'Enforce' } }), [{ field: `${AA}.type`, kind: 'notSupported', value: 'Enforce', supported: PROFILE_TYPES }]],
    ['AppArmor Localhost without its profile', security({ appArmorProfile: { type: 'Localhost' } }), [{ field: `${AA}.localhostProfile`, kind: 'required', message: 'must be set when AppArmor type is Localhost' }]],
    ['AppArmor Localhost with an empty profile', security({ appArmorProfile: { type: 'Localhost', localhostProfile: '' } }), [{ field: `${AA}.localhostProfile`, kind: 'required', message: 'must be set when AppArmor type is Localhost' }]],
    ['AppArmor Localhost with a padded profile', security({ appArmorProfile: { type: 'Localhost', localhostProfile: 'k8s-example\n' } }), [{ field: `${AA}.localhostProfile`, kind: 'invalid', value: 'k8s-example\n', message: 'must not be padded with whitespace' }]],
    ['AppArmor Localhost with a profile over 4095 bytes (UTF-8: 2048 characters here)', security({ appArmorProfile: { type: 'Localhost', localhostProfile: 'é'.repeat(2048) } }), [{ field: `${AA}.localhostProfile`, kind: 'tooLong', message: 'may not be more than 4095 bytes' }]],
    ['an AppArmor profile path with Unconfined', security({ appArmorProfile: { type: 'Unconfined', localhostProfile: 'x' } }), [{ field: `${AA}.localhostProfile`, kind: 'invalid', value: 'x', message: 'can only be set when AppArmor type is Localhost' }]],
    // validateConfigMapKeySelector / validateSecretKeySelector: the name through
    // ValidateSecretName(name, false) whatever it is (an empty one is Invalid, not Required),
    // the key Required, then validation.IsConfigMapKey, each message an error of its own.
    ['a configMapKeyRef name with capitals and an underscore', env({ configMapKeyRef: { name: 'My_CM', key: 'k' } }), [{ field: 'env[0].valueFrom.configMapKeyRef.name', kind: 'invalid', value: 'My_CM', message: SUBDOMAIN_MSG }]],
    ['a secretKeyRef without name', env({ secretKeyRef: { key: 'k' } }), [{ field: 'env[0].valueFrom.secretKeyRef.name', kind: 'invalid', value: '', message: SUBDOMAIN_MSG }]],
    ['a secretKeyRef name with a trailing dash (no masking for a key ref)', env({ secretKeyRef: { name: 'db-', key: 'k' } }), [{ field: 'env[0].valueFrom.secretKeyRef.name', kind: 'invalid', value: 'db-', message: SUBDOMAIN_MSG }]],
    ['a secretKeyRef name of 254 characters', env({ secretKeyRef: { name: 's'.repeat(254), key: 'k' } }), [{ field: 'env[0].valueFrom.secretKeyRef.name', kind: 'invalid', value: 's'.repeat(254), message: 'must be no more than 253 characters' }]],
    ['a configMapKeyRef key with a space and a bad name beside it', env({ configMapKeyRef: { name: 'CM', key: 'a b' } }), [
      { field: 'env[0].valueFrom.configMapKeyRef.name', kind: 'invalid', value: 'CM', message: SUBDOMAIN_MSG },
      { field: 'env[0].valueFrom.configMapKeyRef.key', kind: 'invalid', value: 'a b', message: CONFIG_KEY_MSG },
    ]],
    ['a config key "."', env({ configMapKeyRef: { name: 'cm', key: '.' } }), [{ field: 'env[0].valueFrom.configMapKeyRef.key', kind: 'invalid', value: '.', message: "must not be '.'" }]],
    ['a config key ".."', env({ secretKeyRef: { name: 's', key: '..' } }), [{ field: 'env[0].valueFrom.secretKeyRef.key', kind: 'invalid', value: '..', message: "must not be '..'" }]],
    ['a config key starting with ".." and a slash', env({ secretKeyRef: { name: 's', key: '../etc' } }), [
      { field: 'env[0].valueFrom.secretKeyRef.key', kind: 'invalid', value: '../etc', message: CONFIG_KEY_MSG },
      { field: 'env[0].valueFrom.secretKeyRef.key', kind: 'invalid', value: '../etc', message: "must not start with '..'" },
    ]],
    ['a config key of 254 bytes (UTF-8: 127 characters here)', env({ configMapKeyRef: { name: 'cm', key: 'é'.repeat(127) } }), [
      { field: 'env[0].valueFrom.configMapKeyRef.key', kind: 'invalid', value: 'é'.repeat(127), message: 'must be no more than 253 characters' },
      { field: 'env[0].valueFrom.configMapKeyRef.key', kind: 'invalid', value: 'é'.repeat(127), message: CONFIG_KEY_MSG },
    ]],
    // validateConfigMapEnvSource / validateSecretEnvSource: Required, then the name as a prefix.
    ['an envFrom configMapRef name with an underscore', envFrom({ configMapRef: { name: 'My_CM' } }), [{ field: 'envFrom[0].configMapRef.name', kind: 'invalid', value: 'My_CM', message: SUBDOMAIN_MSG }]],
    ['an envFrom secretRef name "-" (Go panics masking it: the request fails anyway)', envFrom({ secretRef: { name: '-' } }), [{ field: 'envFrom[0].secretRef.name', kind: 'invalid', value: '-', message: SUBDOMAIN_MSG }]],
    ['an envFrom name of 255 characters, a dash last (masked: 254)', envFrom({ configMapRef: { name: `${'c'.repeat(254)}-` } }), [{ field: 'envFrom[0].configMapRef.name', kind: 'invalid', value: `${'c'.repeat(254)}-`, message: 'must be no more than 253 characters' }]],
    ['an envFrom name with a dash after a non-ASCII character (Go cuts the character in two)', envFrom({ configMapRef: { name: 'abcé-' } }), [{ field: 'envFrom[0].configMapRef.name', kind: 'invalid', value: 'abcé-', message: SUBDOMAIN_MSG }]],
    // ValidateProcMountType: Default or Unmasked, in that order; "" is set (a pointer).
    ['a procMount that is none', security({ procMount: 'Masked' }), [{ field: 'securityContext.procMount', kind: 'notSupported', value: 'Masked', supported: ['Default', 'Unmasked'] }]],
    ['procMount ""', security({ procMount: '' }), [{ field: 'securityContext.procMount', kind: 'notSupported', value: '', supported: ['Default', 'Unmasked'] }]],
  ];
  for (const [what, c, problems] of cases) assert.deepEqual(ephemeralContainerProblems(c), problems, what);
});

test('review91 F1, F3: divisors, windowsOptions and devices, worded as kube-apiserver words them (the planner puts such a job in Error)', () => {
  const DV = 'env[0].valueFrom.resourceFieldRef.divisor';
  const WO = 'securityContext.windowsOptions';
  const CPU = "only divisor's values 1m and 1 are supported with the cpu resource";
  const bytes = (what: string): string => `only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the ${what} resource`;
  const divisor = (resource: string, d: unknown): Record<string, unknown> => env({ resourceFieldRef: { resource, divisor: d } });
  const cases: [string, Record<string, unknown>, ContainerProblem[]][] = [
    // validateContainerResourceDivisor: Go shows the resource as the value.
    ['a cpu divisor in bytes', divisor('limits.cpu', '1Mi'), [{ field: DV, kind: 'invalid', value: 'limits.cpu', message: CPU }]],
    ['a cpu divisor of 2', divisor('requests.cpu', 2), [{ field: DV, kind: 'invalid', value: 'requests.cpu', message: CPU }]],
    ['a cpu divisor 1e-3 (an exponent keeps its form: "1e-3", not "1m")', divisor('limits.cpu', '1e-3'), [{ field: DV, kind: 'invalid', value: 'limits.cpu', message: CPU }]],
    ['a memory divisor in millis', divisor('limits.memory', '1m'), [{ field: DV, kind: 'invalid', value: 'limits.memory', message: bytes('memory') }]],
    ['a memory divisor 1024 (no suffix: "1024", not "1Ki")', divisor('requests.memory', '1024'), [{ field: DV, kind: 'invalid', value: 'requests.memory', message: bytes('memory') }]],
    ['an ephemeral-storage divisor 512Ki', divisor('limits.ephemeral-storage', '512Ki'), [{ field: DV, kind: 'invalid', value: 'limits.ephemeral-storage', message: bytes('local ephemeral storage') }]],
    ['a hugepages divisor of -1', divisor('requests.hugepages-1Gi', '-1'), [{ field: DV, kind: 'invalid', value: 'requests.hugepages-1Gi', message: bytes('hugepages') }]],
    ['a resource no container has, and a divisor (only the resource is wrong)', divisor('limits.gpu', '7'), [{ field: 'env[0].valueFrom.resourceFieldRef.resource', kind: 'notSupported', value: 'limits.gpu', supported: RESOURCES }]],
    // validateWindowsSecurityContextOptions
    ['a GMSA spec name that is no subdomain', security({ windowsOptions: { gmsaCredentialSpecName: 'Web_App' } }), [{ field: `${WO}.gmsaCredentialSpecName`, kind: 'invalid', value: 'Web_App', message: SUBDOMAIN_MSG }]],
    ['an empty GMSA spec', security({ windowsOptions: { gmsaCredentialSpec: '' } }), [{ field: `${WO}.gmsaCredentialSpec`, kind: 'invalid', value: '', message: 'gmsaCredentialSpec cannot be an empty string' }]],
    ['a GMSA spec over 64 KiB', security({ windowsOptions: { gmsaCredentialSpec: 'x'.repeat(65537) } }), [{ field: `${WO}.gmsaCredentialSpec`, kind: 'invalid', value: 'x'.repeat(65537), message: 'gmsaCredentialSpec size must be under 64 KiB' }]],
    ['an empty runAsUserName', security({ windowsOptions: { runAsUserName: '' } }), [{ field: `${WO}.runAsUserName`, kind: 'invalid', value: '', message: 'runAsUserName cannot be an empty string' }]],
    ['a runAsUserName with a tab', security({ windowsOptions: { runAsUserName: 'a\tb' } }), [{ field: `${WO}.runAsUserName`, kind: 'invalid', value: 'a\tb', message: 'runAsUserName cannot contain control characters' }]],
    ['a runAsUserName with two backslashes', security({ windowsOptions: { runAsUserName: 'a\\b\\c' } }), [{ field: `${WO}.runAsUserName`, kind: 'invalid', value: 'a\\b\\c', message: 'runAsUserName cannot contain more than one backslash' }]],
    ['a runAsUserName with a bad domain and no user', security({ windowsOptions: { runAsUserName: '.corp\\' } }), [
      { field: `${WO}.runAsUserName`, kind: 'invalid', value: '.corp\\', message: "runAsUserName's Domain doesn't match the NetBios nor the DNS format" },
      { field: `${WO}.runAsUserName`, kind: 'invalid', value: '.corp\\', message: "runAsUserName's User cannot be empty" },
    ]],
    ['a runAsUserName of dots, and one with an @', security({ windowsOptions: { runAsUserName: '..' } }), [{ field: `${WO}.runAsUserName`, kind: 'invalid', value: '..', message: "runAsUserName's User cannot contain only periods or spaces" }]],
    ['a runAsUserName with an @', security({ windowsOptions: { runAsUserName: 'user@corp' } }), [{ field: `${WO}.runAsUserName`, kind: 'invalid', value: 'user@corp', message: 'runAsUserName\'s User cannot contain the following characters: "/\\:;|=,+*?<>@[]' }]],
    ['a runAsUserName user of 105 bytes', security({ windowsOptions: { runAsUserName: 'u'.repeat(105) } }), [{ field: `${WO}.runAsUserName`, kind: 'invalid', value: 'u'.repeat(105), message: "runAsUserName's User length must not be longer than 104 characters" }]],
    // ValidateVolumeDevices, and ValidateVolumeMounts' half of the overlap
    ['a device without a name', { ...ok, volumeDevices: [{ devicePath: '/dev/b' }] }, [{ field: 'volumeDevices[0].name', kind: 'required' }]],
    ['a device name and path twice', { ...ok, volumeDevices: [{ name: 'b', devicePath: '/dev/b' }, { name: 'b', devicePath: '/dev/b' }] }, [
      { field: 'volumeDevices[1].name', kind: 'invalid', value: 'b', message: 'must be unique' },
      { field: 'volumeDevices[1].devicePath', kind: 'invalid', value: '/dev/b', message: 'must be unique' },
    ]],
    ['a device path with ".."', { ...ok, volumeDevices: [{ name: 'b', devicePath: '/dev/../b' }] }, [{ field: 'volumeDevices[0].devicePath', kind: 'invalid', value: '/dev/../b', message: "can not contain backsteps ('..')" }]],
    ['a device and a mount of one volume at one path', { ...ok, volumeMounts: [{ name: 'v', mountPath: '/v' }], volumeDevices: [{ name: 'v', devicePath: '/v' }] }, [
      { field: 'volumeMounts[0].name', kind: 'invalid', value: 'v', message: 'must not already exist in volumeDevices' },
      { field: 'volumeMounts[0].mountPath', kind: 'invalid', value: '/v', message: 'must not already exist as a path in volumeDevices' },
      { field: 'volumeDevices[0].name', kind: 'invalid', value: 'v', message: 'must not already exist in volumeMounts' },
      { field: 'volumeDevices[0].devicePath', kind: 'invalid', value: '/v', message: 'must not already exist as a path in volumeMounts' },
    ]],
  ];
  for (const [what, c, problems] of cases) {
    assert.deepEqual(ephemeralContainerProblems(c), problems, what);
    assert.match((parse(c) as { message?: string }).message ?? 'parsed', new RegExp(`spec\\.template\\.ephemeralContainers\\[0\\]\\.${problems[0]!.field.replace(/[.[\]]/g, '\\$&')}: `), what);
  }
});

test('review91 F2, F3: what only some pods refuse (podBoundProblems): a volume the pod lacks, a device on a volume of another kind, Unmasked with host users', () => {
  const c = { ...ok, volumeMounts: [{ name: 'gone', mountPath: '/g' }], volumeDevices: [{ name: 'scratch', devicePath: '/dev/s' }, { name: 'claim', devicePath: '/dev/c' }], securityContext: { procMount: 'Unmasked' } };
  const volumes = [{ name: 'scratch', emptyDir: {} }, { name: 'claim', persistentVolumeClaim: { claimName: 'x' } }];
  assert.deepEqual(podBoundProblems(c, { volumes }), [
    { field: 'volumeMounts[0].name', kind: 'notFound', value: 'gone' },
    { field: 'volumeDevices[0].name', kind: 'invalid', value: 'scratch', message: 'can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode' },
    { field: 'securityContext.procMount', kind: 'invalid', value: 'Unmasked', message: '`hostUsers` must be false to use `Unmasked`' },
  ]);
  assert.deepEqual(podBoundProblems({ ...c, volumeMounts: [] }, { hostUsers: false, volumes: [{ name: 'scratch', ephemeral: { volumeClaimTemplate: {} } }, volumes[1]!] }), []);
  // Not the template's to answer for: the spec parse takes them.
  assert.deepEqual(parse(c), { ok: true });
});

test("the pod-dependent security rules (podBoundProblems): spec.os's validateLinux and validateWindows, only when spec.os is set, and validateWindowsHostProcessPod", () => {
  const windowsOptions = security({ windowsOptions: { runAsUserName: 'ContainerUser' } });
  const linuxOnly = security({ appArmorProfile: { type: 'RuntimeDefault' }, seLinuxOptions: {}, seccompProfile: { type: 'RuntimeDefault' }, capabilities: {}, readOnlyRootFilesystem: false, privileged: false, allowPrivilegeEscalation: false, procMount: 'Default', runAsUser: 1000, runAsGroup: 1000, runAsNonRoot: true });
  // validateLinux: windowsOptions at all, even empty.
  assert.deepEqual(podBoundProblems(windowsOptions, { os: { name: 'linux' } }), [{ field: 'securityContext.windowsOptions', kind: 'forbidden', message: 'windows options cannot be set for a linux pod' }]);
  assert.deepEqual(podBoundProblems(security({ windowsOptions: {} }), { os: { name: 'linux' } }).map((p) => p.field), ['securityContext.windowsOptions']);
  // validateWindows: each linux-only field that is set (false and {} are set; null is not), in Go's order; runAsNonRoot is not one.
  assert.deepEqual(podBoundProblems(linuxOnly, { os: { name: 'windows' } }), ['appArmorProfile', 'seLinuxOptions', 'seccompProfile', 'capabilities', 'readOnlyRootFilesystem', 'privileged', 'allowPrivilegeEscalation', 'procMount', 'runAsUser', 'runAsGroup'].map((k) => ({ field: `securityContext.${k}`, kind: 'forbidden', message: 'cannot be set for a windows pod' })));
  assert.deepEqual(podBoundProblems(security({ privileged: null, runAsNonRoot: true }), { os: { name: 'windows' } }), []);
  // Without spec.os (most pods), or with the other OS, either is taken.
  for (const os of [undefined, {}, { name: 'windows' }]) assert.deepEqual(podBoundProblems(windowsOptions, { os }), [], JSON.stringify(os));
  for (const os of [undefined, { name: 'linux' }]) assert.deepEqual(podBoundProblems(linuxOnly, { os }), [], JSON.stringify(os));

  const hostProcess = (v: unknown): Record<string, unknown> => ({ securityContext: { windowsOptions: { hostProcess: v } } });
  const hp = { ...ok, ...hostProcess(true) };
  const plainPod = { containers: [{ name: 'app' }] };
  const allContainers = { field: 'securityContext.windowsOptions.hostProcess', podField: '', kind: 'invalid', value: '', message: 'If pod contains any hostProcess containers then all containers must be HostProcess containers' };
  const hostNetwork = { field: 'securityContext.windowsOptions.hostProcess', podField: 'hostNetwork', kind: 'invalid', value: false, message: 'hostNetwork must be true if pod contains any hostProcess containers' };
  // A HostProcess container in a pod that is not a HostProcess pod, whatever spec.os: the pod's rule, at spec and spec.hostNetwork.
  assert.deepEqual(podBoundProblems(hp, plainPod), [allContainers, hostNetwork]);
  assert.deepEqual(podBoundProblems(hp, { ...plainPod, hostNetwork: true }), [allContainers]);
  assert.deepEqual(podBoundProblems(hp, { ...plainPod, securityContext: hostProcess(false).securityContext }), [
    { field: 'securityContext.windowsOptions.hostProcess', kind: 'invalid', value: true, message: 'pod hostProcess value must be identical if both are specified, was false' }, allContainers, hostNetwork,
  ]);
  // A HostProcess pod: by its own securityContext, or by its containers (an init or ephemeral one tells it too).
  const byPod = { containers: [{ name: 'app' }], hostNetwork: true, securityContext: hostProcess(true).securityContext };
  for (const pod of [byPod, { containers: [{ name: 'app', ...hostProcess(true) }], hostNetwork: true }, { containers: [{ name: 'app', ...hostProcess(true) }], initContainers: [{ name: 'i', ...hostProcess(true) }], hostNetwork: true }]) {
    assert.deepEqual(podBoundProblems(hp, pod), [], JSON.stringify(pod));
  }
  assert.deepEqual(podBoundProblems(ok, byPod), [], "a container that sets nothing takes the pod's hostProcess");
  assert.deepEqual(podBoundProblems(ok, { containers: [{ name: 'app', ...hostProcess(true) }], hostNetwork: true }), [allContainers], 'set on the containers alone, the pod does not make it one');
  assert.deepEqual(podBoundProblems(ok, { containers: [{ name: 'app' }], ephemeralContainers: [{ name: 'dbg', ...hostProcess(true) }], hostNetwork: true }), [allContainers]);
  assert.deepEqual(podBoundProblems({ ...ok, ...hostProcess(false) }, byPod), [
    { field: 'securityContext.windowsOptions.hostProcess', kind: 'invalid', value: false, message: 'pod hostProcess value must be identical if both are specified, was true' }, allContainers,
  ]);
  // hostProcess false, or null (Go's nil), in a plain pod: nothing.
  for (const v of [false, null]) assert.deepEqual(podBoundProblems({ ...ok, ...hostProcess(v) }, plainPod), [], String(v));
  assert.deepEqual(podBoundProblems({ ...ok, ...hostProcess(false) }, { ...plainPod, securityContext: hostProcess(false).securityContext }), []);
  // Not the template's to answer for: the spec parse takes them all.
  for (const c of [windowsOptions, linuxOnly, hp]) assert.deepEqual(parse(c), { ok: true });
});

test('a fieldRef without apiVersion: a template runs (the API server defaults it to v1), what is received undefaulted is Required', () => {
  for (const apiVersion of [undefined, null, '']) {
    const c = fieldRef({ apiVersion, fieldPath: 'spec.nodeName' });
    assert.deepEqual(ephemeralContainerProblems(c, 'template'), [], String(apiVersion));
    assert.deepEqual(ephemeralContainerProblems(c, 'received'), [{ field: 'env[0].valueFrom.fieldRef.apiVersion', kind: 'required' }], String(apiVersion));
  }
  assert.deepEqual(ephemeralContainerProblems(fieldRef({ apiVersion: 'v1', fieldPath: 'spec.nodeName' }), 'received'), []);
});

test('the planner names these fields in phase Error, an unsupported value with what is supported', () => {
  for (const [what, c, field] of [
    ['a fieldRef env may not read', fieldRef({ fieldPath: 'metadata.labels' }), 'env[0].valueFrom.fieldRef.fieldPath'],
    ['a resourceFieldRef to no resource', env({ resourceFieldRef: { resource: 'cpu' } }), 'env[0].valueFrom.resourceFieldRef.resource'],
    ['recursiveReadOnly on a writable mount', mount({ recursiveReadOnly: 'IfPossible' }), 'volumeMounts.recursiveReadOnly'],
    ['seccomp Localhost without its profile', security({ seccompProfile: { type: 'Localhost' } }), 'securityContext.seccompProfile.localhostProfile'],
    ['an AppArmor profile with Unconfined', security({ appArmorProfile: { type: 'Unconfined', localhostProfile: 'x' } }), 'securityContext.appArmorProfile.localhostProfile'],
  ] as const) {
    const r = parse(c);
    assert.equal(r.ok, false, what);
    assert.match((r as { message: string }).message, new RegExp(`spec\\.template\\.ephemeralContainers\\[0\\]\\.${field.replace(/[.[\]]/g, '\\$&')}: `), what);
  }
  assert.match((parse(fieldRef({ fieldPath: 'status.phase' })) as { message: string }).message, /fieldRef\.fieldPath: "status\.phase" is not one of metadata\.name, metadata\.namespace, .*status\.podIPs/);
  assert.match((parse(security({ seccompProfile: { type: 'Localhost' } })) as { message: string }).message, /localhostProfile: must be set when seccomp type is Localhost/);
});

test('JSON types Go cannot decode are named in phase Error, as kube-apiserver refuses them in every pod (review: a real server answered 422 pod after pod)', () => {
  for (const [what, c, field, detail] of [
    ['a quoted boolean', { ...ok, tty: 'true' }, 'tty', 'must be a boolean (true or false)'],
    ['a number as a boolean', { ...ok, stdin: 1 }, 'stdin', 'must be a boolean (true or false)'],
    ['a quoted user id', security({ runAsUser: '1000' }), 'securityContext.runAsUser', 'must be a whole number'],
    ['a fractional user id', security({ runAsUser: 1000.5 }), 'securityContext.runAsUser', 'must be a whole number'],
    ['a capability as a string', security({ capabilities: { add: 'NET_ADMIN' } }), 'securityContext.capabilities.add', 'must be a list'],
    ['a number in command', { ...ok, command: ['sleep', 30] }, 'command[1]', 'must be a string'],
    ['a number as workingDir', { ...ok, workingDir: 5 }, 'workingDir', 'must be a string'],
    ['a quoted readOnly', mount({ readOnly: 'yes' }), 'volumeMounts[0].readOnly', 'must be a boolean (true or false)'],
    ['a divisor that is no quantity', env({ resourceFieldRef: { resource: 'limits.memory', divisor: 'lots' } }), 'env[0].valueFrom.resourceFieldRef.divisor', 'must be a quantity (e.g. 1, 500m, 1Mi)'],
    ['envFrom optional quoted', envFrom({ configMapRef: { name: 'cm', optional: 'true' } }), 'envFrom[0].configMapRef.optional', 'must be a boolean (true or false)'],
  ] as const) {
    const problems = ephemeralContainerProblems(c as Record<string, unknown>);
    assert.ok(problems.some((p) => p.field === field && p.message === detail && p.decode === true), `${what}: ${JSON.stringify(problems)}`);
    const r = parse(c as Record<string, unknown>);
    assert.equal(r.ok, false, what);
    assert.ok((r as { message: string }).message.includes(`spec.template.ephemeralContainers[0].${field}: ${detail}`), `${what}: ${(r as { message: string }).message}`);
  }
  for (const [what, c] of Object.entries({
    'null everywhere (Go\'s zero values)': { ...ok, tty: null, stdin: null, workingDir: null, command: null, securityContext: { runAsUser: null, capabilities: null } },
    'a divisor as a number, a quantity with a suffix or an exponent': { ...ok, env: [1, '1Mi', '500m', '1e3', '.5Gi'].map((divisor, i) => ({ name: `D${i}`, valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor } } })) },
  })) assert.deepEqual(ephemeralContainerProblems(c as Record<string, unknown>).filter((p) => p.decode), [], what);
});

