// resource.Quantity's value, as Go compares two of them (apimachinery's ParseQuantity, then
// Cmp, which equality.Semantic uses): "1000m", "1", 1 and "1e0" are one value, and a typed
// client re-encodes each in its canonical form ("1"). Dependency-free: the webhook uses it.

/** container-types.ts QUANTITY's grammar, in parts: sign, whole, fraction, then one suffix. */
const PARTS = /^([+-]?)(\d*)(?:\.(\d*))?(?:([KMGTPE]i)|([numkMGTPE])|[eE]([+-]?\d+))?$/;
const BINARY: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
/** ParseQuantity caps a binary-suffixed amount at the largest int64. */
const MAX_BINARY_NANOS = (2n ** 63n - 1n) * 10n ** 9n;
/** Exponents past this are not worked out (10^n as a BigInt): such a value is compared as written. */
const MAX_EXPONENT = 1000;

/**
 * The quantity in nano units, as ParseQuantity leaves it: rounded up (away from zero) to a
 * whole nano, a binary one capped at the largest int64. Undefined for what is no quantity
 * by that grammar (Go may still take a few such oddities, ".", say: those are then
 * compared as written, which can only call two equal values different, never the reverse).
 */
export function quantityNanos(value: unknown): bigint | undefined {
  // A JSON number reaches Go as its text; JavaScript's shortest form of it is the same value.
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : undefined;
  const m = text === undefined ? null : PARTS.exec(text);
  if (!m) return undefined;
  const [, sign, whole = '', fraction = '', binary, decimal, exponent] = m;
  if (whole === '' && fraction === '') return undefined;
  let e10 = 9 - fraction.length;
  if (decimal !== undefined) e10 += DECIMAL[decimal] ?? 0;
  if (exponent !== undefined) {
    const e = Number(exponent);
    if (Math.abs(e) > MAX_EXPONENT) return undefined;
    e10 += e;
  }
  let n = BigInt(`${whole}${fraction}` || '0') << BigInt(binary === undefined ? 0 : (BINARY[binary] ?? 0));
  if (e10 >= 0) n *= 10n ** BigInt(e10);
  else {
    const d = 10n ** BigInt(-e10);
    n = (n + d - 1n) / d;
  }
  if (binary !== undefined && n > MAX_BINARY_NANOS) n = MAX_BINARY_NANOS;
  return sign === '-' ? -n : n;
}

const NANO = 10n ** 9n;
const DECIMAL_UNITS: readonly (readonly [bigint, string])[] = Object.entries(DECIMAL).concat([['', 0]]).map(([s, e]) => [10n ** BigInt(9 + e), s] as const);
const BINARY_UNITS: readonly (readonly [bigint, string])[] = Object.entries(BINARY).map(([s, e]) => [NANO << BigInt(e), s] as const);

/**
 * What Quantity.String() writes for the value when that is 1 with a suffix or none ("1",
 * "1m", "1k", "1Mi"…), "0" for zero, undefined for any other value (or no quantity).
 * apimachinery's CanonicalizeBytes: the format is the suffix's kind as written; a binary one
 * below 1024 in size, or not whole, is written as a decimal one; an exponent one ("1e3") keeps
 * its exponent, so only its 1 is "1". validateContainerResourceDivisor compares this string.
 */
export function unitQuantityForm(value: unknown): string | undefined {
  const n = quantityNanos(value);
  if (n === undefined) return undefined;
  if (n === 0n) return '0';
  const m = PARTS.exec(typeof value === 'number' ? String(value) : String(value).trim());
  if (m?.[6] !== undefined) return n === NANO ? '1' : undefined;
  const size = n < 0n ? -n : n;
  if (m?.[4] !== undefined && size >= 1024n * NANO && n % NANO === 0n) {
    const unit = BINARY_UNITS.find(([v]) => v === n);
    return unit === undefined ? undefined : `1${unit[1]}`;
  }
  const unit = DECIMAL_UNITS.find(([v]) => v === n);
  return unit === undefined ? undefined : `1${unit[1]}`;
}
