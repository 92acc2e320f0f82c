// The embedded server's authentication and RBAC, asked over HTTP as a client asks a real
// kube-apiserver: who gets a 401, which rule grants what, and the 403's exact words.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { serviceAccountUser, type Authorization } from '../../functions/cluster/index.ts';
import { harness, pod } from './support.ts';

const RBAC: unknown[] = [
  { kind: 'Role', metadata: { name: 'reader', namespace: 'a' }, rules: [{ apiGroups: [''], resources: ['pods', 'namespaces'], verbs: ['get', 'list'] }] },
  { kind: 'RoleBinding', metadata: { name: 'reader', namespace: 'a' }, roleRef: { kind: 'Role', name: 'reader' }, subjects: [{ kind: 'ServiceAccount', name: 'sa', namespace: 'sys' }] },
  { kind: 'ClusterRole', metadata: { name: 'injector' }, rules: [
    { apiGroups: [''], resources: ['pods/ephemeralcontainers'], verbs: ['patch'] },
    { apiGroups: [''], resources: ['*/status'], verbs: ['patch'] },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list'], resourceNames: ['mine'] },
  ] },
  // A ClusterRole bound by a RoleBinding grants only in the binding's namespace.
  { kind: 'RoleBinding', metadata: { name: 'injector', namespace: 'a' }, roleRef: { kind: 'ClusterRole', name: 'injector' }, subjects: [{ kind: 'Group', name: 'team' }] },
  { kind: 'Role', metadata: { name: 'updater', namespace: 'a' }, rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['update'] }] },
  { kind: 'RoleBinding', metadata: { name: 'updater', namespace: 'a' }, roleRef: { kind: 'Role', name: 'updater' }, subjects: [{ kind: 'User', name: 'carol' }] },
  { kind: 'ClusterRole', metadata: { name: 'watcher' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['watch'] }] },
  { kind: 'ClusterRoleBinding', metadata: { name: 'watcher' }, roleRef: { kind: 'ClusterRole', name: 'watcher' }, subjects: [{ kind: 'User', name: 'alice' }] },
];
const AUTH: Authorization = {
  users: {
    'sa-token': serviceAccountUser('sys', 'sa'),
    'team-token': { username: 'bob', groups: ['team', 'system:authenticated'] },
    'alice-token': { username: 'alice', groups: ['system:authenticated'] },
    'updater-token': { username: 'carol', groups: ['system:authenticated'] },
    'admin-token': { username: 'admin', groups: ['system:masters', 'system:authenticated'] },
  },
  rbac: RBAC,
};

async function setup(): Promise<{ ask: (token: string | undefined, method: string, path: string, body?: unknown) => Promise<{ code: number; body: Record<string, unknown> }>; server: Awaited<ReturnType<typeof harness>>['server'] }> {
  const { server } = await harness({ authorization: AUTH, objects: [pod('p', { namespace: 'a' }), pod('q', { namespace: 'b' }), { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'mine', namespace: 'a' }, spec: {} }] });
  const ask = async (token: string | undefined, method: string, path: string, body?: unknown): Promise<{ code: number; body: Record<string, unknown> }> => {
    const headers: Record<string, string> = { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    const r = await fetch(`${server.url}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await r.text();
    return { code: r.status, body: text.startsWith('{') ? JSON.parse(text) as Record<string, unknown> : { text } };
  };
  return { ask, server };
}

describe('authentication', () => {
  test('a token nobody has is a 401 for everything; no token is anonymous: /version yes, resources no', async () => {
    const { ask } = await setup();
    for (const path of ['/version', '/api/v1/namespaces/a/pods/p']) {
      const r = await ask('stolen', 'GET', path);
      assert.equal(r.code, 401, path);
      assert.deepEqual([r.body.reason, r.body.message], ['Unauthorized', 'Unauthorized']);
    }
    assert.equal((await ask('constructor', 'GET', '/version')).code, 401, 'a token is looked up as a key of its own, not a property of every object');
    assert.equal((await ask(undefined, 'GET', '/version')).code, 200);
    const r = await ask(undefined, 'GET', '/api/v1/namespaces/a/pods/p');
    assert.equal(r.code, 403);
    assert.equal(r.body.message, 'pods "p" is forbidden: User "system:anonymous" cannot get resource "pods" in API group "" in the namespace "a"');
    const d = await ask(undefined, 'GET', '/apis');
    assert.deepEqual([d.code, d.body.message], [403, 'forbidden: User "system:anonymous" cannot get path "/apis"']);
    assert.equal((await ask('sa-token', 'GET', '/apis')).code, 200, 'discovery is every authenticated user\'s');
  });
});

describe('RBAC', () => {
  test('a Role grants its verbs in its namespace only, and the 403 says who, what and where as kube-apiserver does', async () => {
    const { ask } = await setup();
    assert.equal((await ask('sa-token', 'GET', '/api/v1/namespaces/a/pods/p')).code, 200);
    assert.equal((await ask('sa-token', 'GET', '/api/v1/namespaces/a/pods')).code, 200);
    const other = await ask('sa-token', 'GET', '/api/v1/namespaces/b/pods/q');
    assert.equal(other.code, 403);
    assert.equal(other.body.message, 'pods "q" is forbidden: User "system:serviceaccount:sys:sa" cannot get resource "pods" in API group "" in the namespace "b"');
    assert.deepEqual(other.body.details, { name: 'q', kind: 'pods' });
    const everywhere = await ask('sa-token', 'GET', '/api/v1/pods');
    assert.equal(everywhere.body.message, 'pods is forbidden: User "system:serviceaccount:sys:sa" cannot list resource "pods" in API group "" at the cluster scope');
    const watch = await ask('sa-token', 'GET', '/api/v1/namespaces/a/pods?watch=true');
    assert.equal(watch.body.message, 'pods is forbidden: User "system:serviceaccount:sys:sa" cannot watch resource "pods" in API group "" in the namespace "a"');
    const write = await ask('sa-token', 'PATCH', '/api/v1/namespaces/a/pods/p', { metadata: { labels: { x: 'y' } } });
    assert.equal(write.body.message, 'pods "p" is forbidden: User "system:serviceaccount:sys:sa" cannot patch resource "pods" in API group "" in the namespace "a"');
  });

  test('a subresource needs its own rule (`pods` is not `pods/ephemeralcontainers`), or `*/sub`', async () => {
    const { ask } = await setup();
    const patch = { spec: { ephemeralContainers: [{ name: 'dbg', image: 'busybox', targetContainerName: 'app', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File' }] } };
    const sa = await ask('sa-token', 'PATCH', '/api/v1/namespaces/a/pods/p/ephemeralcontainers', patch);
    assert.equal(sa.body.message, 'pods "p" is forbidden: User "system:serviceaccount:sys:sa" cannot patch resource "pods/ephemeralcontainers" in API group "" in the namespace "a"');
    assert.equal((await ask('team-token', 'PATCH', '/api/v1/namespaces/a/pods/p/ephemeralcontainers', patch)).code, 200);
    assert.equal((await ask('team-token', 'PATCH', '/api/v1/namespaces/a/pods/p/status', { status: { message: 'x' } })).code, 200, '*/status');
    assert.equal((await ask('team-token', 'PATCH', '/api/v1/namespaces/a/pods/p', { metadata: { labels: { x: 'y' } } })).code, 403, 'neither covers the pod itself');
    assert.equal((await ask('team-token', 'PATCH', '/api/v1/namespaces/b/pods/q/status', { status: { message: 'x' } })).code, 403, 'a ClusterRole bound by a RoleBinding: its namespace only');
  });

  test('resourceNames: a named get, or a list that selects exactly that name; never a plain list', async () => {
    const { ask } = await setup();
    const lease = (q = ''): string => `/apis/coordination.k8s.io/v1/namespaces/a/leases${q}`;
    assert.equal((await ask('team-token', 'GET', lease('/mine'))).code, 200);
    const other = await ask('team-token', 'GET', lease('/theirs'));
    assert.equal(other.body.message, 'leases.coordination.k8s.io "theirs" is forbidden: User "bob" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "a"');
    assert.deepEqual(other.body.details, { name: 'theirs', group: 'coordination.k8s.io', kind: 'leases' });
    assert.equal((await ask('team-token', 'GET', lease())).code, 403);
    assert.equal((await ask('team-token', 'GET', lease('?fieldSelector=metadata.name%3Dmine'))).code, 200);
    assert.equal((await ask('team-token', 'GET', lease('?fieldSelector=metadata.name%3Dtheirs'))).code, 403);
  });

  test('a namespace\'s own path is in that namespace (a Role there grants it); a resource the server does not serve is authorized first: 403, or 404 for who may', async () => {
    const { ask } = await setup();
    assert.equal((await ask('sa-token', 'GET', '/api/v1/namespaces/a')).code, 404, 'allowed by the Role in a; the namespace object is simply not there');
    assert.equal((await ask('sa-token', 'GET', '/api/v1/namespaces/b')).code, 403);
    const unserved = await ask('sa-token', 'GET', '/apis/example.io/v1/namespaces/a/widgets');
    assert.deepEqual([unserved.code, unserved.body.message], [403, 'widgets.example.io is forbidden: User "system:serviceaccount:sys:sa" cannot list resource "widgets" in API group "example.io" in the namespace "a"']);
    assert.equal((await ask('admin-token', 'GET', '/apis/example.io/v1/namespaces/a/widgets')).code, 404);
  });

  test('a PUT that creates a Lease needs `create` as well as `update`', async () => {
    const { ask, server } = await setup();
    const lease = (name: string, rv?: string): unknown => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: 'a', ...(rv ? { resourceVersion: rv } : {}) }, spec: { holderIdentity: 'x' } });
    const current = (server.store.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'a', name: 'mine' }) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    assert.equal((await ask('updater-token', 'PUT', '/apis/coordination.k8s.io/v1/namespaces/a/leases/mine', lease('mine', current))).code, 200);
    const created = await ask('updater-token', 'PUT', '/apis/coordination.k8s.io/v1/namespaces/a/leases/new', lease('new'));
    assert.deepEqual([created.code, created.body.message], [403, 'leases.coordination.k8s.io "new" is forbidden: User "carol" cannot create resource "leases" in API group "coordination.k8s.io" in the namespace "a"']);
  });

  test('wildcards, User subjects and system:masters; a refused write is in the history', async () => {
    const { ask, server } = await setup();
    const w = await fetch(`${server.url}/apis/coordination.k8s.io/v1/leases?watch=true&timeoutSeconds=1`, { headers: { authorization: 'Bearer alice-token' } });
    assert.equal(w.status, 200, '* group, * resource, at the cluster scope');
    await w.body?.cancel();
    assert.equal((await ask('alice-token', 'GET', '/api/v1/pods')).code, 403, 'watch is not list');
    assert.equal((await ask('admin-token', 'DELETE', '/api/v1/namespaces/b/pods/q')).code, 200);
    const refused = await ask('alice-token', 'DELETE', '/api/v1/namespaces/a/pods/p');
    assert.equal(refused.code, 403);
    assert.ok(server.history.rejected.some((r) => r.status === 403 && r.verb === 'delete' && r.actor === 'alice-token'), 'the refusal is recorded');
    assert.ok(server.store.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'a', name: 'p' }), 'and nothing was deleted');
  });
});
