// The Lambda's logger: the very lines `createLogger` (pino, runtime/logger.ts) writes, without
// pino. pino and what it requires (sonic-boom, thread-stream, safe-stable-stringify, node:assert,
// node:worker_threads) are ~60 KiB that every cold start compiled and ran for the few calls the
// functions make (Logger: four levels and child). A test compares the two loggers' lines.
// Lines are written synchronously to fd 1, so none is left in a buffer when Lambda freezes
// the sandbox after the handler returns.
import { writeSync } from 'node:fs';
import type { FunctionsConfig } from '../../config.ts';
import type { Logger } from '../../engine/logger.ts';

const LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity } as const;

/** Write a line whole: a short write goes on with the rest, a full non-blocking pipe is waited on (what pino's sonic-boom does). */
export function writeLine(fd: number, line: string): void {
  let buf = Buffer.from(line);
  while (buf.length > 0) {
    try {
      buf = buf.subarray(writeSync(fd, buf));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EPIPE') return; // the reader is gone: pino stops logging too
      if (code !== 'EAGAIN') throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}

/** JSON of a value as pino writes it: functions, undefined and symbols dropped, a non-finite number null, a cycle "[Circular]". */
function valueJson(value: unknown): string | undefined {
  switch (typeof value) {
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'bigint':
      return String(value);
    default:
      try {
        return JSON.stringify(value);
      } catch {
        return JSON.stringify(value, circularSafe());
      }
  }
}

function circularSafe(): (this: unknown, key: string, value: unknown) => unknown {
  const ancestors: unknown[] = [];
  return function (this: unknown, _key: string, value: unknown): unknown {
    if (typeof value === 'bigint') return Number(value);
    if (typeof value !== 'object' || value === null) return value;
    while (ancestors.length > 0 && ancestors.at(-1) !== this) ancestors.pop();
    if (ancestors.includes(value)) return '[Circular]';
    ancestors.push(value);
    return value;
  };
}

type ErrorLike = Error & { cause?: unknown; errors?: unknown };
const isErrorLike = (e: unknown): e is ErrorLike => !!e && typeof (e as { message?: unknown }).message === 'string';
function causeOf(err: ErrorLike): ErrorLike | undefined {
  const cause = typeof err.cause === 'function' ? (err.cause as () => unknown)() : err.cause;
  return isErrorLike(cause) ? cause : undefined;
}
function stackWithCauses(err: ErrorLike, seen = new Set<unknown>()): string {
  const stack = err.stack ?? '';
  if (seen.has(err)) return `${stack}\ncauses have become circular...`;
  const cause = causeOf(err);
  if (!cause) return stack;
  seen.add(err);
  return `${stack}\ncaused by: ${stackWithCauses(cause, seen)}`;
}
function messageWithCauses(err: ErrorLike, seen = new Set<unknown>(), skip = false): string {
  const message = skip ? '' : err.message;
  if (seen.has(err)) return `${message}: ...`;
  const cause = causeOf(err);
  if (!cause) return message;
  seen.add(err);
  const skipIfVErrorStyleCause = typeof err.cause === 'function';
  return message + (skipIfVErrorStyleCause ? '' : ': ') + messageWithCauses(cause, seen, skipIfVErrorStyleCause);
}

/** pino's `err` serializer (pino-std-serializers): type, message and stack with their causes, then the error's own fields. */
function serializeErr(err: unknown, seen = new Set<unknown>()): unknown {
  if (!isErrorLike(err)) return err;
  seen.add(err);
  const out: Record<string, unknown> = {
    type: Object.prototype.toString.call(err.constructor) === '[object Function]' ? err.constructor.name : err.name,
    message: messageWithCauses(err),
    stack: stackWithCauses(err),
  };
  if (Array.isArray(err.errors)) out.aggregateErrors = err.errors.map((e) => serializeErr(e, seen));
  for (const key in err) {
    if (out[key] !== undefined) continue;
    const val = (err as unknown as Record<string, unknown>)[key];
    if (!isErrorLike(val)) out[key] = val;
    else if (key !== 'cause' && !seen.has(val)) out[key] = serializeErr(val, seen);
  }
  seen.delete(err);
  return out;
}

/** `,"key":value` for each own field as pino writes it (its `err` serialized), in the object's order. */
function fields(obj: object): string {
  let out = '';
  for (const key in obj) {
    if (!Object.prototype.hasOwnProperty.call(obj, key)) continue;
    let value = (obj as Record<string, unknown>)[key];
    if (key === 'err') value = serializeErr(value);
    const json = valueJson(value);
    if (json !== undefined) out += `,${JSON.stringify(key)}:${json}`;
  }
  return out;
}

/**
 * A logger writing pino's JSON lines (`{"level":30,"time":…,"app":"ephemera",…,"msg":…}`)
 * with `createLogger`'s options: base `{ app: 'ephemera' }`, no pid or hostname.
 */
export function createJsonLogger(level: FunctionsConfig['LOG_LEVEL'], write: (line: string) => void = (line) => writeLine(1, line)): Logger {
  const threshold = LEVELS[level];
  const make = (bindings: string): Logger => {
    const at = (n: number) => (obj: object, msg?: string): void => {
      if (n < threshold) return;
      let o = obj as Record<string, unknown>;
      let m: unknown = msg;
      if (obj instanceof Error) {
        o = { err: obj };
        m ??= obj.message;
      } else if (m === undefined && o.msg === undefined && o.err) {
        m = (o.err as { message?: unknown }).message;
      }
      const message = m === undefined ? '' : ((json) => (json === undefined ? '' : `,"msg":${json}`))(valueJson(m));
      write(`{"level":${n},"time":${Date.now()}${bindings}${fields(o)}${message}}\n`);
    };
    return { debug: at(LEVELS.debug), info: at(LEVELS.info), warn: at(LEVELS.warn), error: at(LEVELS.error), child: (more) => make(bindings + fields(more)) };
  };
  return make(fields({ app: 'ephemera' }));
}
