import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRfc3339 } from '../../../functions/runtime/node/parse-time.ts';

test('parseRfc3339: Z or an offset, every field as written; nothing read in the local time zone, nothing rolled over', () => {
  const cases: [string, string][] = [
    ['2026-01-01T00:20:30Z', '2026-01-01T00:20:30.000Z'],
    ['2026-01-01T01:20:30+01:00', '2026-01-01T00:20:30.000Z'],
    ['2025-12-31T19:20:30.5-05:00', '2026-01-01T00:20:30.500Z'],
    ['2024-02-29T23:59:59z', '2024-02-29T23:59:59.000Z'],
    ['2026-01-01T00:20:30', 'must be an RFC 3339 time with Z or an offset, like 2026-01-01T00:20:30Z or 2026-01-01T01:20:30+01:00'],
    ['2026-01-01', 'must be an RFC 3339 time with Z or an offset, like 2026-01-01T00:20:30Z or 2026-01-01T01:20:30+01:00'],
    ['yesterday', 'must be an RFC 3339 time with Z or an offset, like 2026-01-01T00:20:30Z or 2026-01-01T01:20:30+01:00'],
    ['2026-02-30T00:00:00Z', 'names a date or time of day that does not exist'],
    ['2025-02-29T00:00:00Z', 'names a date or time of day that does not exist'],
    ['2026-13-01T00:00:00Z', 'names a date or time of day that does not exist'],
    ['2026-01-01T24:00:00Z', 'names a date or time of day that does not exist'],
    ['2026-01-01T00:60:00Z', 'names a date or time of day that does not exist'],
    ['2026-01-01T00:00:60Z', 'names a date or time of day that does not exist'],
    ['2026-01-01T00:00:00+24:00', 'has an offset that does not exist (+24:00)'],
  ];
  for (const [text, want] of cases) {
    const got = parseRfc3339(text);
    assert.equal(got instanceof Date ? got.toISOString() : got.error, want, text);
  }
});
