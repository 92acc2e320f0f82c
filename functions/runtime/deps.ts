import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import type { FunctionsConfig } from '../config.ts';
import type { Controller } from '../engine/controller.ts';
import { ClockWatch } from '../engine/clock-watch.ts';
import type { EngineDeps } from '../engine/engine.ts';
import { lazyController } from '../engine/lazy-controller.ts';
import type { Logger } from '../engine/logger.ts';
import { ejobController } from '../ejob/controller.ts';
import { UnknownClusterError, type ClusterConnection, type ClusterConnections } from '../kube/credentials.ts';
import { createKube } from '../kube/client.ts';
import { createHttpsKube } from '../kube/https-kube.ts';
import { ListReuse } from '../kube/list-reuse.ts';
import type { Kube } from '../kube/kube.ts';
import { sidecarOptionsFromConfig } from '../sidecar/config.ts';
import { route as sidecarRoute } from '../sidecar/route.ts';

/**
 * The controllers the configuration enables. The SidecarTerminator's observe and plan load on
 * its first due pod (sidecar/route.ts routes every event): a cold start for an EphemeralJob
 * event does not compile them. Its options are validated here, at start.
 */
export function controllersFor(config: FunctionsConfig): Controller<unknown>[] {
  const wanted = new Set(config.EPHEMERA_CONTROLLERS.split(','));
  const out: Controller<unknown>[] = [];
  if (wanted.has('ejob')) out.push(ejobController as Controller<unknown>);
  if (wanted.has('sidecar')) {
    const options = sidecarOptionsFromConfig(config);
    const load = async (): Promise<Controller<unknown>> => (await import('../sidecar/controller.ts')).sidecarController(options) as Controller<unknown>;
    out.push(lazyController('sidecar', async (event) => sidecarRoute(event), load));
  }
  return out;
}

/**
 * Engine dependencies for one process. The lock holder identity is unique per handler
 * invocation (`withFreshHolder`), so two concurrent handlers in one process never share it.
 */
export function createEngineDeps(config: FunctionsConfig, kc: KubeConfig, logger: Logger, kube: Kube = createKube(kc, { timeoutMs: config.EPHEMERA_API_TIMEOUT_MS })): EngineDeps {
  return engineDeps(config, logger, kube);
}

function engineDeps(config: FunctionsConfig, logger: Logger, kube: Kube): EngineDeps {
  return {
    kube,
    controllers: controllersFor(config),
    lock: { namespace: config.EPHEMERA_LOCK_NAMESPACE, holder: holderId(), leaseSeconds: config.EPHEMERA_LEASE_SECONDS, skewSeconds: config.EPHEMERA_LEASE_SKEW_SECONDS },
    clock: () => new Date(),
    logger,
    clockWatch: new ClockWatch(),
  };
}

/** The same deps with a new lock holder identity (one per concurrent invocation). */
export function withFreshHolder(deps: EngineDeps): EngineDeps {
  return { ...deps, lock: { ...deps.lock, holder: holderId() } };
}

function holderId(): string {
  return `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
}

/**
 * Engine deps per cluster, for a deployment that serves several: each cluster's Kube is
 * made once (endpoint, CA, credentials from its source) and every call gets a fresh lock
 * holder. An envelope without a cluster belongs to `defaultCluster`, or to the only one.
 * Every cluster's client keeps its LIST items in the one `listReuse`: one memory budget
 * whatever the number of clusters (uids are random UUIDs: no two clusters' objects share one).
 */
export function clusterEngines(config: FunctionsConfig, connections: ClusterConnections, logger: Logger, opts: { defaultCluster?: string | undefined; listReuse?: ListReuse } = {}): (cluster: string | undefined) => Promise<EngineDeps> {
  const { defaultCluster, listReuse = new ListReuse() } = opts;
  // One engine per connection: a connection made again (credentials.ts refresh) gets a client of its own.
  const made = new WeakMap<ClusterConnection, EngineDeps>();
  const fallback = defaultCluster ?? (connections.names.length === 1 ? connections.names[0] : undefined);
  return async (cluster) => {
    const name = cluster ?? fallback;
    if (name === undefined) throw new UnknownClusterError(`the envelope names no cluster and this deployment serves several (${connections.names.join(', ')}): set EPHEMERA_RELAY_CLUSTER on the relay or EPHEMERA_DEFAULT_CLUSTER here`);
    const c = await connections.connect(name);
    let deps = made.get(c);
    if (!deps) {
      deps = engineDeps(config, logger.child({ cluster: name }), createHttpsKube(c.endpoint, { timeoutMs: config.EPHEMERA_API_TIMEOUT_MS, listReuse, ...(c.auth ? { auth: c.auth } : {}) }));
      made.set(c, deps);
    }
    return withFreshHolder(deps);
  };
}
