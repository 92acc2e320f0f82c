// The SidecarTerminator's routing: which pod events concern it, decided from the envelope
// alone. Apart from controller.ts (observe, plan and what they import), so that a
// deployment can route every event with this small module and load the rest on the first
// pod that is due (runtime/deps.ts).
import { objectKey, type Envelope } from '../api/envelope.ts';
import type { Route } from '../engine/controller.ts';
import { dueFromSnapshot } from './predicate.ts';

/** "Pod/<ns>/<name>" */
export function podKey(namespace: string, name: string): string {
  return objectKey('Pod', namespace, name);
}

/** Pod events only; a snapshot that shows the pod is not due stops here, with the reason. */
export function route(event: Envelope): Route {
  const { kind, event: type, namespace, name } = event.data;
  if (kind !== 'Pod') return { keys: [], skipped: `not a pod event (${kind})` };
  if (type === 'DELETED') return { keys: [], skipped: 'pod deleted' };
  const verdict = dueFromSnapshot(event.data.snapshot);
  if (verdict && !verdict.due) return { keys: [], skipped: verdict.reason };
  return { keys: [podKey(namespace, name)] };
}
