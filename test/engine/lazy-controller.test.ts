// A lazily loaded controller (runtime/deps.ts's SidecarTerminator): routing never loads it,
// the first key does, once; a load that failed is tried again on the next key.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Envelope } from '../../functions/api/envelope.ts';
import type { Controller } from '../../functions/engine/controller.ts';
import { lazyController } from '../../functions/engine/lazy-controller.ts';
import type { Kube } from '../../functions/kube/kube.ts';

const kube = {} as Kube;
const event = {} as Envelope;
const real: Controller<string> = {
  name: 'real',
  route: () => Promise.reject(new Error('the lazy controller routes with its own route')),
  observe: async (key) => `observed ${key}`,
  plan: (observed) => ({ actions: [], notes: [observed] }),
};

test('route does not load the controller; the first key loads it, once, for observe and plan', async () => {
  let loads = 0;
  const c = lazyController('sidecar', async () => ({ keys: ['k1'] }), async () => (loads++, real));
  assert.deepEqual(await c.route(event, kube), { keys: ['k1'] });
  assert.equal(loads, 0);
  assert.throws(() => c.plan('x', new Date()), /the sidecar controller planned a key it has not observed/);
  const [a, b] = await Promise.all([c.observe('k1', kube), c.observe('k2', kube)]);
  assert.deepEqual([a, b, loads], ['observed k1', 'observed k2', 1]);
  assert.deepEqual(c.plan(a!, new Date()), { actions: [], notes: ['observed k1'] });
  await c.observe('k3', kube);
  assert.equal(loads, 1);
});

test('a load that failed is tried again on the next key', async () => {
  let loads = 0;
  const c = lazyController('sidecar', async () => ({ keys: [] }), async () => {
    loads++;
    if (loads === 1) throw new Error('chunk unreadable');
    return real;
  });
  await assert.rejects(c.observe('k1', kube), /chunk unreadable/);
  assert.equal(await c.observe('k1', kube), 'observed k1');
  assert.equal(loads, 2);
});
