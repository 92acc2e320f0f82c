import type { Envelope } from '../../functions/api/envelope.ts';
import { envelopeOf, type Message } from '../../relay/envelope.ts';
import { silentLogger } from '../../functions/engine/logger.ts';
import { startApiServer, type ApiServer } from '../../functions/cluster/index.ts';
import { grantChecked, shippedAuthorization, TOKENS } from './shipped-rbac.ts';
import { startRelay, type Relay, type RelayOptions } from '../../relay/relay.ts';
import type { SendOutcome, Sink } from '../../relay/sinks/sink.ts';

/**
 * A sink that records what it acknowledges, and can be made to fail (all, or some
 * subjects), or to hang until released, as a queue endpoint that never answers.
 */
export class CollectingSink implements Sink {
  readonly name = 'collect';
  readonly got: Envelope[] = [];
  /** Envelopes handed to send, acknowledged or not. */
  offered = 0;
  failing = false;
  /** Keys = subjects ("Pod/default/web-1") whose entries fail while the others go through. */
  readonly failSubjects = new Set<string>();
  private hanging: (() => void)[] | undefined;

  async send(messages: Message[]): Promise<SendOutcome[]> {
    this.offered += messages.length;
    if (this.hanging) await new Promise<void>((r) => this.hanging?.push(r));
    if (this.failing) return messages.map(() => ({ ok: false, error: 'queue unreachable' }));
    return messages.map((m) => {
      if (this.failSubjects.has(m.key)) return { ok: false, error: 'entry refused for now' };
      this.got.push(envelopeOf(m));
      return { ok: true };
    });
  }

  /** From now on, send() does not return until release(). */
  hang(): void {
    this.hanging ??= [];
  }

  release(): void {
    const waiting = this.hanging ?? [];
    this.hanging = undefined;
    for (const r of waiting) r();
  }

  subjects(): string[] {
    return this.got.map((e) => `${e.data.event} ${e.subject}`);
  }

  clear(): void {
    this.got.length = 0;
  }
}

/** Short backoffs for tests (the loops' production defaults wait up to 30 s). */
export const FAST_BACKOFF = { minMs: 20, maxMs: 200 };

export async function relayWorld(objects: unknown[], overrides: Partial<RelayOptions> = {}): Promise<{ server: ApiServer; relay: Relay; sink: CollectingSink; close(): Promise<void> }> {
  // The relay as deployed: its manifest's RBAC enforced.
  const server = grantChecked(await startApiServer({ objects, bookmarkIntervalMs: 200, authorization: shippedAuthorization() }));
  const sink = new CollectingSink();
  const relay = await startRelay({
    kubeConfig: server.kubeConfig({ token: TOKENS.relay }), sink, namespaces: [], relayId: 'test', coalesceMs: 20, resyncSeconds: 3600, bufferMax: 1000, logger: silentLogger, backoff: FAST_BACKOFF, ...overrides,
  });
  return { server, relay, sink, close: async () => { sink.release(); await relay.stop(); await server.close(); } };
}

/** Poll until `check` passes or the deadline (not a timing assertion: a bound on waiting). */
export async function eventually(check: () => void | Promise<void>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > end) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

export function pod(name: string, labels: Record<string, string>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace: 'default', labels },
    spec: { containers: [{ name: 'main', image: 'nginx' }], ...extra },
    status: { phase: 'Running', containerStatuses: [{ name: 'main', state: { running: {} } }] },
  };
}

export function job(name: string, selector: Record<string, string>): Record<string, unknown> {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob',
    metadata: { name, namespace: 'default' },
    spec: { selector: { matchLabels: selector }, template: { ephemeralContainers: [{ name: 'ec', image: 'busybox' }] } },
  };
}
