import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { WatchEvent } from '../../functions/api/envelope.ts';
import { formatZodIssues } from '../../functions/api/field-path.ts';

const issues = (v: unknown): string => {
  const r = WatchEvent.safeParse(v);
  return r.success ? 'ok' : formatZodIssues(r.error.issues, '');
};

describe('WatchEvent: a raw watch event as the API server sends it', () => {
  test('accepts what kubectl get --raw \'…?watch=1&allowWatchBookmarks=true\' shows, BOOKMARK and ERROR included', () => {
    const cases: [string, unknown][] = [
      ['a change', { type: 'MODIFIED', object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' } } }],
      ['RESYNC (an object a list found)', { type: 'RESYNC', object: { metadata: { name: 'p' } } }],
      ['a BOOKMARK: only a resourceVersion', { type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '53' } } }],
      ['the initial-events-end BOOKMARK', { type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '12345', annotations: { 'k8s.io/initial-events-end': 'true' } } } }],
      ['an ERROR: a metav1.Status', { type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'too old resource version: 1 (5)', reason: 'Expired', code: 410 } }],
    ];
    for (const [what, v] of cases) assert.equal(issues(v), 'ok', what);
  });

  test('refuses what names nothing, saying where', () => {
    const cases: [unknown, string][] = [
      [{ type: 'ADDED', object: { kind: 'Pod', metadata: {} } }, 'object.metadata.name: Invalid input: expected string, received undefined'],
      [{ type: 'BOOKMARK', object: { kind: 'Pod', metadata: {} } }, 'object.metadata.resourceVersion: Invalid input: expected string, received undefined'],
      [{ type: 'ERROR', object: 5 }, 'object: Invalid input: expected object, received number'],
    ];
    for (const [v, message] of cases) assert.equal(issues(v), message);
    assert.match(issues({ type: 'SOMETHING', object: {} }), /^type: .*'ADDED' \| 'MODIFIED' \| 'DELETED' \| 'RESYNC' \| 'BOOKMARK' \| 'ERROR'/);
  });
});
