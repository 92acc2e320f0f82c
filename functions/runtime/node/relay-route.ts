import type { Envelope } from '../../api/envelope.ts';
import { formatZodIssues } from '../../api/field-path.ts';
import { EJOB } from '../../api/names.ts';
import { Pod } from '../../api/pod.ts';
import type { Kube } from '../../kube/kube.ts';
import { jobEnvelope, podEnvelope } from '../../../relay/envelope.ts';
import { trimJob, trimPod, type JobView } from '../../../relay/trim.ts';
import type { InputEvent } from './input.ts';

/**
 * An event the relay would not forward, and why: `filter` its filter's everyday choice (no
 * job selects the pod); `kind` a kind it does not watch (a Node or Lease of a state file);
 * `input` an event that is not an object's change (BOOKMARK, ERROR) or an object it cannot read.
 */
export interface Skip {
  skipped: string;
  because: 'filter' | 'kind' | 'input';
}

/**
 * An input event as production delivers it: recorded envelopes pass as they are; a raw
 * watch event goes through the relay's trimming, filter and envelope, with the jobs the
 * cluster has now. What the relay would not forward comes back as `skipped`, with the reason
 * and what it comes from (`Skip`).
 */
export async function relayRoute(ev: InputEvent, kube: Kube, now: Date): Promise<{ envelope: Envelope } | Skip> {
  if ('envelope' in ev) return { envelope: ev.envelope };
  const watch = ev.watch;
  if (watch.type === 'BOOKMARK') return { skipped: 'a BOOKMARK carries only a resourceVersion, nothing to reconcile', because: 'input' };
  if (watch.type === 'ERROR') return { skipped: watchError(watch.object), because: 'input' };
  const { type, object } = watch;
  if (object.kind === EJOB.kind) {
    const job = trimJob(object as Record<string, unknown>);
    if (!job) return { skipped: 'an EphemeralJob without name or namespace', because: 'input' };
    return { envelope: jobEnvelope(type, job, { relayId: 'invoke', now }) };
  }
  if (object.kind !== 'Pod') return { skipped: `the relay does not watch ${object.kind ?? 'objects without a kind'}`, because: 'kind' };
  const parsed = Pod.safeParse(object);
  if (!parsed.success) return { skipped: `unreadable pod: ${formatZodIssues(parsed.error.issues, '')}`, because: 'input' };
  const pod = trimPod(parsed.data);
  const namespace = pod.metadata.namespace ?? 'default';
  const jobs = (await kube.list(EJOB.apiVersion, EJOB.kind, namespace)).items.map((j) => trimJob(j as Record<string, unknown>)).filter((j): j is JobView => j !== null);
  const routed = podEnvelope(type, { ...pod, metadata: { ...pod.metadata, namespace } }, jobs, { relayId: 'invoke', now });
  return 'skipped' in routed ? { skipped: routed.skipped, because: 'filter' } : routed;
}

/**
 * Why a watch ERROR is not forwarded: it ends the watch, and the relay's reflector lists
 * again (410 Expired: too old a resourceVersion); what the list finds is sent as RESYNC events.
 */
function watchError(status: { code?: number; reason?: string; message?: string }): string {
  const what = [status.code, status.reason].filter((x) => x !== undefined).join(' ');
  return `a watch ERROR${what ? ` (${what})` : ''}${status.message ? `: ${status.message}` : ''}; the relay would list again and send what it finds as RESYNC events`;
}
