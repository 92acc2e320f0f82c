import { KubeError } from '../../functions/kube/errors.ts';
import { throughView, type ItemView, type Kube, type ListOptions, type ObjectList, type ObjectRef } from '../../functions/kube/kube.ts';
import type { Action } from '../../functions/engine/plan.ts';

type Answer = unknown | KubeError;

/**
 * A Kube whose writes answer from a script, for testing how the engine reacts to each kind
 * of API answer. It is not a cluster: integration tests use the in-process API server.
 */
export class ScriptedKube implements Kube {
  readonly performed: Action[] = [];
  readonly objects = new Map<string, unknown>();
  private readonly script: Answer[] = [];
  now = new Date('2026-01-01T00:00:00Z');

  /** Queue answers for the next perform() calls, in order; afterwards perform echoes the body. */
  answer(...answers: Answer[]): this {
    this.script.push(...answers);
    return this;
  }

  async get(ref: ObjectRef): Promise<unknown> {
    return this.objects.get(key(ref)) ?? null;
  }

  async list<T>(_apiVersion?: string, _kind?: string, _namespace?: string, opts?: ListOptions & { view?: ItemView<T> }): Promise<ObjectList<T>> {
    return { items: throughView([...this.objects.values()], opts?.view) };
  }

  async perform(action: Action): Promise<unknown> {
    this.performed.push(action);
    const next = this.script.shift();
    if (next instanceof KubeError) throw next;
    const result = next ?? action.body;
    if (action.verb === 'delete') this.objects.delete(key(action));
    else if (action.verb !== 'patch') this.objects.set(key(action), result);
    return result;
  }

  serverNow(): Date {
    return this.now;
  }
}

function key(ref: ObjectRef): string {
  return `${ref.kind}/${ref.namespace ?? ''}/${ref.name}`;
}

/** A classified API error like the real client produces. */
export function apiError(status: number, reason = '', message = `HTTP ${status}`, causes: KubeError['causes'] = []): KubeError {
  return new KubeError({ status, reason, message, causes });
}
