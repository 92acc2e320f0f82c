// `--now`: a time a person typed, read exactly as written or refused.

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/**
 * An RFC 3339 time (https://www.rfc-editor.org/rfc/rfc3339#section-5.6) with `Z` or a
 * ±hh:mm offset, or a message saying what is wrong with it. Without an offset a time would
 * be read in this machine's time zone (TZ changed the answer: review); a date that does not
 * exist (February 30, hour 24) would roll over into another one. Each field must read back
 * unchanged. Leap seconds (second 60) are not representable here and are refused too.
 */
export function parseRfc3339(text: string): Date | { error: string } {
  const m = RFC3339.exec(text);
  if (!m) return { error: 'must be an RFC 3339 time with Z or an offset, like 2026-01-01T00:20:30Z or 2026-01-01T01:20:30+01:00' };
  if (Number(m[10] ?? 0) > 23 || Number(m[11] ?? 0) > 59) return { error: `has an offset that does not exist (${m[9]}${m[10]}:${m[11]})` };
  const offsetMinutes = m[8] ? 0 : (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11]));
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const millis = Math.floor(Number(`0${m[7] ?? ''}`) * 1000);
  // setUTCFullYear, unlike Date.UTC, takes years 0–99 as they are.
  const local = new Date(0);
  local.setUTCFullYear(year, month - 1, day);
  local.setUTCHours(hour, minute, second, millis);
  const readBack = [local.getUTCFullYear(), local.getUTCMonth() + 1, local.getUTCDate(), local.getUTCHours(), local.getUTCMinutes(), local.getUTCSeconds()];
  if (readBack.some((v, i) => v !== [year, month, day, hour, minute, second][i])) return { error: 'names a date or time of day that does not exist' };
  return new Date(local.getTime() - offsetMinutes * 60_000);
}
