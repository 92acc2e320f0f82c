import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rfc3339 } from '../../api/meta.ts';
import { SimKubelet, startApiServer, type ApiServer } from '../../cluster/index.ts';

/** What the embedded demo runs: the proposal's Story 1 (4 helloworld pods, 2 of them broken). */
export function demoObjects(now: Date): unknown[] {
  const at = (s: number): string => rfc3339(new Date(now.getTime() - 60_000 + s * 1000));
  const pod = (name: string, s: number, healthy: boolean): unknown => ({
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace: 'default', creationTimestamp: at(s), labels: { app: 'helloworld', healthy: String(healthy) } },
    spec: { nodeName: 'demo-node', containers: [{ name: 'helloworld', image: 'reg.example.com/helloworld:v1.1' }] },
    status: { phase: 'Running', startTime: at(s + 1), containerStatuses: [{ name: 'helloworld', ready: true, restartCount: 0, state: { running: { startedAt: at(s + 2) } } }] },
  });
  // What a cluster has before anything is applied, as `kubectl get ns` and `get nodes` show it (review).
  const namespace = (name: string): unknown => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, creationTimestamp: at(-60) }, status: { phase: 'Active' } });
  return [
    ...['default', 'kube-system', 'ephemera-system', 'ephemera-locks'].map(namespace),
    { apiVersion: 'v1', kind: 'Node', metadata: { name: 'demo-node', creationTimestamp: at(-60) }, status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: at(0), lastTransitionTime: at(-60) }] } },
    pod('helloworld-865cd8865b-nl8lq', 0, true),
    pod('helloworld-865cd8865b-xmtrv', 1, true),
    pod('helloworld-no-work-6cc445bc7-d967c', 10, false),
    pod('helloworld-no-work-6cc445bc7-t286v', 11, false),
    {
      apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob',
      metadata: { name: 'hello-world-ephemeral-job', namespace: 'default', creationTimestamp: at(30) },
      spec: {
        selector: { matchLabels: { app: 'helloworld' } },
        replicas: 4,
        parallelism: 1,
        template: { ephemeralContainers: [{ name: 'helloworld-ec', image: 'busybox:latest', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'helloworld', command: ['pidof', 'helloworld'] }] },
      },
    },
  ];
}

/** An in-memory cluster with a kubelet: `pidof helloworld` succeeds only in healthy pods. */
export async function startDemoCluster(tickMs: number): Promise<{ server: ApiServer; kubelet: SimKubelet }> {
  const server = await startApiServer({ objects: demoObjects(new Date()), admission: true });
  const kubelet = new SimKubelet(server, {
    ephemeral: (pod) => ({ exitCode: (pod.metadata as { labels?: Record<string, string> }).labels?.healthy === 'true' ? 0 : 1 }),
  });
  kubelet.run(tickMs);
  return { server, kubelet };
}

/** The running demo: its cluster, a narration of its jobs, and a stop. */
export interface Demo {
  server: ApiServer;
  /**
   * Writes a kubeconfig for kubectl into `dir` and prints every EphemeralJob's row whenever
   * it changes. The caller owns `dir` (start.ts removes it however the process stops).
   */
  narrate(dir: string): void;
  /** Stops the narration, the kubelet and the cluster. */
  stop(): Promise<void>;
}

/** Start the demo cluster; `narrate` when the rest of the process is up. */
export async function startDemo(tickMs: number): Promise<Demo> {
  const { server, kubelet } = await startDemoCluster(tickMs);
  let stopNarration = (): void => {};
  return {
    server,
    narrate: (dir) => {
      const path = join(dir, 'kubeconfig');
      writeFileSync(path, server.kubeconfigYaml(), { mode: 0o600 });
      stopNarration = narrate(path, () => server.store.list({ kind: 'EphemeralJob' }) as unknown as JobRow[]);
    },
    stop: async () => {
      stopNarration();
      kubelet.stop();
      await server.close();
    },
  };
}

type JobRow = { metadata: { namespace?: string; name: string }; status?: Record<string, unknown> };

const COLUMNS = 'NAMESPACE  NAME                        STATUS    MATCH  SUCCEED  FAILED  RUNNING  WAITING';

function row(job: JobRow): string {
  const s = job.status ?? {};
  const n = (k: string): string => String(s[k] ?? 0);
  return `${(job.metadata.namespace ?? '').padEnd(11)}${job.metadata.name.padEnd(28)}${String(s.phase ?? '-').padEnd(10)}${n('match').padEnd(7)}${n('succeeded').padEnd(9)}${n('failed').padEnd(8)}${n('running').padEnd(9)}${n('waiting')}`;
}

/** Every job's row on stderr (beside the JSON logs) whenever it changes, like `kubectl get ejob -A -w`. */
function narrate(kubeconfig: string, jobs: () => JobRow[]): () => void {
  const say = (line: string): boolean => process.stderr.write(`${line}\n`);
  say('ephemera: embedded demo (proposal Story 1: 4 pods, parallelism 1); following every EphemeralJob in it.');
  say(`ephemera: look inside with: kubectl --kubeconfig ${kubeconfig} get ejob,pods,events`);
  say(COLUMNS);
  const last = new Map<string, string>();
  let finished = false;
  const timer = setInterval(() => {
    const all = jobs();
    for (const job of all) {
      const line = row(job);
      const key = `${job.metadata.namespace}/${job.metadata.name}`;
      if (last.get(key) !== line) say(line);
      last.set(key, line);
    }
    if (!finished && all.length > 0 && all.every((j) => j.status?.completionTime)) {
      finished = true;
      say('ephemera: every demo job has finished; still serving (webhook, metrics, kubectl). Ctrl-C to stop.');
    }
  }, 100);
  timer.unref();
  return () => clearInterval(timer);
}
