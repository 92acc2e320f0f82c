// The commands' flags: node:util parseArgs, and a flag given twice refused.
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * `parseArgs` (strict, no positionals) that refuses a flag given twice unless it is declared
 * `multiple`: parseArgs keeps the last, so `invoke --state a.yaml --state b.yaml` replayed
 * b.yaml alone and said nothing (review77 M1). Throws parseArgs's own errors and this one,
 * each a message for a usage line.
 */
export function parseFlags<O extends Options>(argv: string[], options: O): ReturnType<typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: false }>>['values'] {
  const parsed = parseArgs({ args: argv, options, strict: true, allowPositionals: false, tokens: true });
  const seen = new Set<string>();
  for (const t of parsed.tokens) {
    if (t.kind !== 'option' || options[t.name]?.multiple) continue;
    if (seen.has(t.name)) throw new Error(`--${t.name} is given more than once; give it once`);
    seen.add(t.name);
  }
  return parsed.values;
}
