// Table tests of the pure validator on CREATE: each rule, at each field path. Each case
// lists the exact errors expected, so a missing or an extra error both fail.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { validateEphemeralJob } from '../../functions/webhook/validate.ts';
import { container, job, lines, spec } from './support.ts';
import type { Json } from './support.ts';

const C0 = 'spec.template.ephemeralContainers[0]';
const C1 = 'spec.template.ephemeralContainers[1]';
// apimachinery's messages, word for word (k8s.io/apimachinery/pkg/util/validation).
const LABEL_MSG = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const VALUE_MSG = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const ENV_MSG = "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')";
const NAME_PART_MSG = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const PREFIX_MSG = "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const SUBDOMAIN_MSG = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const CONFIG_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
// kube-apiserver's words (validateEphemeralContainers), as the planner's shared rules say it.
const FORBIDDEN = 'Forbidden: cannot be set for an Ephemeral Container';

/** A spec whose only container has these overrides. */
const withContainer = (overrides: Json): Json => spec({ template: { ephemeralContainers: [container(overrides)] } });

interface Case { name: string; spec: unknown; errors: string[] }

const cases: Case[] = [
  { name: 'a valid job', spec: spec(), errors: [] },
  { name: 'minimal valid job (only required fields)', spec: { selector: { matchLabels: { a: 'b' } }, template: { ephemeralContainers: [container({ command: undefined })] } }, errors: [] },
  { name: 'spec null', spec: null, errors: ['spec: Required value'] },
  { name: 'spec not an object', spec: 'x', errors: ['spec: Invalid value: "x": must be an object'] },

  // selector
  { name: 'selector missing', spec: spec({ selector: undefined }), errors: ['spec.selector: Required value'] },
  { name: 'selector null', spec: spec({ selector: null }), errors: ['spec.selector: Required value'] },
  { name: 'selector empty', spec: spec({ selector: {} }), errors: ['spec.selector: Required value: matchLabels or matchExpressions must select something (an empty selector matches every pod)'] },
  { name: 'selector with empty lists', spec: spec({ selector: { matchLabels: {}, matchExpressions: [] } }), errors: ['spec.selector: Required value: matchLabels or matchExpressions must select something (an empty selector matches every pod)'] },
  { name: 'selector not an object', spec: spec({ selector: [] }), errors: ['spec.selector: Invalid value: [array of 0]: must be an object'] },
  { name: 'matchLabels bad key', spec: spec({ selector: { matchLabels: { '-bad': 'x' } } }), errors: [`spec.selector.matchLabels: Invalid value: "-bad": ${NAME_PART_MSG}`] },
  { name: 'matchLabels bad prefix', spec: spec({ selector: { matchLabels: { 'Example.com/app': 'x' } } }), errors: [`spec.selector.matchLabels: Invalid value: "Example.com/app": ${PREFIX_MSG}`] },
  { name: 'matchLabels prefixed key ok', spec: spec({ selector: { matchLabels: { 'app.kubernetes.io/name': 'web' } } }), errors: [] },
  { name: 'matchLabels empty name part', spec: spec({ selector: { matchLabels: { 'example.com/': 'x' } } }), errors: ['spec.selector.matchLabels: Invalid value: "example.com/": name part must be non-empty'] },
  { name: 'matchLabels bad value', spec: spec({ selector: { matchLabels: { app: 'a b' } } }), errors: [`spec.selector.matchLabels.app: Invalid value: "a b": ${VALUE_MSG}`] },
  { name: 'matchLabels value too long', spec: spec({ selector: { matchLabels: { app: 'a'.repeat(64) } } }), errors: [`spec.selector.matchLabels.app: Invalid value: "${'a'.repeat(64)}": must be no more than 63 characters`] },
  { name: 'matchLabels empty value ok', spec: spec({ selector: { matchLabels: { app: '' } } }), errors: [] },
  { name: 'matchLabels value not a string', spec: spec({ selector: { matchLabels: { app: 1 } } }), errors: ['spec.selector.matchLabels.app: Invalid value: 1: must be a string'] },
  { name: 'matchLabels not a map', spec: spec({ selector: { matchLabels: 'app=x' } }), errors: ['spec.selector.matchLabels: Invalid value: "app=x": must be a map of label keys to values'] },
  { name: 'matchExpressions In ok', spec: spec({ selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['a', 'b'] }] } }), errors: [] },
  { name: 'matchExpressions Exists ok', spec: spec({ selector: { matchExpressions: [{ key: 'app', operator: 'Exists' }] } }), errors: [] },
  { name: 'matchExpressions In without values', spec: spec({ selector: { matchExpressions: [{ key: 'app', operator: 'In' }] } }), errors: ["spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"] },
  { name: 'matchExpressions NotIn with empty values', spec: spec({ selector: { matchExpressions: [{ key: 'app', operator: 'NotIn', values: [] }] } }), errors: ["spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"] },
  { name: 'matchExpressions Exists with values', spec: spec({ selector: { matchExpressions: [{ key: 'app', operator: 'Exists', values: ['x'] }] } }), errors: ["spec.selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"] },
  { name: 'matchExpressions DoesNotExist with values', spec: spec({ selector: { matchLabels: { a: 'b' }, matchExpressions: [{ key: 'x', operator: 'DoesNotExist', values: ['y'] }] } }), errors: ["spec.selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"] },
  { name: 'matchExpressions bad operator', spec: spec({ selector: { matchExpressions: [{ key: 'app', operator: 'Equals', values: ['x'] }] } }), errors: ['spec.selector.matchExpressions[0].operator: Unsupported value: "Equals": supported values: "In", "NotIn", "Exists", "DoesNotExist"'] },
  { name: 'matchExpressions missing operator and key', spec: spec({ selector: { matchExpressions: [{}] } }), errors: ['spec.selector.matchExpressions[0].key: Required value', 'spec.selector.matchExpressions[0].operator: Required value'] },
  { name: 'matchExpressions bad key and value', spec: spec({ selector: { matchExpressions: [{ key: 'a b', operator: 'In', values: ['ok', '-no'] }] } }), errors: [`spec.selector.matchExpressions[0].key: Invalid value: "a b": ${NAME_PART_MSG}`, `spec.selector.matchExpressions[0].values[1]: Invalid value: "-no": ${VALUE_MSG}`] },
  { name: 'matchExpressions second entry wrong', spec: spec({ selector: { matchExpressions: [{ key: 'a', operator: 'Exists' }, 'x'] } }), errors: ['spec.selector.matchExpressions[1]: Invalid value: "x": must be an object'] },
  { name: 'matchExpressions not a list', spec: spec({ selector: { matchExpressions: {} } }), errors: ['spec.selector.matchExpressions: Invalid value: {object}: must be a list'] },

  // counts, deadlines, TTLs
  { name: 'parallelism 0 ok (pauses creation)', spec: spec({ parallelism: 0 }), errors: [] },
  { name: 'parallelism 10 ok', spec: spec({ parallelism: 10 }), errors: [] },
  { name: 'parallelism 11', spec: spec({ parallelism: 11 }), errors: ['spec.parallelism: Invalid value: 11: must be less than or equal to 10'] },
  { name: 'parallelism -1', spec: spec({ parallelism: -1 }), errors: ['spec.parallelism: Invalid value: -1: must be greater than or equal to 0'] },
  { name: 'parallelism 1.5', spec: spec({ parallelism: 1.5 }), errors: ['spec.parallelism: Invalid value: 1.5: must be an integer'] },
  { name: 'parallelism as string', spec: spec({ parallelism: '2' }), errors: ['spec.parallelism: Invalid value: "2": must be an integer'] },
  { name: 'replicas 0 ok', spec: spec({ replicas: 0 }), errors: [] },
  { name: 'replicas unset ok', spec: spec({ replicas: undefined }), errors: [] },
  { name: 'replicas -2', spec: spec({ replicas: -2 }), errors: ['spec.replicas: Invalid value: -2: must be greater than or equal to 0'] },
  { name: 'replicas above int32', spec: spec({ replicas: 2 ** 31 }), errors: ['spec.replicas: Invalid value: 2147483648: must be less than or equal to 2147483647'] },
  { name: 'activeDeadlineSeconds 0', spec: spec({ activeDeadlineSeconds: 0 }), errors: ['spec.activeDeadlineSeconds: Invalid value: 0: must be greater than 0'] },
  { name: 'activeDeadlineSeconds 60 ok', spec: spec({ activeDeadlineSeconds: 60 }), errors: [] },
  { name: 'ttlSecondsAfterFinished 0 ok', spec: spec({ ttlSecondsAfterFinished: 0 }), errors: [] },
  { name: 'ttlSecondsAfterFinished -1', spec: spec({ ttlSecondsAfterFinished: -1 }), errors: ['spec.ttlSecondsAfterFinished: Invalid value: -1: must be greater than or equal to 0'] },
  { name: 'ttlSecondsAfterCreated -5', spec: spec({ ttlSecondsAfterCreated: -5 }), errors: ['spec.ttlSecondsAfterCreated: Invalid value: -5: must be greater than or equal to 0'] },
  { name: 'ttlSecondsAfterCreated null is unset', spec: spec({ ttlSecondsAfterCreated: null }), errors: [] },
  { name: 'paused not a boolean', spec: spec({ paused: 'yes' }), errors: ['spec.paused: Invalid value: "yes": must be a boolean'] },
  { name: 'paused true ok', spec: spec({ paused: true }), errors: [] },

  // template
  { name: 'template missing', spec: spec({ template: undefined }), errors: ['spec.template: Required value'] },
  { name: 'template not an object', spec: spec({ template: 3 }), errors: ['spec.template: Invalid value: 3: must be an object'] },
  { name: 'no ephemeral containers', spec: spec({ template: { ephemeralContainers: [] } }), errors: ['spec.template.ephemeralContainers: Required value: at least one ephemeral container is required'] },
  { name: 'ephemeralContainers missing', spec: spec({ template: {} }), errors: ['spec.template.ephemeralContainers: Required value: at least one ephemeral container is required'] },
  { name: 'ephemeralContainers not a list', spec: spec({ template: { ephemeralContainers: { name: 'x' } } }), errors: ['spec.template.ephemeralContainers: Invalid value: {object}: must be a list'] },
  { name: 'container not an object', spec: spec({ template: { ephemeralContainers: [null] } }), errors: [`${C0}: Invalid value: null: must be an object`] },

  // container fields
  { name: 'name missing', spec: withContainer({ name: undefined }), errors: [`${C0}.name: Required value`] },
  { name: 'name empty', spec: withContainer({ name: '' }), errors: [`${C0}.name: Required value`] },
  { name: 'name uppercase', spec: withContainer({ name: 'Debug' }), errors: [`${C0}.name: Invalid value: "Debug": ${LABEL_MSG}`] },
  { name: 'name too long', spec: withContainer({ name: 'a'.repeat(64) }), errors: [`${C0}.name: Invalid value: "${'a'.repeat(64)}": must be no more than 63 characters`] },
  { name: 'name with dot', spec: withContainer({ name: 'a.b' }), errors: [`${C0}.name: Invalid value: "a.b": ${LABEL_MSG}`] },
  { name: 'name not a string', spec: withContainer({ name: 7 }), errors: [`${C0}.name: Invalid value: 7: must be a string`] },
  {
    name: 'duplicate names',
    spec: spec({ template: { ephemeralContainers: [container(), container({ name: 'other' }), container()] } }),
    errors: ['spec.template.ephemeralContainers[2].name: Duplicate value: "debug"'],
  },
  { name: 'image missing', spec: withContainer({ image: undefined }), errors: [`${C0}.image: Required value`] },
  { name: 'image empty', spec: withContainer({ image: '' }), errors: [`${C0}.image: Required value`] },
  { name: 'image only spaces', spec: withContainer({ image: '   ' }), errors: [`${C0}.image: Required value`] },
  { name: 'image leading space', spec: withContainer({ image: ' busybox' }), errors: [`${C0}.image: Invalid value: " busybox": must not have leading or trailing whitespace`] },
  { name: 'image trailing newline', spec: withContainer({ image: 'busybox\n' }), errors: [`${C0}.image: Invalid value: "busybox\\n": must not have leading or trailing whitespace`] },
  { name: 'image not a string', spec: withContainer({ image: ['busybox'] }), errors: [`${C0}.image: Invalid value: [array of 1]: must be a string`] },
  // Go's strings.TrimSpace, as the planner and kube-apiserver judge it, not JavaScript's trim().
  { name: 'image with a trailing U+0085 (Go space, not JS)', spec: withContainer({ image: 'busybox\u0085' }), errors: [`${C0}.image: Invalid value: "busybox\u0085": must not have leading or trailing whitespace`] },
  { name: 'image only U+0085 and U+3000', spec: withContainer({ image: '\u0085\u3000' }), errors: [`${C0}.image: Required value`] },
  { name: 'image with a leading U+FEFF (JS space, not Go) runs', spec: withContainer({ image: '\ufeffbusybox' }), errors: [] },
  { name: 'imagePullPolicy missing', spec: withContainer({ imagePullPolicy: undefined }), errors: [`${C0}.imagePullPolicy: Required value`] },
  { name: 'imagePullPolicy wrong', spec: withContainer({ imagePullPolicy: 'always' }), errors: [`${C0}.imagePullPolicy: Unsupported value: "always": supported values: "Always", "IfNotPresent", "Never"`] },
  { name: 'imagePullPolicy Never ok', spec: withContainer({ imagePullPolicy: 'Never' }), errors: [] },
  { name: 'terminationMessagePolicy missing', spec: withContainer({ terminationMessagePolicy: undefined }), errors: [`${C0}.terminationMessagePolicy: Required value`] },
  { name: 'terminationMessagePolicy wrong', spec: withContainer({ terminationMessagePolicy: 'Logs' }), errors: [`${C0}.terminationMessagePolicy: Unsupported value: "Logs": supported values: "File", "FallbackToLogsOnError"`] },
  { name: 'terminationMessagePolicy FallbackToLogsOnError ok', spec: withContainer({ terminationMessagePolicy: 'FallbackToLogsOnError' }), errors: [] },
  { name: 'targetContainerName missing', spec: withContainer({ targetContainerName: undefined }), errors: [`${C0}.targetContainerName: Required value: the container of the target pods to attach to`] },
  { name: 'targetContainerName empty', spec: withContainer({ targetContainerName: '' }), errors: [`${C0}.targetContainerName: Required value: the container of the target pods to attach to`] },
  { name: 'targetContainerName not a container name', spec: withContainer({ targetContainerName: 'App_1' }), errors: [`${C0}.targetContainerName: Invalid value: "App_1": ${LABEL_MSG}`] },
  ...(['ports', 'resources', 'livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle', 'restartPolicy', 'restartPolicyRules', 'resizePolicy'] as const).map((f): Case => ({
    name: `${f} forbidden`,
    spec: withContainer({ [f]: f === 'restartPolicy' ? 'Always' : f === 'ports' || f === 'resizePolicy' || f === 'restartPolicyRules' ? [{ x: 1 }] : { limits: { cpu: '1' } } }),
    errors: [`${C0}.${f}: ${FORBIDDEN}`],
  })),
  { name: 'restartPolicyRules, as the planner refuses it', spec: withContainer({ restartPolicyRules: [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }] }), errors: [`${C0}.restartPolicyRules: ${FORBIDDEN}`] },
  { name: 'empty resources and ports are harmless', spec: withContainer({ resources: {}, ports: [] }), errors: [] },
  // Judged as OpenKruise sends the template (Go's omitempty), as the planner judges it.
  { name: 'resources with empty maps and empty restartPolicyRules are harmless (not sent)', spec: withContainer({ resources: { limits: {}, claims: [] }, restartPolicyRules: [] }), errors: [] },
  { name: 'restartPolicy "" is set (a pointer)', spec: withContainer({ restartPolicy: '' }), errors: [`${C0}.restartPolicy: ${FORBIDDEN}`] },
  { name: 'an empty lifecycle is set (a pointer, as the API server judges it)', spec: withContainer({ lifecycle: {} }), errors: [`${C0}.lifecycle: ${FORBIDDEN}`] },
  { name: 'an env value beside valueFrom, as the API server refuses it for every pod', spec: withContainer({ env: [{ name: 'A', value: 'x', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }] }), errors: [`${C0}.env[0].valueFrom: Invalid value: "": may not be specified when \`value\` is not empty`] },
  { name: 'a mount path twice', spec: withContainer({ volumeMounts: [{ name: 'a', mountPath: '/x' }, { name: 'b', mountPath: '/x' }] }), errors: [`${C0}.volumeMounts[1].mountPath: Invalid value: "/x": must be unique`] },
  { name: 'a negative user id', spec: withContainer({ securityContext: { runAsUser: -1 } }), errors: [`${C0}.securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive`] },
  { name: 'volumeMount ok', spec: withContainer({ volumeMounts: [{ name: 'data', mountPath: '/data' }] }), errors: [] },
  { name: 'volumeMount subPath', spec: withContainer({ volumeMounts: [{ name: 'data', mountPath: '/data', subPath: 'x' }] }), errors: [`${C0}.volumeMounts[0].subPath: ${FORBIDDEN}`] },
  {
    name: 'volumeMount subPathExpr on the second mount',
    spec: withContainer({ volumeMounts: [{ name: 'a', mountPath: '/a' }, { name: 'b', mountPath: '/b', subPathExpr: '$(POD)' }] }),
    errors: [`${C0}.volumeMounts[1].subPathExpr: ${FORBIDDEN}`],
  },
  { name: 'volumeMount without name and mountPath', spec: withContainer({ volumeMounts: [{}] }), errors: [`${C0}.volumeMounts[0].name: Required value`, `${C0}.volumeMounts[0].mountPath: Required value`] },
  { name: 'volumeMounts not a list', spec: withContainer({ volumeMounts: 'x' }), errors: [`${C0}.volumeMounts: Invalid value: "x": must be a list`] },
  { name: 'env ok', spec: withContainer({ env: [{ name: 'A_B', value: '1' }, { name: 'x.y-z', value: '' }, { name: '_u' }] }), errors: [] },
  { name: 'env name starts with a digit', spec: withContainer({ env: [{ name: 'A', value: '1' }, { name: '1A', value: '1' }] }), errors: [`${C0}.env[1].name: Invalid value: "1A": ${ENV_MSG}`] },
  { name: 'env name with =', spec: withContainer({ env: [{ name: 'A=B' }] }), errors: [`${C0}.env[0].name: Invalid value: "A=B": ${ENV_MSG}`] },
  { name: 'env name missing', spec: withContainer({ env: [{ value: 'x' }] }), errors: [`${C0}.env[0].name: Required value`] },
  { name: 'env value not a string', spec: withContainer({ env: [{ name: 'N', value: 5 }] }), errors: [`${C0}.env[0].value: Invalid value: 5: must be a string`] },
  { name: 'env not a list', spec: withContainer({ env: { A: '1' } }), errors: [`${C0}.env: Invalid value: {object}: must be a list`] },
  { name: 'command not strings', spec: withContainer({ command: ['sh', 1] }), errors: [`${C0}.command[1]: Invalid value: 1: must be a string`] },
  { name: 'args not a list', spec: withContainer({ args: 'x' }), errors: [`${C0}.args: Invalid value: "x": must be a list of strings`] },
  { name: 'privileged is legal (warned, not denied)', spec: withContainer({ securityContext: { privileged: true } }), errors: [] },

  // What kube-apiserver refuses in every pod, in its words (functions/api/container-rules.ts).
  { name: 'an env fieldRef without apiVersion (the API server defaults it to v1)', spec: withContainer({ env: [{ name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }, { name: 'APP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: "metadata.labels['app']" } } }] }), errors: [] },
  {
    name: 'an env fieldRef to a pod field env may not read',
    spec: withContainer({ env: [{ name: 'PHASE', valueFrom: { fieldRef: { fieldPath: 'status.phase' } } }] }),
    errors: [`${C0}.env[0].valueFrom.fieldRef.fieldPath: Unsupported value: "status.phase": supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"`],
  },
  { name: 'an env fieldRef of another pod version', spec: withContainer({ env: [{ name: 'N', valueFrom: { fieldRef: { apiVersion: 'v2', fieldPath: 'metadata.name' } } }] }), errors: [`${C0}.env[0].valueFrom.fieldRef.fieldPath: Invalid value: "metadata.name": error converting fieldPath: unsupported pod version: v2`] },
  { name: 'an env fieldRef to a label key that is none', spec: withContainer({ env: [{ name: 'L', valueFrom: { fieldRef: { fieldPath: "metadata.labels['-x']" } } }] }), errors: [`${C0}.env[0].valueFrom.fieldRef: Invalid value: "-x": ${NAME_PART_MSG}`] },
  { name: 'an env resourceFieldRef without resource', spec: withContainer({ env: [{ name: 'R', valueFrom: { resourceFieldRef: { containerName: 'app' } } }] }), errors: [`${C0}.env[0].valueFrom.resourceFieldRef.resource: Required value`] },
  { name: 'recursiveReadOnly on a read-only mount', spec: withContainer({ volumeMounts: [{ name: 'data', mountPath: '/data', readOnly: true, recursiveReadOnly: 'IfPossible' }] }), errors: [] },
  {
    name: 'recursiveReadOnly on a writable mount with propagation (kube-apiserver names no index)',
    spec: withContainer({ volumeMounts: [{ name: 'a', mountPath: '/a' }, { name: 'data', mountPath: '/data', recursiveReadOnly: 'Enabled', mountPropagation: 'HostToContainer' }] }),
    errors: [`${C0}.volumeMounts.recursiveReadOnly: Forbidden: may only be specified when readOnly is true`, `${C0}.volumeMounts.recursiveReadOnly: Forbidden: may only be specified when mountPropagation is None or not specified`],
  },
  { name: 'recursiveReadOnly of an unknown mode', spec: withContainer({ volumeMounts: [{ name: 'data', mountPath: '/data', readOnly: true, recursiveReadOnly: 'true' }] }), errors: [`${C0}.volumeMounts.recursiveReadOnly: Unsupported value: "true": supported values: "Disabled", "Enabled", "IfPossible"`] },
  { name: 'seccomp and AppArmor profiles ok', spec: withContainer({ securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: 'audit.json' }, appArmorProfile: { type: 'RuntimeDefault' } } }), errors: [] },
  { name: 'seccomp Localhost without its profile', spec: withContainer({ securityContext: { seccompProfile: { type: 'Localhost' } } }), errors: [`${C0}.securityContext.seccompProfile.localhostProfile: Required value: must be set when seccomp type is Localhost`] },
  { name: 'a seccomp type that is none', spec: withContainer({ securityContext: { seccompProfile: { type: 'runtime/default' } } }), errors: [`${C0}.securityContext.seccompProfile.type: Unsupported value: "runtime/default": supported values: "Localhost", "RuntimeDefault", "Unconfined"`] },
  { name: 'an AppArmor profile path with Unconfined', spec: withContainer({ securityContext: { appArmorProfile: { type: 'Unconfined', localhostProfile: 'x' } } }), errors: [`${C0}.securityContext.appArmorProfile.localhostProfile: Invalid value: "x": can only be set when AppArmor type is Localhost`] },
  { name: 'an AppArmor profile over 4095 bytes', spec: withContainer({ securityContext: { appArmorProfile: { type: 'Localhost', localhostProfile: 'p'.repeat(4096) } } }), errors: [`${C0}.securityContext.appArmorProfile.localhostProfile: Too long: may not be more than 4095 bytes`] },
  {
    name: 'key refs and envFrom to names a ConfigMap or Secret can have, by config keys',
    spec: withContainer({ env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'app.config', key: '.env' } } }, { name: 'B', valueFrom: { secretKeyRef: { name: 'db', key: 'PASS_1' } } }], envFrom: [{ configMapRef: { name: 'app-' } }, { secretRef: { name: 'db' } }] }),
    errors: [],
  },
  { name: 'a configMapKeyRef to a name no ConfigMap can have', spec: withContainer({ env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'My_CM', key: 'k' } } }] }), errors: [`${C0}.env[0].valueFrom.configMapKeyRef.name: Invalid value: "My_CM": ${SUBDOMAIN_MSG}`] },
  { name: 'a secretKeyRef without name (Invalid: kube-apiserver requires none, the subdomain rule refuses "")', spec: withContainer({ env: [{ name: 'A', valueFrom: { secretKeyRef: { key: 'k' } } }] }), errors: [`${C0}.env[0].valueFrom.secretKeyRef.name: Invalid value: "": ${SUBDOMAIN_MSG}`] },
  { name: 'a secretKeyRef to a key no Secret can have', spec: withContainer({ env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 's', key: 'a b' } } }] }), errors: [`${C0}.env[0].valueFrom.secretKeyRef.key: Invalid value: "a b": ${CONFIG_KEY_MSG}`] },
  { name: 'a configMapKeyRef key ".."', spec: withContainer({ env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'cm', key: '..' } } }] }), errors: [`${C0}.env[0].valueFrom.configMapKeyRef.key: Invalid value: "..": must not be '..'`] },
  { name: 'an envFrom configMapRef to a name no ConfigMap can have', spec: withContainer({ envFrom: [{ configMapRef: { name: 'My_CM' } }] }), errors: [`${C0}.envFrom[0].configMapRef.name: Invalid value: "My_CM": ${SUBDOMAIN_MSG}`] },
  { name: 'an envFrom secretRef to a name no Secret can have', spec: withContainer({ envFrom: [{ secretRef: { name: 'db_creds' } }] }), errors: [`${C0}.envFrom[0].secretRef.name: Invalid value: "db_creds": ${SUBDOMAIN_MSG}`] },
  // review91 F1, F3: what kube-apiserver refuses in every pod and the webhook let through (the job looped, refused pod by pod).
  { name: 'an envFrom prefix that is no env name before 1.32 (as env names)', spec: withContainer({ envFrom: [{ prefix: '1A_', configMapRef: { name: 'cm' } }] }), errors: [`${C0}.envFrom[0].prefix: Invalid value: "1A_": ${ENV_MSG}`] },
  { name: 'an envFrom prefix with "=": one error, in the webhook\'s words', spec: withContainer({ envFrom: [{ prefix: 'A=', configMapRef: { name: 'cm' } }] }), errors: [`${C0}.envFrom[0].prefix: Invalid value: "A=": ${ENV_MSG}`] },
  { name: 'an envFrom prefix that is an env name', spec: withContainer({ envFrom: [{ prefix: 'APP_', configMapRef: { name: 'cm' } }] }), errors: [] },
  { name: 'a cpu divisor in bytes', spec: withContainer({ env: [{ name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1Mi' } } }] }), errors: [`${C0}.env[0].valueFrom.resourceFieldRef.divisor: Invalid value: "limits.cpu": only divisor's values 1m and 1 are supported with the cpu resource`] },
  { name: 'divisors by their canonical form (1000m is 1, 1024Ki is 1Mi)', spec: withContainer({ env: [{ name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1000m' } } }, { name: 'MEM', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1024Ki' } } }] }), errors: [] },
  { name: 'a GMSA credential spec name that is no subdomain, an empty spec', spec: withContainer({ securityContext: { windowsOptions: { gmsaCredentialSpecName: 'Web_App', gmsaCredentialSpec: '' } } }), errors: [`${C0}.securityContext.windowsOptions.gmsaCredentialSpecName: Invalid value: "Web_App": ${SUBDOMAIN_MSG}`, `${C0}.securityContext.windowsOptions.gmsaCredentialSpec: Invalid value: "": gmsaCredentialSpec cannot be an empty string`] },
  { name: 'a runAsUserName with two backslashes', spec: withContainer({ securityContext: { windowsOptions: { runAsUserName: 'a\\b\\c' } } }), errors: [`${C0}.securityContext.windowsOptions.runAsUserName: Invalid value: "a\\\\b\\\\c": runAsUserName cannot contain more than one backslash`] },
  { name: 'a device without a name, a device path twice and one with ".."', spec: withContainer({ volumeDevices: [{ devicePath: '/dev/a' }, { name: 'b', devicePath: '/dev/a' }, { name: 'c', devicePath: '/dev/../c' }] }), errors: [`${C0}.volumeDevices[0].name: Required value`, `${C0}.volumeDevices[1].devicePath: Invalid value: "/dev/a": must be unique`, `${C0}.volumeDevices[2].devicePath: Invalid value: "/dev/../c": can not contain backsteps ('..')`] },
  { name: 'a device and a mount of one volume', spec: withContainer({ volumeMounts: [{ name: 'v', mountPath: '/v' }], volumeDevices: [{ name: 'v', devicePath: '/dev/v' }] }), errors: [`${C0}.volumeMounts[0].name: Invalid value: "v": must not already exist in volumeDevices`, `${C0}.volumeDevices[0].name: Invalid value: "v": must not already exist in volumeMounts`] },
  // Refused only in pods that keep host users (warned, not denied: a pod with hostUsers false takes it).
  { name: 'procMount Unmasked', spec: withContainer({ securityContext: { procMount: 'Unmasked' } }), errors: [] },
  { name: 'procMount Default ok', spec: withContainer({ securityContext: { procMount: 'Default' } }), errors: [] },
  { name: 'a procMount that is none', spec: withContainer({ securityContext: { procMount: 'Foo' } }), errors: [`${C0}.securityContext.procMount: Unsupported value: "Foo": supported values: "Default", "Unmasked"`] },
];

describe('validateEphemeralJob on CREATE', () => {
  for (const c of cases) {
    test(c.name, () => {
      assert.deepEqual(lines(validateEphemeralJob(job(c.spec), undefined, 'CREATE')), c.errors);
    });
  }

  test('an object without spec', () => {
    assert.deepEqual(lines(validateEphemeralJob({ metadata: { name: 'x' } }, undefined, 'CREATE')), ['spec: Required value']);
  });

  test('every error of a job is reported, each at its own path and index', () => {
    const bad = spec({
      selector: undefined,
      parallelism: 99,
      template: { ephemeralContainers: [container({ image: '' }), container({ name: 'b', imagePullPolicy: 'Sometimes', ports: [{ containerPort: 80 }] })] },
    });
    assert.deepEqual(lines(validateEphemeralJob(job(bad), undefined, 'CREATE')), [
      'spec.selector: Required value',
      'spec.parallelism: Invalid value: 99: must be less than or equal to 10',
      `${C0}.image: Required value`,
      `${C1}.imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"`,
      `${C1}.ports: ${FORBIDDEN}`,
    ]);
  });

  test('keys that name Object.prototype members are data, not inherited values', () => {
    const sneaky = spec({ template: { ephemeralContainers: [{ constructor: 'x', __proto__: null, toString: 1 }] } });
    const out = lines(validateEphemeralJob(job(sneaky), undefined, 'CREATE'));
    assert.ok(out.includes(`${C0}.name: Required value`));
    assert.ok(out.includes(`${C0}.image: Required value`));
  });

  test('DELETE, CONNECT and unknown operations are not validated', () => {
    for (const op of ['DELETE', 'CONNECT', 'PATCH']) {
      assert.deepEqual(validateEphemeralJob(job('garbage'), undefined, op), []);
    }
  });
});
