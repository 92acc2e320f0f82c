// The one esbuild recipe every deployable shares: a single minified ESM file for Node 24.
// Used by the Lambda assets (infra/aws/assets.ts) and the relay image (relay/build.ts).
import { build, type BuildOptions, type Plugin } from 'esbuild';
import { mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Options of bundleNode. */
export interface BundleOptions {
  sourcemap?: boolean;
  /** Packages left as imports, for a runtime that provides them (Lambda's AWS SDK v3). */
  external?: string[];
  /**
   * Dynamic imports become chunks next to `outfile`, loaded (and compiled) only when first
   * used: code a cold start (or a command) does not run costs it nothing.
   */
  splitting?: boolean;
  /** Bundle only zod's English messages (the functions configure no other locale): ~260 KB less to compile. */
  zodEnglishOnly?: boolean;
  /** Leave pino's transports out (the functions log to stdout): thread-stream's ~13 KiB less to compile. */
  noPinoTransports?: boolean;
}

/**
 * zod 4 re-exports every locale as `z.locales`, so importing `z` keeps ~40 languages in a
 * bundle. Resolve zod's locale index to one that has English only (what zod uses by default).
 */
export const zodEnglishOnly: Plugin = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) => {
      const dir = join(args.resolveDir, dirname(args.path));
      return /node_modules\/zod\/v4\/locales$/.test(dir) ? { path: join(dir, 'index.js'), namespace: 'zod-en' } : undefined;
    });
    b.onLoad({ filter: /.*/, namespace: 'zod-en' }, (args) => ({ contents: "export { default as en } from './en.js';", resolveDir: dirname(args.path), loader: 'js' }));
  },
};

/**
 * pino's transports (lib/transport.js: thread-stream, a worker thread per transport) are
 * never used by the functions, which log to stdout: the Lambda bundle takes a stub that
 * throws if one is asked for, so a cold start does not compile them.
 */
const pinoWithoutTransports: Plugin = {
  name: 'pino-without-transports',
  setup(b) {
    b.onResolve({ filter: /^\.\/transport$|^\.\/lib\/transport$/ }, (args) => (/node_modules\/pino(\/lib)?$/.test(args.resolveDir) ? { path: 'pino-transport', namespace: 'pino-stub' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'pino-stub' }, () => ({ contents: "module.exports = function transport () { throw new Error('pino transports are not bundled with the functions: they log to stdout') }", loader: 'js' }));
  },
};

/** The esbuild options for `entry` (relative to the root): exported so tests inspect the very same build. */
export function nodeBuildOptions(entry: string, outfile: string, opts: BundleOptions = {}): BuildOptions {
  return {
    ...(opts.splitting
      ? { entryPoints: { [basename(outfile, '.mjs')]: join(ROOT, entry) }, outdir: dirname(outfile), splitting: true, chunkNames: 'chunks/[name]-[hash]', outExtension: { '.js': '.mjs' } }
      : { entryPoints: [join(ROOT, entry)], outfile }),
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    minify: true,
    sourcemap: opts.sourcemap ? 'linked' : false,
    external: opts.external ?? [],
    plugins: [...(opts.zodEnglishOnly ? [zodEnglishOnly] : []), ...(opts.noPinoTransports ? [pinoWithoutTransports] : [])],
    // Some CommonJS dependencies call require(); give the ESM bundle one.
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    logLevel: 'warning',
  };
}

/** Bundle `entry` (relative to the root) into `outfile`. */
export async function bundleNode(entry: string, outfile: string, opts: BundleOptions = {}): Promise<void> {
  mkdirSync(dirname(outfile), { recursive: true });
  await build(nodeBuildOptions(entry, outfile, opts));
}
