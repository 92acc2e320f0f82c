// Synthetic histories for the chaos checker's tests: what the API server would have recorded,
// written by hand a write at a time.
import type { KubeObject, WriteRecord } from '../../functions/cluster/index.ts';
import type { RunRecord } from './record.ts';

/** Builds a history write by write, a second apart; each write stores a copy of the object as it is now. */
export class History {
  readonly writes: WriteRecord[] = [];
  private readonly latest = new Map<string, KubeObject>();

  put(obj: KubeObject, o: { actor?: string; verb?: string; subresource?: string; type?: WriteRecord['type'] } = {}): KubeObject {
    const copy = structuredClone(obj);
    const type = o.type ?? (this.latest.has(copy.metadata.uid!) ? 'MODIFIED' : 'ADDED');
    copy.metadata.resourceVersion = String(this.writes.length + 10);
    this.writes.push({ seq: this.writes.length + 1, time: this.now(), type, verb: o.verb ?? 'store', subresource: o.subresource ?? '', actor: o.actor ?? 'in-process', object: copy });
    if (type === 'DELETED') this.latest.delete(copy.metadata.uid!);
    else this.latest.set(copy.metadata.uid!, copy);
    return obj;
  }

  /** The time the next write will have. */
  now(): string {
    return new Date(Date.UTC(2026, 0, 1, 0, 0, this.writes.length)).toISOString();
  }

  final(): KubeObject[] {
    return [...this.latest.values()];
  }

  run(over: Partial<RunRecord> = {}): RunRecord {
    return { writes: this.writes, rejected: [], final: this.final(), exits: [], converged: true, ...over };
  }
}
