// selectorMatches walks matchLabels with for…in + hasOwn instead of Object.entries (no array
// per call: the relay matches every pod event against its jobs' selectors). Property: it
// decides what the Object.entries form decides, for any selector and labels off the wire.
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LabelSelector } from '../../functions/api/meta.ts';
import { selectorMatches } from '../../functions/api/selector.ts';

/** The form it replaced, kept as the reference. */
function entriesForm(selector: LabelSelector, labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false;
  return selectorMatches({ matchExpressions: selector.matchExpressions ?? [] }, labels);
}

const key = fc.constantFrom('app', 'tier', '__proto__', 'constructor', 'toString', '0', 'a/b');
const value = fc.constantFrom('web', 'db', '', '1');
const labels = fc.option(fc.dictionary(key, value, { maxKeys: 4 }), { nil: undefined });
const selector = fc.record({
  matchLabels: fc.option(fc.dictionary(key, value, { maxKeys: 3 }), { nil: undefined }),
  matchExpressions: fc.option(fc.array(fc.record({ key, operator: fc.constantFrom('In', 'NotIn', 'Exists', 'DoesNotExist'), values: fc.option(fc.array(value, { maxLength: 2 }), { nil: undefined }) }), { maxLength: 2 }), { nil: undefined }),
}, { requiredKeys: [] });
/** As the relay and the functions get them: parsed JSON (own `__proto__` keys stay data). */
const wire = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));

test('selectorMatches decides what the Object.entries form decides', () => {
  fc.assert(fc.property(selector, labels, (s, l) => {
    const sel = wire(s) as LabelSelector;
    const lab = wire(l);
    assert.equal(selectorMatches(sel, lab), entriesForm(sel, lab));
  }), { numRuns: 5000 });
});
