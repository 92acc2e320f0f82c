// Warnings for specs that are legal but risky. The API server shows them to kubectl users;
// Kubernetes asks for short ones (https://kubernetes.io/blog/2020/09/03/warnings/), so each
// is cut to 120 characters and stripped of control characters.
import { unknownFields } from '../api/container-fields.ts';
import { MAX_WARNING_LENGTH } from './admission.ts';
import { EJOB_ID_ENV } from '../api/names.ts';
import { renderPath } from './field-errors.ts';
import type { FieldPath } from './field-errors.ts';
import { isObject, own } from './json.ts';

export const MAX_WARNINGS = 10;

/** Capabilities that give a debug container power over the node or other processes. */
const RISKY_CAPABILITIES = new Set(['ALL', 'SYS_ADMIN', 'SYS_PTRACE', 'SYS_MODULE', 'NET_ADMIN', 'NET_RAW', 'SYS_RAWIO', 'DAC_READ_SEARCH', 'BPF']);

/** Warnings for the object's spec (at most MAX_WARNINGS, each at most MAX_WARNING_LENGTH). */
export function warningsFor(object: unknown): string[] {
  const spec = own(object, 'spec');
  const out: string[] = [];
  if (own(spec, 'parallelism') === 0) {
    out.push(warning(['spec', 'parallelism'], 'is 0: no container will be injected until it is raised'));
  }
  const containers = own(own(spec, 'template'), 'ephemeralContainers');
  if (Array.isArray(containers)) {
    containers.forEach((c, i) => out.push(...containerWarnings(c, ['spec', 'template', 'ephemeralContainers', i])));
  }
  if (out.length <= MAX_WARNINGS) return out;
  return [...out.slice(0, MAX_WARNINGS - 1), `and ${out.length - MAX_WARNINGS + 1} more warnings`];
}

function containerWarnings(c: unknown, path: FieldPath): string[] {
  const sc = own(c, 'securityContext');
  const scPath = [...path, 'securityContext'];
  // Injections ask for fieldValidation=Strict: a field the cluster does not know refuses
  // every one of them (api/container-fields.ts; judged by the fields of Kubernetes 1.33).
  const out = unknownFields(c, renderPath(path)).unknown.map((field) => cut(`${field}: unknown field: refused unless the cluster knows it`));
  if (own(sc, 'privileged') === true) out.push(warning([...scPath, 'privileged'], 'privileged container has full access to the node'));
  if (own(sc, 'allowPrivilegeEscalation') === true) {
    out.push(warning([...scPath, 'allowPrivilegeEscalation'], 'lets processes gain privileges'));
  }
  if (own(sc, 'runAsUser') === 0) out.push(warning([...scPath, 'runAsUser'], 'runs as root (UID 0)'));
  // Refused (1.33+) in a pod that keeps host users, nearly every pod: such pods are failed
  // at once (ejob/pod-state.ts unfitReason). Not denied: a pod with hostUsers false takes it
  // (OpenKruise's webhook denies it, taking every pod to keep host users: review91 F2).
  if (own(sc, 'procMount') === 'Unmasked') out.push(warning([...scPath, 'procMount'], 'Unmasked: a pod without hostUsers: false is failed'));
  // The same for a HostProcess container: refused in every pod that is not a Windows
  // HostProcess pod (validateWindowsHostProcessPod), nearly every pod. The spec.os rules get no
  // warning: a pod without spec.os, most pods, takes windowsOptions and the linux-only fields.
  if (own(own(sc, 'windowsOptions'), 'hostProcess') === true) out.push(warning([...scPath, 'windowsOptions', 'hostProcess'], 'non-HostProcess pods are failed'));
  const added = own(own(sc, 'capabilities'), 'add');
  if (Array.isArray(added)) {
    const risky = added.filter((cap): cap is string => typeof cap === 'string' && RISKY_CAPABILITIES.has(cap.toUpperCase()));
    if (risky.length > 0) out.push(warning([...scPath, 'capabilities', 'add'], `adds ${risky.join(', ')}`));
  }
  const env = own(c, 'env');
  if (Array.isArray(env) && env.some((e) => isObject(e) && own(e, 'name') === EJOB_ID_ENV)) {
    out.push(warning([...path, 'env'], `${EJOB_ID_ENV} is set by the controller; this value will be replaced`));
  }
  return out;
}

/** `path: message`, without control characters, cut to MAX_WARNING_LENGTH. */
export function warning(path: FieldPath, message: string): string {
  return cut(`${renderPath(path)}: ${message}`);
}

/** Without control characters, cut to MAX_WARNING_LENGTH. */
function cut(line: string): string {
  // eslint-disable-next-line no-control-regex -- stripping them is the point
  const text = line.replace(/[\u0000-\u001f\u007f]/g, ' ');
  return text.length <= MAX_WARNING_LENGTH ? text : `${text.slice(0, MAX_WARNING_LENGTH - 1)}…`;
}
