import type { Envelope } from '../../api/envelope.ts';
import { formatZodIssues } from '../../api/field-path.ts';
import { EJOB } from '../../api/names.ts';
import { Pod } from '../../api/pod.ts';
import type { Kube } from '../../kube/kube.ts';
import { jobEnvelope, podEnvelope } from '../../../relay/envelope.ts';
import { trimJob, trimPod, type JobView } from '../../../relay/trim.ts';
import type { InputEvent } from './input.ts';

/**
 * An input event as production delivers it: recorded envelopes pass as they are; a raw
 * watch event goes through the relay's trimming, filter and envelope, with the jobs the
 * cluster has now. What the relay would not forward comes back as `skipped`, with the reason.
 */
export async function relayRoute(ev: InputEvent, kube: Kube, now: Date): Promise<{ envelope: Envelope } | { skipped: string }> {
  if ('envelope' in ev) return { envelope: ev.envelope };
  const { type, object } = ev.watch;
  if (type === 'BOOKMARK') return { skipped: 'bookmark' };
  if (object.kind === EJOB.kind) {
    const job = trimJob(object as Record<string, unknown>);
    if (!job) return { skipped: 'EphemeralJob without name or namespace' };
    return { envelope: jobEnvelope(type, job, { relayId: 'invoke', now }) };
  }
  if (object.kind !== 'Pod') return { skipped: `the relay does not watch ${object.kind ?? 'objects without a kind'}` };
  const parsed = Pod.safeParse(object);
  if (!parsed.success) return { skipped: `unreadable pod: ${formatZodIssues(parsed.error.issues, '')}` };
  const pod = trimPod(parsed.data);
  const namespace = pod.metadata.namespace ?? 'default';
  const jobs = (await kube.list(EJOB.apiVersion, EJOB.kind, namespace)).items.map((j) => trimJob(j as Record<string, unknown>)).filter((j): j is JobView => j !== null);
  return podEnvelope(type, { ...pod, metadata: { ...pod.metadata, namespace } }, jobs, { relayId: 'invoke', now });
}
