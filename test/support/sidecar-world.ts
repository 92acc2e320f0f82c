import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { Container, Pod } from '../../functions/api/pod.ts';
import { IGNORE_EXIT_CODE_ENV, sidecarInfo, TERMINATE_SIDECAR_ENV, TERMINATE_WITH_IMAGE_ENV } from '../../functions/sidecar/env.ts';
import { handle, type EngineDeps, type HandleResult } from '../../functions/engine/engine.ts';
import { silentLogger } from '../../functions/engine/logger.ts';
import { createKube } from '../../functions/kube/client.ts';
import { SimKubelet, startApiServer, type ApiServer, type ContainerSpec, type KubeletPolicy } from '../../functions/cluster/index.ts';
import { grantChecked, shippedAuthorization, TOKENS } from './shipped-rbac.ts';
import type { KubeObject } from '../../functions/cluster/store.ts';
import { CRR } from '../../functions/sidecar/actions.ts';
import type { SidecarOptions } from '../../functions/sidecar/config.ts';
import { sidecarController } from '../../functions/sidecar/controller.ts';
import { TestClock } from './clock.ts';
import { envelopeFor } from './ejob-world.ts';

export const NS = 'batch';
const NODES = parse(readFileSync(new URL('../fixtures/sidecar/nodes.yaml', import.meta.url), 'utf8')) as unknown[];

export const SIDECAR = { name: TERMINATE_SIDECAR_ENV, value: 'true' };
export const IGNORE = { name: IGNORE_EXIT_CODE_ENV, value: 'true' };
export const withImage = (image: string): { name: string; value: string } => ({ name: TERMINATE_WITH_IMAGE_ENV, value: image });

/** A Job pod as a user would create it (no status: the simulated kubelet runs it). */
export function jobPod(name: string, o: { containers: Record<string, unknown>[]; restartPolicy?: string; nodeName?: string; annotations?: Record<string, string>; spec?: Record<string, unknown> }): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, ...(o.annotations ? { annotations: o.annotations } : {}) },
    spec: { restartPolicy: o.restartPolicy ?? 'Never', nodeName: o.nodeName ?? 'node-a', containers: o.containers, ...o.spec },
  };
}

/** The usual shape: a main container and one log-shipping sidecar with these env vars. */
export function mainAndSidecar(name: string, sidecarEnv: { name: string; value: string }[] = [SIDECAR], o: Omit<Parameters<typeof jobPod>[1], 'containers'> = {}): Record<string, unknown> {
  return jobPod(name, {
    ...o,
    containers: [
      { name: 'main', image: 'example/job:1' },
      { name: 'log-shipper', image: 'example/fluent-bit:3', env: sidecarEnv, securityContext: { runAsUser: 1000, runAsNonRoot: true } },
    ],
  });
}

/** The product's own test: a container marked by its env vars. */
const isSidecar = (c: ContainerSpec): boolean => sidecarInfo(c as unknown as Container) !== null;

/**
 * Containers marked as sidecars run until stopped; every other container exits with
 * mainExit (per pod name; default 0; 'run': never) a tick after it starts.
 */
export function jobPolicy(o: { mainExit?: (pod: string) => number | 'run'; sigterm?: (pod: string, container: string) => number } & Omit<KubeletPolicy, 'container' | 'sigtermExitCode'> = {}): KubeletPolicy {
  const { mainExit, sigterm, ...rest } = o;
  return {
    ...rest,
    container: (pod, c) => {
      if (isSidecar(c)) return 'run';
      const exit = mainExit?.(pod.metadata.name) ?? 0;
      return exit === 'run' ? 'run' : { exitCode: exit };
    },
    sigtermExitCode: (pod, container) => sigterm?.(pod.metadata.name, container) ?? 0,
  };
}

export interface SidecarWorld {
  server: ApiServer;
  kubelet: SimKubelet;
  clock: TestClock;
  deps: (holder?: string) => EngineDeps;
  /** The pod as the server has it. */
  pod(name: string): Pod;
  /** Events recorded on the pod: "Type Reason", sorted. */
  events(name: string): string[];
  /** ContainerRecreateRequests in the namespace. */
  crrs(): KubeObject[];
  /** Handle a pod event as the relay would deliver it. */
  event(name: string): Promise<HandleResult>;
  /**
   * Kubelet tick, then the pod event it causes, each step a second apart; stops after
   * `steps` or once `until` holds. Returns every result.
   */
  run(name: string, o?: { steps?: number; until?: (p: Pod) => boolean }): Promise<HandleResult[]>;
  /** Kubelet ticks only (events lost, as in a relay gap) until the pod satisfies `until`. */
  tickUntil(name: string, until: (p: Pod) => boolean): void;
  close(): Promise<void>;
}

/** A fake API server with the fixture nodes and these pods, a simulated kubelet, and engine deps running the sidecar controller. */
export async function sidecarWorld(pods: unknown[], o: { policy?: KubeletPolicy; options?: Partial<SidecarOptions>; kubelet?: (server: ApiServer) => SimKubelet; objects?: unknown[] } = {}): Promise<SidecarWorld> {
  const clock = new TestClock();
  const server = grantChecked(await startApiServer({ objects: [...NODES, ...pods, ...(o.objects ?? [])], clock: clock.now, authorization: shippedAuthorization('ephemera-system') }));
  const kubelet = o.kubelet?.(server) ?? new SimKubelet(server, o.policy ?? jobPolicy());
  const controller = sidecarController(o.options ?? {});
  const deps = (holder = 'engine-a'): EngineDeps => ({
    kube: createKube(server.kubeConfig({ token: TOKENS.functions }), { timeoutMs: 5000 }),
    controllers: [controller],
    lock: { namespace: 'ephemera-system', holder, leaseSeconds: 15, skewSeconds: 5 },
    clock: clock.now,
    logger: silentLogger,
  });
  const pod = (name: string): Pod => server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: NS, name }) as unknown as Pod;
  const event = (name: string): Promise<HandleResult> => handle(envelopeFor('Pod', NS, name), deps());
  return {
    server, kubelet, clock, deps, pod, event,
    events: (name) => server.store.list({ apiVersion: 'v1', kind: 'Event', namespace: NS })
      .filter((e) => (e as { involvedObject?: { name?: string } }).involvedObject?.name === name)
      .map((e) => `${String(e.type)} ${String(e.reason)}`).sort(),
    crrs: () => server.store.list({ ...CRR, namespace: NS }),
    async run(name, r = {}) {
      const results: HandleResult[] = [];
      for (let i = 0; i < (r.steps ?? 12); i++) {
        clock.advance(1);
        kubelet.tick();
        results.push(await event(name));
        if (r.until?.(pod(name))) break;
      }
      return results;
    },
    tickUntil(name, until) {
      for (let i = 0; i < 20 && !until(pod(name)); i++) {
        clock.advance(1);
        kubelet.tick();
      }
      if (!until(pod(name))) throw new Error(`pod ${name} never got there: ${JSON.stringify(pod(name).status)}`);
    },
    close: () => server.close(),
  };
}

/** The state of a container of the pod: running, terminated (exit code), waiting or none. */
export function stateOf(pod: Pod, container: string): string {
  const s = [...(pod.status?.containerStatuses ?? []), ...(pod.status?.ephemeralContainerStatuses ?? [])].find((x) => x.name === container);
  if (s?.state?.terminated) return `terminated ${s.state.terminated.exitCode}`;
  if (s?.state?.running) return 'running';
  return s?.state?.waiting ? 'waiting' : 'none';
}

/** Every action the engine applied across results, as "verb kind[/subresource] name". */
export function applied(results: HandleResult[]): string[] {
  return results.flatMap((r) => r.keys.flatMap((k) => k.actions.map((a) => `${a.verb} ${a.kind}${a.subresource ? `/${a.subresource}` : ''} ${a.kind === 'Event' ? String((a.body as { reason?: string }).reason) : a.name}`)));
}

export const terminal = (p: Pod): boolean => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

/** A cluster without OpenKruise: nobody executes ContainerRecreateRequests. */
export class NoDaemon extends SimKubelet {
  protected override executeCrr(): boolean {
    return false;
  }
}

/**
 * A sidecar whose PID 1 has no SIGTERM handler: its signal container's SIGTERM is dropped, as
 * a SIGKILL from inside its process namespace would be (pid_namespaces(7)). A stop from outside
 * (the kubelet's in a terminal pod, kruise-daemon's) still ends it, with SIGKILL after the
 * grace period: give the policy `sigterm: () => 137` for that.
 */
export class DeafSidecars extends SimKubelet {
  protected override onEphemeralStarted(pod: KubeObject, c: ContainerSpec): boolean {
    return super.onEphemeralStarted(pod, c, false);
  }
}

/** A kubelet that ignores ephemeral containers (older than 1.23, the feature gate off): it reports no status for them. */
export class IgnoresEphemeral extends SimKubelet {
  protected override stepEphemeral(): void {
    // never started
  }
}
