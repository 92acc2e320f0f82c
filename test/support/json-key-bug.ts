// V8's JSON.parse misreads some property keys once it has read a key with a backslash in it
// (written `\\` or `\u005c`): after `{"h":[],"x\\":0}`, the second key of `{"h":1,"x\"":2}`
// reads back as `x\`, and a later key with another escape at that place can read back as the
// backslash (nodejs/node#63785, crbug.com/521080746; open, seen here on Node 24.18–24.21 and
// 26.10, not on 20). Values neither poison nor are misread. Property tests that compare two
// parses of the same text (a fast path against JSON.parse) then fail at random through no
// fault of the code under test (CI did, once, on test/kube/list-reuse.test.ts), so on a
// runtime with the bug their generators leave backslashes out of object keys; on a fixed
// runtime they keep them.
import { spawnSync } from 'node:child_process';
import type fc from 'fast-check';

/**
 * True when this runtime's JSON.parse has the key bug. Probed in a fresh process of the same
 * Node: in this one, keys parsed before could hide it (review: after ~1,500 distinct keys the
 * repro no longer shows), and the probe's own poison stays out of the tests' parses.
 */
export const jsonKeyBug: boolean = (() => {
  const probe = String.raw`JSON.parse('{"p":[],"q\\\\":0}'); process.stdout.write(String(Object.keys(JSON.parse('{"p":1,"q\\"":2}'))[1] !== 'q"'));`;
  const r = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`the JSON.parse key-bug probe failed: ${r.stderr}`);
  return r.stdout === 'true';
})();

/** Keys as `keys` makes them, without backslashes where the runtime has the bug. */
export function objectKeys(keys: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return jsonKeyBug ? keys.map((k) => k.replaceAll('\\', '/')) : keys;
}

/** `values` with every object key made by objectKeys' rule, all the way down. */
export function withSafeKeys<T>(values: fc.Arbitrary<T>): fc.Arbitrary<T> {
  return jsonKeyBug ? values.map((v) => safeKeys(v) as T) : values;
}

function safeKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(safeKeys);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k.replaceAll('\\', '/'), safeKeys(x)]));
}
