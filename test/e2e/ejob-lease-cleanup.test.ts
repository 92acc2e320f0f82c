// A job's Lease (its claims record, in the lock namespace: no owner reference reaches it) is
// deleted when the job is deleted by hand, with or without OpenKruise's finalizer, or by its
// TTL; and never when a job created again under the same name already keeps its own claims
// there (functions/ejob/README.md, "When a job goes"). Through the embedded API server; the
// races are staged by holding one instance's request until the other has acted.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Envelope } from '../../functions/api/envelope.ts';
import type { Pod } from '../../functions/api/pod.ts';
import type { ApiServer } from '../../functions/cluster/index.ts';
import { jobKey, jobLeaseName } from '../../functions/ejob/controller.ts';
import { CLAIMS_ANNOTATION, type LeaseRecord } from '../../functions/ejob/lease-record.ts';
import { handle, type EngineDeps, type HandleResult } from '../../functions/engine/engine.ts';
import type { Action } from '../../functions/engine/plan.ts';
import type { Kube, ObjectRef } from '../../functions/kube/kube.ts';
import { CRDS, envelopeFor, fixture, pods, worldWith } from '../support/ejob-world.ts';

const JOB = 'hello-world-ephemeral-job';
const NS = 'default';
const LOCKS = 'ephemera-system'; // the worlds' lock namespace
const EJOB = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob' };
const FINALIZER = 'apps.kruise.io/ephemeralcontainers-cleanup';
const LEASE = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: LOCKS, name: jobLeaseName(jobKey(NS, JOB)) };

type Obj = { metadata: { uid?: string; resourceVersion?: string; finalizers?: string[]; annotations?: Record<string, string> } } & Record<string, unknown>;

const storyObjects = (): Record<string, unknown>[] => fixture('test/fixtures/stories/story1-state.yaml');
const jobIn = (server: ApiServer): Obj | undefined => server.store.get({ ...EJOB, namespace: NS, name: JOB }) as Obj | undefined;
const leaseIn = (server: ApiServer): Obj | undefined => server.store.get(LEASE) as Obj | undefined;
const recordIn = (server: ApiServer): LeaseRecord | undefined => {
  const text = leaseIn(server)?.metadata.annotations?.[CLAIMS_ANNOTATION];
  return text === undefined ? undefined : (JSON.parse(text) as LeaseRecord);
};

/** `kubectl delete ejob`: through the REST layer, so a finalizer leaves the job deleting. */
function deleteByHand(server: ApiServer): void {
  server.rest.delete({ def: server.store.defFor(EJOB.apiVersion, EJOB.kind), namespace: NS, name: JOB });
}

/** `kubectl apply` of the same manifest again: a new job (new uid) under the same name. */
function recreate(server: ApiServer): string {
  const manifest = storyObjects().find((o) => o.kind === 'EphemeralJob') as Obj;
  const { uid: _uid, ...metadata } = manifest.metadata;
  return (server.store.put({ ...manifest, metadata }) as Obj).metadata.uid ?? '';
}

/** Pods holding a container of this job that has not ended (what its parallelism bounds). */
function inFlightOf(server: ApiServer, uid: string): string[] {
  const mine = (p: Pod): boolean => (p.spec.ephemeralContainers ?? []).some((c) => (c.env ?? []).some((e) => e.name === 'KRUISE_EJOB_ID' && e.value === uid));
  return pods(server).filter(mine).filter((p) => !(p.status?.ephemeralContainerStatuses ?? []).some((s) => s.state?.terminated)).map((p) => p.metadata.name);
}

function noPodInjectedTwice(server: ApiServer): void {
  for (const p of pods(server)) assert.ok((p.spec.ephemeralContainers ?? []).length <= 1, `${p.metadata.name}: ${(p.spec.ephemeralContainers ?? []).length} ephemeral containers`);
}

/** An instance whose kube runs `hook` (once) just before the first request `when` picks, and waits for it. */
function holding(deps: EngineDeps, when: { get?: (ref: ObjectRef) => boolean; perform?: (a: Action) => boolean }, hook: () => Promise<void>): EngineDeps {
  const kube = deps.kube;
  let fired = false;
  const gate = async (hit: boolean): Promise<void> => {
    if (fired || !hit) return;
    fired = true;
    await hook();
  };
  const held: Kube = {
    ...kube,
    get: async (ref) => (await gate(when.get?.(ref) ?? false), kube.get(ref)),
    perform: async (a, o) => (await gate(when.perform?.(a) ?? false), kube.perform(a, o)),
  };
  return { ...deps, kube: held };
}

const isLease = (ref: ObjectRef): boolean => ref.kind === 'Lease';
const jobEvent = (type: Envelope['data']['event']): Envelope => envelopeFor('EphemeralJob', NS, JOB, type);

for (const { label, crd } of CRDS) describe(`a job's Lease when the job goes (${label})`, () => {
  test('deleted by hand: the DELETED event deletes its Lease, fenced by the version read, after reading the job again', async () => {
    const { server, deps } = await worldWith({ objects: storyObjects(), crd });
    try {
      await handle(jobEvent('ADDED'), deps());
      assert.ok(recordIn(server)?.claims.length, 'the job claimed a pod on its Lease');
      const { resourceVersion, uid } = leaseIn(server)?.metadata ?? {};
      deleteByHand(server);
      assert.equal(jobIn(server), undefined);
      server.requests.clear();
      const r = await handle(jobEvent('DELETED'), deps());
      assert.deepEqual(r.keys.map((k) => k.outcome), ['done']);
      assert.equal(leaseIn(server), undefined, 'the Lease is gone');
      assert.deepEqual(server.requests.entries.map((x) => `${x.verb} ${x.path.split('/').slice(-2).join('/')}`), [
        `get ephemeraljobs/${JOB}`, `get leases/${LEASE.name}`, `get ephemeraljobs/${JOB}`, `delete leases/${LEASE.name}`,
      ]);
      assert.deepEqual(r.keys[0]?.actions.map((a) => a.body), [{ preconditions: { resourceVersion, uid } }]);
      // Once more (a duplicate or late event): nothing left, two GETs.
      server.requests.clear();
      assert.deepEqual((await handle(jobEvent('DELETED'), deps())).keys.map((k) => k.outcome), ['gone']);
      assert.equal(server.requests.entries.length, 2);
    } finally {
      await server.close();
    }
  });

  /** The story's job with OpenKruise's finalizer, its manifest, and a world of it. */
  const finalized = async (): Promise<{ manifest: Obj } & Awaited<ReturnType<typeof worldWith>>> => {
    const objects = storyObjects();
    const manifest = objects.find((o) => o.kind === 'EphemeralJob') as Obj;
    manifest.metadata.finalizers = [FINALIZER];
    return { manifest, ...(await worldWith({ objects, crd })) };
  };

  test("deleted with OpenKruise's finalizer: the Lease is deleted and the finalizer removed, so the job goes", async () => {
    const { server, deps } = await finalized();
    try {
      await handle(jobEvent('ADDED'), deps());
      assert.ok(recordIn(server)?.claims.length);
      deleteByHand(server);
      assert.ok(jobIn(server), 'still there, being deleted: the finalizer holds it');
      const r = await handle(jobEvent('MODIFIED'), deps());
      assert.deepEqual(r.keys[0]?.actions.map((a) => `${a.verb} ${a.kind}`), ['delete Lease', 'patch EphemeralJob']);
      assert.equal(leaseIn(server), undefined, 'the Lease is gone');
      assert.equal(jobIn(server), undefined, 'the finalizer was removed, so the job is gone');
      assert.deepEqual((await handle(jobEvent('DELETED'), deps())).keys.map((k) => k.outcome), ['gone']);
    } finally {
      await server.close();
    }
  });

  test("a finalizer removal planned for the deleted job is refused on the job created again under its name (chaos seed 1018)", async () => {
    const { manifest, server, deps } = await finalized();
    try {
      await handle(jobEvent('ADDED'), deps());
      deleteByHand(server);
      let newUid = '';
      // A late instance observed the deleting job; before its patch lands, another one finished
      // the deletion and the job was created again, finalizer and all.
      const late = holding(deps('late'), { perform: (a) => a.kind === EJOB.kind && a.verb === 'patch' }, async () => {
        await handle(jobEvent('MODIFIED'), deps('prompt'));
        assert.equal(jobIn(server), undefined, 'the first deletion went through');
        const { uid: _uid, ...metadata } = manifest.metadata;
        newUid = (server.store.put({ ...manifest, metadata }) as Obj).metadata.uid ?? '';
      });
      const r = await handle(jobEvent('MODIFIED'), late);
      const now = jobIn(server);
      assert.equal(now?.metadata.uid, newUid);
      assert.deepEqual(now?.metadata.finalizers, [FINALIZER], "the new job keeps OpenKruise's finalizer");
      assert.equal((now as { metadata: { deletionTimestamp?: string } }).metadata.deletionTimestamp, undefined);
      assert.notEqual(r.keys[0]?.outcome, 'refused', `re-planned on the new job: ${JSON.stringify(r.keys[0])}`);
    } finally {
      await server.close();
    }
  });

  test("recreated under the same name before the old job's DELETED event is handled: the new job's Lease and claims survive it", async () => {
    const { server, deps } = await worldWith({ objects: storyObjects(), crd });
    try {
      await handle(jobEvent('ADDED'), deps('a'));
      const oldUid = jobIn(server)?.metadata.uid ?? '';
      const [oldPod] = inFlightOf(server, oldUid);
      assert.ok(oldPod);
      deleteByHand(server);
      const newUid = recreate(server);
      await handle(jobEvent('ADDED'), deps('b'));
      const before = structuredClone(leaseIn(server));
      assert.equal(recordIn(server)?.job, newUid, "the new job wrote its record over the old job's");
      assert.equal(inFlightOf(server, newUid).length, 1, 'and claimed and injected a pod');
      assert.notEqual(inFlightOf(server, newUid)[0], oldPod, "not the pod holding the old job's container of the same name");
      // The old job's DELETED event, key only, arrives now.
      await handle(jobEvent('DELETED'), deps('c'));
      assert.deepEqual(leaseIn(server), before, 'the Lease is untouched: same record, same resourceVersion');
      assert.equal(inFlightOf(server, newUid).length, 1);
      noPodInjectedTwice(server);
    } finally {
      await server.close();
    }
  });
});

describe("a job's Lease when the job goes: races with a job created again under the same name", () => {
  /** Job A ran and claimed a pod; it was deleted by hand; its DELETED event is about to be handled. */
  async function oldJobDeleted(): Promise<{ server: ApiServer; deps: (holder?: string) => EngineDeps; oldPod: string }> {
    const w = await worldWith({ objects: storyObjects() });
    await handle(jobEvent('ADDED'), w.deps('old'));
    const [oldPod] = inFlightOf(w.server, jobIn(w.server)?.metadata.uid ?? '');
    assert.ok(oldPod);
    deleteByHand(w.server);
    return { ...w, oldPod };
  }

  /** The new job's record is on the Lease, with its claim on the one pod it injected (parallelism 1). */
  function newJobHolds(server: ApiServer, newUid: string, oldPod: string): void {
    const record = recordIn(server);
    assert.equal(record?.job, newUid, "the Lease holds the new job's record");
    const inFlight = inFlightOf(server, newUid);
    assert.equal(inFlight.length, 1, 'the new job has its one pod in flight (parallelism 1)');
    assert.notEqual(inFlight[0], oldPod);
    assert.deepEqual(record?.claims.map((c) => c.pod), inFlight, 'its claim on that pod is intact');
    assert.equal(record?.total, 1);
    noPodInjectedTwice(server);
  }

  test('the new job claims between the cleanup finding no job and reading the Lease: the job read after the Lease is the record\'s, so the Lease is kept', async () => {
    const { server, deps, oldPod } = await oldJobDeleted();
    try {
      let newUid = '';
      let claimed: HandleResult | undefined;
      const cleanup = holding(deps('cleanup'), { get: isLease }, async () => {
        newUid = recreate(server);
        claimed = await handle(jobEvent('ADDED'), deps('new'));
      });
      const r = await handle(jobEvent('DELETED'), cleanup);
      assert.ok(claimed?.keys[0]?.actions.some((a) => a.kind === 'Lease'), 'the new job wrote its claim first');
      assert.deepEqual(r.keys[0]?.actions, []);
      assert.match(r.keys[0]?.notes?.join('\n') ?? '', /Lease kept: its record is for job uid/);
      newJobHolds(server, newUid, oldPod);
    } finally {
      await server.close();
    }
  });

  test("the new job claims after the cleanup read the old record but before its DELETE lands: the DELETE's resourceVersion precondition fails (409) and the re-plan keeps the Lease", async () => {
    const { server, deps, oldPod } = await oldJobDeleted();
    try {
      let newUid = '';
      const cleanup = holding(deps('cleanup'), { perform: (a) => a.kind === 'Lease' && a.verb === 'delete' }, async () => {
        newUid = recreate(server);
        await handle(jobEvent('ADDED'), deps('new'));
      });
      const r = await handle(jobEvent('DELETED'), cleanup);
      assert.equal(server.requests.filter((x) => x.verb === 'delete' && x.path.includes('/leases/') && x.status === 409).length, 1, 'the fenced DELETE met the new write');
      assert.equal(r.keys[0]?.outcome, 'done');
      assert.equal(r.keys[0]?.actions.filter((a) => a.kind === 'Lease' && a.verb === 'delete').length, 0, 'no Lease deletion took effect');
      newJobHolds(server, newUid, oldPod);
    } finally {
      await server.close();
    }
  });

  test("the cleanup's DELETE lands between the new job's read of the old record and its claim write: that write is refused (409, the Lease's uid is pinned), and the re-plan claims on a fresh Lease", async () => {
    const { server, deps, oldPod } = await oldJobDeleted();
    try {
      // The cleanup finds no job; then the new job is created, reads the old record and plans
      // its claim; the cleanup reads the Lease and the job (the new one: the record is not its
      // own) and deletes the Lease; only then does the claim write arrive.
      let newUid = '';
      let atClaim!: () => void;
      const claimPlanned = new Promise<void>((resolve) => (atClaim = resolve));
      let release!: () => void;
      const cleanupDone = new Promise<void>((resolve) => (release = resolve));
      const claimer = holding(deps('new'), { perform: (a) => a.kind === 'Lease' && a.verb === 'update' }, async () => {
        atClaim();
        await cleanupDone;
      });
      let claiming: Promise<HandleResult> | undefined;
      const cleanup = holding(deps('cleanup'), { get: isLease }, async () => {
        newUid = recreate(server);
        claiming = handle(jobEvent('ADDED'), claimer);
        await claimPlanned;
      });
      const cleaned = await handle(jobEvent('DELETED'), cleanup);
      release();
      const r = await claiming;
      assert.deepEqual(cleaned.keys[0]?.actions.map((a) => `${a.verb} ${a.kind}`), ['delete Lease'], "the old job's record was deleted first");
      assert.equal(server.requests.filter((x) => x.verb === 'update' && x.path.includes('/leases/') && x.status === 409).length, 1, 'the claim write on the deleted Lease was refused, not turned into a create');
      assert.deepEqual(r?.keys[0]?.actions.filter((a) => a.kind === 'Lease').map((a) => a.verb), ['create'], 'the re-plan created the Lease with its claim');
      newJobHolds(server, newUid, oldPod);
    } finally {
      await server.close();
    }
  });

  test('a job deleted by its TTL: the job first, then the look 1 s later (or its DELETED event) deletes the Lease', async () => {
    const objects = storyObjects();
    const manifest = objects.find((o) => o.kind === 'EphemeralJob') as Obj & { spec: Record<string, unknown> };
    let now = new Date('2026-01-01T00:21:00Z');
    const { server, deps } = await worldWith({ objects, now: () => now });
    try {
      await handle(jobEvent('ADDED'), deps());
      assert.ok(leaseIn(server));
      now = new Date(Date.parse('2026-01-01T00:20:00Z') + (Number(manifest.spec.ttlSecondsAfterCreated) + 1) * 1000);
      const r = await handle(jobEvent('RESYNC'), deps());
      assert.deepEqual(r.keys[0]?.actions.map((a) => `${a.verb} ${a.kind}`), ['delete EphemeralJob']);
      assert.equal(r.requeueAfterSeconds, 1);
      assert.ok(leaseIn(server), 'the Lease is not deleted in the same plan, unfenced');
      await handle(jobEvent('RESYNC'), deps());
      assert.equal(leaseIn(server), undefined);
    } finally {
      await server.close();
    }
  });
});
