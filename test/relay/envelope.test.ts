// The relay builds an envelope's JSON text at send time with the snapshot's text spliced in
// (relay/envelope.ts, messageFor). Property: that text is exactly JSON.stringify of the
// envelope object with the snapshot parsed (envelopeFor), whatever the names, ids and
// snapshot; and what the relay sends passes the envelope schema.
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Envelope, EVENT_TYPES, WATCHED_KINDS } from '../../functions/api/envelope.ts';
import { envelopeFor, envelopeOf, idSequence, messageFor, queuedFrom, type Queued } from '../../relay/envelope.ts';

const text = fc.oneof(fc.string({ maxLength: 8 }), fc.string({ unit: 'grapheme', maxLength: 4 }), fc.constantFrom('"', '\\', '}}', '\n', '\u2028'));
const queued = (name: fc.Arbitrary<string>): fc.Arbitrary<Queued> => fc.record({
  kind: fc.constantFrom(...WATCHED_KINDS),
  event: fc.constantFrom(...EVENT_TYPES),
  namespace: name,
  name,
  uid: fc.option(text, { nil: undefined }),
  resourceVersion: fc.option(text, { nil: undefined }),
  at: fc.integer({ min: 0, max: 4_102_444_800_000 }),
}, { requiredKeys: ['kind', 'event', 'namespace', 'name', 'at'] });
const origin = fc.record({ relayId: text, cluster: fc.option(fc.constantFrom('prod-1', 'a.b', ''), { nil: undefined }), nextId: fc.option(text.map((id) => () => id), { nil: undefined }) });
const snapshot = fc.option(fc.dictionary(text, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }), { nil: undefined });

test('the spliced text is JSON.stringify of the envelope object, byte for byte', () => {
  fc.assert(fc.property(queued(text), origin, snapshot, (q, from, snap) => {
    const m = messageFor(q, from, snap === undefined ? undefined : JSON.stringify(snap));
    assert.equal(m.body, JSON.stringify(envelopeFor(q, from, snap, m.id)));
    assert.equal(m.key, `${q.kind}/${q.namespace}/${q.name}`);
    assert.equal(m.kind, q.kind);
  }), { numRuns: 2000 });
});

test('a relay\'s envelope ids are unique', () => {
  const a = idSequence();
  const b = idSequence();
  const ids = new Set(Array.from({ length: 1000 }, (_, i) => (i % 2 === 0 ? a() : b())));
  assert.equal(ids.size, 1000);
});

test('what the relay sends passes the envelope schema, and a requeued envelope comes back as the same event', () => {
  fc.assert(fc.property(queued(fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,19}[a-z0-9])?$/)), origin, snapshot, (q, from, snap) => {
    const m = messageFor(q, { ...from, nextId: idSequence() }, snap === undefined ? undefined : JSON.stringify(snap));
    const e = Envelope.parse(envelopeOf(m));
    const back = queuedFrom(e, q.at);
    const fields = (x: Queued): unknown => JSON.parse(JSON.stringify({ ...x, snapshot: undefined }));
    assert.deepEqual(fields(back), fields(q));
    // Only a deleted pod keeps its snapshot in the queue; a live one is read from the cache when sent.
    assert.equal(back.snapshot !== undefined, q.kind === 'Pod' && q.event === 'DELETED' && snap !== undefined);
  }), { numRuns: 500 });
});
