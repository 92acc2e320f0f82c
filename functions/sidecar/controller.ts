import { parseObjectKey } from '../api/envelope.ts';
import { Node, Pod } from '../api/pod.ts';
import { formatZodIssues } from '../api/field-path.ts';
import { toDate } from '../api/meta.ts';
import type { Controller } from '../engine/controller.ts';
import type { Plan } from '../engine/plan.ts';
import { KubeError } from '../kube/errors.ts';
import type { Kube } from '../kube/kube.ts';
import { CRR, crrName } from './actions.ts';
import { SidecarOptions } from './config.ts';
import { podDue, type Due } from './predicate.ts';
import { plan, type CrrView, type NodeView, type SidecarObserved } from './planner.ts';
import { route } from './route.ts';
import { currentStage, podStrategy } from './strategy.ts';

export { podKey, route } from './route.ts';

/** The node label virtual-kubelet nodes carry (OpenKruise's test). */
export const VIRTUAL_KUBELET_LABEL = { key: 'type', value: 'virtual-kubelet' } as const;

/**
 * The SidecarTerminator controller. Options are validated here, once (a bad value throws
 * at start, naming the field). Reads per pod event: the pod; for a due pod only, its node
 * and at most one CRR.
 */
export function sidecarController(input: Partial<SidecarOptions> = {}): Controller<SidecarObserved> {
  const options = SidecarOptions.parse(input);
  return {
    // No Lease: CRR and Event creates have fixed names, injections a fixed container name
    // and the pod's uid, and the status and image patches carry the resourceVersion they were
    // planned from, so two instances at once cannot do anything twice, nor write to a pod
    // created again under the name (the engine re-plans on their 409, or the uid's 422).
    name: 'sidecar',
    route: async (event) => route(event),
    observe: (key, kube) => observe(key, kube, options),
    plan: (observed, now): Plan => plan(observed, now),
  };
}

async function observe(key: string, kube: Kube, options: SidecarOptions): Promise<SidecarObserved | null> {
  const ref = parseObjectKey('Pod', key);
  if (!ref) throw new Error(`not a pod key: ${key}`);
  const raw = await kube.get({ apiVersion: 'v1', kind: 'Pod', ...ref });
  if (raw === null) return null;
  const base = { ...ref, crrs: {}, options };
  const parsed = Pod.safeParse(raw);
  if (!parsed.success) {
    const where = formatZodIssues(parsed.error.issues, '');
    return { ...base, pod: null, unreadable: `pod ${ref.namespace}/${ref.name} unreadable (${where})` };
  }
  const pod = parsed.data;
  const due = podDue(pod);
  if (!due.due || !pod.metadata.uid) return { ...base, pod };
  const node = await observeNode(kube, pod.spec.nodeName);
  if (node.kind === 'missing' || node.kind === 'virtual-kubelet') return { ...base, pod, node };
  const crrs = await observeCrr(kube, { pod, due, options, namespace: ref.namespace });
  return { ...base, pod, node, ...crrs };
}

/** One GET. Only transient failures are thrown (retry); a refusal means "unknown". */
async function observeNode(kube: Kube, name: string | undefined): Promise<NodeView> {
  if (!name) return { name: '', kind: 'unknown', detail: 'not set on the pod' };
  let raw: unknown;
  try {
    raw = await kube.get({ apiVersion: 'v1', kind: 'Node', name });
  } catch (err) {
    if (!(err instanceof KubeError) || err.errorClass === 'transient') throw err;
    return { name, kind: 'unknown', detail: `unreadable (${err.status} ${err.message}; grant get on nodes to detect virtual-kubelet)` };
  }
  if (raw === null) return { name, kind: 'missing' };
  const node = Node.safeParse(raw);
  if (!node.success) return { name, kind: 'unknown', detail: 'unreadable as a Node' };
  const vk = node.data.metadata.labels?.[VIRTUAL_KUBELET_LABEL.key] === VIRTUAL_KUBELET_LABEL.value;
  return { name, kind: vk ? 'virtual-kubelet' : 'normal' };
}

/** The CRR of the current stage, when the pod's strategy is crr: at most one GET. */
async function observeCrr(kube: Kube, p: { pod: Pod; due: Due; options: SidecarOptions; namespace: string }): Promise<Pick<SidecarObserved, 'crrs' | 'crrUnserved' | 'notes'>> {
  const choice = podStrategy(p.pod, p.options);
  const stage = currentStage(p.due);
  if (!choice.ok || choice.strategy !== 'crr' || !stage || !p.pod.metadata.uid) return { crrs: {}, notes: [] };
  const name = crrName(p.pod.metadata.uid, stage.stage);
  try {
    const raw = await kube.get({ ...CRR, namespace: p.namespace, name });
    return { crrs: { [name]: raw === null ? null : crrView(raw, name) }, notes: [] };
  } catch (err) {
    if (!(err instanceof KubeError) || err.errorClass === 'transient') throw err;
    // A 404 for the path, naming no object: OpenKruise's CRD is not installed (or not served
    // yet). A create would be refused the same way on every look; the planner says what to do.
    if (err.errorClass === 'unserved') return { crrs: {}, crrUnserved: true, notes: [`ContainerRecreateRequest ${name}: ${CRR.apiVersion} containerrecreaterequests not served (${err.status} ${err.message})`] };
    // Not readable (RBAC): creating it is idempotent (AlreadyExists counts as done), so plan
    // as if unknown.
    return { crrs: {}, notes: [`ContainerRecreateRequest ${name} unreadable (${err.status}): planning without it`] };
  }
}

/** What the planner needs of a CRR. */
function crrView(raw: unknown, name: string): CrrView {
  const o = raw as { metadata?: { creationTimestamp?: unknown }; spec?: { containers?: unknown }; status?: { phase?: unknown; message?: unknown; containerRecreateStates?: unknown } };
  const containers = Array.isArray(o.spec?.containers) ? o.spec.containers : [];
  const names = containers.map((c: unknown) => (c as { name?: unknown } | null)?.name).filter((n): n is string => typeof n === 'string');
  const created = o.metadata?.creationTimestamp;
  const view: CrrView = { name, containers: names };
  const at = typeof created === 'string' || created instanceof Date ? toDate(created) : undefined;
  if (at) view.createdAt = at;
  if (typeof o.status?.phase === 'string' && o.status.phase !== '') view.phase = o.status.phase;
  if (typeof o.status?.message === 'string' && o.status.message !== '') view.message = o.status.message;
  view.daemonActed = Array.isArray(o.status?.containerRecreateStates) && o.status.containerRecreateStates.length > 0;
  return view;
}
