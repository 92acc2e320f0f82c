import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { runCli } from '../support/cli.ts';

type Container = { args: string[]; securityContext: Record<string, unknown>; livenessProbe: { httpGet: { path: string } }; readinessProbe: { httpGet: { path: string } }; resources: { limits: { memory?: string } } };
type Doc = { kind: string; metadata: { name: string; namespace?: string }; rules?: { resources: string[]; verbs: string[] }[]; spec?: { template: { spec: { securityContext: Record<string, unknown>; containers: Container[] } } } };
const docs = parseAllDocuments(readFileSync('relay/manifest.yaml', 'utf8')).map((d) => d.toJS() as Doc);
const byKind = (k: string): Doc[] => docs.filter((d) => d.kind === k);

describe('relay/manifest.yaml (the whole install)', () => {
  test('has everything the install needs, and the same CRD as infra/crds', () => {
    assert.deepEqual(docs.map((d) => d.kind), ['Namespace', 'Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'Role', 'RoleBinding', 'ConfigMap', 'Deployment', 'CustomResourceDefinition']);
    assert.deepEqual(byKind('CustomResourceDefinition')[0], parse(readFileSync('infra/crds/ephemeraljob.yaml', 'utf8')), 'run: node relay/build-manifest.ts');
  });

  test('RBAC is least privilege: list and watch pods and ephemeraljobs; leases in its namespace, and only list in the lock namespace', () => {
    const verbs = byKind('ClusterRole')[0]?.rules?.flatMap((r) => r.verbs) ?? [];
    assert.deepEqual([...new Set(verbs)].sort(), ['list', 'watch'], 'it never gets one object (test/relay/shipped-rbac-leases.test.ts)');
    assert.deepEqual(byKind('ClusterRole')[0]?.rules?.flatMap((r) => r.resources).sort(), ['ephemeraljobs', 'pods']);
    const roles = byKind('Role').map((r) => `${r.metadata.namespace}: ${r.rules?.map((x) => `${x.verbs.join(',')} ${x.resources.join(',')}`).join('; ')}`);
    assert.deepEqual(roles, ['ephemera-system: get,create,update,delete leases', 'ephemera-locks: list leases'], 'the claims Lease sweep lists; the functions delete');
  });

  test('the Deployment runs the relay non-root, read-only, with probes and resources', () => {
    const d = byKind('Deployment')[0]?.spec;
    assert.ok(d);
    const c = d.template.spec.containers[0];
    assert.ok(c);
    assert.deepEqual(c.args, ['relay', '--sink', 'sqs']);
    assert.equal(d.template.spec.securityContext.runAsNonRoot, true);
    assert.equal(c.securityContext.readOnlyRootFilesystem, true);
    assert.equal(c.securityContext.allowPrivilegeEscalation, false);
    assert.equal(c.livenessProbe.httpGet.path, '/healthz');
    assert.equal(c.readinessProbe.httpGet.path, '/readyz');
    assert.ok(c.resources.limits.memory);
  });
});

describe('ephemera relay configuration', () => {
  test('a bad value stops the relay, naming the variable and what was expected', async () => {
    const r = await runCli(['relay'], { EPHEMERA_RELAY_RESYNC_SECONDS: 'soon', EPHEMERA_RELAY_LISTEN: 'nowhere' });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /EPHEMERA_RELAY_RESYNC_SECONDS: .*expected number/);
    assert.match(r.stderr, /EPHEMERA_RELAY_LISTEN: .*HOST:PORT/);
  });

  test('a listen port out of range stops the relay before it binds, naming the variable', async () => {
    const r = await runCli(['relay'], { EPHEMERA_RELAY_LISTEN: '127.0.0.1:99999' });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /EPHEMERA_RELAY_LISTEN: expected HOST:PORT, \[IPv6\]:PORT or :PORT \(every interface\) with a port from 0 to 65535/);
  });

  test('--sink sqs without a queue URL says which variable is missing', async () => {
    const r = await runCli(['relay', '--sink', 'sqs'], { EPHEMERA_SQS_QUEUE_URL: '' });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /EPHEMERA_SQS_QUEUE_URL/);
  });

  test('an unknown sink is refused', async () => {
    const r = await runCli(['relay', '--sink', 'kafka']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--sink must be sqs, memory or record:PATH/);
  });
});
