import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ALARM_REFUSED, applyPlan, GROUP_IN_FLIGHT, MAX_ASKED_WAIT_MS } from '../../functions/engine/apply.ts';
import { landingMarginMs } from '../../functions/engine/lock.ts';
import { silentLogger, type Logger } from '../../functions/engine/logger.ts';
import type { Action } from '../../functions/engine/plan.ts';
import { KubeError } from '../../functions/kube/errors.ts';
import type { PerformOptions } from '../../functions/kube/kube.ts';
import { statusError } from '../../functions/kube/status-error.ts';
import { apiError, ScriptedKube } from '../support/scripted-kube.ts';

const patch: Action = { verb: 'patch', apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'p', patchType: 'merge', body: {}, reason: 'test' };
const inject: Action = { ...patch, subresource: 'ephemeralcontainers', patchType: 'strategic', alreadyExists: 'look-again' };
const event: Action = { verb: 'create', apiVersion: 'v1', kind: 'Event', namespace: 'ns', name: 'e', body: {}, alreadyExists: 'done', reason: 'event' };
const del: Action = { verb: 'delete', apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'ns', name: 'j', reason: 'ttl' };
const deps = (kube: ScriptedKube) => ({ kube, logger: silentLogger, minTimeoutMs: 1 });

describe('applyPlan', () => {
  test('retries transient failures (429, 5xx, network) and then applies', async () => {
    const kube = new ScriptedKube().answer(apiError(429), apiError(503), apiError(0, 'NetworkError'));
    const r = await applyPlan([patch], deps(kube));
    assert.equal(kube.performed.length, 4);
    assert.deepEqual(r.applied, [patch]);
    assert.equal(r.replan, false);
  });

  test('a 429 asking to wait (API Priority and Fairness: Retry-After 1) is sent again after the wait, not within the backoff', async () => {
    const kube = new ScriptedKube().answer(new KubeError({ status: 429, reason: 'TooManyRequests', message: 'Too many requests, please try again later.', retryAfterSeconds: 1 }));
    const at: number[] = [];
    const perform = kube.perform.bind(kube);
    kube.perform = (a) => (at.push(performance.now()), perform(a));
    const r = await applyPlan([patch], deps(kube));
    assert.deepEqual(r.applied, [patch]);
    const gap = (at[1] ?? NaN) - (at[0] ?? NaN);
    assert.ok(gap >= 998, `the second attempt came ${gap.toFixed(1)} ms after the first`);
  });

  test(`a server asking to wait longer than ${MAX_ASKED_WAIT_MS} ms is not waited for in place: the error, with its wait, goes to the queue`, async () => {
    const kube = new ScriptedKube().answer(new KubeError({ status: 429, reason: 'TooManyRequests', message: 'slow down', retryAfterSeconds: 30 }));
    await assert.rejects(applyPlan([patch], deps(kube)), (err: unknown) => err instanceof KubeError && err.retryAfterSeconds === 30);
    assert.equal(kube.performed.length, 1);
  });

  test(`the server's waits are spent from one budget of ${MAX_ASKED_WAIT_MS} ms per write: past it the write goes to the queue, with no wait after its last attempt`, async () => {
    const busy = (): KubeError => new KubeError({ status: 429, reason: 'TooManyRequests', message: 'Too many requests, please try again later.', retryAfterSeconds: 1 });
    const kube = new ScriptedKube().answer(...Array.from({ length: 5 }, busy));
    const at: number[] = [];
    const perform = kube.perform.bind(kube);
    kube.perform = (a) => (at.push(performance.now()), perform(a));
    const started = performance.now();
    await assert.rejects(applyPlan([patch], deps(kube)), (err: unknown) => err instanceof KubeError && err.retryAfterSeconds === 1);
    assert.equal(kube.performed.length, 3, 'two waits of 1 s spent the budget; the third refusal went to the queue at once');
    assert.ok(performance.now() - (at.at(-1) ?? started) < 500, 'no wait after the attempt that gave up');
  });

  test('throws when transient failures persist, so the queue redelivers', async () => {
    const kube = new ScriptedKube().answer(...Array.from({ length: 10 }, () => apiError(500)));
    await assert.rejects(applyPlan([patch], { ...deps(kube), retries: 2 }), /HTTP 500/);
    assert.equal(kube.performed.length, 3);
  });

  test('a best-effort action whose transient failures persist is dropped, and the run goes on to the next group', async () => {
    const warning: Action = { ...event, group: 'told', bestEffort: true };
    const kube = new ScriptedKube().answer(...Array.from({ length: 3 }, () => apiError(503)));
    const r = await applyPlan([warning, patch], { ...deps(kube), retries: 2 });
    assert.deepEqual(r.dropped, [warning]);
    assert.deepEqual(r.applied, [patch], 'the write after it was sent');
    assert.equal(kube.performed.length, 4);
    // Only transient failures: a refusal is still a refusal, a conflict still re-plans.
    const refused = await applyPlan([warning, patch], deps(new ScriptedKube().answer(apiError(403, 'Forbidden'))));
    assert.deepEqual([refused.dropped, refused.refused.map((x) => x.action), refused.applied], [[], [warning], [patch]]);
  });

  test('a 409 conflict stops the run and asks for a re-plan; later actions are not sent', async () => {
    const kube = new ScriptedKube().answer(apiError(409, 'Conflict'));
    const r = await applyPlan([patch, event], deps(kube));
    assert.equal(r.replan, true);
    assert.equal(kube.performed.length, 1);
    assert.deepEqual(r.applied, []);
  });

  test("a JSON patch whose test op failed (422 'testing value … failed') asks for a re-plan; another 422 is refused", async () => {
    const fenced: Action = { verb: 'patch', apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'p', patchType: 'json', reason: 'test', body: [{ op: 'test', path: '/metadata/uid', value: 'u1' }, { op: 'remove', path: '/metadata/finalizers/0' }] };
    const testFailed = (): Error => apiError(422, 'Invalid', 'testing value /metadata/uid failed: test failed');
    const replanned = await applyPlan([fenced, patch], deps(new ScriptedKube().answer(testFailed())));
    assert.equal(replanned.replan, true);
    assert.deepEqual(replanned.applied, []);
    // Without a test op, or another 422, the API server refused the write itself.
    const unfenced = { ...fenced, body: [{ op: 'remove', path: '/metadata/finalizers/0' }] };
    assert.equal((await applyPlan([unfenced], deps(new ScriptedKube().answer(testFailed())))).replan, false);
    assert.equal((await applyPlan([fenced], deps(new ScriptedKube().answer(apiError(422, 'Invalid', 'spec.x: Invalid value'))))).replan, false);
  });

  test("kube-apiserver's own answer to a JSON patch whose test op failed (its generic 422, no causes) asks for a re-plan too", async () => {
    const fenced: Action = { verb: 'patch', apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'p', patchType: 'json', reason: 'test', body: [{ op: 'test', path: '/metadata/uid', value: 'u1' }, { op: 'remove', path: '/metadata/finalizers/0' }] };
    const generic = 'the server rejected our request due to an error in our request';
    assert.equal((await applyPlan([fenced], deps(new ScriptedKube().answer(apiError(422, 'Invalid', generic))))).replan, true);
    const invalid = apiError(422, 'Invalid', generic, [{ field: 'metadata.finalizers', reason: 'FieldValueInvalid' }]);
    assert.equal((await applyPlan([fenced], deps(new ScriptedKube().answer(invalid)))).replan, false, 'a 422 that names its causes is a validation refusal');
  });

  test('a 409 after an attempt whose answer was lost: done if the object holds what was written, else a re-plan; never after a clean 409', async () => {
    const status: Action = { verb: 'patch', apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'ns', name: 'j', subresource: 'status', patchType: 'merge', reason: 'test', body: { metadata: { resourceVersion: '5' }, status: { phase: 'Succeeded', completionTime: '2026-01-01T00:00:00Z', message: null } } };
    const run = async (held: unknown, answers: KubeError[]): Promise<string> => {
      const kube = new ScriptedKube().answer(...answers);
      kube.objects.set('EphemeralJob/ns/j', held);
      const r = await applyPlan([status], deps(kube));
      return r.replan ? 'replan' : r.applied.length === 1 ? 'done' : 'other';
    };
    const lost = (): KubeError => apiError(504, 'Timeout');
    const conflict = (): KubeError => apiError(409, 'Conflict');
    const written = { metadata: { resourceVersion: '6' }, status: { phase: 'Succeeded', completionTime: '2026-01-01T00:00:00.000000Z', running: 0 } };
    assert.equal(await run(written, [lost(), conflict()]), 'done', 'the object holds the write (timestamps by instant, a null field absent)');
    assert.equal(await run({ ...written, status: { phase: 'Failed' } }, [lost(), conflict()]), 'replan', 'someone else wrote since');
    assert.equal(await run(written, [conflict()]), 'replan', 'no attempt was unsure: a 409 is a lost race');
  });

  test('409 AlreadyExists on a create marked alreadyExists=done is success', async () => {
    const kube = new ScriptedKube().answer(apiError(409, 'AlreadyExists'));
    const r = await applyPlan([event], deps(kube));
    assert.deepEqual(r.applied, [event]);
    assert.deepEqual(r.refused, []);
  });

  test("kube-apiserver's 422 for a container name already taken (Forbidden: may not be changed): an injection is neither done nor refused, and is looked at again; the sidecar's signal is done", async () => {
    const message = 'Pod "p" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers "ec" may not be changed\n';
    const taken = (): ScriptedKube => new ScriptedKube().answer(apiError(422, 'Invalid', message, [{ reason: 'FieldValueForbidden', field: 'spec.ephemeralContainers', message: 'Forbidden: existing ephemeral containers "ec" may not be changed\n' }]));
    const r = await applyPlan([inject], deps(taken()));
    assert.deepEqual(r.applied, [], 'maybe another job\'s container: nothing says it is ours');
    assert.deepEqual(r.refused, []);
    assert.deepEqual(r.namesTaken, [inject]);
    assert.equal(r.replan, false);
    const signal: Action = { ...inject, alreadyExists: 'done' };
    assert.deepEqual((await applyPlan([signal], deps(taken()))).applied, [signal]);
  });

  test('a patch naming a uid refused because the object under that name has another (422 metadata.uid) asks for a re-plan, even if the new one holds the containers', async () => {
    const uidCause = { reason: 'FieldValueInvalid', field: 'metadata.uid', message: 'Invalid value: "u1": field is immutable' };
    const changed = { reason: 'FieldValueForbidden', field: 'spec.ephemeralContainers', message: 'Forbidden: existing ephemeral containers "ec" may not be changed\n' };
    const named: Action = { ...inject, body: { metadata: { uid: 'u1' }, spec: {} } };
    const r = await applyPlan([named, event], deps(new ScriptedKube().answer(apiError(422, 'Invalid', 'Pod "p" is invalid: [metadata.uid: …, spec.ephemeralContainers: …]', [uidCause, changed]))));
    assert.equal(r.replan, true);
    assert.deepEqual(r.applied, [], 'not "already injected": that is another pod');
    // A patch that names no uid is not fenced by one: the same answer is what it is.
    const unnamed = await applyPlan([inject], deps(new ScriptedKube().answer(apiError(422, 'Invalid', 'Pod "p" is invalid', [uidCause]))));
    assert.equal(unnamed.replan, false);
  });

  test('a duplicate-name 422 is not "already there" (the server never says that for a re-injection)', async () => {
    const kube = new ScriptedKube().answer(apiError(422, 'Invalid', 'Pod "p" is invalid', [{ reason: 'FieldValueDuplicate', field: 'spec.ephemeralContainers[1].name' }]));
    const r = await applyPlan([inject], deps(kube));
    assert.equal(r.refused.length, 1);
  });

  test('an action past its withinSeconds is not sent, and the rest still runs', async () => {
    const kube = new ScriptedKube();
    const r = await applyPlan([{ ...inject, withinSeconds: 0 }, event], deps(kube));
    assert.deepEqual(kube.performed, [event]);
    assert.equal(r.expired.length, 1);
  });

  test('a retry is a send too: past its withinSeconds an action failing transiently is not sent again', async () => {
    let now = 0;
    const kube = new ScriptedKube().answer(apiError(503));
    const slow = { ...deps(kube), monotonic: () => now, startedAt: 0 };
    // The first attempt fails and the clock moves past the window before the retry.
    const original = kube.perform.bind(kube);
    kube.perform = async (a: Action): Promise<unknown> => {
      try {
        return await original(a);
      } finally {
        now += 2000;
      }
    };
    const r = await applyPlan([{ ...inject, withinSeconds: 1 }, event], slow);
    assert.deepEqual(kube.performed.map((a) => a.kind), ['Pod', 'Event'], 'one attempt of the injection, then the Event');
    assert.equal(r.expired.length, 1);
    assert.deepEqual(r.applied, [event]);
  });

  test('each attempt of an action with withinSeconds is answered or abandoned by the window\'s start + withinSeconds + the landing margin; a 504 past it is transient, and the next attempt is checked by the window (review87 F1)', async () => {
    let now = 1000;
    const kube = new ScriptedKube().answer(apiError(504, 'Timeout'), apiError(504, 'Timeout'));
    const asked: [string, number | undefined][] = [];
    const original = kube.perform.bind(kube);
    kube.perform = async (a: Action, o?: PerformOptions): Promise<unknown> => {
      asked.push([a.kind, o?.timeoutMs]);
      try {
        return await original(a);
      } finally {
        if (a.kind === 'Pod') now += 600;
      }
    };
    const r = await applyPlan([{ ...inject, withinSeconds: 1 }, event], { ...deps(kube), monotonic: () => now, startedAt: 1000, landingMarginMs: 500 });
    // Sent at 1000 (1500 ms left of 1000 + 1000 + 500) and at 1600 (900 ms); at 2200 the window has passed.
    assert.deepEqual(asked, [['Pod', 1500], ['Pod', 900], ['Event', undefined]], 'the Event has no window, so no deadline');
    assert.equal(r.expired.length, 1);
    assert.deepEqual(r.applied, [event]);
    assert.equal(landingMarginMs({ skewSeconds: 5 }), 3500, 'the defaults: skew 5 s − the Date header\'s 1 s − 0.5 s on the way');
    assert.equal(landingMarginMs({ skewSeconds: 2 }), 500, 'the smallest skew allowed still leaves some');
  });

  test('any other 422 is a refusal, and the remaining actions still run', async () => {
    const kube = new ScriptedKube().answer(apiError(422, 'Invalid', 'ports: Forbidden', [{ reason: 'FieldValueForbidden' }]));
    const r = await applyPlan([inject, event], deps(kube));
    assert.equal(r.refused.length, 1);
    assert.equal(r.refused[0]?.error.status, 422);
    assert.deepEqual(r.applied, [event]);
  });

  test('404 on delete is done-already; 404 on a patch means our view is stale', async () => {
    const notFound = (): KubeError => new KubeError({ status: 404, reason: 'NotFound', message: 'not found', objectName: 'x' });
    const gone = await applyPlan([del], deps(new ScriptedKube().answer(notFound())));
    assert.equal(gone.replan, false);
    assert.deepEqual(gone.refused, []);
    const stale = await applyPlan([patch], deps(new ScriptedKube().answer(notFound())));
    assert.equal(stale.replan, true);
  });

  test('a 404 that names no object (a path the server does not serve) is refused, on a patch as on a delete', async () => {
    for (const action of [patch, del]) {
      const r = await applyPlan([action], deps(new ScriptedKube().answer(apiError(404, 'NotFound', 'the server could not find the requested resource'))));
      assert.equal(r.replan, false);
      assert.deepEqual(r.refused.map((x) => x.error.errorClass), ['unserved']);
    }
  });

  test('a 401 is no refusal of the write: it is thrown, for the consumer to fail the cluster\'s records', async () => {
    const kube = new ScriptedKube().answer(apiError(401, 'Unauthorized'));
    await assert.rejects(applyPlan([patch], deps(kube)), (e: unknown) => e instanceof KubeError && e.status === 401);
    assert.equal(kube.performed.length, 1);
  });

  test('a 403 is refused without retries', async () => {
    const kube = new ScriptedKube().answer(apiError(403, 'Forbidden'));
    const r = await applyPlan([patch], deps(kube));
    assert.equal(kube.performed.length, 1);
    assert.equal(r.refused[0]?.error.errorClass, 'terminal');
  });
});

/**
 * A ScriptedKube whose writes stay in flight until `release()`: shows which actions were
 * sent together. `peak` is the most writes in flight at once.
 */
class GatedKube extends ScriptedKube {
  inFlight = 0;
  peak = 0;
  private waiting: (() => void)[] = [];

  override async perform(action: Action): Promise<unknown> {
    this.inFlight++;
    this.peak = Math.max(this.peak, this.inFlight);
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.inFlight--;
    return super.perform(action);
  }

  /** Let every write now in flight answer; resolves once the run has moved on. */
  async release(): Promise<void> {
    const now = this.waiting;
    this.waiting = [];
    for (const go of now) go();
    await new Promise((resolve) => setImmediate(resolve));
  }

  /** Let the run go as far as it can without answers. */
  async idle(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
  }

  /** Keep releasing until the run ends. */
  async drive(run: Promise<unknown>): Promise<void> {
    let done = false;
    void run.finally(() => { done = true; }).catch(() => undefined);
    while (!done) await this.release();
  }
}

const onPod = (name: string, extra: Partial<Action> = {}): Action => ({ ...inject, name, ...extra });
const eventFor = (name: string, extra: Partial<Action> = {}): Action => ({ ...event, name: `${name}.ev`, ...extra });

describe('applyPlan: groups and requirements', () => {
  test('neighbours of one group are sent at once; the next action waits for the whole group', async () => {
    const kube = new GatedKube();
    const claim: Action = { ...patch, kind: 'Lease', name: 'claim' };
    const run = applyPlan([claim, onPod('a', { group: 'inject' }), onPod('b', { group: 'inject' }), onPod('c', { group: 'inject' }), eventFor('a')], deps(kube));
    await kube.idle();
    assert.equal(kube.inFlight, 1, 'the claim alone is sent');
    await kube.release();
    assert.deepEqual(kube.performed.map((a) => a.name), ['claim'], 'the claim answers alone, before any injection is sent');
    assert.equal(kube.inFlight, 3, 'then the three injections are in flight together');
    await kube.release();
    assert.deepEqual(kube.performed.map((a) => a.name), ['claim', 'a', 'b', 'c']);
    assert.equal(kube.inFlight, 1, 'the Event only after all three answered');
    await kube.drive(run);
    const r = await run;
    assert.equal(kube.peak, 3);
    assert.deepEqual(r.applied.map((a) => a.name), ['claim', 'a', 'b', 'c', 'a.ev'], 'applied in the plan\'s order');
  });

  test(`a large group is sent at most ${GROUP_IN_FLIGHT} at a time, every member in the end`, async () => {
    const kube = new GatedKube();
    const events = Array.from({ length: 25 }, (_, i) => eventFor(`p${i}`, { group: 'verdict' }));
    const run = applyPlan(events, deps(kube));
    await kube.drive(run);
    const r = await run;
    assert.equal(kube.peak, GROUP_IN_FLIGHT);
    assert.equal(r.applied.length, 25);
  });

  test('actions without a group go one at a time, and so do different groups side by side', async () => {
    const kube = new GatedKube();
    const run = applyPlan([onPod('a'), onPod('b'), onPod('c', { group: 'x' }), onPod('d', { group: 'y' })], deps(kube));
    await kube.drive(run);
    await run;
    assert.equal(kube.peak, 1);
    assert.deepEqual(kube.performed.map((a) => a.name), ['a', 'b', 'c', 'd']);
  });

  test('an action that requires another is sent only if that one took effect', async () => {
    const forbidden = apiError(422, 'Invalid', 'ports: Forbidden', [{ reason: 'FieldValueForbidden' }]);
    const already = apiError(422, 'Invalid', 'Pod "b" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers "ec" may not be changed', [{ reason: 'FieldValueForbidden', message: 'Forbidden: existing ephemeral containers "ec" may not be changed' }]);
    // a: applied; b: its names taken (ours or not); c: refused; d: past its window (never sent).
    const kube = new ScriptedKube().answer({}, already, forbidden);
    const injections = ['a', 'b', 'c'].map((n) => onPod(n, { group: 'inject', id: `inject:${n}` }));
    const late = onPod('d', { group: 'inject', id: 'inject:d', withinSeconds: 0 });
    const events = ['a', 'b', 'c', 'd'].map((n) => eventFor(n, { group: 'report', requires: `inject:${n}` }));
    const r = await applyPlan([...injections, late, ...events], deps(kube));
    assert.deepEqual(kube.performed.filter((a) => a.kind === 'Event').map((a) => a.name), ['a.ev']);
    assert.deepEqual(r.withheld.map((a) => a.name), ['b.ev', 'c.ev', 'd.ev']);
    assert.deepEqual(r.refused.map((x) => x.action.name), ['c']);
    assert.deepEqual(r.expired.map((a) => a.name), ['d']);
  });

  test('an action that requires several is sent only if every one took effect', async () => {
    const forbidden = apiError(403, 'Forbidden', 'leases is forbidden');
    const kube = new ScriptedKube().answer({}, {}, forbidden);
    const r = await applyPlan([
      onPod('a', { id: 'a' }), onPod('b', { id: 'b' }), onPod('c', { id: 'c' }),
      eventFor('ab', { requires: ['a', 'b'] }), eventFor('abc', { requires: ['a', 'b', 'c'] }),
    ], deps(kube));
    assert.deepEqual(kube.performed.filter((a) => a.kind === 'Event').map((a) => a.name), ['ab.ev']);
    assert.deepEqual(r.withheld.map((a) => a.name), ['abc.ev']);
  });

  test('a requirement on an action in the same group, or on none in the plan, is never met', async () => {
    const kube = new ScriptedKube();
    const r = await applyPlan([onPod('a', { group: 'g', id: 'inject:a' }), eventFor('a', { group: 'g', requires: 'inject:a' }), eventFor('z', { requires: 'inject:z' })], deps(kube));
    assert.deepEqual(kube.performed.map((a) => a.name), ['a']);
    assert.deepEqual(r.withheld.map((a) => a.name), ['a.ev', 'z.ev']);
  });

  test('a re-plan asked inside a group lets the rest of the group finish, and sends nothing after it', async () => {
    const kube = new ScriptedKube().answer(apiError(409, 'Conflict'));
    const status: Action = { ...patch, kind: 'EphemeralJob', name: 'job', subresource: 'status', group: 'report' };
    const r = await applyPlan([status, eventFor('a', { group: 'report' }), eventFor('b')], deps(kube));
    assert.equal(r.replan, true);
    assert.deepEqual(kube.performed.map((a) => a.name), ['job', 'a.ev'], 'the Event beside the status was sent; the one after was not');
    assert.deepEqual(r.applied.map((a) => a.name), ['a.ev']);
  });

  test('a transient failure that persists is thrown once the rest of its group has settled', async () => {
    const kube = new ScriptedKube();
    const answered: string[] = [];
    const original = kube.perform.bind(kube);
    kube.perform = async (a: Action): Promise<unknown> => {
      if (a.name === 'a') throw apiError(503);
      await new Promise((resolve) => setTimeout(resolve, 20)); // b answers after a has given up
      answered.push(a.name);
      return original(a);
    };
    await assert.rejects(applyPlan([onPod('a', { group: 'g' }), onPod('b', { group: 'g' }), onPod('c')], { ...deps(kube), retries: 1 }), /HTTP 503/);
    assert.deepEqual(answered, ['b'], 'the other member was sent and had answered before the failure was thrown; nothing after the group was sent');
  });

  test('a write refused for good, and one whose type or namespace does not exist, are logged with the alarm field the AWS stack counts', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger: Logger = { ...silentLogger, warn: (obj, msg) => void lines.push({ ...obj, msg }), child: () => logger };
    await applyPlan([patch], { ...deps(new ScriptedKube().answer(apiError(403, 'Forbidden'))), logger });
    await applyPlan([{ ...patch, verb: 'create', kind: 'Lease', apiVersion: 'coordination.k8s.io/v1' }], { ...deps(new ScriptedKube().answer(new KubeError({ status: 404, reason: 'NotFound', message: 'namespaces "ephemera-locks" not found', objectName: 'ephemera-locks' }))), logger });
    assert.deepEqual(lines.filter((l) => l.alarm === ALARM_REFUSED).map((l) => l.msg), ['refused by the API server', 'refused: the resource type or namespace does not exist']);
  });
});

/** kube-apiserver's answers, as Status bodies through the client's parsing: NamespaceLifecycle's two, RBAC's and Pod Security's 403. */
const answer = (code: number, reason: string, message: string, details: Record<string, unknown>): KubeError => statusError(code, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, details, code }, undefined, undefined);
const terminating = (ns: string, resource: string, name: string): KubeError => answer(403, 'Forbidden', `${resource} "${name}" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`, {
  name, kind: resource, causes: [{ reason: 'NamespaceTerminating', message: `namespace ${ns} is being terminated`, field: 'metadata.namespace' }],
});
const namespaceGone = (ns: string): KubeError => answer(404, 'NotFound', `namespaces "${ns}" not found`, { name: ns, kind: 'namespaces' });
const lease: Action = { ...event, apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'ephemera-locks', name: 'claim' };

describe('applyPlan: the subject\'s namespace being deleted (review96 F1)', () => {
  const run = async (action: Action, err: KubeError, subjectNamespace?: string): Promise<{ r: Awaited<ReturnType<typeof applyPlan>>; alarms: unknown[] }> => {
    const lines: Record<string, unknown>[] = [];
    const logger: Logger = { ...silentLogger, info: (obj, msg) => void lines.push({ ...obj, msg }), warn: (obj, msg) => void lines.push({ ...obj, msg }), child: () => logger };
    // An Event that follows it (a CRR's "trying to terminate", an injection's "injected").
    const first = { ...action, id: 'first' };
    const r = await applyPlan([first, eventFor('after', { requires: 'first' })], { ...deps(new ScriptedKube().answer(err)), logger, ...(subjectNamespace ? { subjectNamespace } : {}) });
    return { r, alarms: lines.filter((l) => l.alarm === ALARM_REFUSED).map((l) => l.msg) };
  };

  test('a create there refused with the NamespaceTerminating cause, or with the namespace\'s own 404, is moot: no alarm, no refusal, and what requires it is moot too, not withheld', async () => {
    for (const err of [terminating('ns', 'events', 'e'), namespaceGone('ns')]) {
      const { r, alarms } = await run(event, err, 'ns');
      assert.deepEqual([r.moot.map((a) => a.name), r.refused, r.withheld, alarms], [['e', 'after.ev'], [], [], []], `${err.status}: ${err.message}`);
    }
  });

  test('every other 403 or 404 is a refusal as before, alarmed: without the cause (RBAC, Pod Security), in another namespace (the lock namespace), naming another namespace, or with no subject', async () => {
    const cases: [string, Action, KubeError, string | undefined][] = [
      ['RBAC', event, answer(403, 'Forbidden', 'events is forbidden: User "ephemera" cannot create resource "events" in API group "" in the namespace "ns"', { kind: 'events' }), 'ns'],
      ['Pod Security', patch, answer(403, 'Forbidden', 'pods "p" is forbidden: violates PodSecurity "restricted:latest"', { name: 'p', kind: 'pods' }), 'ns'],
      ['the lock namespace Terminating', lease, terminating('ephemera-locks', 'leases', 'claim'), 'ns'],
      ['the lock namespace missing', lease, namespaceGone('ephemera-locks'), 'ns'],
      ['a 404 naming another namespace', event, namespaceGone('other'), 'ns'],
      ['no subject', event, terminating('ns', 'events', 'e'), undefined],
    ];
    for (const [what, action, err, subject] of cases) {
      const { r, alarms } = await run(action, err, subject);
      assert.deepEqual([r.moot, r.refused.map((x) => x.action.name), r.withheld.map((a) => a.name), alarms.length], [[], [action.name], ['after.ev'], 1], what);
    }
  });
});
