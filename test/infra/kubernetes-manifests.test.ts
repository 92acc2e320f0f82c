// Every Kubernetes manifest we ship, parsed and checked together, as an operator applying
// several of them to one cluster would meet them.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { parseSettings } from '../../infra/aws/settings.ts';
import { FUNCTIONS_K8S_GROUP } from '../../infra/aws/functions-stack.ts';
import { parseListen } from '../../functions/config.ts';
import { INSTALLS } from '../support/shipped-rbac.ts';

type Subject = { kind: string; name: string; namespace?: string };
type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };
type Container = { image: string; command?: string[]; args?: string[]; env?: { name: string; value?: string }[]; envFrom?: { configMapRef: { name: string } }[] };
type Doc = {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  rules?: Rule[];
  roleRef?: { kind: string; name: string };
  subjects?: Subject[];
  data?: Record<string, string>;
  spec?: { template: { spec: { serviceAccountName?: string; containers: Container[] } } };
  file: string;
};

const FILES = [
  'relay/manifest.yaml',
  ...readdirSync('infra/kubernetes').filter((f) => f.endsWith('.yaml') && !f.endsWith('.head.yaml')).map((f) => `infra/kubernetes/${f}`),
  ...readdirSync('infra/webhook').filter((f) => f.endsWith('.yaml')).map((f) => `infra/webhook/${f}`),
];
const load = (file: string): Doc[] => parseAllDocuments(readFileSync(file, 'utf8')).map((d) => ({ ...(d.toJS() as Doc), file })).filter((d) => d.kind);
const all = FILES.flatMap(load);
const of = (kind: string, docs = all): Doc[] => docs.filter((d) => d.kind === kind);
const RELAY_SA = 'ServiceAccount:ephemera-system/ephemera-relay';
const FUNCTIONS = ['ServiceAccount:ephemera-system/ephemera-functions', `Group:${FUNCTIONS_K8S_GROUP}`];
const who = (s: Subject): string => (s.kind === 'ServiceAccount' ? `ServiceAccount:${s.namespace}/${s.name}` : `${s.kind}:${s.name}`);

/** Who may do what with leases where: "<subject> <namespace>" pairs, from Roles and their bindings. */
function leaseGrants(docs: Doc[]): string[] {
  const roles = [...of('Role', docs), ...of('ClusterRole', docs)].filter((r) => r.rules?.some((x) => x.resources.includes('leases')));
  assert.ok(roles.every((r) => r.kind === 'Role'), 'no ClusterRole grants leases (that would reach every namespace)');
  return of('RoleBinding', docs).flatMap((b) => (roles.some((r) => r.metadata.name === b.roleRef?.name && r.metadata.namespace === b.metadata.namespace) ? (b.subjects ?? []).map((s) => `${who(s)} ${b.metadata.namespace}`) : []));
}

describe('Kubernetes manifests', () => {
  test('every Namespace is defined identically wherever it appears, with its Pod Security label', () => {
    const byName = new Map<string, Doc[]>();
    for (const ns of of('Namespace')) byName.set(ns.metadata.name, [...(byName.get(ns.metadata.name) ?? []), ns]);
    assert.deepEqual([...byName.keys()].sort(), ['ephemera-locks', 'ephemera-system']);
    for (const [name, defs] of byName) {
      for (const d of defs) {
        assert.equal(d.metadata.labels?.['pod-security.kubernetes.io/enforce'], 'restricted', `${name} in ${d.file}`);
        assert.deepEqual(d.metadata, defs[0]!.metadata, `${name}: ${d.file} differs from ${defs[0]!.file}: applying one would change the other's labels`);
      }
    }
  });

  test('the README names where each namespace is defined and applies those files before the ones that only use it', () => {
    const readme = readFileSync('README.md', 'utf8');
    const start = readme.indexOf('### Namespaces, RBAC and Leases');
    assert.ok(start >= 0, 'the README has the section');
    const section = readme.slice(start, readme.indexOf('\n### ', start + 1));
    const [prose = '', order = ''] = section.split('Apply order:');
    assert.ok(order, 'the section states the apply order');
    for (const ns of new Set(of('Namespace').map((d) => d.metadata.name))) {
      const definers = [...new Set(of('Namespace').filter((d) => d.metadata.name === ns).map((d) => d.file))];
      for (const f of definers) assert.ok(prose.includes(`\`${f}\``), `the README says ${f} defines ${ns}`);
      const users = [...new Set(all.filter((d) => d.metadata.namespace === ns && !definers.includes(d.file)).map((d) => d.file))];
      for (const u of users) {
        assert.ok(prose.includes(`\`${u}\``), `the README says ${u} uses ${ns} without defining it`);
        const at = order.indexOf(`\`${u}\``);
        assert.ok(at >= 0, `${u} is in the apply order`);
        assert.ok(definers.some((f) => order.includes(`\`${f}\``) && order.indexOf(`\`${f}\``) < at), `${u} is applied after a file that defines ${ns}`);
      }
    }
  });

  test('`patch pods` is granted only by the optional virtual-kubelet ClusterRole', () => {
    const patching = of('ClusterRole').concat(of('Role')).filter((r) => r.rules?.some((x) => x.apiGroups.includes('') && x.resources.includes('pods') && (x.verbs.includes('patch') || x.verbs.includes('*'))));
    assert.deepEqual(patching.map((r) => `${r.file}:${r.metadata.name}`), ['infra/kubernetes/functions-rbac-virtual-kubelet.yaml:ephemera-functions-virtual-kubelet']);
  });

  test('Leases: the relay\'s in ephemera-system, the functions\' in ephemera-locks; the functions may not touch the relay\'s, the relay may only list theirs (its sweep)', () => {
    const grants = leaseGrants(all);
    assert.deepEqual(grants.filter((g) => g.startsWith(RELAY_SA)), [`${RELAY_SA} ephemera-system`, `${RELAY_SA} ephemera-locks`]);
    const sweep = of('Role').filter((r) => r.file === 'relay/manifest.yaml' && r.metadata.namespace === 'ephemera-locks');
    assert.deepEqual(sweep.flatMap((r) => r.rules ?? []), [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['list'] }], 'in ephemera-locks the relay may list, nothing else');
    for (const f of FUNCTIONS) assert.deepEqual(grants.filter((g) => g.startsWith(f)), [`${f} ephemera-locks`]);
    // And the processes are configured to use those namespaces.
    const relayCm = of('ConfigMap').find((c) => c.file === 'relay/manifest.yaml')!;
    assert.equal(relayCm.data?.EPHEMERA_RELAY_LEASE_NAMESPACE, 'ephemera-system');
    assert.equal(relayCm.data?.EPHEMERA_LOCK_NAMESPACE, 'ephemera-locks', 'the relay sweeps where the Lambda locks');
    assert.equal(parseSettings({ clusters: { a: { eks: { name: 'a' } } } }).lockNamespace, 'ephemera-locks', 'the Lambda\'s default lock namespace');
    const inCluster = of('ConfigMap').find((c) => c.file === 'infra/kubernetes/all-in-cluster.yaml')!;
    assert.equal(inCluster.data?.EPHEMERA_LOCK_NAMESPACE, 'ephemera-locks');
    assert.equal(inCluster.data?.EPHEMERA_RELAY_LEASE_NAMESPACE, 'ephemera-system');
  });

  test('one image everywhere, relay/Dockerfile\'s, whose entry point runs every subcommand', () => {
    const containers = of('Deployment').flatMap((d) => d.spec!.template.spec.containers.map((c) => ({ ...c, file: d.file })));
    assert.ok(containers.length >= 3);
    const images = new Set(containers.map((c) => c.image));
    assert.deepEqual([...images], ['ephemera.invalid/ephemera:0.1.0']);
    const dockerfile = readFileSync('relay/Dockerfile', 'utf8');
    assert.match(dockerfile, /ENTRYPOINT \["node", [^\]]*"ephemera\.mjs"\]/);
    assert.match(readFileSync('relay/build.ts', 'utf8'), /bundleNode\('functions\/runtime\/node\/ephemera\.ts'/, 'the bundle is the whole CLI');
    for (const c of containers) {
      assert.equal(c.command, undefined, `${c.file}: the entry point is the image's`);
      assert.ok(['relay', 'webhook', 'start'].includes(c.args?.[0] ?? ''), `${c.file}: args ${JSON.stringify(c.args)}`);
    }
  });

  test('pods run as non-root by the image\'s numeric USER, with no fixed runAsUser (OpenShift\'s restricted-v2 refuses a UID outside the namespace\'s range: version review)', () => {
    assert.match(readFileSync('relay/Dockerfile', 'utf8'), /^USER [1-9]\d*:\d+$/m, 'a numeric non-root USER, which the kubelet can check against runAsNonRoot');
    for (const d of of('Deployment')) {
      const pod = d.spec!.template.spec as { securityContext?: Record<string, unknown>; containers: { securityContext?: Record<string, unknown> }[] };
      assert.equal(pod.securityContext?.runAsNonRoot, true, d.file);
      for (const sc of [pod.securityContext, ...pod.containers.map((c) => c.securityContext)]) assert.equal(sc?.runAsUser, undefined, `${d.file}: no fixed runAsUser`);
    }
  });

  test('each install binds only identities its own files define, or the EKS group in the EKS install; every binding\'s role is defined there too (review94 L1)', () => {
    for (const [name, install] of Object.entries(INSTALLS)) {
      const docs = install.files.flatMap(load);
      const roles = new Set([...of('Role', docs), ...of('ClusterRole', docs)].map((r) => `${r.kind}:${r.metadata.namespace ?? ''}/${r.metadata.name}`));
      const defined = new Set([...of('ServiceAccount', docs).map((s) => `ServiceAccount:${s.metadata.namespace}/${s.metadata.name}`), ...(install.group ? [`Group:${install.group}`] : [])]);
      for (const b of [...of('RoleBinding', docs), ...of('ClusterRoleBinding', docs)]) {
        const ns = b.roleRef?.kind === 'Role' ? b.metadata.namespace : '';
        assert.ok(roles.has(`${b.roleRef?.kind}:${ns}/${b.roleRef?.name}`), `${name}: ${b.file}: ${b.metadata.name} binds a missing ${b.roleRef?.kind} ${b.roleRef?.name}`);
        for (const s of b.subjects ?? []) assert.ok(defined.has(who(s)), `${name}: ${b.file}: ${b.metadata.name} binds ${who(s)}, which this install does not define`);
      }
    }
    const readme = readFileSync('README.md', 'utf8');
    const table = readme.slice(readme.indexOf('### Namespaces, RBAC and Leases'), readme.indexOf('Each install binds only'));
    for (const f of new Set(Object.values(INSTALLS).flatMap((i) => i.files))) assert.ok(table.includes(`\`${f}\``), `the README's table of installs names ${f}`);
    const rbacFiles = new Set(all.filter((d) => ['ServiceAccount', 'Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'].includes(d.kind)).map((d) => d.file));
    assert.deepEqual([...rbacFiles].filter((f) => !Object.values(INSTALLS).some((i) => i.files.includes(f))), [], 'every file with RBAC belongs to an install');
  });

  test('the shared files bind nobody, and each install\'s binding files name the same bindings: applying the new files over the old ones replaces the old bindings\' subjects, never leaves an install without one (review94 L1)', () => {
    for (const f of ['infra/kubernetes/functions-rbac.yaml', 'infra/kubernetes/functions-rbac-virtual-kubelet.yaml']) {
      assert.deepEqual(load(f).filter((d) => d.kind.endsWith('Binding')).map((d) => d.metadata.name), [], `${f} binds nobody`);
    }
    const bindings = (files: string[]): string[] => files.flatMap(load).filter((d) => d.kind.endsWith('Binding')).map((d) => `${d.kind} ${d.metadata.namespace ?? ''}/${d.metadata.name} -> ${d.roleRef?.kind} ${d.roleRef?.name}`).sort();
    assert.deepEqual(bindings(INSTALLS.token.files), bindings(INSTALLS.eks.files));
    assert.ok(bindings(INSTALLS.eks.files).includes('ClusterRoleBinding /ephemera-functions -> ClusterRole ephemera-functions'));
    const vk = (i: keyof typeof INSTALLS): string[] => bindings(INSTALLS[i].files).filter((b) => b.includes('virtual-kubelet'));
    assert.deepEqual(vk('all-in-cluster'), vk('eks'));
    assert.deepEqual(vk('token'), ['ClusterRoleBinding /ephemera-functions-virtual-kubelet -> ClusterRole ephemera-functions-virtual-kubelet']);
  });

  test('the CRDs, and nothing else, carry app.kubernetes.io/component=crd: `kubectl apply -l \'app.kubernetes.io/component!=crd\'` leaves OpenKruise\'s CRD alone (README, "Next to OpenKruise")', () => {
    const crd = (d: Doc): boolean => d.metadata.labels?.['app.kubernetes.io/component'] === 'crd';
    assert.deepEqual(all.filter(crd).map((d) => d.kind).sort(), ['CustomResourceDefinition', 'CustomResourceDefinition']);
    assert.ok(of('CustomResourceDefinition').every(crd));
    for (const f of readdirSync('infra/crds')) assert.ok(crd(parse(readFileSync(`infra/crds/${f}`, 'utf8')) as Doc), f);
  });

  test('cert-manager: the serving certificate is signed by a CA made once, whose CA fills caBundle, so a renewal does not change caBundle', () => {
    type Cm = Doc & { spec: { selfSigned?: object; ca?: { secretName: string }; isCA?: boolean; secretName?: string; issuerRef?: { name: string; kind: string } }; metadata: { annotations?: Record<string, string> } };
    const docs = load('infra/webhook/validating-webhook-service.yaml') as Cm[];
    const issuer = (name: string): Cm | undefined => docs.find((d) => d.kind === 'Issuer' && d.metadata.name === name);
    const certs = docs.filter((d) => d.kind === 'Certificate');
    const webhook = docs.find((d) => d.kind === 'ValidatingWebhookConfiguration');
    const [ns, name] = (webhook?.metadata.annotations?.['cert-manager.io/inject-ca-from'] ?? '').split('/');
    const serving = certs.find((c) => c.metadata.namespace === ns && c.metadata.name === name);
    assert.equal(serving?.spec.secretName, 'ephemera-webhook-tls');
    const signer = issuer(serving.spec.issuerRef?.name ?? '');
    assert.ok(signer?.spec.ca, 'the serving certificate comes from a CA issuer, not a self-signed one (its own CA: every renewal would change caBundle)');
    const ca = certs.find((c) => c.spec.secretName === signer.spec.ca?.secretName);
    assert.equal(ca?.spec.isCA, true);
    assert.ok(issuer(ca.spec.issuerRef?.name ?? '')?.spec.selfSigned, 'the CA is made by the self-signed issuer');
  });

  test('every server in a pod listens on every interface, IPv6 and IPv4 (0.0.0.0 would leave an IPv6-only cluster\'s probes and API server unanswered)', () => {
    const containers = of('Deployment').flatMap((d) => d.spec?.template.spec.containers.map((c) => ({ c, file: d.file })) ?? []);
    const addresses = containers.flatMap(({ c, file }) => [
      ...(c.env ?? []).filter((e) => e.name.endsWith('_LISTEN')).map((e) => ({ file, value: e.value ?? '' })),
      ...(c.args ?? []).flatMap((a, i) => (a === '--listen' ? [{ file, value: c.args?.[i + 1] ?? '' }] : [])),
    ]);
    assert.equal(addresses.length, 3, `the relay's, the all-in-cluster process's and the webhook's: ${JSON.stringify(addresses)}`);
    for (const { file, value } of addresses) assert.equal(parseListen(value)?.host, undefined, `${file}: ${value}`);
  });

  test('no long-lived ServiceAccount token Secret is shipped', () => {
    assert.deepEqual(of('Secret').filter((s) => (s as unknown as { type?: string }).type === 'kubernetes.io/service-account-token'), []);
  });
});

describe('infra/kubernetes/all-in-cluster.yaml', () => {
  const docs = load('infra/kubernetes/all-in-cluster.yaml');

  test('one Deployment: the relay with the in-memory sink (reconcilers in the same process)', () => {
    const deploys = of('Deployment', docs);
    assert.equal(deploys.length, 1);
    const spec = deploys[0]!.spec!.template.spec;
    assert.deepEqual(spec.containers[0]?.args, ['relay', '--sink', 'memory']);
    assert.ok(of('ServiceAccount', docs).some((s) => s.metadata.name === spec.serviceAccountName));
    assert.ok(of('ConfigMap', docs).some((c) => c.metadata.name === spec.containers[0]?.envFrom?.[0]?.configMapRef.name));
  });

  test('its own RBAC: what the relay watches plus everything the Lambda\'s functions may do', () => {
    const own = of('ClusterRole', docs)[0]!.rules!;
    const can = (res: string, verb: string): boolean => own.some((r) => r.resources.includes(res) && r.verbs.includes(verb));
    const relayRules = of('ClusterRole', load('relay/manifest.yaml'))[0]!.rules!;
    const fnRules = of('ClusterRole', load('infra/kubernetes/functions-rbac.yaml'))[0]!.rules!;
    for (const r of [...relayRules, ...fnRules]) for (const res of r.resources) for (const v of r.verbs) assert.ok(can(res, v), `missing ${v} ${res}`);
    const grants = leaseGrants(docs);
    const locks = of('Role', docs).find((r) => r.metadata.namespace === 'ephemera-locks');
    assert.ok(locks?.rules?.some((r) => r.resources.includes('leases') && r.verbs.includes('list')), 'list leases in ephemera-locks: the relay\'s sweep');
    assert.deepEqual(grants.sort(), ['ServiceAccount:ephemera-system/ephemera ephemera-locks', 'ServiceAccount:ephemera-system/ephemera ephemera-system']);
  });

  test('carries the same CRD as infra/crds (node relay/build-manifest.ts)', () => {
    assert.deepEqual(of('CustomResourceDefinition', docs).map(({ file: _f, ...d }) => d), [parse(readFileSync('infra/crds/ephemeraljob.yaml', 'utf8'))]);
  });

  test('every field of the EphemeralJob CRD has a description, so `kubectl explain` says what it means (review78: most status fields said <no description>)', () => {
    type Schema = { description?: string; properties?: Record<string, Schema>; items?: Schema };
    const crd = parse(readFileSync('infra/crds/ephemeraljob.yaml', 'utf8')) as { spec: { versions: { schema: { openAPIV3Schema: Schema } }[] } };
    const missing: string[] = [];
    const walk = (s: Schema, path: string): void => {
      // metadata is ObjectMeta, which the API server describes itself.
      for (const [k, v] of Object.entries(s.properties ?? {})) {
        if (k !== 'metadata' && !v.description?.trim()) missing.push(`${path}${k}`);
        walk(v, `${path}${k}.`);
        if (v.items) walk(v.items, `${path}${k}[].`);
      }
    };
    for (const v of crd.spec.versions) walk(v.schema.openAPIV3Schema, '');
    assert.deepEqual(missing, []);
  });

  test('each one-file install is exactly its head and the CRD: an edit made to the built file alone would be undone by the next build', () => {
    const crd = readFileSync('infra/crds/ephemeraljob.yaml', 'utf8');
    for (const [head, built] of [['relay/manifest.head.yaml', 'relay/manifest.yaml'], ['infra/kubernetes/all-in-cluster.head.yaml', 'infra/kubernetes/all-in-cluster.yaml']] as const) {
      assert.ok(readFileSync(built, 'utf8') === `${readFileSync(head, 'utf8')}${crd}`, `${built} is not ${head} + the CRD: edit the head, then run node relay/build-manifest.ts`);
    }
  });
});
