// The Lambda's logger writes the lines pino writes for createLogger's options (the alarms'
// metric filters and the log bytes of the cost model read those lines), without pino in
// the bundle: every call below goes to both, and the lines must be equal but for the time.
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { pino } from 'pino';
import type { FunctionsConfig } from '../../../functions/config.ts';
import type { Logger } from '../../../functions/engine/logger.ts';
import { createJsonLogger, writeLine } from '../../../functions/runtime/lambda/json-logger.ts';

function both(level: FunctionsConfig['LOG_LEVEL'], calls: (log: Logger) => void): { pino: string[]; ours: string[] } {
  const pinoLines: string[] = [];
  const out = new Writable({ write(chunk, _enc, done) { pinoLines.push(String(chunk)); done(); } });
  calls(pino({ level, base: { app: 'ephemera' } }, out));
  const ours: string[] = [];
  calls(createJsonLogger(level, (line) => ours.push(line)));
  const untimed = (l: string): string => l.replace(/,"time":\d+/, ',"time":0');
  return { pino: pinoLines.map(untimed), ours: ours.map(untimed) };
}

class ApiError extends Error {
  status = 503;
  reason = 'ServiceUnavailable';
  inner = new TypeError('socket hang up');
}

test('the lines are pino\'s: fields, values, messages, children and errors', () => {
  const cause = new Error('connect ECONNREFUSED', { cause: new RangeError('deep') });
  const inner = new Error('inner');
  const vErrorStyle = Object.assign(new Error('outer'), { cause: () => inner });
  const circularCause = new Error('a');
  (circularCause as { cause?: unknown }).cause = circularCause;
  // Made once: both loggers must see the same stacks.
  const [api, many, whole] = [new ApiError('throttled'), new AggregateError([new Error('one'), 'two'], 'many'), new Error('thrown whole')];
  const r = both('debug', (log) => {
    log.info({ a: 1, s: 'quote " backslash \\ newline \n tab \t', u: undefined, f: () => 1, n: NaN, inf: -Infinity, d: new Date(0), b: false, nil: null }, 'hello');
    log.info({ nested: { x: [1, undefined, () => 1, NaN], y: { z: 'é ✓ 😀' } }, 'key "quoted"\n': 1, '': 2 });
    log.warn({ err: 'a message string', alarm: 'ephemera-refused' }, 'refused');
    log.warn({ err: api });
    log.error({ err: cause, what: 'x' }, 'failed');
    log.error({ err: vErrorStyle });
    log.error({ err: circularCause });
    log.error({ err: many });
    log.error(whole);
    log.error(whole, 'with a message');
    log.info({ msg: 'inside', other: 1 });
    log.info({ msg: 'inside' }, 'and outside');
    log.info({}, '');
    log.info({});
    log.debug({ big: 12n }, '%s is not formatted');
    const child = log.child({ cluster: 'prod', gone: undefined, fn: () => 1 });
    child.info({ key: 'EphemeralJob/default/j' }, 'reconciled');
    child.child({ holder: 'h/1' }).warn({ cluster: 'again' }, 'twice');
  });
  assert.equal(r.ours.length, 17);
  assert.deepEqual(r.ours, r.pino);
});

test('levels: below the logger\'s level nothing is written; silent writes nothing', () => {
  for (const level of ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const) {
    const r = both(level, (log) => {
      log.debug({ n: 1 }, 'd');
      log.info({ n: 2 }, 'i');
      log.warn({ n: 3 }, 'w');
      log.error({ n: 4 }, 'e');
      log.child({ c: 1 }).error({ n: 5 }, 'e');
    });
    assert.deepEqual(r.ours, r.pino, level);
  }
});

test('an object with a cycle is still a line, the cycle written as "[Circular]" (pino: the same, keys sorted)', () => {
  const o: Record<string, unknown> = { name: 'a' };
  o.self = o;
  const lines: string[] = [];
  createJsonLogger('info', (l) => lines.push(l)).info({ o }, 'cycle');
  assert.deepEqual(JSON.parse(lines[0]!).o, { name: 'a', self: '[Circular]' });
});

test('writeLine writes the whole line to the descriptor', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ephemera-json-logger-'));
  try {
    const file = join(dir, 'out');
    const fd = openSync(file, 'w');
    const long = `${'x'.repeat(200_000)}\n`;
    writeLine(fd, '{"a":"é"}\n');
    writeLine(fd, long);
    closeSync(fd);
    assert.equal(readFileSync(file, 'utf8'), `{"a":"é"}\n${long}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
