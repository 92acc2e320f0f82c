import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1EphemeralContainer, V1Pod } from '@kubernetes/client-node';
import { harness, pod, rejects, strategicPatch, type Harness } from './support.ts';

const target = pod('web', {
  spec: { containers: [{ name: 'app', image: 'app:1' }, { name: 'proxy', image: 'envoy:1' }], initContainers: [{ name: 'init', image: 'busybox:1' }] },
  status: { phase: 'Running' },
});

async function addEphemeral(h: Harness, ...containers: Record<string, unknown>[]): Promise<V1Pod> {
  const cur = await h.core.readNamespacedPodEphemeralcontainers({ namespace: 'default', name: 'web' });
  cur.spec!.ephemeralContainers = [...(cur.spec!.ephemeralContainers ?? []), ...(containers as unknown as V1EphemeralContainer[])];
  return h.core.replaceNamespacedPodEphemeralcontainers({ namespace: 'default', name: 'web', body: cur });
}

function causes(s: { details?: { causes?: { reason: string; message: string; field: string }[] } }): string[] {
  return (s.details?.causes ?? []).map((c) => `${c.field}: ${c.reason}: ${c.message}`);
}

describe('pods/ephemeralcontainers', () => {
  test('a container whose JSON types Go cannot decode is refused with 422 and nothing is stored', async () => {
    const h = await harness({ objects: [target] });
    const s = await rejects(addEphemeral(h, { name: 'dbg', image: 'busybox', targetContainerName: 'app', tty: 'true', securityContext: { runAsUser: '1000' } }), 422);
    assert.deepEqual(causes(s), [
      'spec.ephemeralContainers[0].securityContext.runAsUser: FieldValueInvalid: Invalid value: "1000": must be a whole number',
      'spec.ephemeralContainers[0].tty: FieldValueInvalid: Invalid value: "true": must be a boolean (true or false)',
    ]);
    const cur = await h.core.readNamespacedPod({ namespace: 'default', name: 'web' });
    assert.equal(cur.spec!.ephemeralContainers, undefined);
  });

  test('PUT adds a container, with defaults, and leaves everything else alone', async () => {
    const h = await harness({ objects: [target] });
    const out = await addEphemeral(h, { name: 'dbg', image: 'busybox', command: ['pidof', 'app'], targetContainerName: 'app', env: [{ name: 'KRUISE_EJOB_ID', value: 'u1' }] });
    const ec = out.spec!.ephemeralContainers![0]!;
    assert.equal(ec.imagePullPolicy, 'Always', 'no tag means :latest, pulled Always');
    assert.equal(ec.terminationMessagePolicy, 'File');
    assert.equal(ec.terminationMessagePath, '/dev/termination-log');
    assert.equal(out.status!.phase, 'Running');
    const again = await addEphemeral(h, { name: 'dbg2', image: 'busybox:1.36' });
    assert.equal(again.spec!.ephemeralContainers![1]!.imagePullPolicy, 'IfNotPresent');
    assert.equal(again.metadata!.generation, 3, 'each addition bumps generation');
  });

  test('a strategic merge patch of spec.ephemeralContainers appends by name', async () => {
    const h = await harness({ objects: [target] });
    await addEphemeral(h, { name: 'one', image: 'busybox:1' });
    const out = await h.core.patchNamespacedPodEphemeralcontainers({
      namespace: 'default', name: 'web', body: { spec: { ephemeralContainers: [{ name: 'two', image: 'busybox:1', targetContainerName: 'proxy' }] } },
    }, strategicPatch);
    assert.deepEqual(out.spec!.ephemeralContainers!.map((c) => c.name), ['one', 'two']);
  });

  test('a JSON patch add to /spec/ephemeralContainers/- works (the default client-node patch)', async () => {
    const h = await harness({ objects: [target] });
    const out = await h.core.patchNamespacedPodEphemeralcontainers({
      namespace: 'default', name: 'web', body: [{ op: 'add', path: '/spec/ephemeralContainers', value: [{ name: 'dbg', image: 'busybox:1' }] }],
    });
    assert.equal(out.spec!.ephemeralContainers![0]!.name, 'dbg');
  });

  test('changes to anything but ephemeral containers are dropped, not applied', async () => {
    const h = await harness({ objects: [target] });
    const cur = await h.core.readNamespacedPodEphemeralcontainers({ namespace: 'default', name: 'web' });
    cur.spec!.containers[0]!.image = 'app:2';
    cur.metadata!.labels = { sneaky: 'yes' };
    cur.spec!.ephemeralContainers = [{ name: 'dbg', image: 'busybox:1' }];
    const out = await h.core.replaceNamespacedPodEphemeralcontainers({ namespace: 'default', name: 'web', body: cur });
    assert.equal(out.spec!.containers[0]!.image, 'app:1');
    assert.equal(out.metadata!.labels, undefined);
    assert.equal(out.spec!.ephemeralContainers!.length, 1);
  });

  test('a patch whose uid is not the pod\'s is 422 (uid immutable): the pod was deleted and created again under its name', async () => {
    const h = await harness({ objects: [target] });
    const uid = (await h.core.readNamespacedPod({ namespace: 'default', name: 'web' })).metadata!.uid!;
    const body = (u: string): object => ({ metadata: { uid: u }, spec: { ephemeralContainers: [{ name: 'dbg', image: 'busybox:1' }] } });
    const s = await rejects(h.core.patchNamespacedPodEphemeralcontainers({ namespace: 'default', name: 'web', body: body('an-earlier-pod') }, strategicPatch), 422);
    assert.deepEqual(causes(s), ['metadata.uid: FieldValueInvalid: Invalid value: "an-earlier-pod": field is immutable']);
    assert.equal((await h.core.readNamespacedPod({ namespace: 'default', name: 'web' })).spec!.ephemeralContainers, undefined, 'nothing injected');
    const out = await h.core.patchNamespacedPodEphemeralcontainers({ namespace: 'default', name: 'web', body: body(uid) }, strategicPatch);
    assert.deepEqual(out.spec!.ephemeralContainers!.map((c) => c.name), ['dbg'], 'its own uid: injected');
    // A PUT's uid is a precondition instead: 409.
    const cur = await h.core.readNamespacedPodEphemeralcontainers({ namespace: 'default', name: 'web' });
    cur.metadata!.uid = 'an-earlier-pod';
    await rejects(h.core.replaceNamespacedPodEphemeralcontainers({ namespace: 'default', name: 'web', body: cur }), 409);
  });

  test('removing an existing ephemeral container is 422 Forbidden', async () => {
    const h = await harness({ objects: [target] });
    const withOne = await addEphemeral(h, { name: 'dbg', image: 'busybox:1' });
    withOne.spec!.ephemeralContainers = [];
    const s = await rejects(h.core.replaceNamespacedPodEphemeralcontainers({ namespace: 'default', name: 'web', body: withOne }), 422);
    assert.deepEqual(causes(s), ['spec.ephemeralContainers: FieldValueForbidden: Forbidden: existing ephemeral containers "dbg" may not be removed\n']);
  });

  test("a static pod's mirror takes no ephemeral containers (422 Forbidden), as kube-apiserver since kubernetes#113935", async () => {
    const mirror = { ...target, metadata: { ...(target.metadata as object), annotations: { 'kubernetes.io/config.mirror': 'abc123' } } };
    const h = await harness({ objects: [mirror] });
    const s = await rejects(addEphemeral(h, { name: 'dbg', image: 'busybox:1' }), 422);
    assert.deepEqual(causes(s), [': FieldValueForbidden: Forbidden: static pods do not support ephemeral containers']);
  });

  test('changing an existing ephemeral container is 422 Forbidden', async () => {
    const h = await harness({ objects: [target] });
    const withOne = await addEphemeral(h, { name: 'dbg', image: 'busybox:1' });
    withOne.spec!.ephemeralContainers![0]!.image = 'busybox:2';
    const s = await rejects(h.core.replaceNamespacedPodEphemeralcontainers({ namespace: 'default', name: 'web', body: withOne }), 422);
    assert.match(causes(s)[0]!, /^spec.ephemeralContainers: FieldValueForbidden: Forbidden: existing ephemeral containers "dbg" may not be changed/);
  });

  test('a name used by a container, init container or ephemeral container is 422 FieldValueDuplicate', async () => {
    const h = await harness({ objects: [target] });
    for (const name of ['app', 'init']) {
      const s = await rejects(addEphemeral(h, { name, image: 'busybox:1' }), 422);
      assert.deepEqual(causes(s), [`spec.ephemeralContainers[0].name: FieldValueDuplicate: Duplicate value: "${name}"`]);
      assert.equal(s.message, `Pod "web" is invalid: spec.ephemeralContainers[0].name: Duplicate value: "${name}"`);
    }
    const s = await rejects(addEphemeral(h, { name: 'x', image: 'busybox:1' }, { name: 'x', image: 'busybox:1' }), 422);
    assert.deepEqual(causes(s), ['spec.ephemeralContainers[1].name: FieldValueDuplicate: Duplicate value: "x"']);
  });

  test('the name must be a DNS-1123 label and the image is required', async () => {
    const h = await harness({ objects: [target] });
    const bad = await rejects(addEphemeral(h, { name: 'Bad_Name', image: 'busybox:1' }), 422);
    assert.equal(bad.details!.causes![0]!.field, 'spec.ephemeralContainers[0].name');
    assert.equal(bad.details!.causes![0]!.reason, 'FieldValueInvalid');
    const noImage = await rejects(addEphemeral(h, { name: 'ok' }), 422);
    assert.deepEqual(causes(noImage), ['spec.ephemeralContainers[0].image: FieldValueRequired: Required value']);
    const spaced = await rejects(addEphemeral(h, { name: 'ok', image: ' busybox ' }), 422);
    assert.equal(spaced.details!.causes![0]!.field, 'spec.ephemeralContainers[0].image');
  });

  test('what validateContainerCommon refuses whatever the pod: env names, mount paths, ids (review)', async () => {
    const h = await harness({ objects: [{ ...target, spec: { ...(target.spec as object), volumes: [{ name: 'data', emptyDir: {} }] } }] });
    const s = await rejects(addEphemeral(h, {
      name: 'dbg', image: 'busybox:1',
      env: [{ name: '1=bad', value: 'x' }, { name: 'OK_1.x', value: 'y' }],
      volumeMounts: [{ name: 'data' }, { name: 'data', mountPath: '/d' }, { name: 'data', mountPath: '/d' }],
      securityContext: { runAsUser: -1 },
    }), 422);
    assert.deepEqual(causes(s).map((c) => c.split(':').slice(0, 2).join(':')).sort(), [
      'spec.ephemeralContainers[0].env[0].name: FieldValueInvalid',
      'spec.ephemeralContainers[0].securityContext.runAsUser: FieldValueInvalid',
      'spec.ephemeralContainers[0].volumeMounts[0].mountPath: FieldValueRequired',
      'spec.ephemeralContainers[0].volumeMounts[2].mountPath: FieldValueInvalid',
    ]);
  });

  for (const [field, value] of Object.entries({
    ports: [{ containerPort: 80 }],
    resources: { limits: { cpu: '1' } },
    lifecycle: { preStop: { exec: { command: ['x'] } } },
    livenessProbe: { exec: { command: ['x'] } },
    readinessProbe: { exec: { command: ['x'] } },
    startupProbe: { exec: { command: ['x'] } },
    resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }],
    restartPolicy: 'Always',
  })) {
    test(`${field} is forbidden on an ephemeral container`, async () => {
      const h = await harness({ objects: [target] });
      const s = await rejects(addEphemeral(h, { name: 'dbg', image: 'busybox:1', [field]: value }), 422);
      assert.ok(causes(s).includes(`spec.ephemeralContainers[0].${field}: FieldValueForbidden: Forbidden: cannot be set for an Ephemeral Container`), causes(s).join('\n'));
    });
  }

  test('an empty list or an empty resources map received is set, as validateFieldAllowList judges it (review)', async () => {
    for (const [field, value] of Object.entries({ ports: [], resizePolicy: [], resources: { limits: {} } })) {
      const h = await harness({ objects: [target] });
      const s = await rejects(addEphemeral(h, { name: 'dbg', image: 'busybox:1', [field]: value }), 422);
      assert.deepEqual(causes(s), [`spec.ephemeralContainers[0].${field}: FieldValueForbidden: Forbidden: cannot be set for an Ephemeral Container`]);
    }
  });

  test('empty resources are allowed (the zero value), subPath is forbidden', async () => {
    const h = await harness({ objects: [target] });
    await addEphemeral(h, { name: 'dbg', image: 'busybox:1', resources: {} });
    const s = await rejects(addEphemeral(h, { name: 'dbg2', image: 'busybox:1', volumeMounts: [{ name: 'v', mountPath: '/v', subPath: 'x' }] }), 422);
    assert.ok(causes(s).includes('spec.ephemeralContainers[1].volumeMounts[0].subPath: FieldValueForbidden: Forbidden: cannot be set for an Ephemeral Container'));
  });

  test('a volumeMount or volumeDevice must name one of the pod\'s volumes (422 Not found)', async () => {
    const withVolume = pod('web', { spec: { containers: [{ name: 'app', image: 'app:1' }], volumes: [{ name: 'data', emptyDir: {} }] }, status: { phase: 'Running' } });
    const h = await harness({ objects: [withVolume] });
    const s = await rejects(addEphemeral(h, { name: 'dbg', image: 'busybox:1', volumeMounts: [{ name: 'ghost', mountPath: '/g' }], volumeDevices: [{ name: 'blk', devicePath: '/dev/b' }] }), 422);
    assert.deepEqual(causes(s), [
      'spec.ephemeralContainers[0].volumeMounts[0].name: FieldValueNotFound: Not found: "ghost"',
      'spec.ephemeralContainers[0].volumeDevices[0].name: FieldValueNotFound: Not found: "blk"',
    ]);
    await addEphemeral(h, { name: 'dbg', image: 'busybox:1', volumeMounts: [{ name: 'data', mountPath: '/d' }] });
  });

  test('review91 F4: what kube-apiserver refuses and this server took: divisors, envFrom prefixes, windowsOptions, devices; a device on a volume of another kind, Unmasked with host users', async () => {
    const volumes = [{ name: 'scratch', emptyDir: {} }, { name: 'claim', persistentVolumeClaim: { claimName: 'c' } }, { name: 'data', emptyDir: {} }];
    const withVolumes = (hostUsers?: boolean): Record<string, unknown> => pod('web', { spec: { containers: [{ name: 'app', image: 'app:1' }], volumes, ...(hostUsers === undefined ? {} : { hostUsers }) }, status: { phase: 'Running' } });
    const h = await harness({ objects: [withVolumes()] });
    const s = await rejects(addEphemeral(h, {
      name: 'dbg', image: 'busybox:1',
      env: [{ name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1Mi' } } }],
      envFrom: [{ prefix: 'A=', configMapRef: { name: 'cm' } }],
      volumeMounts: [{ name: 'data', mountPath: '/d' }],
      volumeDevices: [{ name: 'scratch', devicePath: '/dev/s' }, { name: 'claim', devicePath: '/dev/../c' }, { name: 'data', devicePath: '/dev/d' }],
      securityContext: { procMount: 'Unmasked', windowsOptions: { gmsaCredentialSpec: '' } },
    }), 422);
    const at = 'spec.ephemeralContainers[0]';
    assert.deepEqual(causes(s).sort(), [
      `${at}.envFrom[0].prefix: FieldValueInvalid: Invalid value: "A=": a valid environment variable name must consist only of printable ASCII characters other than '='`,
      `${at}.env[0].valueFrom.resourceFieldRef.divisor: FieldValueInvalid: Invalid value: "limits.cpu": only divisor's values 1m and 1 are supported with the cpu resource`,
      `${at}.securityContext.procMount: FieldValueInvalid: Invalid value: "Unmasked": \`hostUsers\` must be false to use \`Unmasked\``,
      `${at}.securityContext.windowsOptions.gmsaCredentialSpec: FieldValueInvalid: Invalid value: "": gmsaCredentialSpec cannot be an empty string`,
      `${at}.volumeDevices[0].name: FieldValueInvalid: Invalid value: "scratch": can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode`,
      `${at}.volumeDevices[1].devicePath: FieldValueInvalid: Invalid value: "/dev/../c": can not contain backsteps ('..')`,
      `${at}.volumeDevices[2].name: FieldValueInvalid: Invalid value: "data": can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode`,
      `${at}.volumeDevices[2].name: FieldValueInvalid: Invalid value: "data": must not already exist in volumeMounts`,
      `${at}.volumeMounts[0].name: FieldValueInvalid: Invalid value: "data": must not already exist in volumeDevices`,
    ]);
    // A device on a PVC, and Unmasked in a pod with its own user namespace, are taken.
    const h2 = await harness({ objects: [withVolumes(false)] });
    await addEphemeral(h2, { name: 'dbg', image: 'busybox:1', volumeDevices: [{ name: 'claim', devicePath: '/dev/c' }], securityContext: { procMount: 'Unmasked' } });
  });

  test("the pod-dependent security rules: windowsOptions in a linux pod, linux-only fields in a windows pod, HostProcess against the pod's, refused 422 with kube-apiserver's paths; a pod without spec.os takes them", async () => {
    const web = (spec: Record<string, unknown>): Record<string, unknown> => pod('web', { spec: { containers: [{ name: 'app', image: 'app:1' }], ...spec }, status: { phase: 'Running' } });
    const at = 'spec.ephemeralContainers[0]';
    const linux = await harness({ objects: [web({ os: { name: 'linux' } })] });
    assert.deepEqual(causes(await rejects(addEphemeral(linux, { name: 'dbg', image: 'busybox:1', securityContext: { windowsOptions: { runAsUserName: 'ContainerUser' } } }), 422)), [
      `${at}.securityContext.windowsOptions: FieldValueForbidden: Forbidden: windows options cannot be set for a linux pod`,
    ]);
    const windows = await harness({ objects: [web({ os: { name: 'windows' } })] });
    assert.deepEqual(causes(await rejects(addEphemeral(windows, { name: 'dbg', image: 'busybox:1', securityContext: { capabilities: { drop: ['ALL'] }, privileged: false, runAsUser: 1000, runAsNonRoot: true } }), 422)), [
      `${at}.securityContext.capabilities: FieldValueForbidden: Forbidden: cannot be set for a windows pod`,
      `${at}.securityContext.privileged: FieldValueForbidden: Forbidden: cannot be set for a windows pod`,
      `${at}.securityContext.runAsUser: FieldValueForbidden: Forbidden: cannot be set for a windows pod`,
    ]);
    await addEphemeral(windows, { name: 'dbg', image: 'busybox:1', securityContext: { runAsNonRoot: true, windowsOptions: { runAsUserName: 'ContainerUser' } } });
    // Two HostProcess containers into a pod that is not a HostProcess pod: the pod's rule, said once.
    const plain = await harness({ objects: [web({})] });
    const hostProcess = { securityContext: { windowsOptions: { hostProcess: true } } };
    assert.deepEqual(causes(await rejects(addEphemeral(plain, { name: 'dbg', image: 'busybox:1', ...hostProcess }, { name: 'dbg2', image: 'busybox:1', ...hostProcess }), 422)), [
      'spec: FieldValueInvalid: Invalid value: "": If pod contains any hostProcess containers then all containers must be HostProcess containers',
      'spec.hostNetwork: FieldValueInvalid: Invalid value: false: hostNetwork must be true if pod contains any hostProcess containers',
    ]);
    // Without spec.os the OS rules do not apply.
    await addEphemeral(plain, { name: 'dbg', image: 'busybox:1', securityContext: { capabilities: { drop: ['ALL'] }, windowsOptions: { runAsUserName: 'ContainerUser' } } });
    // A HostProcess pod takes HostProcess containers (its own, or by the pod's value), and refuses any other.
    const hostProcessPod = await harness({ objects: [web({ os: { name: 'windows' }, hostNetwork: true, securityContext: { windowsOptions: { hostProcess: true } } })] });
    assert.deepEqual(causes(await rejects(addEphemeral(hostProcessPod, { name: 'dbg', image: 'busybox:1', securityContext: { windowsOptions: { hostProcess: false } } }), 422)), [
      `${at}.securityContext.windowsOptions.hostProcess: FieldValueInvalid: Invalid value: false: pod hostProcess value must be identical if both are specified, was true`,
      'spec: FieldValueInvalid: Invalid value: "": If pod contains any hostProcess containers then all containers must be HostProcess containers',
    ]);
    await addEphemeral(hostProcessPod, { name: 'dbg', image: 'busybox:1', ...hostProcess }, { name: 'dbg2', image: 'busybox:1' });
    await addEphemeral(hostProcessPod, { name: 'dbg3', image: 'busybox:1' });
  });

  test('targetContainerName must name an existing container (422 Not found); ephemeral targets do not count', async () => {
    const h = await harness({ objects: [target] });
    const s = await rejects(addEphemeral(h, { name: 'dbg', image: 'busybox:1', targetContainerName: 'ghost' }), 422);
    assert.deepEqual(causes(s), ['spec.ephemeralContainers[0].targetContainerName: FieldValueNotFound: Not found: "ghost"']);
    await addEphemeral(h, { name: 'first', image: 'busybox:1' });
    await rejects(addEphemeral(h, { name: 'second', image: 'busybox:1', targetContainerName: 'first' }), 422);
    await addEphemeral(h, { name: 'to-init', image: 'busybox:1', targetContainerName: 'init' });
  });

  test('an invalid terminationMessagePolicy or imagePullPolicy is 422 NotSupported', async () => {
    const h = await harness({ objects: [target] });
    const s = await rejects(addEphemeral(h, { name: 'dbg', image: 'busybox:1', imagePullPolicy: 'Sometimes', terminationMessagePolicy: 'Nope' }), 422);
    assert.deepEqual(s.details!.causes!.map((c) => `${c.field}:${c.reason}`).sort(), [
      'spec.ephemeralContainers[0].imagePullPolicy:FieldValueNotSupported',
      'spec.ephemeralContainers[0].terminationMessagePolicy:FieldValueNotSupported',
    ]);
  });

  test('a downward-API fieldRef, recursiveReadOnly and seccomp/AppArmor profiles are refused as kube-apiserver words them (422)', async () => {
    const withVolume = pod('web', { spec: { containers: [{ name: 'app', image: 'app:1' }], volumes: [{ name: 'data', emptyDir: {} }] }, status: { phase: 'Running' } });
    const h = await harness({ objects: [withVolume] });
    const EC = 'spec.ephemeralContainers[0]';
    for (const [what, extra, expected] of [
      ['an env var reading all the labels', { env: [{ name: 'L', valueFrom: { fieldRef: { fieldPath: 'metadata.labels' } } }] },
        [`${EC}.env[0].valueFrom.fieldRef.fieldPath: FieldValueNotSupported: Unsupported value: "metadata.labels": supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"`]],
      ['a fieldRef of pod v2', { env: [{ name: 'N', valueFrom: { fieldRef: { apiVersion: 'v2', fieldPath: 'metadata.name' } } }] },
        [`${EC}.env[0].valueFrom.fieldRef.fieldPath: FieldValueInvalid: Invalid value: "metadata.name": error converting fieldPath: unsupported pod version: v2`]],
      ['a resourceFieldRef to no container resource', { env: [{ name: 'G', valueFrom: { resourceFieldRef: { resource: 'limits.gpu' } } }] },
        [`${EC}.env[0].valueFrom.resourceFieldRef.resource: FieldValueNotSupported: Unsupported value: "limits.gpu": supported values: "limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu", "requests.ephemeral-storage", "requests.memory"`]],
      ['recursiveReadOnly on a writable mount (no index: the list\'s path)', { volumeMounts: [{ name: 'data', mountPath: '/d', recursiveReadOnly: 'Enabled' }] },
        [`${EC}.volumeMounts.recursiveReadOnly: FieldValueForbidden: Forbidden: may only be specified when readOnly is true`]],
      ['seccomp Localhost without its profile', { securityContext: { seccompProfile: { type: 'Localhost' } } },
        [`${EC}.securityContext.seccompProfile.localhostProfile: FieldValueRequired: Required value: must be set when seccomp type is Localhost`]],
      ['an AppArmor type that is none', { securityContext: { appArmorProfile: { type: 'Enforce' } } },
        [`${EC}.securityContext.appArmorProfile.type: FieldValueNotSupported: Unsupported value: "Enforce": supported values: "Localhost", "RuntimeDefault", "Unconfined"`]],
      ['an AppArmor profile over 4095 bytes', { securityContext: { appArmorProfile: { type: 'Localhost', localhostProfile: 'p'.repeat(4096) } } },
        [`${EC}.securityContext.appArmorProfile.localhostProfile: FieldValueTooLong: Too long: may not be more than 4095 bytes`]],
    ] as const) {
      const s = await rejects(addEphemeral(h, { name: 'dbg', image: 'busybox:1', ...extra }), 422);
      assert.deepEqual(causes(s), expected, what);
    }
    const cur = await h.core.readNamespacedPod({ namespace: 'default', name: 'web' });
    assert.equal(cur.spec!.ephemeralContainers, undefined, 'nothing is stored');
  });

  test('a fieldRef without apiVersion is taken and stored with v1, as SetDefaults_ObjectFieldSelector does', async () => {
    const h = await harness({ objects: [target] });
    const out = await addEphemeral(h, { name: 'dbg', image: 'busybox:1', env: [{ name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }, { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } }] });
    assert.deepEqual(out.spec!.ephemeralContainers![0]!.env!.map((e) => ({ ...e.valueFrom?.fieldRef })), [{ apiVersion: 'v1', fieldPath: 'spec.nodeName' }, { apiVersion: 'v1', fieldPath: "metadata.labels['app']" }]);
  });

  test('every error is reported at once, and nothing is stored', async () => {
    const h = await harness({ objects: [target] });
    const s = await rejects(addEphemeral(h, { name: 'app', ports: [{ containerPort: 1 }] }), 422);
    assert.equal(s.details!.causes!.length, 3);
    assert.match(s.message!, /^Pod "web" is invalid: \[/);
    const cur = await h.core.readNamespacedPod({ namespace: 'default', name: 'web' });
    assert.equal(cur.spec!.ephemeralContainers, undefined);
  });

  test('a stale resourceVersion on the subresource is 409', async () => {
    const h = await harness({ objects: [target] });
    const cur = await h.core.readNamespacedPodEphemeralcontainers({ namespace: 'default', name: 'web' });
    await addEphemeral(h, { name: 'one', image: 'busybox:1' });
    cur.spec!.ephemeralContainers = [{ name: 'two', image: 'busybox:1' }];
    await rejects(h.core.replaceNamespacedPodEphemeralcontainers({ namespace: 'default', name: 'web', body: cur }), 409);
  });

  test('ephemeral containers of a seeded pod without defaults still count as unchanged', async () => {
    const seeded = pod('web', { spec: { ephemeralContainers: [{ name: 'old', image: 'busybox:1' }] } });
    const h = await harness({ objects: [seeded] });
    const out = await h.core.patchNamespacedPodEphemeralcontainers({ namespace: 'default', name: 'web', body: { spec: { ephemeralContainers: [{ name: 'new', image: 'busybox:1' }] } } }, strategicPatch);
    assert.deepEqual(out.spec!.ephemeralContainers!.map((c) => c.name), ['old', 'new']);
  });
});
