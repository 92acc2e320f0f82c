// One EphemeralJob engine instance's deps against a cluster: the one recipe the tests'
// worlds (ejob-world.ts) and the bench's instance in a thread of its own
// (test/bench/engine-worker.ts) share.
import type { KubeConfig } from '@kubernetes/client-node';
import type { EngineDeps, HandleResult } from '../../functions/engine/engine.ts';
import type { Kube } from '../../functions/kube/kube.ts';
import { silentLogger } from '../../functions/engine/logger.ts';
import { ejobController } from '../../functions/ejob/controller.ts';
import { createKube } from '../../functions/kube/client.ts';

export interface InstanceOptions {
  holder: string;
  clock: () => Date;
  leaseSeconds?: number;
  skewSeconds?: number;
  monotonic?: () => number;
  /** Ask for gzip (default: as the kubeconfig says). */
  compression?: boolean;
  /** Where the instance keeps its Leases (default ephemera-system). */
  lockNamespace?: string;
}

/** The deps of one instance holding Leases in ephemera-system (or `lockNamespace`) as `holder`. */
export function engineDeps(kc: KubeConfig, o: InstanceOptions): EngineDeps {
  return engineDepsOn(createKube(kc, kubeOptions(o)), o);
}

/** The client options every instance here uses: a 5 s request timeout, gzip as asked. */
export const kubeOptions = (o: { compression?: boolean }): { timeoutMs: number; compression?: boolean } => ({ timeoutMs: 5000, ...(o.compression !== undefined ? { compression: o.compression } : {}) });

/** The same deps over a client already made (the bench's worker makes its own without client-node, as a Lambda does). */
export function engineDepsOn(kube: Kube, o: InstanceOptions): EngineDeps {
  return {
    kube,
    controllers: [ejobController],
    lock: { namespace: o.lockNamespace ?? 'ephemera-system', holder: o.holder, leaseSeconds: o.leaseSeconds ?? 15, skewSeconds: o.skewSeconds ?? 5 },
    clock: o.clock,
    logger: silentLogger,
    ...(o.monotonic ? { monotonic: o.monotonic } : {}),
  };
}

/** What the bench counts of a handled event: conflicts (re-planned out) and whether it asked to look again. */
export function handledCounts(r: HandleResult): { conflicts: number; requeue: boolean } {
  return { conflicts: r.keys.filter((k) => k.outcome === 'conflict').length, requeue: r.requeueAfterSeconds !== null };
}
