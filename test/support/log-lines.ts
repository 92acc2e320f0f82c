// A logger that keeps every line it is given (level, bindings, fields, message), for tests
// that assert what the functions log: the `alarm` field the AWS stack's metric filters count.
import type { Logger } from '../../functions/engine/logger.ts';

export type LogLine = Record<string, unknown> & { level: 'debug' | 'info' | 'warn' | 'error'; msg?: string };

/** A logger and the lines it was given, in order. */
export function capturedLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const make = (bound: Record<string, unknown>): Logger => {
    const at = (level: LogLine['level']) => (obj: object, msg?: string): void => void lines.push({ ...bound, ...obj, level, ...(msg === undefined ? {} : { msg }) });
    return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: (more) => make({ ...bound, ...more }) };
  };
  return { logger: make({}), lines };
}
