// The ephemera processes of a chaos schedule: real OS processes (`ephemera relay --sink
// memory`, leader election off, so each acts on every event), each with its own kubeconfig
// whose token names it in the API server's request log and write history. Kills are SIGKILL;
// a killed slot is restarted later as a new incarnation; every exit is recorded.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProcessExit } from './record.ts';

const CLI = new URL('../../functions/runtime/node/ephemera.ts', import.meta.url).pathname;
// Node's on-disk compile cache halves a process's start-up, and schedules start many processes.
const COMPILE_CACHE = join(tmpdir(), 'ephemera-chaos-compile-cache');
const CRASH_RESTART_MS = 500;

/**
 * Every child still running, in any fleet: killed when the harness exits however it exits
 * (an error thrown from a timer ends it without stop(); review found relays left running
 * under init).
 */
const LIVE = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of LIVE) child.kill('SIGKILL');
});

/** What the fleet needs to start a process. */
export interface FleetOptions {
  /** Where kubeconfigs and logs go. */
  dir: string;
  /** A kubeconfig whose token is the actor name. */
  kubeconfig: (actor: string) => string;
  /** Extra environment (timeouts, lease length, log level). */
  env: Record<string, string>;
  /** More environment for one slot's processes, over `env` (a claim window of its own). */
  envFor?: (slot: number) => Record<string, string>;
}

interface Running {
  actor: string;
  child: ChildProcess;
  killed: boolean;
  exited: Promise<void>;
}

/** Slots of processes; `proc-<slot>.<incarnation>` is each one's actor name. */
export class Fleet {
  readonly exits: ProcessExit[] = [];
  /** When each incarnation was killed or exited (Date.now()), by actor. */
  readonly endedAt = new Map<string, number>();
  private readonly slots = new Map<number, Running>();
  private readonly generations = new Map<number, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly options: FleetOptions;
  private stopping = false;

  constructor(options: FleetOptions) {
    this.options = options;
  }

  /** Starts a new incarnation in a slot; returns its actor name. */
  start(slot: number): string {
    const gen = (this.generations.get(slot) ?? 0) + 1;
    this.generations.set(slot, gen);
    const actor = `proc-${slot}.${gen}`;
    const config = join(this.options.dir, `${actor}.kubeconfig`);
    writeFileSync(config, this.options.kubeconfig(actor));
    const logPath = join(this.options.dir, `${actor}.log`);
    const log = openSync(logPath, 'a');
    const child = spawn(process.execPath, [CLI, 'relay', '--sink', 'memory'], {
      env: { NODE_COMPILE_CACHE: COMPILE_CACHE, ...process.env, ...this.options.env, ...this.options.envFor?.(slot), KUBECONFIG: config, EPHEMERA_RELAY_ID: actor },
      stdio: ['ignore', log, log],
    });
    closeSync(log);
    LIVE.add(child);
    const entry: Running = { actor, child, killed: false, exited: Promise.resolve() };
    entry.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        LIVE.delete(child);
        if (!this.endedAt.has(actor)) this.endedAt.set(actor, Date.now());
        this.exits.push({ name: actor, code, signal, killed: entry.killed, tail: tail(logPath) });
        if (this.slots.get(slot) === entry) this.slots.delete(slot);
        // A crash is a violation, but like a Deployment the slot comes back, so the rest of the schedule still runs.
        if (!entry.killed) this.restartLater(slot, CRASH_RESTART_MS);
        resolve();
      });
    });
    this.slots.set(slot, entry);
    return actor;
  }

  /** The actor running in this slot now, if any. */
  actorIn(slot: number): string | undefined {
    return this.slots.get(slot)?.actor;
  }

  /** The actors running now. */
  actors(): string[] {
    return [...this.slots.values()].map((r) => r.actor);
  }

  /** SIGKILL the process in a slot (if any) and restart the slot after a delay; false when nothing ran there. */
  kill(slot: number, restartAfterMs: number): boolean {
    const r = this.slots.get(slot);
    if (!r) return false;
    r.killed = true;
    this.endedAt.set(r.actor, Date.now());
    r.child.kill('SIGKILL');
    this.restartLater(slot, restartAfterMs);
    return true;
  }

  private restartLater(slot: number, ms: number): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (!this.stopping && !this.slots.has(slot)) this.start(slot);
    }, ms);
    this.timers.add(t);
  }

  /** SIGKILL the process with this actor name (the one that just made a write). */
  killActor(actor: string, restartAfterMs: number): boolean {
    for (const [slot, r] of this.slots) if (r.actor === actor) return this.kill(slot, restartAfterMs);
    return false;
  }

  /** Kills everything (recorded as killed) and waits for the exits. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const t of this.timers) clearTimeout(t);
    const all = [...this.slots.values()];
    for (const r of all) {
      r.killed = true;
      r.child.kill('SIGKILL');
    }
    await Promise.all(all.map((r) => r.exited));
  }
}

/** The log's last error (its first lines and stack top) and last line; else the last few lines. */
function tail(path: string, lines = 6): string[] {
  let all: string[];
  try {
    all = readFileSync(path, 'utf8').trimEnd().split('\n');
  } catch {
    return [];
  }
  const at = all.findLastIndex((l) => /^\w*(Error|Exception)\b/.test(l));
  if (at < 0) return all.slice(-lines);
  // The first frames of our own code say where it happened; a library's frames rarely do.
  const frames = all.slice(at + 1).filter((l) => /^\s+at /.test(l));
  const ours = frames.filter((l) => !l.includes('node_modules') && !l.includes('node:'));
  return [...all.slice(at, at + 2), ...(ours.length ? ours : frames).slice(0, 3)];
}
