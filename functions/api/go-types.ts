// The Go types of an EphemeralJob's selector and template, as kruise-api declares them
// (`Selector *metav1.LabelSelector json:"selector"`, `Template EphemeralContainerTemplateSpec
// json:"template"`, whose `EphemeralContainers []v1.EphemeralContainer`), for go-json.ts.
// Read from k8s.io/api core/v1 types.go at 10b39a39b (2026-07, newer than any cluster the
// functions serve: a field no Kubernetes has is the only kind dropped as unknown) and from
// apimachinery's metav1.LabelSelector; embedded structs (EphemeralContainerCommon,
// LocalObjectReference, ProbeHandler) are written out inline, as encoding/json treats them.
// Pointers and omitempty are as the tags say: `Stdin bool json:"stdin,omitempty"` is a value
// (false is unset), `Privileged *bool` a pointer (false is set).
import {
  field, goBool, goInt, goIntOrString, goMap, goPointer, goQuantity, goSlice, goString, goStruct, omitempty,
  type GoType,
} from './go-json.ts';

const str = goString;
const strings = goSlice(goString);
const optionalBool = omitempty(goPointer(goBool));

const localName = { name: omitempty(str) };
const keySelector = goStruct({ ...localName, key: field(str), optional: optionalBool });

const envVar = goStruct({
  name: field(str),
  value: omitempty(str),
  valueFrom: omitempty(goPointer(goStruct({
    fieldRef: omitempty(goPointer(goStruct({ apiVersion: omitempty(str), fieldPath: field(str) }))),
    resourceFieldRef: omitempty(goPointer(goStruct({ containerName: omitempty(str), resource: field(str), divisor: omitempty(goQuantity) }))),
    configMapKeyRef: omitempty(goPointer(keySelector)),
    secretKeyRef: omitempty(goPointer(keySelector)),
    fileKeyRef: omitempty(goPointer(goStruct({ volumeName: field(str), path: field(str), key: field(str), optional: optionalBool }))),
  }))),
});

const envFrom = goStruct({
  prefix: omitempty(str),
  configMapRef: omitempty(goPointer(goStruct({ ...localName, optional: optionalBool }))),
  secretRef: omitempty(goPointer(goStruct({ ...localName, optional: optionalBool }))),
});

const exec = omitempty(goPointer(goStruct({ command: omitempty(strings) })));
const httpGet = omitempty(goPointer(goStruct({
  path: omitempty(str),
  port: field(goIntOrString),
  host: omitempty(str),
  scheme: omitempty(str),
  httpHeaders: omitempty(goSlice(goStruct({ name: field(str), value: field(str) }))),
  protocol: omitempty(goPointer(str)),
})));
const tcpSocket = omitempty(goPointer(goStruct({ port: field(goIntOrString), host: omitempty(str) })));

const probe = omitempty(goPointer(goStruct({
  exec,
  httpGet,
  tcpSocket,
  grpc: omitempty(goPointer(goStruct({ port: field(goInt), service: field(goPointer(str)), mode: omitempty(goPointer(str)) }))),
  initialDelaySeconds: omitempty(goInt),
  timeoutSeconds: omitempty(goInt),
  periodSeconds: omitempty(goInt),
  successThreshold: omitempty(goInt),
  failureThreshold: omitempty(goInt),
  terminationGracePeriodSeconds: omitempty(goPointer(goInt)),
})));

const lifecycleHandler = omitempty(goPointer(goStruct({
  exec,
  httpGet,
  tcpSocket,
  sleep: omitempty(goPointer(goStruct({ seconds: field(goInt) }))),
})));

const profile = omitempty(goPointer(goStruct({ type: field(str), localhostProfile: omitempty(goPointer(str)) })));

const securityContext = goStruct({
  capabilities: omitempty(goPointer(goStruct({ add: omitempty(strings), drop: omitempty(strings) }))),
  privileged: optionalBool,
  seLinuxOptions: omitempty(goPointer(goStruct({ user: omitempty(str), role: omitempty(str), type: omitempty(str), level: omitempty(str) }))),
  windowsOptions: omitempty(goPointer(goStruct({
    gmsaCredentialSpecName: omitempty(goPointer(str)),
    gmsaCredentialSpec: omitempty(goPointer(str)),
    runAsUserName: omitempty(goPointer(str)),
    hostProcess: optionalBool,
  }))),
  runAsUser: omitempty(goPointer(goInt)),
  runAsGroup: omitempty(goPointer(goInt)),
  runAsNonRoot: optionalBool,
  readOnlyRootFilesystem: optionalBool,
  allowPrivilegeEscalation: optionalBool,
  procMount: omitempty(goPointer(str)),
  seccompProfile: profile,
  appArmorProfile: profile,
});

/** core/v1 EphemeralContainer (EphemeralContainerCommon inline, then targetContainerName). */
export const EPHEMERAL_CONTAINER: GoType = goStruct({
  name: field(str),
  image: omitempty(str),
  command: omitempty(strings),
  args: omitempty(strings),
  workingDir: omitempty(str),
  ports: omitempty(goSlice(goStruct({
    name: omitempty(str),
    hostPort: omitempty(goInt),
    containerPort: field(goInt),
    protocol: omitempty(str),
    hostIP: omitempty(str),
  }))),
  envFrom: omitempty(goSlice(envFrom)),
  env: omitempty(goSlice(envVar)),
  // A struct with omitempty: never omitted, so a typed client always writes `resources: {}`.
  resources: omitempty(goStruct({
    limits: omitempty(goMap(goQuantity)),
    requests: omitempty(goMap(goQuantity)),
    claims: omitempty(goSlice(goStruct({ name: field(str), request: omitempty(str) }))),
  })),
  resizePolicy: omitempty(goSlice(goStruct({ resourceName: field(str), restartPolicy: field(str) }))),
  restartPolicy: omitempty(goPointer(str)),
  restartPolicyRules: omitempty(goSlice(goStruct({
    action: omitempty(str),
    exitCodes: omitempty(goPointer(goStruct({ operator: omitempty(str), values: omitempty(goSlice(goInt)) }))),
  }))),
  volumeMounts: omitempty(goSlice(goStruct({
    name: field(str),
    readOnly: omitempty(goBool),
    recursiveReadOnly: omitempty(goPointer(str)),
    mountPath: field(str),
    subPath: omitempty(str),
    mountPropagation: omitempty(goPointer(str)),
    subPathExpr: omitempty(str),
    bindMountOptions: omitempty(strings),
  }))),
  volumeDevices: omitempty(goSlice(goStruct({ name: field(str), devicePath: field(str) }))),
  livenessProbe: probe,
  readinessProbe: probe,
  startupProbe: probe,
  lifecycle: omitempty(goPointer(goStruct({ postStart: lifecycleHandler, preStop: lifecycleHandler, stopSignal: omitempty(goPointer(str)) }))),
  terminationMessagePath: omitempty(str),
  terminationMessagePolicy: omitempty(str),
  imagePullPolicy: omitempty(str),
  securityContext: omitempty(goPointer(securityContext)),
  stdin: omitempty(goBool),
  stdinOnce: omitempty(goBool),
  tty: omitempty(goBool),
  targetContainerName: omitempty(str),
});

/** kruise-api's EphemeralContainerTemplateSpec: `spec.template`. */
export const TEMPLATE_SPEC: GoType = goStruct({ ephemeralContainers: field(goSlice(EPHEMERAL_CONTAINER)) });

/** metav1.LabelSelector. */
export const LABEL_SELECTOR: GoType = goStruct({
  matchLabels: omitempty(goMap(str)),
  matchExpressions: omitempty(goSlice(goStruct({ key: field(str), operator: field(str), values: omitempty(strings) }))),
});

/** The spec fields whose Go type the webhook compares by (spec.selector is a pointer: `{}` is every pod, unset none). */
export const SPEC_FIELD_TYPES: Readonly<Record<string, GoType>> = {
  selector: goPointer(LABEL_SELECTOR),
  template: TEMPLATE_SPEC,
};
