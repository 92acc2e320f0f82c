// Pods as kube-apiserver returns them, for the benchmarks: what a Deployment's ReplicaSet
// created, after admission (service-account token volume, default tolerations) and after
// the kubelet reported status, with the managedFields a real server keeps. A LIST of such
// pods is what a reconcile reads, so its size and how well it compresses decide the bytes
// and the parse time the benchmarks count ("the inputs production sees"). Every pod differs
// where real pods differ (name, uid, IPs, container ids, times), so gzip does not see the
// same bytes over and over.

/** The suffix alphabet kube-controller-manager uses for generated names (sorted, so names sort by index). */
const ALPHABET = '2456789bcdfghjklmnpqrstvwxz';

function suffix(i: number): string {
  let out = '';
  for (let n = i, k = 0; k < 5; k++, n = Math.floor(n / ALPHABET.length)) out = (ALPHABET[n % ALPHABET.length] ?? '2') + out;
  return out;
}

/** A deterministic hex string of `length` from a seed (not cryptographic: only to make pods differ). */
function hex(seed: number, length: number): string {
  let x = (seed * 2654435761 + 0x9e3779b9) >>> 0;
  let out = '';
  while (out.length < length) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out += x.toString(16).padStart(8, '0');
  }
  return out.slice(0, length);
}

function uuid(seed: number): string {
  const h = hex(seed, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export interface PodOptions {
  namespace: string;
  /** Labels besides `pod-template-hash` (the selector's labels go here). */
  labels: Record<string, string>;
  createdAt: Date;
  /** The main container's name (default "app"). */
  container?: string;
  /** The ReplicaSet's name prefix (default "web"). */
  app?: string;
}

/** Pod i of a Deployment, as a LIST returns it (about 6 KB of JSON). Names sort by i. */
export function realisticPod(i: number, o: PodOptions): Record<string, unknown> {
  const app = o.app ?? 'web';
  const main = o.container ?? 'app';
  const hash = '7d9c8b6f5d';
  const rs = `${app}-${hash}`;
  const name = `${rs}-${suffix(i)}`;
  const created = o.createdAt.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const started = new Date(o.createdAt.getTime() + 4_000 + (i % 7) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const ready = new Date(o.createdAt.getTime() + 11_000 + (i % 5) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const node = `ip-10-0-${(i * 7) % 64}-${(i * 13) % 250}.eu-west-1.compute.internal`;
  const hostIP = `10.0.${(i * 7) % 64}.${(i * 13) % 250}`;
  const podIP = `10.1.${Math.floor(i / 250) % 256}.${i % 250}`;
  const token = `kube-api-access-${suffix(i * 31 + 7)}`;
  const env = [
    { name: 'APP_ENV', value: 'production' },
    { name: 'LOG_LEVEL', value: 'info' },
    { name: 'HTTP_PORT', value: '8080' },
    { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
    { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } },
    { name: 'POD_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
    { name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: `${app}-db`, key: 'url' } } },
  ];
  const mounts = [{ name: token, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }];
  const containers = [
    {
      name: main, image: `registry.example.com/shop/${app}:1.42.3`, imagePullPolicy: 'IfNotPresent',
      ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }, { name: 'metrics', containerPort: 9090, protocol: 'TCP' }],
      env, resources: { limits: { memory: '512Mi' }, requests: { cpu: '250m', memory: '256Mi' } },
      livenessProbe: { httpGet: { path: '/healthz', port: 8080, scheme: 'HTTP' }, initialDelaySeconds: 10, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 },
      readinessProbe: { httpGet: { path: '/readyz', port: 8080, scheme: 'HTTP' }, timeoutSeconds: 1, periodSeconds: 5, successThreshold: 1, failureThreshold: 3 },
      volumeMounts: [{ name: 'config', mountPath: '/etc/app', readOnly: true }, ...mounts],
      terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File',
    },
    {
      name: 'log-shipper', image: 'fluent/fluent-bit:3.1.9', imagePullPolicy: 'IfNotPresent',
      resources: { limits: { memory: '64Mi' }, requests: { cpu: '10m', memory: '32Mi' } },
      volumeMounts: [{ name: 'varlog', mountPath: '/var/log/app' }, ...mounts],
      terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File',
    },
  ];
  const status = (c: string, image: string, k: number): Record<string, unknown> => ({
    name: c, state: { running: { startedAt: started } }, lastState: {}, ready: true, restartCount: 0, image,
    imageID: `${image.split(':')[0]}@sha256:${hex(k, 64)}`, containerID: `containerd://${hex(i * 97 + k, 64)}`, started: true,
    volumeMounts: [{ name: token, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true, recursiveReadOnly: 'Disabled' }],
  });
  const condition = (type: string, at: string): Record<string, unknown> => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: at });
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: {
      name, generateName: `${rs}-`, namespace: o.namespace, uid: uuid(i), resourceVersion: String(1_000_000 + i * 7), creationTimestamp: created,
      labels: { ...o.labels, 'pod-template-hash': hash },
      annotations: { 'kubectl.kubernetes.io/restartedAt': '2025-12-31T22:10:05Z', 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9090' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rs, uid: uuid(1_000_003), controller: true, blockOwnerDeletion: true }],
      managedFields: [
        {
          manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'v1', time: created, fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/restartedAt': {}, 'f:prometheus.io/port': {}, 'f:prometheus.io/scrape': {} }, 'f:generateName': {}, 'f:labels': Object.fromEntries(['.', ...Object.keys(o.labels).map((k) => `f:${k}`), 'f:pod-template-hash'].map((k) => [k, {}])), 'f:ownerReferences': { '.': {}, [`k:{"uid":"${uuid(1_000_003)}"}`]: {} } },
            'f:spec': {
              'f:containers': Object.fromEntries(containers.map((c) => [`k:{"name":"${c.name}"}`, { '.': {}, 'f:image': {}, 'f:imagePullPolicy': {}, 'f:name': {}, 'f:resources': { '.': {}, 'f:limits': { '.': {}, 'f:memory': {} }, 'f:requests': { '.': {}, 'f:cpu': {}, 'f:memory': {} } }, 'f:terminationMessagePath': {}, 'f:terminationMessagePolicy': {}, 'f:volumeMounts': {} }])),
              'f:dnsPolicy': {}, 'f:enableServiceLinks': {}, 'f:restartPolicy': {}, 'f:schedulerName': {}, 'f:securityContext': {}, 'f:terminationGracePeriodSeconds': {}, 'f:volumes': { '.': {}, 'k:{"name":"config"}': { '.': {}, 'f:configMap': { '.': {}, 'f:defaultMode': {}, 'f:name': {} }, 'f:name': {} }, 'k:{"name":"varlog"}': { '.': {}, 'f:emptyDir': {}, 'f:name': {} } },
            },
          },
        },
        {
          manager: 'kubelet', operation: 'Update', apiVersion: 'v1', time: ready, fieldsType: 'FieldsV1', subresource: 'status',
          fieldsV1: { 'f:status': { 'f:conditions': Object.fromEntries(['ContainersReady', 'Initialized', 'PodReadyToStartContainers', 'Ready'].map((t) => [`k:{"type":"${t}"}`, { '.': {}, 'f:lastProbeTime': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} }])), 'f:containerStatuses': {}, 'f:hostIP': {}, 'f:hostIPs': {}, 'f:phase': {}, 'f:podIP': {}, 'f:podIPs': { '.': {}, [`k:{"ip":"${podIP}"}`]: { '.': {}, 'f:ip': {} } }, 'f:startTime': {} } },
        },
      ],
    },
    spec: {
      volumes: [
        { name: 'config', configMap: { name: `${app}-config`, defaultMode: 420 } },
        { name: 'varlog', emptyDir: {} },
        { name: token, projected: { sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }, { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } }, { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } }], defaultMode: 420 } },
      ],
      containers, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, dnsPolicy: 'ClusterFirst',
      serviceAccountName: app, serviceAccount: app, nodeName: node, securityContext: {}, schedulerName: 'default-scheduler',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
      priority: 0, enableServiceLinks: true, preemptionPolicy: 'PreemptLowerPriority',
    },
    status: {
      phase: 'Running',
      conditions: [condition('PodReadyToStartContainers', started), condition('Initialized', created), condition('Ready', ready), condition('ContainersReady', ready), condition('PodScheduled', created)],
      hostIP, hostIPs: [{ ip: hostIP }], podIP, podIPs: [{ ip: podIP }], startTime: created,
      containerStatuses: [status(main, `registry.example.com/shop/${app}:1.42.3`, 1), status('log-shipper', 'fluent/fluent-bit:3.1.9', 2)],
      qosClass: 'Burstable',
    },
  };
}
