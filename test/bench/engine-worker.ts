// One function instance in a thread of its own (`wholeJob(..., { isolated: true })` in
// ejob-cost.bench.ts): its own V8 heap and JIT, as a Lambda's process has, so the embedded
// API server's and the harness's work and garbage, which share the bench's thread, are not
// paid inside the handler's timing. The API server answers it over loopback HTTP as before.
// The thread loads what a Lambda loads: the lean client (https-kube.ts) without
// @kubernetes/client-node, whose ~26 MB of heap a Lambda never holds made each of the
// thread's full GCs dearer than production's (the r26 p99 breakdown).
import { parentPort, workerData } from 'node:worker_threads';
import type { Envelope } from '../../functions/api/envelope.ts';
import { handle } from '../../functions/engine/engine.ts';
import { bearerAuth } from '../../functions/kube/auth.ts';
import { createHttpsKube } from '../../functions/kube/https-kube.ts';
import { engineDepsOn, handledCounts, kubeOptions } from '../support/engine-deps.ts';

/** What the bench gives the thread: the embedded server's URL (plain HTTP) and the token it knows as the functions', the lock holder, whether to ask for gzip. */
export interface InstanceData { server: string; token: string; holder: string; compression: boolean }
/** One event, and the bench's clock at it. */
export interface InstanceRequest { envelope: Envelope; clockMs: number }
/** handle()'s wall time in this thread, and what the bench counts of its result. */
export interface InstanceAnswer { ms: number; conflicts: number; requeue: boolean; error?: string }

const data = workerData as InstanceData;
let clockMs = 0;
const deps = engineDepsOn(createHttpsKube({ server: data.server }, { ...kubeOptions(data), auth: bearerAuth(data.token) }), { holder: data.holder, clock: () => new Date(clockMs), compression: data.compression });

const port = parentPort;
if (!port) throw new Error('engine-worker.ts runs as a worker thread');
port.on('message', (m: InstanceRequest) => {
  clockMs = m.clockMs;
  const started = performance.now();
  handle(m.envelope, deps).then(
    (r) => port.postMessage({ ms: performance.now() - started, ...handledCounts(r) } satisfies InstanceAnswer),
    (err: unknown) => port.postMessage({ ms: performance.now() - started, conflicts: 0, requeue: false, error: String(err) } satisfies InstanceAnswer),
  );
});
