import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { normalizeImageRef, sameImage } from '../../functions/sidecar/image-ref.ts';

const DIGEST = 'sha256:' + 'a'.repeat(64);

describe('normalizeImageRef: Docker\'s rules, as the kubelet reports status.image', () => {
  const cases: [string, string][] = [
    ['busybox', 'docker.io/library/busybox:latest'],
    ['busybox:1.36', 'docker.io/library/busybox:1.36'],
    ['example/exit:1', 'docker.io/example/exit:1'],
    ['example/team/exit', 'docker.io/example/team/exit:latest'],
    ['docker.io/busybox', 'docker.io/library/busybox:latest'],
    ['index.docker.io/library/busybox:1', 'docker.io/library/busybox:1'],
    ['docker.io/library/busybox:latest', 'docker.io/library/busybox:latest'],
    ['registry.local/exit:1', 'registry.local/exit:1'],
    ['registry.local/exit', 'registry.local/exit:latest'],
    ['localhost/exit', 'localhost/exit:latest'],
    ['localhost:5000/exit', 'localhost:5000/exit:latest'],
    ['localhost:5000/team/exit:2', 'localhost:5000/team/exit:2'],
    ['Registry/exit:1', 'Registry/exit:1'],
    ['quay.io/exit', 'quay.io/exit:latest'],
    [`busybox@${DIGEST}`, `docker.io/library/busybox@${DIGEST}`],
    [`busybox:1.36@${DIGEST}`, `docker.io/library/busybox:1.36@${DIGEST}`],
    [`registry.local:5000/exit@${DIGEST}`, `registry.local:5000/exit@${DIGEST}`],
  ];
  for (const [ref, normal] of cases) {
    test(`${ref} → ${normal}`, () => assert.equal(normalizeImageRef(ref), normal));
  }
});

describe('sameImage', () => {
  test('equal once normalised', () => {
    assert.ok(sameImage('example/exit:1', 'docker.io/example/exit:1'));
    assert.ok(sameImage('busybox', 'docker.io/library/busybox:latest'));
  });
  test('a different tag, registry or repository is another image', () => {
    assert.ok(!sameImage('example/exit:1', 'docker.io/example/exit:2'));
    assert.ok(!sameImage('example/exit:1', 'registry.local/example/exit:1'));
    assert.ok(!sameImage('busybox', 'docker.io/example/busybox:latest'));
  });
  test('an absent image is never the same', () => {
    assert.ok(!sameImage(undefined, 'busybox'));
    assert.ok(!sameImage('busybox', undefined));
  });
});
