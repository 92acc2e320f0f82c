// `ephemera webhook --listen HOST:PORT [--tls-cert FILE --tls-key FILE]`.
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { parseFlags } from './args.ts';
import { pino } from 'pino';
import { formatListen, parseListen } from '../../config.ts';
import { startWebhookServer } from './webhook-server.ts';

const USAGE = `usage: ephemera webhook [--listen HOST:PORT] [--tls-cert FILE --tls-key FILE] [--log-level LEVEL]

Serves the EphemeralJob validating webhook (POST /validate-apps-kruise-io-v1alpha1-ephemeraljob,
GET /healthz). Plain HTTP unless both --tls-cert and --tls-key are given (PEM files, re-read
when they change). Default --listen 127.0.0.1:8443.
`;

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** Run the webhook server until SIGINT/SIGTERM; returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  let values;
  try {
    values = parseFlags(argv, {
      listen: { type: 'string', default: '127.0.0.1:8443' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'log-level': { type: 'string', default: 'info' },
      help: { type: 'boolean', short: 'h' },
    });
  } catch (err) {
    return usageError((err as Error).message);
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const cert = values['tls-cert'];
  const key = values['tls-key'];
  if ((cert === undefined) !== (key === undefined)) return usageError('--tls-cert and --tls-key go together');
  if (cert === '' || key === '') return usageError('--tls-cert and --tls-key each need a file');
  const level = values['log-level'];
  if (!LOG_LEVELS.includes(level)) return usageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}`);
  const address = parseListen(values.listen);
  if (!address) return usageError(`--listen must be HOST:PORT, [IPv6]:PORT or :PORT (every interface, e.g. :8443), got "${values.listen}"`);
  const bad = cert && key ? tlsProblem(cert, key) : undefined;
  if (bad) return usageError(bad);
  const logger = pino({ level, base: { app: 'ephemera', component: 'webhook' } });
  return serveUntilSignal({ ...address, ...(cert && key ? { tls: { cert, key } } : {}), logger });
}

async function serveUntilSignal(opts: Parameters<typeof startWebhookServer>[0]): Promise<number> {
  let running;
  try {
    running = await startWebhookServer(opts);
  } catch (err) {
    const code = (err as { code?: string }).code;
    const why = code === 'EADDRINUSE' ? 'is already in use' : `cannot be used (${code ?? (err as Error).message})`;
    const fix = code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' ? 'pass --listen with a free HOST:PORT' : 'check --tls-cert and --tls-key';
    process.stderr.write(`ephemera webhook: ${formatListen(opts)} ${why}; ${fix}\n`);
    return 1;
  }
  opts.logger.info({ url: running.url }, 'listening');
  const server = running;
  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      opts.logger.info({ signal }, 'shutting down');
      server.close().then(resolve, resolve);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return 0;
}

/**
 * Why the TLS files cannot serve, naming the flag and file, or undefined: checked before
 * listening, so a missing file or one that is not PEM is not blamed on the address (review).
 */
function tlsProblem(cert: string, key: string): string | undefined {
  const files: Record<string, Buffer> = {};
  for (const [flag, path] of [['--tls-cert', cert], ['--tls-key', key]] as const) {
    try {
      files[flag] = readFileSync(path);
    } catch (err) {
      return `${flag} ${path} cannot be read (${(err as { code?: string }).code ?? (err as Error).message})`;
    }
  }
  try {
    createSecureContext({ cert: files['--tls-cert'], key: files['--tls-key'] });
  } catch (err) {
    return `--tls-cert ${cert} and --tls-key ${key} are not a PEM certificate and its private key (${(err as { code?: string }).code ?? (err as Error).message})`;
  }
  return undefined;
}

function usageError(message: string): number {
  process.stderr.write(`ephemera webhook: ${message}\n\n${USAGE}`);
  return 2;
}
