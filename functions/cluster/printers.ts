// The built-in kinds' server-side printer columns (k8s.io/kubernetes pkg/printers/internalversion),
// reduced to what the embedded cluster serves: the columns kubectl shows and the way each
// cell is worked out. Priority-1 columns appear with `-o wide`.
import { humanAge } from './human-duration.ts';

type Obj = Record<string, unknown>;

/** A metav1.TableColumnDefinition. */
export interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

/** Columns and how to fill a row of them. */
export interface Printer {
  columns: ColumnDefinition[];
  cells(obj: Obj, now: Date): unknown[];
}

const col = (name: string, type = 'string', priority = 0, format = ''): ColumnDefinition => ({ name, type, format, description: name, priority });
const NAME = { ...col('Name', 'string', 0, 'name'), description: 'Name must be unique within a namespace.' };
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const o = (v: unknown): Obj => (isObj(v) ? v : {});
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);
const meta = (obj: Obj): Obj => o(obj.metadata);
const str = (v: unknown, none = '<none>'): string => (typeof v === 'string' && v !== '' ? v : none);

/** The printer of a built-in kind, or undefined (then: Name and Age). */
export function builtinPrinter(group: string, kind: string): Printer | undefined {
  if (group === '' && kind === 'Pod') return POD;
  if ((group === '' || group === 'events.k8s.io') && kind === 'Event') return EVENT;
  if (group === '' && kind === 'Node') return NODE;
  if (group === 'coordination.k8s.io' && kind === 'Lease') return LEASE;
  if (group === '' && kind === 'Namespace') return NAMESPACE;
  if (group === '' && kind === 'ConfigMap') return CONFIGMAP;
  return undefined;
}

/** Name and Age, for kinds without printer columns. */
export const DEFAULT_PRINTER: Printer = {
  columns: [NAME, col('Age')],
  cells: (obj, now) => [meta(obj).name, humanAge(meta(obj).creationTimestamp, now)],
};

const POD: Printer = {
  columns: [NAME, col('Ready'), col('Status'), col('Restarts'), col('Age'), col('IP', 'string', 1), col('Node', 'string', 1), col('Nominated Node', 'string', 1), col('Readiness Gates', 'string', 1)],
  cells: (pod, now) => {
    const spec = o(pod.spec);
    const status = o(pod.status);
    const statuses = arr(status.containerStatuses);
    const ready = statuses.filter((s) => s.ready === true).length;
    const restarts = statuses.reduce((n, s) => n + (typeof s.restartCount === 'number' ? s.restartCount : 0), 0);
    return [
      meta(pod).name, `${ready}/${arr(spec.containers).length}`, podStatus(pod), String(restarts), humanAge(meta(pod).creationTimestamp, now),
      str(status.podIP), str(spec.nodeName), str(status.nominatedNodeName), '<none>',
    ];
  },
};

/** printPod's STATUS: a waiting or terminated container's reason beats the phase; deleting is Terminating. */
function podStatus(pod: Obj): string {
  const status = o(pod.status);
  let reason = str(status.reason, str(status.phase, 'Unknown'));
  let running = false;
  for (const s of [...arr(status.containerStatuses)].reverse()) {
    const state = o(s.state);
    const waiting = o(state.waiting);
    const terminated = o(state.terminated);
    if (typeof waiting.reason === 'string' && waiting.reason) reason = waiting.reason;
    else if (typeof terminated.reason === 'string' && terminated.reason) reason = terminated.reason;
    else if (isObj(state.terminated)) reason = typeof terminated.signal === 'number' && terminated.signal ? `Signal:${terminated.signal}` : `ExitCode:${String(terminated.exitCode ?? 0)}`;
    else if (isObj(state.running) && s.ready === true) running = true;
  }
  if (reason === 'Completed' && running) reason = 'Running';
  if (meta(pod).deletionTimestamp) reason = status.reason === 'NodeLost' ? 'Unknown' : 'Terminating';
  return reason;
}

const EVENT: Printer = {
  columns: [
    col('Last Seen'), col('Type'), col('Reason'), col('Object'), col('Subobject', 'string', 1), col('Source', 'string', 1), col('Message'),
    col('First Seen', 'string', 1), col('Count', 'string', 1), col('Name', 'string', 1),
  ],
  cells: (ev, now) => {
    const target = o(ev.involvedObject ?? ev.regarding);
    const first = ev.firstTimestamp ?? ev.eventTime ?? meta(ev).creationTimestamp;
    const last = ev.lastTimestamp ?? o(ev.series).lastObservedTime ?? ev.eventTime ?? first;
    const count = typeof ev.count === 'number' ? ev.count : typeof o(ev.series).count === 'number' ? (o(ev.series).count as number) : 1;
    const lastSeen = count > 1 ? `${humanAge(last, now)} (x${count} over ${humanAge(first, now)})` : humanAge(last, now);
    const source = o(ev.source);
    return [
      lastSeen, str(ev.type, ''), str(ev.reason, ''), `${String(target.kind ?? '').toLowerCase()}/${String(target.name ?? '')}`, str(target.fieldPath, ''),
      str(source.component, str(ev.reportingController ?? ev.reportingComponent, '')), str(ev.message ?? ev.note, ''), humanAge(first, now), String(count), meta(ev).name,
    ];
  },
};

const NODE: Printer = {
  columns: [NAME, col('Status'), col('Roles'), col('Age'), col('Version'), col('Internal-IP', 'string', 1), col('External-IP', 'string', 1)],
  cells: (node, now) => {
    const ready = arr(o(node.status).conditions).find((c) => c.type === 'Ready');
    let status = ready ? (ready.status === 'True' ? 'Ready' : ready.status === 'False' ? 'NotReady' : 'Unknown') : 'Unknown';
    if (o(node.spec).unschedulable === true) status += ',SchedulingDisabled';
    const roles = Object.keys(o(meta(node).labels)).filter((k) => k.startsWith('node-role.kubernetes.io/')).map((k) => k.slice('node-role.kubernetes.io/'.length)).filter(Boolean);
    const address = (type: string): string => str(arr(o(node.status).addresses).find((a) => a.type === type)?.address);
    return [meta(node).name, status, roles.length ? roles.sort().join(',') : '<none>', humanAge(meta(node).creationTimestamp, now), str(o(o(node.status).nodeInfo).kubeletVersion, ''), address('InternalIP'), address('ExternalIP')];
  },
};

const LEASE: Printer = {
  columns: [NAME, col('Holder'), col('Age')],
  cells: (lease, now) => [meta(lease).name, str(o(lease.spec).holderIdentity, ''), humanAge(meta(lease).creationTimestamp, now)],
};

const NAMESPACE: Printer = {
  columns: [NAME, col('Status'), col('Age')],
  cells: (ns, now) => [meta(ns).name, str(o(ns.status).phase, 'Active'), humanAge(meta(ns).creationTimestamp, now)],
};

const CONFIGMAP: Printer = {
  columns: [NAME, col('Data', 'integer'), col('Age')],
  cells: (cm, now) => [meta(cm).name, Object.keys(o(cm.data)).length + Object.keys(o(cm.binaryData)).length, humanAge(meta(cm).creationTimestamp, now)],
};

/** The Name column every table starts with. */
export const NAME_COLUMN: ColumnDefinition = NAME;
