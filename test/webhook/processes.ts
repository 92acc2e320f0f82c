// Starting and stopping the servers that the contract runs against.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** A TCP port that was free a moment ago. */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/** Poll until `url` answers 200, the process dies, or `attempts` run out. */
export async function waitReady(url: string, child: ChildProcess, output: () => string, attempts = 240): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${output()}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  throw new Error(`server at ${url} never became ready:\n${output()}`);
}

/** Spawn in its own process group, collecting output. */
export function start(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): { child: ChildProcess; output: () => string } {
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  return { child, output: () => out };
}

/** SIGTERM the process group we started (wrangler has a workerd child), wait for exit. */
export async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.pid === undefined) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return child.exitCode;
  }
  return exited;
}
