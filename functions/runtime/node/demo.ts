import { rfc3339 } from '../../api/meta.ts';
import { SimKubelet, startApiServer, type ApiServer } from '../../cluster/index.ts';

/** What the embedded demo runs: the proposal's Story 1 (4 helloworld pods, 2 of them broken). */
export function demoObjects(now: Date): unknown[] {
  const at = (s: number): string => rfc3339(new Date(now.getTime() - 60_000 + s * 1000));
  const pod = (name: string, s: number, healthy: boolean): unknown => ({
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace: 'default', creationTimestamp: at(s), labels: { app: 'helloworld', healthy: String(healthy) } },
    spec: { nodeName: 'demo-node', containers: [{ name: 'helloworld', image: 'reg.example.com/helloworld:v1.1' }] },
    status: { phase: 'Running', containerStatuses: [{ name: 'helloworld', ready: true, restartCount: 0, state: { running: { startedAt: at(s + 2) } } }] },
  });
  return [
    { apiVersion: 'v1', kind: 'Node', metadata: { name: 'demo-node' } },
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
  const server = await startApiServer({ objects: demoObjects(new Date()) });
  const kubelet = new SimKubelet(server, {
    ephemeral: (pod) => ({ exitCode: (pod.metadata as { labels?: Record<string, string> }).labels?.healthy === 'true' ? 0 : 1 }),
  });
  kubelet.run(tickMs);
  return { server, kubelet };
}
