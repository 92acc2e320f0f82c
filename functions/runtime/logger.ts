import { pino } from 'pino';
import type { FunctionsConfig } from '../config.ts';
import type { Logger } from '../engine/logger.ts';

/** JSON logs to stdout (or stderr when stdout carries a command's output). */
export function createLogger(level: FunctionsConfig['LOG_LEVEL'], destination: 1 | 2 = 1): Logger {
  return pino({ level, base: { app: 'ephemera' } }, pino.destination(destination));
}
