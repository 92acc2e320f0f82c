import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { acquire, leaseName, LeaseSightings, type LockConfig } from '../../functions/engine/lock.ts';
import { apiError, ScriptedKube } from '../support/scripted-kube.ts';

const cfg: LockConfig = { namespace: 'ephemera-system', holder: 'me', leaseSeconds: 15, skewSeconds: 5 };
const KEY = 'EphemeralJob/default/hello';

function leaseHeldBy(holder: string, renewTime: string) {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: leaseName('ejob', KEY), namespace: cfg.namespace, resourceVersion: '7' },
    spec: { holderIdentity: holder, leaseDurationSeconds: 15, renewTime },
  };
}

function withLease(lease: object): ScriptedKube {
  const kube = new ScriptedKube();
  kube.objects.set(`Lease/${cfg.namespace}/${leaseName('ejob', KEY)}`, lease);
  return kube;
}

describe('Lease lock', () => {
  test('lease names are valid DNS subdomains and distinct per key', () => {
    const a = leaseName('ejob', 'EphemeralJob/Default/Hello_World');
    assert.match(a, /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
    assert.notEqual(leaseName('ejob', 'EphemeralJob/a/b-c'), leaseName('ejob', 'EphemeralJob/a-b/c'));
    assert.ok(leaseName('ejob', `EphemeralJob/ns/${'x'.repeat(300)}`).length <= 253);
  });

  test('no lease: created with our identity and the server time', async () => {
    const kube = new ScriptedKube();
    const got = await acquire(kube, cfg, { controller: 'ejob', key: KEY });
    assert.ok('held' in got);
    const create = kube.performed[0];
    assert.equal(create?.verb, 'create');
    const spec = (create?.body as { spec: { holderIdentity: string; renewTime: string } }).spec;
    assert.equal(spec.holderIdentity, 'me');
    assert.equal(spec.renewTime, '2026-01-01T00:00:00.000000Z', 'a MicroTime: six digits, as kube-apiserver parses it');
  });

  test('held by someone else and unexpired by the server clock: busy, retry later', async () => {
    const kube = withLease(leaseHeldBy('other', '2025-12-31T23:59:50Z')); // 10 s ago
    const got = await acquire(kube, cfg, { controller: 'ejob', key: KEY });
    assert.ok('busy' in got);
    assert.equal(got.holder, 'other');
    assert.equal(got.retryAfterSeconds, 10); // 15 + 5 skew - 10
    assert.equal(kube.performed.length, 0);
  });

  test('skew allowance: just past the duration is still busy', async () => {
    const kube = withLease(leaseHeldBy('other', '2025-12-31T23:59:42Z')); // 18 s ago < 20
    assert.ok('busy' in (await acquire(kube, cfg, { controller: 'ejob', key: KEY })));
  });

  test('expired by the server clock: taken over with a resourceVersion-fenced update', async () => {
    const kube = withLease(leaseHeldBy('other', '2025-12-31T23:59:00Z'));
    const got = await acquire(kube, cfg, { controller: 'ejob', key: KEY });
    assert.ok('held' in got);
    const update = kube.performed[0];
    assert.equal(update?.verb, 'update');
    assert.equal((update?.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion, '7');
  });

  test('renewing (acquiring again as the same holder) keeps acquireTime and leaseTransitions, moves renewTime, and is resourceVersion-fenced', async () => {
    const kube = withLease({ ...leaseHeldBy('relay-a', '2026-01-01T00:00:00Z'), spec: { holderIdentity: 'relay-a', leaseDurationSeconds: 15, acquireTime: '2025-12-31T23:00:00Z', renewTime: '2026-01-01T00:00:00Z', leaseTransitions: 3 } });
    kube.now = new Date('2026-01-01T00:00:09Z');
    const got = await acquire(kube, { ...cfg, holder: 'relay-a' }, { controller: 'ejob', key: KEY });
    assert.ok('held' in got);
    const renew = kube.performed[0];
    assert.equal(renew?.verb, 'update');
    const body = renew?.body as { metadata: { resourceVersion?: string }; spec: Record<string, unknown> };
    assert.deepEqual(
      { acquireTime: body.spec.acquireTime, renewTime: body.spec.renewTime, leaseTransitions: body.spec.leaseTransitions },
      { acquireTime: '2025-12-31T23:00:00.000000Z', renewTime: '2026-01-01T00:00:09.000000Z', leaseTransitions: 3 },
    );
    assert.equal(body.metadata.resourceVersion, '7', 'fenced');
  });

  test('taking over an expired lease starts a new holding: acquireTime now, one more transition', async () => {
    const kube = withLease({ ...leaseHeldBy('other', '2025-12-31T23:59:00Z'), spec: { holderIdentity: 'other', leaseDurationSeconds: 15, acquireTime: '2025-12-31T23:00:00Z', renewTime: '2025-12-31T23:59:00Z', leaseTransitions: 3 } });
    const got = await acquire(kube, cfg, { controller: 'ejob', key: KEY });
    assert.ok('held' in got);
    const body = kube.performed[0]?.body as { spec: Record<string, unknown> };
    assert.deepEqual({ acquireTime: body.spec.acquireTime, leaseTransitions: body.spec.leaseTransitions }, { acquireTime: '2026-01-01T00:00:00.000000Z', leaseTransitions: 4 });
  });

  test('a released lease (empty holder) is taken at once', async () => {
    const kube = withLease(leaseHeldBy('', '2026-01-01T00:00:00Z'));
    assert.ok('held' in (await acquire(kube, cfg, { controller: 'ejob', key: KEY })));
  });

  test('losing the takeover race (409) or the create race (AlreadyExists) is busy, not an error', async () => {
    const racing = withLease(leaseHeldBy('other', '2025-12-31T23:00:00Z')).answer(apiError(409, 'Conflict'));
    assert.ok('busy' in (await acquire(racing, cfg, { controller: 'ejob', key: KEY })));
    const creating = new ScriptedKube().answer(apiError(409, 'AlreadyExists'));
    assert.ok('busy' in (await acquire(creating, cfg, { controller: 'ejob', key: KEY })));
  });

  test('release deletes only our version of the lease', async () => {
    const kube = new ScriptedKube();
    kube.answer({ metadata: { name: 'x', resourceVersion: '42' } });
    const got = await acquire(kube, cfg, { controller: 'ejob', key: KEY });
    assert.ok('held' in got);
    await got.held.release();
    const del = kube.performed.at(-1);
    assert.equal(del?.verb, 'delete');
    assert.deepEqual(del?.body, { preconditions: { resourceVersion: '42' } });
  });

  test('release after a renewal whose answer was lost (409 at our version): the Lease, still ours at a newer version, is deleted at that one', async () => {
    const kube = new ScriptedKube();
    kube.answer({ metadata: { name: 'x', resourceVersion: '42' } });
    const got = await acquire(kube, cfg, { controller: 'ejob', key: KEY });
    assert.ok('held' in got);
    kube.objects.set(`Lease/${cfg.namespace}/${leaseName('ejob', KEY)}`, { ...leaseHeldBy('me', '2026-01-01T00:00:00.000000Z'), metadata: { name: leaseName('ejob', KEY), namespace: cfg.namespace, resourceVersion: '43' } });
    kube.answer(apiError(409, 'Conflict'));
    await got.held.release();
    assert.deepEqual(kube.performed.slice(-2).map((a) => [a.verb, a.body]), [['delete', { preconditions: { resourceVersion: '42' } }], ['delete', { preconditions: { resourceVersion: '43' } }]]);
  });

  test('release leaves a Lease someone else took over alone', async () => {
    const kube = new ScriptedKube();
    kube.answer({ metadata: { name: 'x', resourceVersion: '42' } });
    const got = await acquire(kube, cfg, { controller: 'ejob', key: KEY });
    assert.ok('held' in got);
    kube.objects.set(`Lease/${cfg.namespace}/${leaseName('ejob', KEY)}`, leaseHeldBy('someone-else', '2026-01-01T00:00:00.000000Z'));
    kube.answer(apiError(409, 'Conflict'));
    await got.held.release();
    assert.deepEqual(kube.performed.filter((a) => a.verb === 'delete').map((a) => a.body), [{ preconditions: { resourceVersion: '42' } }], 'one delete, at our version, refused');
  });

  test('with sightings: a renewTime ahead of the server\'s clock holds the Lease only until the same version has been seen for lease + skew of local time (client-go\'s observedTime; review95 F5)', async () => {
    const kube = withLease(leaseHeldBy('other', '2026-01-01T01:00:00Z')); // an hour ahead of the server's 00:00:00
    let local = 0;
    const sightings = new LeaseSightings(() => local);
    const key = { controller: 'ejob', key: KEY, sightings };
    const first = await acquire(kube, cfg, key);
    assert.deepEqual(first, { busy: true, holder: 'other', retryAfterSeconds: 20 }, 'first seen now: 15 + 5 s to go, not 3620');
    local += 19_999;
    assert.ok('busy' in (await acquire(kube, cfg, key)));
    // A new version (the holder renewed) starts the count again.
    kube.objects.set(`Lease/${cfg.namespace}/${leaseName('ejob', KEY)}`, { ...leaseHeldBy('other', '2026-01-01T01:00:05Z'), metadata: { name: leaseName('ejob', KEY), namespace: cfg.namespace, resourceVersion: '8' } });
    local += 1;
    assert.deepEqual(await acquire(kube, cfg, key), { busy: true, holder: 'other', retryAfterSeconds: 20 });
    local += 20_000;
    assert.ok('held' in (await acquire(kube, cfg, key)), 'unchanged for 20 s: taken over');
    assert.equal((kube.performed[0]?.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion, '8', 'fenced by the version seen');
    // Without sightings, the server's clock alone: an hour.
    assert.deepEqual(await acquire(withLease(leaseHeldBy('other', '2026-01-01T01:00:00Z')), cfg, { controller: 'ejob', key: KEY }), { busy: true, holder: 'other', retryAfterSeconds: 3620 });
  });

  test('API failures other than races propagate (the queue retries)', async () => {
    const kube = new ScriptedKube().answer(apiError(500));
    await assert.rejects(acquire(kube, cfg, { controller: 'ejob', key: KEY }), /HTTP 500/);
  });
});
