// What one chaos schedule leaves behind for the checker: the API server's history of writes,
// the writes it refused, the objects at the end, and how every ephemera process ended.
import type { KubeObject, RejectedWrite, WriteRecord } from '../../functions/cluster/index.ts';

/** How one ephemera process ended. */
export interface ProcessExit {
  /** The process's name in the run ("proc-2#3": the third start of slot 2). */
  name: string;
  code: number | null;
  signal: string | null;
  /** The harness sent SIGKILL (or SIGTERM at the end of the run) to it. */
  killed: boolean;
  /** The last lines of its stderr/stdout, for the report. */
  tail: string[];
}

/** Everything the invariants are checked on. Pure data: a test builds one by hand. */
export interface RunRecord {
  writes: WriteRecord[];
  rejected: RejectedWrite[];
  /** Every object the server holds at the end. */
  final: KubeObject[];
  exits: ProcessExit[];
  /** Every job finished and every sidecar pod ended before the time limit. */
  converged: boolean;
  /** What was still open when the time limit hit (for the message). */
  pending?: string[];
  /** How late after a job's delete a claim or injection planned before it may land (ms; default the processes' lease + skew). */
  lateWriteGraceMs?: number;
  /** Processes that never started watching before the schedule's clock started. */
  notStarted?: string[];
  /** How long the processes were given to start watching (ms; runner.ts STARTUP). */
  startupBoundMs?: number;
  /** The processes' skewSeconds (ms): how long before its Lease read a LIST that stands may have been sent (default 1 s, the processes'). */
  leaseSkewMs?: number;
}

/** How long after a job's delete a process that knew the job must live for its Lease to be expected gone. */
export const UNWATCHED_MS = 3000;

/** The invariants, by name. */
export const INVARIANTS = [
  'converged',
  'injected-once',
  'claimed-first',
  'sealed-final',
  'own-claim-first',
  'claims-carried',
  'parallelism',
  'replicas',
  'targets-only',
  'paused',
  'job-finished',
  'sidecar-pod-ended',
  'sidecar-stopped-after-main',
  'no-unexpected-exit',
  'processes-started',
  'no-422-storm',
  'no-injection-after-delete',
  'deleted-job-gone',
  'no-stale-job-lease',
] as const;
/** One invariant's name. */
export type Invariant = (typeof INVARIANTS)[number];

/** One broken invariant, with a message that names the objects and the history positions. */
export interface Violation {
  invariant: Invariant;
  message: string;
}
