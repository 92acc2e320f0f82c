/**
 * The exports of a CommonJS package loaded with `import()`, both ways it runs: Node gives
 * the named exports and `default` (module.exports); an esbuild chunk of a split bundle
 * gives only `default`. Used for code loaded lazily to keep it out of the cold start.
 */
export async function cjsExports<T extends object>(loading: Promise<T>): Promise<T> {
  const ns = (await loading) as T & { default?: unknown };
  return ns.default !== null && typeof ns.default === 'object' ? (ns.default as T) : ns;
}
