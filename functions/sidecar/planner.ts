import { toDate } from '../api/meta.ts';
import type { Container, ContainerState, ContainerStatus, Pod } from '../api/pod.ts';
import { minRequeue, type Action, type Plan } from '../engine/plan.ts';
import { CRR, crrAction, crrName, endPodAction, imageSwapAction, podEvent, SIGNAL_INJECTED_AT_ENV, signalAction, signalContainerName, SWAPPED_AT_ANNOTATION, type PodRef } from './actions.ts';
import type { SidecarOptions } from './config.ts';
import { IGNORE_EXIT_CODE_ENV, TERMINATE_WITH_IMAGE_ENV, type SidecarInfo } from './env.ts';
import { sameImage } from './image-ref.ts';
import { podDue, statusByName, type Due } from './predicate.ts';
import { currentStage, podStrategy, STRATEGY_ANNOTATION, type Stage } from './strategy.ts';
import { quoted } from '../api/quoted.ts';

/** A ContainerRecreateRequest as far as the planner cares. */
export interface CrrView {
  name: string;
  containers: string[];
  createdAt?: Date;
  /** status.phase: unset until kruise-daemon takes it (Pending, Recreating, Completed). */
  phase?: string;
  /** status.message: kruise-manager's reason when it completed the CRR itself. */
  message?: string;
  /** Whether status.containerRecreateStates lists anything: kruise-daemon acted on it. */
  daemonActed?: boolean;
}

/** What observe learnt about the pod's node. */
export const NODE_KINDS = ['normal', 'virtual-kubelet', 'missing', 'unknown'] as const;
export type NodeKind = (typeof NODE_KINDS)[number];
export interface NodeView {
  name: string;
  kind: NodeKind;
  /** Why the kind is unknown (unreadable, no nodeName). */
  detail?: string;
}

/** Everything the planner decides from; observe fills it, tests build it by hand. */
export interface SidecarObserved {
  namespace: string;
  name: string;
  /** null when the pod could not be read as a Pod (see unreadable). */
  pod: Pod | null;
  unreadable?: string;
  /** Read only for a due pod. Absent: assume a normal node. */
  node?: NodeView;
  /** CRRs read by name: null = not found. A name absent was not read: create it (idempotent). */
  crrs: Record<string, CrrView | null>;
  /**
   * The CRR GET was answered 404 for the path itself: OpenKruise's ContainerRecreateRequest
   * is not served in this cluster, so a CRR create could only be refused.
   */
  crrUnserved?: boolean;
  options: SidecarOptions;
  notes?: string[];
}

/** How the current termination was (or is being) carried out. */
type Path = 'crr' | 'ephemeral-signal' | 'image-swap';

interface Ctx {
  ref: PodRef;
  due: Due;
  observed: SidecarObserved;
  now: Date;
  notes: string[];
  actions: Action[];
  path?: Path;
  /** Sidecars already asked to stop, and since when (null: unknown). */
  issued: Map<string, Date | null>;
  /** The pod's container statuses by name, read once per plan. */
  statuses: Map<string, ContainerStatus>;
  /** The existing CRR of the stage (crr path), for what the stuck Warning says. */
  crr?: CrrView;
  end?: { phase: 'Succeeded' | 'Failed'; reason: string; why: string };
  requeueAfterSeconds?: number;
}

/**
 * With no ContainerRecreateRequest served, look again this rarely: only an install of
 * OpenKruise or a change of strategy helps, and the pod's own events bring us back anyway.
 */
const CRR_UNSERVED_LOOK_AGAIN_SECONDS = 600;

/**
 * The SidecarTerminator planner: pod (and node, CRRs) in, actions out. No I/O, no clock.
 * See functions/sidecar/README.md for the behaviour in prose.
 */
export function plan(observed: SidecarObserved, now: Date): Plan {
  const notes = [...(observed.notes ?? [])];
  const pod = observed.pod;
  if (!pod) {
    // Nothing is written to a pod that cannot be read, not even an Event: logged at warn (review86).
    const why = observed.unreadable ?? `pod ${observed.namespace}/${observed.name} unreadable`;
    return { actions: [], notes: [...notes, `skipped: ${why}`], warnings: [`${why}: skipped, its sidecars are not stopped`] };
  }
  const due = podDue(pod);
  if (!due.due) return { actions: [], notes: [...notes, `not due: ${due.reason}`] };
  const uid = pod.metadata.uid;
  if (!uid) return { actions: [], notes: [...notes, 'skipped: the pod has no uid (needed to name and own the CRR)'] };
  const node = observed.node ?? { name: pod.spec.nodeName ?? '', kind: 'unknown', detail: 'not read' };
  if (node.kind === 'missing') {
    // PodGC deletes pods bound to a node that no longer exists; no kubelet will act on anything we write.
    const why = `skipped: node ${node.name} no longer exists (the pod is orphaned; PodGC deletes it)`;
    return { actions: [], notes: [...notes, why], warnings: [`pod ${observed.namespace}/${observed.name} ${why}, its sidecars are not stopped`] };
  }
  if (node.kind === 'unknown') notes.push(`node ${node.name || '?'} ${node.detail ?? 'unknown'}: assuming a normal node`);
  const ctx: Ctx = { ref: { pod, namespace: pod.metadata.namespace ?? observed.namespace, uid }, due, observed, now, notes, actions: [], issued: new Map(), statuses: statusByName(pod.status?.containerStatuses ?? []) };
  if (node.kind === 'virtual-kubelet') planVirtualKubelet(ctx, node.name);
  else planNormalNode(ctx);
  warnIfStuck(ctx);
  return withUnreadNode(assemble(ctx), observed.node, `${ctx.ref.namespace}/${pod.metadata.name}`);
}

/**
 * A node that could not be read (no right to get nodes) is warned of with the stop decided as
 * on a normal node: once per pod (that stop has a fixed name), not at every look (review86).
 */
function withUnreadNode(p: Plan, node: NodeView | undefined, pod: string): Plan {
  if (node?.kind !== 'unknown' || !p.actions.some((a) => a.kind !== 'Event')) return p;
  return { ...p, warnings: [`pod ${pod}: virtual-kubelet detection skipped, node ${node.name || '?'} ${node.detail ?? 'unknown'}: stopping its sidecars as on a normal node`] };
}

const END_POD = 'end-pod';
const CRR_CREATE = 'crr';
const IMAGE_SWAP = 'swap';

function assemble(ctx: Ctx): Plan {
  const actions: Action[] = [];
  if (ctx.end && !isTerminal(ctx.ref.pod.status?.phase)) {
    // Phase first: the Event that says it was set, and the stop of the sidecars whose exit
    // code is ignored (their exit must not decide the phase), only once that write took effect.
    actions.push({ ...endPodAction(ctx.ref, ctx.end, ctx.now), id: END_POD });
    actions.push({ ...podEvent(ctx.ref, { type: 'Normal', reason: 'SidecarTerminator', message: `ephemera SidecarTerminator set the pod's phase to ${ctx.end.phase}: ${ctx.end.why}`, discriminator: `end/${ctx.end.reason}` }, ctx.now), requires: END_POD });
    // An action sent only if the phase write did not take effect (unless) is left as it is.
    actions.push(...ctx.actions.map((a) => (a.unless === undefined ? { ...a, requires: [END_POD, ...[a.requires ?? []].flat()] } : a)));
  } else actions.push(...ctx.actions);
  // A refused CRR create is reported on the pod, where `kubectl describe pod` looks.
  const p: Plan = { actions, notes: ctx.notes, subject: { apiVersion: 'v1', kind: 'Pod', namespace: ctx.ref.namespace, name: ctx.ref.pod.metadata.name, uid: ctx.ref.uid } };
  if (ctx.requeueAfterSeconds !== undefined) p.requeueAfterSeconds = ctx.requeueAfterSeconds;
  return p;
}

// ---- virtual-kubelet: swap images ----

function planVirtualKubelet(ctx: Ctx, nodeName: string): void {
  ctx.path = 'image-swap';
  // An in-place image change is a restart the kubelet counts like any other.
  endFirstUnderOnFailure(ctx);
  const swaps: { name: string; image: string }[] = [];
  const unsupported: string[] = [];
  for (const s of ctx.due.unterminated) {
    if (!s.withImage) unsupported.push(s.name);
    else if (sameImage(specContainer(ctx.ref.pod, s.name)?.image, s.withImage)) swapWritten(ctx, s.name, s.withImage);
    else swaps.push({ name: s.name, image: s.withImage });
  }
  if (swaps.length > 0) {
    const list = swaps.map((s) => s.name);
    ctx.actions.push({ ...imageSwapAction(ctx.ref, swaps, ctx.now), id: IMAGE_SWAP });
    lookAgainWhenStuck(ctx, stuckLimit(ctx, 1).seconds);
    // Said only once the swap is in the spec (review78: said when an admission policy refused it).
    const event = podEvent(ctx.ref, { type: 'Normal', reason: 'SidecarTerminator', message: `ephemera SidecarTerminator is trying to terminate sidecar [${list.join(' ')}] using in-place update`, discriminator: `swap/${list.join(',')}` }, ctx.now);
    ctx.actions.push({ ...event, requires: IMAGE_SWAP });
  }
  if (unsupported.length > 0) {
    const message = `sidecar [${unsupported.join(' ')}] runs on virtual-kubelet node ${nodeName}, where no daemon can stop it and ephemeral containers are not reliable: set KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE to an image that exits at once`;
    ctx.notes.push(message);
    ctx.actions.push(podEvent(ctx.ref, { type: 'Warning', reason: 'SidecarTerminationUnsupported', message, discriminator: `vk/${unsupported.join(',')}` }, ctx.now));
  }
}

/**
 * The swap is in the spec; has the kubelet acted on it? It reports the image it runs
 * normalised (`docker.io/example/exit:1` for `example/exit:1`), so references are compared
 * normalised. Until it reports the new image the old sidecar still runs: not issued yet, so
 * that an old lastState.terminated is not read as a restart under OnFailure, but looked at
 * again so that the pod is not forgotten.
 */
function swapWritten(ctx: Ctx, name: string, image: string): void {
  const status = ctx.statuses.get(name);
  const refused = cannotStart(status?.state);
  if (refused) {
    const message = `sidecar ${name} cannot start the image ${image} from ${TERMINATE_WITH_IMAGE_ENV} (${refused}): fix the image or its registry (the kubelet keeps retrying), or end the pod`;
    ctx.notes.push(message);
    ctx.actions.push(podEvent(ctx.ref, { type: 'Warning', reason: 'SidecarTerminationStuck', message, discriminator: `swap-start/${name}` }, ctx.now));
    lookAgainWhenStuck(ctx);
    return;
  }
  if (!sameImage(status?.image, image)) {
    ctx.notes.push(`sidecar ${name}: image swapped to ${image}, the kubelet still reports ${status?.image ?? 'no image'}`);
    swapNotActedOn(ctx, { name, image, reported: status?.image });
    return;
  }
  // Running the new image: since when. Not running it (exited and restarting, or about to
  // start): the old sidecar is gone, so any earlier termination may count (null).
  const since = toDate(status?.state?.running?.startedAt) ?? null;
  ctx.issued.set(name, since);
  if (!since) lookAgainWhenStuck(ctx);
}

/**
 * The node has not acted on the swap yet: looked at again, and once stuckAfterSeconds have
 * passed since the swap was written (its annotation), said on the pod (review: a provider
 * that ignores in-place image updates left the pod looked at every two minutes, silently).
 * The kubelet stops the old container first, which may take the pod's grace period (stuckLimit).
 */
function swapNotActedOn(ctx: Ctx, swap: { name: string; image: string; reported: string | undefined }): void {
  const { name, image, reported } = swap;
  if (endedOrEnding(ctx)) return;
  const at = toDate(ctx.ref.pod.metadata.annotations?.[SWAPPED_AT_ANNOTATION]);
  const limit = stuckLimit(ctx, 1).seconds;
  const left = at ? limit - Math.floor((ctx.now.getTime() - at.getTime()) / 1000) : limit;
  if (left > 0) {
    ctx.requeueAfterSeconds = minRequeue(ctx.requeueAfterSeconds, left);
    return;
  }
  const message = `the node has not acted on the image swap of sidecar ${name} to ${image} ${limit}s after ephemera wrote it (it reports the image ${reported ?? 'of no container'}): its virtual-kubelet provider may not support in-place image updates; end the pod, or stop the sidecar another way`;
  ctx.notes.push(message);
  ctx.actions.push(podEvent(ctx.ref, { type: 'Warning', reason: 'SidecarTerminationStuck', message, discriminator: `swap-ignored/${name}` }, ctx.now));
}

// ---- normal node: CRR or signal, in stages ----

function planNormalNode(ctx: Ctx): void {
  const choice = podStrategy(ctx.ref.pod, ctx.observed.options);
  if (!choice.ok) {
    ctx.notes.push(`skipped: ${choice.reason}`);
    ctx.actions.push(podEvent(ctx.ref, { type: 'Warning', reason: 'SidecarTerminationRefused', message: `${choice.reason}; sidecars are left running until it is fixed`, discriminator: `strategy/${ctx.ref.pod.metadata.annotations?.[STRATEGY_ANNOTATION] ?? ''}` }, ctx.now));
    return;
  }
  const stage = currentStage(ctx.due);
  if (!stage) return; // unreachable for a due pod: some sidecar is unterminated
  if (stage.stage === 'ignore-exit-code') {
    ctx.end = { phase: mainsPhase(ctx), reason: 'IgnoreExitCode', why: `main containers done, remaining sidecars [${stage.sidecars.map((s) => s.name).join(' ')}] are marked ${IGNORE_EXIT_CODE_ENV}` };
  } else endFirstUnderOnFailure(ctx);
  ctx.path = choice.strategy;
  if (choice.strategy === 'crr') viaCrr(ctx, stage);
  else viaSignal(ctx, stage);
}

/**
 * The ignore-exit-code stage sets the pod's phase, and the kubelet then stops what still runs
 * in it: a sidecar this strategy cannot reach needs no Warning there (final read).
 */
function endsThePod(ctx: Ctx): boolean {
  if (!ctx.end) return false;
  ctx.notes.push('the phase write ends the pod, and the kubelet stops its sidecars');
  return true;
}

/**
 * The pod's phase is terminal, or this plan makes it so: nothing about its sidecars is stuck
 * then (a kubelet stops what runs in a terminal pod; a virtual-kubelet stops updating its
 * status), so no stuck Warning and no look again, as the README promises and warnIfStuck
 * already did (review71: the swap and missing-from-CRR Warnings were not gated).
 */
function endedOrEnding(ctx: Ctx): boolean {
  const phase = ctx.ref.pod.status?.phase;
  if (!isTerminal(phase) && !ctx.end) return false;
  ctx.notes.push(isTerminal(phase) ? `the pod's phase is ${String(phase)}: nothing is stuck` : `the pod's phase is being set to ${ctx.end?.phase ?? '?'}: nothing is stuck`);
  return true;
}

/** The longest label value (validation.LabelValueMaxLength). */
const MAX_LABEL_VALUE = 63;

function viaCrr(ctx: Ctx, stage: Stage): void {
  if (ctx.observed.crrUnserved) {
    crrNotServed(ctx, stage);
    return;
  }
  const name = crrName(ctx.ref.uid, stage.stage);
  const existing = ctx.observed.crrs[name];
  if (existing) {
    ctx.notes.push(`ContainerRecreateRequest ${name} exists${existing.phase ? ` (${existing.phase})` : ''}: waiting for it`);
    ctx.crr = existing;
    for (const s of stage.sidecars) if (existing.containers.includes(s.name)) ctx.issued.set(s.name, existing.createdAt ?? null);
    const missing = stage.sidecars.filter((s) => !existing.containers.includes(s.name));
    if (missing.length > 0) notInCrr(ctx, existing, missing);
    return;
  }
  const node = ctx.ref.pod.spec.nodeName ?? '';
  if (node.length > MAX_LABEL_VALUE) {
    // kruise-daemon finds its CRRs by the node-name label (OpenKruise's webhook sets it from
    // the pod too), and a label value is at most 63 characters: refused for good (review).
    const message = `the pod's node name (${node.length} characters) is longer than a label value may be (63), and OpenKruise's kruise-daemon finds its ContainerRecreateRequests by a label holding it, so the crr strategy cannot work on this node; annotate the pod ${STRATEGY_ANNOTATION}=ephemeral-signal`;
    ctx.notes.push(`skipped: ${message}`);
    if (endsThePod(ctx)) return;
    ctx.actions.push(podEvent(ctx.ref, { type: 'Warning', reason: 'SidecarTerminationUnsupported', message, discriminator: 'crr/long-node-name' }, ctx.now));
    return;
  }
  const list = stage.sidecars.map((s) => s.name);
  ctx.actions.push({ ...crrAction(ctx.ref, stage), id: CRR_CREATE });
  lookAgainWhenStuck(ctx, stuckLimit(ctx, stage.sidecars.length).seconds);
  // Said only once the CRR is there (review: said while OpenKruise's CRD was missing).
  ctx.actions.push({ ...podEvent(ctx.ref, { type: 'Normal', reason: 'SidecarTerminator', message: `ephemera SidecarTerminator is trying to terminate sidecar [${list.join(' ')}] using crr`, discriminator: `crr/${stage.stage}` }, ctx.now), requires: CRR_CREATE });
}

/**
 * No CRR can be created where OpenKruise's CRD is not served (its create is refused with
 * 404, on every look, and says nothing of what to do): say what to do instead, in one Event
 * per pod (fixed name), and look again rarely, so that an install of OpenKruise is noticed.
 */
function crrNotServed(ctx: Ctx, stage: Stage): void {
  const list = stage.sidecars.map((s) => s.name).join(' ');
  // The pod's own annotation wins over the installation's strategy: then only it can change (review).
  const annotated = ctx.ref.pod.metadata.annotations?.[STRATEGY_ANNOTATION] !== undefined;
  const instead = annotated ? `set the pod's annotation ${STRATEGY_ANNOTATION}=ephemeral-signal (it asks for crr)` : `set EPHEMERA_SIDECAR_STRATEGY=ephemeral-signal for the installation, or annotate the pod ${STRATEGY_ANNOTATION}=ephemeral-signal (the annotation wins)`;
  const message = `OpenKruise's ContainerRecreateRequest (${CRR.apiVersion}) is not served in this cluster, so the crr strategy cannot stop sidecar [${list}]. Install OpenKruise with kruise-daemon on the nodes, or use the strategy that needs no daemon: ${instead}`;
  ctx.notes.push(`skipped: ${message}`);
  ctx.actions.push(podEvent(ctx.ref, { type: 'Warning', reason: 'SidecarTerminationUnsupported', message, discriminator: 'crr/unserved' }, ctx.now));
  ctx.requeueAfterSeconds = minRequeue(ctx.requeueAfterSeconds, CRR_UNSERVED_LOOK_AGAIN_SECONDS);
}

/**
 * Sidecars of the stage that the existing CRR does not list, so nothing will stop them (a CRR
 * is executed once, and its name is taken): they had terminated when ephemera made it, or
 * another controller made it — OpenKruise's lists only sidecars marked
 * KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT=true, not one marked only ..._WITH_IMAGE (review).
 * Where the pod's phase is written first (OnFailure, the ignore-exit-code stage) the kubelet
 * stops them. Under Never, say so on the pod and how to get a CRR that lists them, and look again.
 */
function notInCrr(ctx: Ctx, crr: CrrView, missing: SidecarInfo[]): void {
  const list = missing.map((s) => s.name).join(' ');
  const why = `ContainerRecreateRequest ${crr.name} does not list sidecar [${list}] (it was made while the sidecar had terminated, or by another controller such as OpenKruise, which lists only sidecars marked KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT=true), so nothing would stop it`;
  if (endedOrEnding(ctx)) {
    ctx.notes.push(why);
    return;
  }
  const message = `${why}: once the sidecars it lists have ended, delete that ContainerRecreateRequest so that ephemera makes one listing every sidecar, or annotate the pod ${STRATEGY_ANNOTATION}=ephemeral-signal`;
  ctx.notes.push(message);
  ctx.actions.push(podEvent(ctx.ref, { type: 'Warning', reason: 'SidecarTerminationStuck', message, discriminator: `crr-missing/${crr.name}/${missing.map((s) => s.name).join(',')}` }, ctx.now));
  // Only someone deleting the CRR helps, which brings no pod event: look again, but rarely (review).
  ctx.requeueAfterSeconds = minRequeue(ctx.requeueAfterSeconds, CRR_UNSERVED_LOOK_AGAIN_SECONDS);
}

/**
 * Why a signal container cannot reach the sidecar's process in this pod, if it cannot: the
 * kubelet puts an ephemeral container in its target's process namespace only when the pod
 * has one per container (kuberuntime generateLinuxContainerConfig: NamespaceMode_CONTAINER).
 */
function signalUnsupported(pod: Pod): { message: string; discriminator: string } | undefined {
  // With one process namespace for the whole pod, PID 1 is the pause process, not the sidecar.
  if (pod.spec.shareProcessNamespace === true) return { message: 'the pod sets shareProcessNamespace, so a signal container cannot tell the sidecar\'s process apart; use the crr strategy for this pod', discriminator: 'signal/shared-pid' };
  // In the node's, `kill -TERM 1` would reach the node's init (BusyBox init reboots on it; review).
  if (pod.spec.hostPID === true) return { message: 'the pod sets hostPID, so a signal container would run in the node\'s process namespace and signal the node\'s init, not the sidecar; use the crr strategy for this pod', discriminator: 'signal/host-pid' };
  return undefined;
}

function viaSignal(ctx: Ctx, stage: Stage): void {
  const pod = ctx.ref.pod;
  const unsupported = signalUnsupported(pod);
  if (unsupported) {
    ctx.notes.push(`skipped: ${unsupported.message}`);
    if (endsThePod(ctx)) return;
    ctx.actions.push(podEvent(ctx.ref, { type: 'Warning', reason: 'SidecarTerminationUnsupported', message: unsupported.message, discriminator: unsupported.discriminator }, ctx.now));
    return;
  }
  const statuses = ctx.statuses;
  const injected: string[] = [];
  const notRunning: { name: string; reason: string }[] = [];
  for (const s of stage.sidecars) {
    const c = signalTarget(ctx, s);
    if (!c) continue;
    const state = statuses.get(s.name)?.state;
    if (!state?.running) {
      notRunning.push({ name: s.name, reason: state?.waiting?.reason ?? 'no state' });
      continue;
    }
    ctx.actions.push({ ...signalAction(ctx.ref, c, ctx.observed.options, ctx.now), id: `signal:${s.name}` });
    injected.push(s.name);
  }
  if (notRunning.length > 0) signalOnceRunning(ctx, notRunning);
  if (injected.length > 0) {
    lookAgainWhenStuck(ctx);
    // Said only once the signal containers are in (review: said when they were refused).
    const event = podEvent(ctx.ref, { type: 'Normal', reason: 'SidecarTerminator', message: `ephemera SidecarTerminator is trying to terminate sidecar [${injected.join(' ')}] using ephemeral-signal`, discriminator: `signal/${stage.stage}/${injected.join(',')}` }, ctx.now);
    ctx.actions.push({ ...event, requires: injected.map((name) => `signal:${name}`) });
  }
}

/**
 * While a sidecar it would signal is not running, look again this soon. Its start is a pod
 * event that brings the key back at once; this is the backstop for an event coalesced or lost
 * on the way, short because a Job's pod whose main containers are done waits on nothing else
 * (an image pull or a crash-loop back-off step take seconds), and bounded: it stops once the
 * Warning is given.
 */
const SIGNAL_WAIT_SECONDS = 10;

/**
 * Sidecars not running yet (pulling their image, ContainerCreating, CrashLoopBackOff) get no
 * signal container now (review71): the kubelet would run it as soon as the sidecar starts,
 * often before the sidecar's process has a SIGTERM handler, and the kernel drops a signal PID 1
 * has no handler for; an ephemeral container never runs again, so the sidecar would run for
 * good. Looked at again soon; if still not running stuckAfterSeconds after the main containers
 * finished, a Warning says so (not that the sidecar ignores SIGTERM, which was then the one).
 */
function signalOnceRunning(ctx: Ctx, notRunning: { name: string; reason: string }[]): void {
  const list = notRunning.map((s) => `${s.name} (${s.reason})`).join(' ');
  ctx.notes.push(`sidecar [${list}] not running: signalled once it runs`);
  // A terminal pod's kubelet starts nothing: those sidecars never run, nor need to.
  if (endsThePod(ctx) || isTerminal(ctx.ref.pod.status?.phase)) return;
  const since = mainsFinishedAt(ctx);
  const limit = ctx.observed.options.stuckAfterSeconds;
  if (!since) {
    lookAgainWhenStuck(ctx);
    return;
  }
  const left = limit - Math.floor((ctx.now.getTime() - since.getTime()) / 1000);
  if (left > 0) {
    ctx.requeueAfterSeconds = minRequeue(ctx.requeueAfterSeconds, Math.min(SIGNAL_WAIT_SECONDS, left));
    return;
  }
  // Said once (a fixed name); the sidecar's start is a pod event, so no look again is needed.
  const message = `sidecar [${list}] is still not running ${limit}s after the main containers finished: ephemeral-signal signals only a running sidecar (a signal sent before its process handles SIGTERM is lost for good), so it is signalled once it runs. See why it does not start in its status, or end the pod`;
  ctx.notes.push(message);
  ctx.actions.push(podEvent(ctx.ref, { type: 'Warning', reason: 'SidecarTerminationStuck', message, discriminator: `signal-wait/${notRunning.map((s) => s.name).join(',')}` }, ctx.now));
}

/** When the last main container finished, by the node's clock; undefined when none says. */
function mainsFinishedAt(ctx: Ctx): Date | undefined {
  const statuses = ctx.statuses;
  let last: Date | undefined;
  for (const name of ctx.due.roles.mains) {
    const at = toDate(statuses.get(name)?.state?.terminated?.finishedAt);
    if (at && (!last || at > last)) last = at;
  }
  return last;
}

/** The sidecar's spec when a signal container should be injected for it, else null (noted). */
function signalTarget(ctx: Ctx, s: SidecarInfo): Container | null {
  const pod = ctx.ref.pod;
  const name = signalContainerName(s.name);
  const existing = (pod.spec.ephemeralContainers ?? []).find((c) => c.name === name);
  if (existing) {
    if (existing.targetContainerName !== s.name) {
      ctx.notes.push(`sidecar ${s.name} skipped: ephemeral container ${name} exists but targets ${existing.targetContainerName ?? 'no container'}`);
      return null;
    }
    signalInjected(ctx, s.name, existing);
    return null;
  }
  const clash = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])].some((c) => c.name === name);
  if (clash) {
    ctx.notes.push(`sidecar ${s.name} skipped: a container of the pod is already named ${name}`);
    return null;
  }
  return specContainer(pod, s.name) ?? null;
}

/**
 * A signal container that will not signal, ever (ephemeral containers never restart), told
 * in a Warning: it failed to start, or it ran and its command failed. True when it was so.
 */
function signalEnded(ctx: Ctx, sidecar: string, container: Container, status: Parameters<typeof failedToRun>[0]): boolean {
  const failed = failedToStart(status?.state) ?? failedToRun(status);
  const refused = failed ? undefined : signalFailed(status?.state);
  if (!failed && (!refused || stoppedSinceSignal(ctx, sidecar, status?.state))) return false;
  const message = failed
    ? `signal container ${container.name} (image ${container.image ?? '?'}) for sidecar ${sidecar} failed to start: ${failed}. The image in EPHEMERA_SIGNAL_IMAGE must provide the signal command (${ctx.observed.options.signalCommand.join(' ')}); an ephemeral container cannot be changed or removed, so stop the sidecar another way: annotate the pod ${STRATEGY_ANNOTATION}=crr where OpenKruise runs, or end the pod`
    : `signal container ${container.name} for sidecar ${sidecar} ran but could not signal it: ${refused}. kill needs the sidecar's user or CAP_KILL: the signal container copies the sidecar's securityContext, so give the sidecar a numeric runAsUser (a user from its image alone is not copied); or annotate the pod ${STRATEGY_ANNOTATION}=crr where OpenKruise runs, or end the pod`;
  ctx.notes.push(message);
  ctx.actions.push(podEvent(ctx.ref, { type: 'Warning', reason: 'SidecarTerminationStuck', message, discriminator: `${failed ? 'signal-start' : 'signal-failed'}/${container.name}` }, ctx.now));
  return true;
}

/**
 * The signal container is in the pod: issued once it started. Until then nothing stops the
 * sidecar and the pod may never change again, so look again after stuckAfterSeconds; and if
 * the kubelet says it cannot start it, say so on the pod: it retries for ever, and an
 * ephemeral container cannot be changed or removed.
 */
function signalInjected(ctx: Ctx, sidecar: string, container: Container): void {
  const status = statusByName(ctx.ref.pod.status?.ephemeralContainerStatuses ?? []).get(container.name);
  if (signalEnded(ctx, sidecar, container, status)) return;
  const started = startedAt(status?.state);
  if (started) {
    ctx.issued.set(sidecar, signalledAt(started, injectedAt(container)));
    return;
  }
  const refused = cannotStart(status?.state);
  if (!refused) {
    notStarted(ctx, sidecar, container, status?.state);
    return;
  }
  lookAgainWhenStuck(ctx);
  const message = `signal container ${container.name} (image ${container.image ?? '?'}) for sidecar ${sidecar} cannot start: ${refused}. An ephemeral container cannot be changed or removed: fix the cause (${signalFixHint(status?.state?.waiting?.reason)}), or stop the sidecar another way: annotate the pod ${STRATEGY_ANNOTATION}=crr where OpenKruise runs, or end the pod`;
  ctx.notes.push(message);
  ctx.actions.push(podEvent(ctx.ref, { type: 'Warning', reason: 'SidecarTerminationStuck', message, discriminator: `signal-start/${container.name}` }, ctx.now));
}

/**
 * Injected, and not started: no status at all, or waiting for a reason that passes by itself
 * (ContainerCreating). A kubelet that ignores ephemeral containers (older than 1.23, or the
 * feature gate off), or one no longer reporting while the pod runs on, leaves it so for good:
 * said once stuckAfterSeconds have passed since the injection, as for a CRR nobody takes, and
 * not looked at again (its start, should it come, is a pod event; review86). One injected by
 * an older ephemera (no time) is looked at again as before. In a pod whose phase is terminal,
 * or being set, the kubelet starts nothing, and stops the sidecar itself.
 */
function notStarted(ctx: Ctx, sidecar: string, container: Container, state: ContainerState | undefined): void {
  const waiting = state?.waiting?.reason;
  ctx.notes.push(`signal container ${container.name} injected, not started yet (${waiting ?? 'no status'})`);
  if (endedOrEnding(ctx)) return;
  const at = injectedAt(container);
  const limit = ctx.observed.options.stuckAfterSeconds;
  const left = at ? limit - Math.floor((ctx.now.getTime() - at.getTime()) / 1000) : limit;
  if (!at || left > 0) {
    lookAgainWhenStuck(ctx, left);
    return;
  }
  const shown = waiting ? `it waits with ${waiting}` : 'it reports no status for it';
  const message = `the kubelet has not started signal container ${container.name} for sidecar ${sidecar} ${limit}s after ephemera injected it (${shown}): ephemeral containers need a kubelet of Kubernetes 1.25+ (1.23+ with the EphemeralContainers feature gate) that is reporting, see node ${ctx.ref.pod.spec.nodeName ?? '?'}'s version and Ready condition. An ephemeral container cannot be removed: stop the sidecar another way: annotate the pod ${STRATEGY_ANNOTATION}=crr where OpenKruise runs, or end the pod`;
  ctx.notes.push(message);
  ctx.actions.push(podEvent(ctx.ref, { type: 'Warning', reason: 'SidecarTerminationStuck', message, discriminator: `signal-unstarted/${container.name}` }, ctx.now));
}

/** When ephemera injected a signal container (its EPHEMERA_SIGNAL_INJECTED_AT: a planner's clock), if it says. */
function injectedAt(container: Container): Date | undefined {
  const value = (container.env ?? []).findLast((e) => e.name === SIGNAL_INJECTED_AT_ENV)?.value;
  return value === undefined ? undefined : toDate(value);
}

/**
 * When a started signal container sent its SIGTERM, for the stuck limit: its start, or its
 * injection if that is later. The start is the node's clock and the limit is judged by the
 * planner's: a node clock 2 minutes behind made a sidecar draining within its grace period
 * "stuck" 14 s after its signal, and the pod was ended Failed (review95 F3). It cannot start
 * before it was injected, and the injection is stamped by a planner's clock, so a node clock
 * behind no longer shortens the limit; one ahead only lengthens it.
 */
function signalledAt(started: Date, injected: Date | undefined): Date {
  return injected !== undefined && injected > started ? injected : started;
}

/**
 * The sidecar stopped at or after the signal container started: the signal reached it, whatever
 * the signal container's exit. One that exits on SIGTERM before `kill` has returned takes its
 * process namespace down, and the kernel kills `kill` with it (exit 137); that was read as
 * "could not signal", and the pod was never ended (review71). Both times are the node's clock.
 */
function stoppedSinceSignal(ctx: Ctx, sidecar: string, state: ContainerState | undefined): boolean {
  const started = startedAt(state);
  const stopped = toDate(ctx.statuses.get(sidecar)?.lastState?.terminated?.finishedAt);
  if (!started || !stopped || stopped < started) return false;
  ctx.notes.push(`signal container for sidecar ${sidecar} exited ${String(state?.terminated?.exitCode)}, but the sidecar stopped after it started: signal delivered`);
  return true;
}

/** What usually lies behind each kind of refusal, and whether fixing it helps this pod. */
function signalFixHint(reason: string | undefined): string {
  switch (reason) {
    case 'CreateContainerConfigError':
      // The copied securityContext has runAsNonRoot (or the pod's has) but no runAsUser, so
      // the signal image's own user applies: root for busybox, which the kubelet refuses.
      return 'under runAsNonRoot give the sidecar a runAsUser: the signal container copies the sidecar\'s securityContext, not its image\'s user; this pod\'s container keeps its own';
    case 'CreateContainerError':
      // Most often the target (the sidecar) is not running: the kubelet creates no container
      // that shares a stopped container's namespaces, and tries again at every sync.
      return 'see the kubelet\'s message: most often the sidecar is not running (restarting), and the kubelet tries again while it is up; else the image in EPHEMERA_SIGNAL_IMAGE must provide the signal command';
    case 'InvalidImageName':
    case 'ErrImageNeverPull':
      return 'EPHEMERA_SIGNAL_IMAGE must name an image the nodes can pull; this pod\'s container keeps its image';
    default:
      return 'make EPHEMERA_SIGNAL_IMAGE pullable from the node (mirror it into a registry the nodes reach, or fix the pull credentials): the kubelet keeps retrying the pull, so this pod then recovers';
  }
}

/**
 * Kubelet reasons for a container that will not start until someone changes something: an
 * image that cannot be pulled or used, or a container the runtime refuses to create
 * (runAsNonRoot with an image that runs as root is CreateContainerConfigError). Not
 * ContainerCreating or PodInitializing, which pass by themselves.
 */
const CANNOT_START = new Set([
  'CreateContainerConfigError',
  'CreateContainerError',
  'ErrImagePull',
  'ImagePullBackOff',
  'ErrImageNeverPull',
  'InvalidImageName',
  'ImageInspectError',
  'RegistryUnavailable',
  'SignatureValidationFailed',
]);

/**
 * "reason: message" of a container that ended without having run: the runtime could not
 * start its process (containerd's StartError, exit code 128, or docker's ContainerCannotRun;
 * an executable missing from the image). Its startedAt is then absent or the Unix epoch, so
 * it must not be taken for a signal sent (review: the Warning then blamed the sidecar's
 * SIGTERM handling, or the pod was looked at every two minutes for good).
 */
/** A signal container that ran and exited non-zero: its `kill` was refused (review: it counted as a signal sent). */
function signalFailed(state: ContainerState | undefined): string | undefined {
  const t = state?.terminated;
  if (!t || t.exitCode === 0) return undefined;
  return t.message ? `exit code ${t.exitCode}: ${t.message.trim()}` : `exit code ${t.exitCode}`;
}

function failedToStart(state: ContainerState | undefined): string | undefined {
  const t = state?.terminated;
  if (!t) return undefined;
  const started = toDate(t.startedAt);
  const neverRan = started === undefined || started.getTime() <= 0;
  if (!(t.reason === 'StartError' || t.reason === 'ContainerCannotRun' || (t.exitCode === 128 && neverRan))) return undefined;
  const head = t.reason ?? `exit code ${t.exitCode}`;
  return t.message ? `${head}: ${t.message}` : head;
}

/**
 * The same failure as the kubelet shows it in a pod it would restart containers of
 * (restartPolicy OnFailure): waiting with RunContainerError, the StartError in lastState. An
 * ephemeral container is never started again, so that waiting never clears (review: the pod
 * was looked at every two minutes, silently).
 */
function failedToRun(status: { state?: ContainerState | undefined; lastState?: ContainerState | undefined } | undefined): string | undefined {
  const waiting = status?.state?.waiting;
  if (waiting?.reason !== 'RunContainerError') return undefined;
  return failedToStart(status?.lastState) ?? (waiting.message ? `RunContainerError: ${waiting.message}` : 'RunContainerError');
}

/** "reason: message" when the container waits for one of those reasons, else undefined. */
function cannotStart(state: ContainerState | undefined): string | undefined {
  const reason = state?.waiting?.reason;
  if (reason === undefined || !CANNOT_START.has(reason)) return undefined;
  // The kubelet's message, bounded as the EphemeralJob's failures quote it: a runtime's error can run to kilobytes.
  const message = state?.waiting?.message;
  return message ? `${reason}: ${quoted(message)}` : reason;
}

// ---- OnFailure: the kubelet restarts a stopped sidecar (openkruise/kruise#1366) ----

/**
 * Under OnFailure the kubelet restarts a sidecar that exits non-zero when stopped, and the pod
 * never ends (openkruise/kruise#1366). Ending the pod only after that restart (as ephemera
 * did) is too late: the Job controller adds up the restartCount of an OnFailure Job's active
 * pods and fails the Job once the sum reaches backoffLimit (job_controller.go
 * pastBackoffLimitOnFailure), within a second of the restart, so a Job with backoffLimit 0
 * that succeeded was failed (review71). Such a pod is due only once every main container's
 * exit is final, so its outcome is known: write the phase first, as the ignore-exit-code stage
 * does, and stop the sidecars only once that write took effect (assemble). A terminal pod is
 * not active, so no restart is counted, and the kubelet stops what still runs and restarts nothing.
 */
function endFirstUnderOnFailure(ctx: Ctx): void {
  if (ctx.due.restartPolicy !== 'OnFailure') return;
  const list = ctx.due.unterminated.map((s) => s.name).join(' ');
  ctx.end = { phase: mainsPhase(ctx), reason: 'RestartPolicyOnFailure', why: `${mainsOutcome(ctx)} under restartPolicy OnFailure, so the phase is set before sidecar [${list}] is stopped: a sidecar the kubelet restarted would count against the Job's backoffLimit (openkruise/kruise#1366)` };
}

/**
 * What a pod ended by status is: Succeeded when every main container exited 0 —
 * all of them do under the pod's OnFailure, unless a container's own restartPolicy Never made
 * a non-zero exit final (Kubernetes 1.35's container restart rules): then Failed, as the
 * kubelet would have said (version review).
 */
function mainsPhase(ctx: Ctx): 'Succeeded' | 'Failed' {
  return ctx.due.mainsSucceeded ? 'Succeeded' : 'Failed';
}

function mainsOutcome(ctx: Ctx): string {
  return ctx.due.mainsSucceeded ? 'every main container exited 0' : 'every main container has ended, not all with 0 (a container restartPolicy Never)';
}

// ---- stuck: termination issued, sidecar still running ----

function warnIfStuck(ctx: Ctx): void {
  if (ctx.end && !isTerminal(ctx.ref.pod.status?.phase)) return; // ending the pod now settles it
  if (isTerminal(ctx.ref.pod.status?.phase)) {
    // The pod has ended: a kubelet stops what still runs in it, so a sidecar shown running
    // is a status not yet updated, or one a virtual-kubelet froze with the phase (review:
    // a Warning said "stuck" on a pod ephemera had ended Succeeded).
    ctx.notes.push(`the pod's phase is ${String(ctx.ref.pod.status?.phase)}: its kubelet stops what still runs in it (a virtual-kubelet provider may keep it running until the pod is deleted); nothing is stuck`);
    return;
  }
  const { seconds: limit, grace } = stuckLimit(ctx, killsInTurn(ctx));
  const stuck: string[] = [];
  for (const s of ctx.due.unterminated) {
    const at = ctx.issued.get(s.name);
    if (!at) continue;
    const left = limit - Math.floor((ctx.now.getTime() - at.getTime()) / 1000);
    if (left <= 0) stuck.push(s.name);
    else ctx.requeueAfterSeconds = minRequeue(ctx.requeueAfterSeconds, left);
  }
  if (stuck.length === 0) return;
  const waited = limit > ctx.observed.options.stuckAfterSeconds ? `, terminationGracePeriodSeconds ${grace}` : '';
  if (ctx.path === 'ephemeral-signal') {
    endStuckPod(ctx, stuck, `sidecar [${stuck.join(' ')}] still running ${limit}s after its signal container sent it SIGTERM (ephemeral-signal${waited})`);
    return;
  }
  const message = `sidecar [${stuck.join(' ')}] still running ${limit}s after ephemera asked it to stop (${ctx.path}${waited}): ${stuckHint(ctx)}`;
  ctx.notes.push(message);
  ctx.actions.push(podEvent(ctx.ref, { type: 'Warning', reason: 'SidecarTerminationStuck', message, discriminator: `stuck/${ctx.path}/${stuck.join(',')}` }, ctx.now));
}

/**
 * ephemeral-signal's SIGTERM has no second step of its own: a SIGKILL sent from inside the
 * sidecar's process namespace is dropped like a SIGTERM its PID 1 has no handler for
 * (pid_namespaces(7)). The other paths have one: kruise-daemon's KillContainer sends SIGKILL
 * once the pod's grace period has passed, and the kubelet stops what runs in a pod whose phase
 * was written the same way. So a sidecar stuck after its signal is stopped by the existing
 * phase write, with the phase crr gives the pod (review86: the pod, and its Job, ran for
 * ever): the sidecar killed (137) makes the kubelet fail a Never pod (getPhase), unless
 * sidecars marked IGNORE_EXIT_CODE remain, whose stage sets the phase from the main
 * containers alone. (Under OnFailure, and in that stage, the phase was written first.) The
 * Warning says what was done, or, if the write did not take effect, how to end the pod.
 */
function endStuckPod(ctx: Ctx, stuck: string[], what: string): void {
  const ignored = ctx.due.unterminated.filter((s) => s.ignoreExitCode).map((s) => s.name);
  const phase = ignored.length > 0 ? mainsPhase(ctx) : 'Failed';
  const how = ignored.length > 0
    ? `from the main containers, as the stage of sidecars marked ${IGNORE_EXIT_CODE_ENV} [${ignored.join(' ')}] would`
    : 'as crr ends it: the sidecar killed (exit 137) fails a restartPolicy Never pod';
  ctx.end = { phase, reason: 'StuckAfterSignal', why: `${what}; the phase is ${phase} ${how}` };
  const head = `${what}: its main process did not exit on it (PID 1 ignores signals it has no handler for, and a SIGKILL from inside its process namespace is dropped too)`;
  const fix = 'make the sidecar exit on SIGTERM (run it under tini or dumb-init), or use the crr strategy where OpenKruise runs';
  const ended = `${head}. ephemera set the pod's phase to ${phase} (${how}), so the kubelet stops the sidecar: SIGTERM, then SIGKILL after terminationGracePeriodSeconds. So that such pods end by themselves, ${fix}`;
  const { namespace } = ctx.ref;
  const name = ctx.ref.pod.metadata.name;
  const unended = `${head}. ephemera could not set the pod's phase to ${phase} to have the kubelet stop it (see the ActionRefused Event; it tries again): end the pod with kubectl patch pod ${name} -n ${namespace} --subresource=status --type=merge -p '{"status":{"phase":"${phase}"}}', or delete it; and ${fix}`;
  ctx.notes.push(ended);
  const list = stuck.join(',');
  ctx.actions.push(podEvent(ctx.ref, { type: 'Warning', reason: 'SidecarTerminationStuck', message: ended, discriminator: `stuck/ephemeral-signal/${list}` }, ctx.now));
  ctx.actions.push({ ...podEvent(ctx.ref, { type: 'Warning', reason: 'SidecarTerminationStuck', message: unended, discriminator: `stuck-unended/ephemeral-signal/${list}` }, ctx.now), unless: END_POD });
}

/**
 * Termination issued now: if it does nothing (no kruise-daemon, SIGTERM ignored) the pod
 * may never change again, so no event would bring us back. Ask to look again then
 * (stuckAfterSeconds, or the stuck Warning's own limit).
 */
function lookAgainWhenStuck(ctx: Ctx, seconds = ctx.observed.options.stuckAfterSeconds): void {
  ctx.requeueAfterSeconds = minRequeue(ctx.requeueAfterSeconds, seconds);
}

/** Kubernetes' default terminationGracePeriodSeconds. */
const DEFAULT_GRACE_SECONDS = 30;
/**
 * Past the grace period: the kubelet's status report, and the clocks that count it (a CRR's
 * creation is the API server's, an image swap and a signal's injection an instance's; a
 * signal's start, the node's, counts only when later than its injection).
 */
const GRACE_MARGIN_SECONDS = 30;

/**
 * How long after a stop was issued a sidecar still running is stuck: stuckAfterSeconds, but
 * never before the pod's terminationGracePeriodSeconds, once per kill carried out in turn, and
 * a margin have passed. A stop is SIGTERM, then SIGKILL after that grace (the kubelet's and
 * kruise-daemon's KillContainer: setTerminationGracePeriod), and kruise-daemon kills a
 * CRR's containers one after the other (crr_daemon_controller manage); a sidecar draining
 * within the grace its pod gives it is not stuck (review86: a Warning blamed kruise-daemon
 * while it was stopping a sidecar with a 300 s grace period).
 */
function stuckLimit(ctx: Ctx, kills: number): { seconds: number; grace: number } {
  // Read here, not declared in the Pod schema: the EphemeralJob's LIST shortcut (api/pod-shape.ts) mirrors that schema.
  const set = ctx.ref.pod.spec.terminationGracePeriodSeconds;
  const grace = typeof set === 'number' && Number.isFinite(set) ? Math.max(0, Math.ceil(set)) : DEFAULT_GRACE_SECONDS;
  return { seconds: Math.max(ctx.observed.options.stuckAfterSeconds, grace * kills + GRACE_MARGIN_SECONDS), grace };
}

/**
 * Kills whose grace the stop may wait out, one after the other: every container of the CRR;
 * the one signal; none for an image swap, counted from the new image's start (the kubelet
 * killed the old container before).
 */
function killsInTurn(ctx: Ctx): number {
  if (ctx.path === 'crr') return Math.max(1, ctx.crr?.containers.length ?? 1);
  return ctx.path === 'image-swap' ? 0 : 1;
}

/** What to look at when a stop did nothing (ephemeral-signal ends the pod instead: endStuckPod). */
function stuckHint(ctx: Ctx): string {
  if (ctx.path === 'image-swap') return `the image in ${TERMINATE_WITH_IMAGE_ENV} must exit at once, and this one keeps running`;
  return crrStuckHint(ctx);
}

/**
 * What the CRR's phase says of kruise-daemon (review86: "is it running?" was asked of one
 * already executing it): unset, nobody took it; Pending, kruise-daemon runs another request
 * of the pod first; Recreating or Completed, it acted and the sidecar still runs.
 */
function crrStuckHint(ctx: Ctx): string {
  const node = ctx.ref.pod.spec.nodeName ?? '?';
  const crr = ctx.crr;
  if (crr?.phase === 'Pending') return `ContainerRecreateRequest ${crr.name} is Pending: kruise-daemon on node ${node} runs one request of a pod at a time, and another of this pod is ahead of it; see that one's status`;
  // kruise-manager completes a CRR no kruise-daemon answered within a minute
  // (crr_controller.go responseTimeout, "daemon has not responded for a long time"): Completed
  // with no containerRecreateStates is nobody having taken it (review89).
  if (crr?.phase === 'Completed' && crr.daemonActed !== true) return `ContainerRecreateRequest ${crr.name} was completed without kruise-daemon acting on it${crr.message ? ` ("${quoted(crr.message)}")` : ''}: is kruise-daemon running on node ${node}? The request will not be taken any more (ephemera does not create it again under its name): fix kruise-daemon and delete the request, or annotate the pod ${STRATEGY_ANNOTATION}=ephemeral-signal`;
  if (crr?.phase === 'Recreating' || crr?.phase === 'Completed') return `kruise-daemon on node ${node} has taken ContainerRecreateRequest ${crr.name} (${crr.phase}${crr.message ? `: "${quoted(crr.message)}"` : ''}), yet the sidecar runs on: see its status.containerRecreateStates and kruise-daemon's log on that node`;
  return `ContainerRecreateRequests are executed by OpenKruise's kruise-daemon; is it running on node ${node}? Without OpenKruise, annotate the pod ${STRATEGY_ANNOTATION}=ephemeral-signal`;
}

// ---- helpers ----

function specContainer(pod: Pod, name: string): Container | undefined {
  return pod.spec.containers.find((c) => c.name === name);
}

function startedAt(state: { running?: { startedAt?: string | Date }; terminated?: { startedAt?: string | Date } } | undefined): Date | undefined {
  return toDate(state?.running?.startedAt ?? state?.terminated?.startedAt);
}

function isTerminal(phase: string | undefined): boolean {
  return phase === 'Succeeded' || phase === 'Failed';
}
