import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { Pod, type ContainerStatus, type Container } from '../../functions/api/pod.ts';
import { DEFAULT_SIDECAR_OPTIONS } from '../../functions/sidecar/config.ts';
import type { SidecarObserved } from '../../functions/sidecar/planner.ts';

const fixture = (name: string): unknown => parse(readFileSync(new URL(`../fixtures/sidecar/${name}`, import.meta.url), 'utf8'));

/** The base pod: Never, main exited 0, sidecar log-shipper running. A fresh copy each call. */
export function basePod(): Pod {
  return Pod.parse(fixture('job-pod.yaml'));
}

export const NODES = fixture('nodes.yaml') as { metadata: { name: string } }[];
export const UID = '0f1e2d3c-0000-4000-8000-000000000001';
export const NOW = new Date('2026-01-01T00:02:00Z');

export const env = (name: string, value?: string): { name: string; value?: string } => (value === undefined ? { name } : { name, value });
export const SIDECAR_ENV = env('KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', 'true');
export const running = (name: string, extra: Partial<ContainerStatus> = {}): ContainerStatus => ({ name, state: { running: { startedAt: '2026-01-01T00:00:05Z' } }, ...extra });
export const exited = (name: string, exitCode: number, extra: Partial<ContainerStatus> = {}): ContainerStatus => ({ name, state: { terminated: { exitCode, finishedAt: '2026-01-01T00:01:00Z' } }, ...extra });

/** The base pod with containers and statuses replaced (and anything else spread over). */
export function podWith(o: { containers?: Container[]; statuses?: ContainerStatus[]; spec?: Partial<Pod['spec']>; status?: Partial<NonNullable<Pod['status']>>; metadata?: Partial<Pod['metadata']> }): Pod {
  const p = basePod();
  return {
    ...p,
    metadata: { ...p.metadata, ...o.metadata },
    spec: { ...p.spec, ...(o.containers ? { containers: o.containers } : {}), ...o.spec },
    status: { ...p.status, ...(o.statuses ? { containerStatuses: o.statuses } : {}), ...o.status },
  };
}

/** A due pod's observation on a normal node with no CRR yet. */
export function observed(pod: Pod, o: Partial<SidecarObserved> = {}): SidecarObserved {
  return { namespace: 'batch', name: pod.metadata.name, pod, node: { name: 'node-a', kind: 'normal' }, crrs: {}, options: DEFAULT_SIDECAR_OPTIONS, ...o };
}
