// The relay names its cluster on every envelope (EPHEMERA_RELAY_CLUSTER), so one function
// deployment behind one queue can tell a fleet's events apart.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Envelope } from '../../functions/api/envelope.ts';
import { eventually, job, pod, relayWorld } from '../support/relay-world.ts';

test('every envelope carries the relay\'s cluster name and still passes the envelope schema', async () => {
  const w = await relayWorld([job('j', { app: 'web' })], { cluster: 'prod-eu' });
  try {
    w.server.store.put(pod('web-1', { app: 'web' }));
    await eventually(async () => {
      await w.relay.flush();
      assert.ok(w.sink.got.length >= 2);
    });
    for (const e of w.sink.got) {
      assert.equal(e.cluster, 'prod-eu');
      assert.equal(Envelope.parse(JSON.parse(JSON.stringify(e))).cluster, 'prod-eu');
    }
  } finally {
    await w.close();
  }
});

test('without a cluster name the envelope has no cluster field (single-cluster deployments)', async () => {
  const w = await relayWorld([job('j', { app: 'web' })]);
  try {
    await eventually(async () => {
      await w.relay.flush();
      assert.ok(w.sink.got.length >= 1);
    });
    assert.ok(w.sink.got.every((e) => !('cluster' in e)));
  } finally {
    await w.close();
  }
});
