// infra/kubernetes/namespaced.ts (review94 L3): the shipped files with their cluster-wide
// grants limited to some namespaces. Decided by the embedded server's RBAC authorizer (as
// kube-apiserver decides): each identity may do in a listed namespace exactly what the shipped
// files let it do there, nothing in any other but what the files grant there by Role, and of
// the cluster-scoped only `get nodes`. Then the relay and the functions run under the output,
// scoped to two namespaces: they work there and are refused (403) in a third.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { Rbac, serviceAccountUser, startApiServer, type Attributes, type User } from '../../functions/cluster/index.ts';
import { handle } from '../../functions/engine/engine.ts';
import { silentLogger } from '../../functions/engine/logger.ts';
import { createKube } from '../../functions/kube/client.ts';
import { KubeError } from '../../functions/kube/errors.ts';
import { namespacedManifests, type NamespacedOptions } from '../../infra/kubernetes/namespaced.ts';
import { createRelay, startRelay } from '../../relay/relay.ts';
import { engineDeps } from '../support/engine-deps.ts';
import { envelopeFor } from '../support/ejob-world.ts';
import { CollectingSink, eventually, FAST_BACKOFF } from '../support/relay-world.ts';
import { INSTALLS, LAMBDA_USER, TOKENS } from '../support/shipped-rbac.ts';

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };
type Doc = { kind: string; metadata: { name: string; namespace?: string }; rules?: Rule[]; roleRef?: { kind: string; name: string }; subjects?: { kind: string; name: string; namespace?: string }[]; data?: Record<string, string> };

const LISTED = ['team-a', 'team-b'];
const read = (files: string[]): { path: string; text: string }[] => files.map((path) => ({ path, text: readFileSync(path, 'utf8') }));
const docsOf = (text: string): Doc[] => parseAllDocuments(text).map((d) => d.toJS() as Doc).filter(Boolean);
const generated = (files: string[], o: Partial<NamespacedOptions> = {}): Doc[] => docsOf(namespacedManifests(read(files), { namespaces: LISTED, ...o }));
const rbac = (docs: Doc[]): Rbac => new Rbac({ users: {}, rbac: docs });

/** The users the bindings name: a ServiceAccount's as its token authenticates it, a group's member. */
function usersOf(docs: Doc[]): User[] {
  const subjects = docs.filter((d) => d.kind.endsWith('Binding')).flatMap((b) => b.subjects ?? []);
  const keys = new Map(subjects.map((s) => [`${s.kind}/${s.namespace ?? ''}/${s.name}`, s]));
  return [...keys.values()].map((s) => (s.kind === 'Group' ? { username: 'member', groups: [s.name, 'system:authenticated'] } : serviceAccountUser(s.namespace ?? '', s.name)));
}

/** Every request the files' rules name, in the listed namespaces, another, the Leases' and at the cluster scope. */
function requests(docs: Doc[]): Attributes[] {
  const rules = docs.filter((d) => d.kind === 'Role' || d.kind === 'ClusterRole').flatMap((r) => r.rules ?? []);
  const asked = new Set(rules.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => JSON.stringify([g, res, v]))))));
  return [...asked].flatMap((a) => {
    const [apiGroup, resource, verb] = JSON.parse(a) as [string, string, string];
    const [res = '', subresource = ''] = resource.split('/');
    // Nodes are cluster-scoped: a request names no namespace.
    const where = res === 'nodes' ? [''] : [...LISTED, 'team-c', 'kube-system', 'ephemera-system', 'ephemera-locks', ''];
    return where.map((namespace) => ({ verb, apiGroup, resource: res, subresource, namespace, name: '' }));
  });
}

describe('infra/kubernetes/namespaced.ts', () => {
  for (const [name, install] of Object.entries(INSTALLS)) {
    test(`${name}: each identity may do in the listed namespaces what the shipped files let it, elsewhere only what they grant by Role, and of the cluster only get nodes`, () => {
      const shipped = install.files.flatMap((f) => docsOf(readFileSync(f, 'utf8')));
      const out = generated(install.files);
      const [full, byRole, limited] = [rbac(shipped), rbac(shipped.filter((d) => d.kind !== 'ClusterRoleBinding')), rbac(out)];
      const users = usersOf(shipped);
      assert.deepEqual(usersOf(out).map((u) => u.username).sort(), users.map((u) => u.username).sort(), 'the same identities');
      let granted = 0;
      for (const user of users) {
        for (const a of requests(shipped)) {
          const expected = byRole.allows(user, a) || (full.allows(user, a) && (LISTED.includes(a.namespace) || a.resource === 'nodes'));
          assert.equal(limited.allows(user, a), expected, `${user.username}: ${a.verb} ${a.resource}${a.subresource ? `/${a.subresource}` : ''} in "${a.namespace}"`);
          if (expected && LISTED.includes(a.namespace)) granted++;
        }
      }
      assert.ok(granted > 0, 'grants something in the listed namespaces');
      const clusterWide = out.filter((d) => d.kind === 'ClusterRoleBinding').map((b) => out.find((r) => r.kind === 'ClusterRole' && r.metadata.name === b.roleRef?.name)?.rules);
      for (const rules of clusterWide) assert.deepEqual(rules, [{ apiGroups: [''], resources: ['nodes'], verbs: ['get'] }], 'a ClusterRoleBinding only for get nodes');
      const configs = out.filter((d) => d.data && 'EPHEMERA_RELAY_NAMESPACES' in d.data);
      assert.ok(configs.length > 0, 'the relay\'s ConfigMap is among the files');
      for (const c of configs) assert.equal(c.data?.EPHEMERA_RELAY_NAMESPACES, LISTED.join(','), 'the relay watches the namespaces its grants are limited to');
      const others = (docs: Doc[]): Doc[] => docs.filter((d) => !['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding', 'ConfigMap'].includes(d.kind));
      assert.deepEqual(others(out), others(shipped), 'everything else as shipped');
    });
  }

  test('--group: the stack\'s group is bound instead of ephemera:functions, and two stacks\' outputs for different namespaces can be applied to one cluster, each bound to its own namespaces', () => {
    const files = INSTALLS.eks.files.filter((f) => f !== 'relay/manifest.yaml');
    const a = generated(files, { namespaces: ['team-a'], group: 'ephemera:team-a' });
    const b = generated(files, { namespaces: ['team-b'], group: 'ephemera:team-b' });
    assert.deepEqual([...new Set(a.flatMap((d) => d.subjects ?? []).map((s) => s.name))], ['ephemera:team-a']);
    // kubectl apply keys objects by kind, namespace and name: an object both define must be the same, or one stack's would replace the other's.
    const key = (d: Doc): string => `${d.kind}/${d.metadata.namespace ?? ''}/${d.metadata.name}`;
    for (const d of a) {
      const same = b.find((x) => key(x) === key(d));
      if (same) assert.deepEqual(same, d, `${key(d)} differs between the two stacks' outputs`);
    }
    const both = rbac([...a, ...b]);
    const member = (g: string): User => ({ username: g, groups: [g] });
    const patch = (namespace: string): Attributes => ({ verb: 'patch', apiGroup: '', resource: 'pods', subresource: 'ephemeralcontainers', namespace, name: '' });
    const lease = { verb: 'update', apiGroup: 'coordination.k8s.io', resource: 'leases', subresource: '', namespace: 'ephemera-locks', name: '' };
    const node = { verb: 'get', apiGroup: '', resource: 'nodes', subresource: '', namespace: '', name: 'n' };
    assert.deepEqual([patch('team-a'), patch('team-b'), lease, node].map((x) => both.allows(member('ephemera:team-a'), x)), [true, false, true, true]);
    assert.deepEqual([patch('team-a'), patch('team-b'), lease, node].map((x) => both.allows(member('ephemera:team-b'), x)), [false, true, true, true]);
    assert.throws(() => generated(['infra/kubernetes/functions-rbac.yaml', 'infra/kubernetes/functions-rbac-token.yaml'], { group: 'ephemera:team-a' }), /--group ephemera:team-a: none of the files binds the group ephemera:functions/);
  });

  test('what it cannot do faithfully it refuses: a binding whose ClusterRole is in no file given, a resource of unknown scope, a bad namespace, no namespace, a system: group', () => {
    const unknown = { path: 'extra.yaml', text: 'kind: ClusterRole\nmetadata: { name: extra }\nrules: [{ apiGroups: [\'\'], resources: [configmaps], verbs: [get] }]\n' };
    assert.throws(() => namespacedManifests([unknown], { namespaces: LISTED }), /ClusterRole extra: not known to be namespaced or cluster-scoped: configmaps/);
    assert.throws(() => generated(['infra/kubernetes/functions-rbac-virtual-kubelet-eks.yaml']), /binds ClusterRole ephemera-functions-virtual-kubelet, which none of the files defines: name its file too/);
    assert.throws(() => generated(['infra/kubernetes/functions-rbac.yaml'], { namespaces: ['Team-A'] }), /'Team-A' is not a namespace name/);
    assert.throws(() => generated(['infra/kubernetes/functions-rbac.yaml'], { namespaces: [] }), /name at least one namespace/);
    assert.throws(() => generated(INSTALLS.eks.files, { group: 'system:masters' }), /not a group of your own/);
  });

  test('as a command: the output on stdout; a mistake on stderr, exit 2', () => {
    const files = ['infra/kubernetes/functions-rbac.yaml', 'infra/kubernetes/functions-rbac-eks.yaml'];
    const ok = spawnSync(process.execPath, ['infra/kubernetes/namespaced.ts', '--namespaces', LISTED.join(','), ...files], { encoding: 'utf8' });
    assert.equal(ok.status, 0, ok.stderr);
    assert.equal(ok.stdout, namespacedManifests(read(files), { namespaces: LISTED }));
    const bad = spawnSync(process.execPath, ['infra/kubernetes/namespaced.ts', ...files], { encoding: 'utf8' });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /^usage: node infra\/kubernetes\/namespaced.ts --namespaces/);
  });
});

const ns = (name: string): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const pod = (namespace: string): Record<string, unknown> => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-1', namespace, labels: { app: 'web' } },
  spec: { nodeName: 'node-1', containers: [{ name: 'main', image: 'nginx' }] },
  status: { phase: 'Running', containerStatuses: [{ name: 'main', state: { running: {} } }] },
});
const job = (namespace: string): Record<string, unknown> => ({
  apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', metadata: { name: 'probe', namespace },
  spec: { selector: { matchLabels: { app: 'web' } }, parallelism: 1, template: { ephemeralContainers: [{ name: 'ec', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'main' }] } },
});

test('the Lambda install on EKS, limited to two namespaces: the relay watches them and the functions inject there; in a third both are refused (403)', async () => {
  const out = generated(INSTALLS.eks.files);
  const namespaces = (out.find((d) => d.kind === 'ConfigMap' && d.data?.EPHEMERA_RELAY_NAMESPACES)?.data?.EPHEMERA_RELAY_NAMESPACES ?? '').split(',');
  const spaces = [...LISTED, 'team-c'];
  const server = await startApiServer({
    objects: [...['ephemera-system', 'ephemera-locks', ...spaces].map(ns), { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } }, ...spaces.map(pod), ...spaces.map(job)],
    bookmarkIntervalMs: 200,
    authorization: {
      users: { [TOKENS.functions]: LAMBDA_USER, [TOKENS.relay]: serviceAccountUser('ephemera-system', 'ephemera-relay'), [TOKENS.admin]: { username: 'admin', groups: ['system:masters'] } },
      rbac: out,
    },
  });
  const relayOptions = { kubeConfig: server.kubeConfig({ token: TOKENS.relay }), relayId: 'me', coalesceMs: 0, resyncSeconds: 3600, bufferMax: 100, logger: silentLogger, backoff: FAST_BACKOFF } as const;
  const sink = new CollectingSink();
  const relay = await startRelay({ ...relayOptions, sink, namespaces, leaseSweep: { namespace: 'ephemera-locks' }, election: { kube: createKube(relayOptions.kubeConfig), lock: { namespace: 'ephemera-system', holder: 'me', leaseSeconds: 3, skewSeconds: 1 } } });
  // The same relay told a namespace its grants do not reach: what it asks there is refused (it never syncs: created, not awaited).
  const astray = new CollectingSink();
  const stray = createRelay({ ...relayOptions, sink: astray, namespaces: ['team-c'], jobsFirstMs: 0 });
  const denied = (): string[] => [...new Set(server.requests.entries.filter((e) => e.denied).map((e) => `${e.actor ?? ''} ${e.verb} ${e.path.split('?')[0]!} ${e.status}`))].sort();
  try {
    await eventually(() => assert.deepEqual([...new Set(sink.got.filter((e) => e.data.kind === 'EphemeralJob').map((e) => e.subject))].sort(), ['EphemeralJob/team-a/probe', 'EphemeralJob/team-b/probe']));
    await eventually(() => assert.ok(denied().some((d) => d.startsWith(`${TOKENS.relay} list /api/v1/namespaces/team-c/pods 403`)), denied().join('\n')));
    const deps = engineDeps(server.kubeConfig({ token: TOKENS.functions }), { holder: 'fn', clock: () => new Date(), lockNamespace: 'ephemera-locks' });
    for (const e of sink.got.filter((x) => x.data.kind === 'EphemeralJob')) assert.deepEqual((await handle(e, deps)).failed, [], e.subject);
    const refused = await handle(envelopeFor('EphemeralJob', 'team-c', 'probe'), deps);
    assert.deepEqual(refused.failed.map((f) => [f.key, f.error.status]), [['EphemeralJob/team-c/probe', 403]]);
    const injected = (namespace: string): string[] => ((server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace, name: 'web-1' }) as unknown as { spec: { ephemeralContainers?: { name: string }[] } }).spec.ephemeralContainers ?? []).map((c) => c.name);
    assert.deepEqual(spaces.map((s) => injected(s).length > 0), [true, true, false], 'injected in team-a and team-b, not in team-c');
    // Of the cluster, the functions may read nodes (the SidecarTerminator's virtual-kubelet check), nothing else.
    const fn = createKube(server.kubeConfig({ token: TOKENS.functions }));
    assert.ok(await fn.get({ apiVersion: 'v1', kind: 'Node', name: 'node-1' }));
    await assert.rejects(fn.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'team-c', name: 'web-1' }), (err) => err instanceof KubeError && err.status === 403);
    assert.deepEqual(astray.got, [], 'nothing from team-c');
    assert.deepEqual(denied().filter((d) => !d.includes('/team-c/')), [], 'refused only in team-c');
  } finally {
    await stray.stop();
    await relay.stop();
    await server.close();
  }
});
