#!/usr/bin/env node
// The `ephemera` command: a thin dispatcher; each subcommand lives in its own module and
// exports main(argv) → exit code. Nothing here reads the environment at import time.
const COMMANDS: Record<string, () => Promise<{ main: (argv: string[]) => Promise<number> }>> = {
  invoke: () => import('./invoke.ts'),
  webhook: () => import('./webhook.ts'),
  relay: () => import('../../../relay/cli.ts'),
  start: () => import('./start.ts'),
};

const USAGE = `usage: ephemera <command> [options]

commands:
  invoke   --state FILE [--event FILE] [--now RFC3339] [--output json]
           run the handlers against an in-memory cluster (or --kubeconfig, plan only unless --apply)
  webhook  --listen HOST:PORT [--tls-cert FILE --tls-key FILE]
  relay    [--sink sqs|memory|record:PATH]
  start    relay + in-memory queue + functions + webhook in one process
`;

async function run(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '-h' || name === '--help') {
    process.stdout.write(USAGE);
    return name === undefined ? 2 : 0;
  }
  const load = COMMANDS[name];
  if (!load) {
    process.stderr.write(`ephemera: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  const mod = await load();
  return mod.main(rest);
}

process.exitCode = await run(process.argv.slice(2));
