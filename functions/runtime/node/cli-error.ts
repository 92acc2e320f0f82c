// What the CLI prints when it stops: one line that says what went wrong and what to do.

/**
 * A failure the person at the terminal can act on. The message is one line naming the fix;
 * `exitCode` is 2 for bad usage or input, 1 for a world that is not as expected.
 */
export class CliError extends Error {
  readonly exitCode: 1 | 2;

  constructor(message: string, exitCode: 1 | 2 = 1, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/** The innermost `code` (ECONNREFUSED, ENOTFOUND, …) or message of a network failure. */
export function rootCause(err: unknown): string {
  let cur: unknown = err;
  let last = err instanceof Error ? err.message : String(err);
  for (let i = 0; i < 6 && cur instanceof Error; i++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string' && code) last = cur.message.includes(code) ? cur.message : `${code} ${cur.message}`;
    else if (cur.message) last = cur.message;
    cur = cur.cause;
  }
  return last.split('\n')[0] ?? last;
}
