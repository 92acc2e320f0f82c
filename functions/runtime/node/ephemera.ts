#!/usr/bin/env node
// The `ephemera` command: a thin dispatcher; each subcommand lives in its own module and
// exports main(argv) → exit code. Nothing here reads the environment at import time.
// Whatever error reaches it is printed as one line a person can act on (the stack only
// with LOG_LEVEL=debug), never a raw trace.
import { explain } from './explain-error.ts';

const COMMANDS: Record<string, () => Promise<{ main: (argv: string[]) => Promise<number> }>> = {
  invoke: () => import('./invoke.ts'),
  webhook: () => import('./webhook.ts'),
  relay: () => import('../../../relay/cli.ts'),
  start: () => import('./start.ts'),
};

const USAGE = `usage: ephemera <command> [options]     (ephemera <command> --help for its options)

commands:
  start    relay + in-memory queue + functions + webhook in one process, against the
           cluster of --kubeconfig FILE, KUBECONFIG or the pod, else an embedded one
  invoke   --state FILE [--event FILE] [--now RFC3339] [--output json]
           run the handlers against an in-memory cluster (or --kubeconfig, plan only unless --apply)
  webhook  [--listen HOST:PORT] [--tls-cert FILE --tls-key FILE] [--log-level LEVEL]
  relay    [--sink sqs|memory|record:PATH]

  -h, --help     this help
  -v, --version  the version
`;

// The relay's command line is the relay's own (relay/cli.ts); its help is kept here so
// `ephemera relay --help` answers without connecting to anything.
const RELAY_USAGE = `usage: ephemera relay [--sink sqs|memory|record:PATH]

Watches Pods and EphemeralJobs of the cluster of KUBECONFIG, else ~/.kube/config, else the
in-cluster service account, and forwards the events that matter to a queue (with --sink
memory it also writes there; its first log line names the server and context).

  --sink sqs           send to EPHEMERA_SQS_QUEUE_URL (the default when it is set)
  --sink memory        run the functions in this process (the default otherwise)
  --sink record:PATH   append one event per line, for ephemera invoke --event PATH
  -h, --help           this help

Variables (a bad value stops the relay, naming it; see the README's relay section):
  EPHEMERA_SQS_QUEUE_URL                  queue for --sink sqs
  AWS_REGION, EPHEMERA_SQS_ENDPOINT       us-east-1; endpoint override (emulators)
  EPHEMERA_RELAY_NAMESPACES               namespaces to watch, comma-separated (all)
  EPHEMERA_RELAY_RESYNC_SECONDS           600    periodic resync from the watch cache
  EPHEMERA_RELAY_COALESCE_MS              1000   per-object coalescing window
  EPHEMERA_RELAY_HOLD_SECONDS             20     how long a pod change that only starts ephemeral containers
                                                 may wait for the pod's next one (lease + skew; 0: never)
  EPHEMERA_RELAY_BUFFER_MAX               50000  capacity of the delivery queue
  EPHEMERA_RELAY_SEND_TIMEOUT_SECONDS     10     deadline of one send (SQS batch, in-process handling)
  EPHEMERA_RELAY_DELIVERY_GRACE_SECONDS   120    /readyz fails while the sink takes nothing longer
  EPHEMERA_RELAY_LISTEN                   :8080  /healthz, /readyz, /metrics (:PORT: every interface, IPv6 and IPv4)
  EPHEMERA_RELAY_LEADER_ELECTION          true   only the Lease holder forwards (false with --sink record:PATH:
                                                 a recording relay never takes production's Lease)
  EPHEMERA_RELAY_LEASE_NAMESPACE          ephemera-system  namespace of the leader Lease
  EPHEMERA_LOCK_NAMESPACE                 ephemera-locks  the functions' claims Leases, swept at each resync
  EPHEMERA_LEASE_SECONDS, EPHEMERA_LEASE_SKEW_SECONDS  15, 5  leader Lease duration, clock allowance
  EPHEMERA_RELAY_ID                       hostname  this replica's identity
  EPHEMERA_RELAY_CLUSTER                  this cluster's name, stamped on every envelope
  LOG_LEVEL                               info
With --sink memory, also the functions' variables: EPHEMERA_API_TIMEOUT_MS, EPHEMERA_SIDECAR_STRATEGY, EPHEMERA_SIGNAL_IMAGE,
EPHEMERA_CONTROLLERS (see the README's Configuration).
`;

/** Imported, not read from a path: the image's bundle (/app/ephemera.mjs) has no package.json beside it; esbuild inlines it. */
async function version(): Promise<string> {
  const { default: pkg } = await import('../../../package.json', { with: { type: 'json' } });
  return `ephemera ${pkg.version} (node ${process.versions.node})\n`;
}

const wantsHelp = (argv: string[]): boolean => argv.includes('--help') || argv.includes('-h');

async function run(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  // Asked for, the usage is the answer (stdout, 0); without a command it is a usage error (stderr, 2), as for an unknown one.
  if (name === undefined) {
    process.stderr.write(USAGE);
    return 2;
  }
  if (name === '-h' || name === '--help' || name === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (name === '-v' || name === '--version' || name === 'version') {
    process.stdout.write(await version());
    return 0;
  }
  const load = COMMANDS[name];
  if (!load) {
    process.stderr.write(`ephemera: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  if (name === 'relay' && wantsHelp(rest)) {
    process.stdout.write(RELAY_USAGE);
    return 0;
  }
  const mod = await load();
  return mod.main(rest);
}

/** Any error that escapes a command: one line, exit 1. */
function fail(command: string, err: unknown): void {
  const debug = process.env.LOG_LEVEL === 'debug' || process.env.LOG_LEVEL === 'trace';
  process.stderr.write(`ephemera ${command}: ${explain(err)}${debug && err instanceof Error ? `\n${err.stack}` : ''}\n`);
  process.exit(1);
}

const argv = process.argv.slice(2);
const command = argv[0] ?? '';
process.on('unhandledRejection', (err) => fail(command, err));
process.on('uncaughtException', (err) => fail(command, err));
try {
  process.exitCode = await run(argv);
} catch (err) {
  fail(command, err);
}
