// The shipped manifests with their cluster-wide grants limited to some namespaces, for a
// deployment whose relay watches only those (EPHEMERA_RELAY_NAMESPACES) (review94 L3): the
// files grant the relay, the functions and the all-in-cluster process their rights with
// ClusterRoleBindings, so a deployment told to watch two namespaces could still list every
// pod of the cluster and inject containers into any of them. Prints the same files to stdout
// with each ClusterRole's rules on namespaced resources as a Role in every listed namespace,
// each ClusterRoleBinding as a RoleBinding there, and what is cluster-scoped (`get nodes`, with
// which the SidecarTerminator tells a virtual-kubelet node; without it the node is "unknown")
// as a ClusterRole of its own. The lock and leader-Lease Roles are namespaced already and stay;
// the relay's ConfigMap gets the same namespaces. Apply the output instead of the files:
//   node infra/kubernetes/namespaced.ts --namespaces team-a,team-b relay/manifest.yaml \
//     infra/kubernetes/functions-rbac.yaml infra/kubernetes/functions-rbac-eks.yaml > ephemera.yaml
// --group G: the EKS group of a stack whose settings say `kubernetesGroup: G`, bound instead
// of ephemera:functions (its bindings outside the listed namespaces are named after it, so
// stacks of different namespaces can share the cluster's lock namespace).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Document, isMap, isNode, isScalar, parseAllDocuments } from 'yaml';
import { NamespaceName } from '../../functions/config.ts';
import { FUNCTIONS_K8S_GROUP } from '../aws/settings.ts';

/** What to limit the grants to. */
export interface NamespacedOptions {
  namespaces: string[];
  /** The EKS group the functions' role is mapped to (the settings' kubernetesGroup); default ephemera:functions. */
  group?: string;
}

/** A manifest file: where it was read from (named in errors and in the output), and its text. */
export interface ManifestFile {
  path: string;
  text: string;
}

type Rule = { apiGroups?: string[]; resources?: string[]; verbs?: string[]; resourceNames?: string[] };
type Subject = { kind: string; name: string; apiGroup?: string; namespace?: string };
type Rbac = { kind: string; metadata: { name: string; namespace?: string }; rules?: Rule[]; roleRef?: { apiGroup: string; kind: string; name: string }; subjects?: Subject[] };

/** What the shipped ClusterRoles name, by scope: any other resource stops the transform, so a new rule is placed on purpose. */
const NAMESPACED = new Set(['pods', 'pods/ephemeralcontainers', 'pods/status', 'events', 'ephemeraljobs', 'ephemeraljobs/status', 'containerrecreaterequests']);
const CLUSTER_SCOPED = new Set(['nodes']);
const RBAC_API = 'rbac.authorization.k8s.io';
/** The name suffix of the ClusterRole (and its binding) that keeps a role's cluster-scoped rules. */
const CLUSTER_PART = '-nodes';

/** The rules of a ClusterRole split by scope: namespaced resources for the Roles, the rest for a ClusterRole. */
function splitRules(name: string, rules: Rule[]): { namespaced: Rule[]; cluster: Rule[] } {
  const namespaced: Rule[] = [];
  const cluster: Rule[] = [];
  for (const r of rules) {
    const resources = r.resources ?? [];
    const unknown = resources.filter((x) => !NAMESPACED.has(x) && !CLUSTER_SCOPED.has(x));
    if (unknown.length > 0) throw new Error(`ClusterRole ${name}: not known to be namespaced or cluster-scoped: ${unknown.join(', ')} (infra/kubernetes/namespaced.ts)`);
    const ns = resources.filter((x) => NAMESPACED.has(x));
    const cs = resources.filter((x) => CLUSTER_SCOPED.has(x));
    if (ns.length > 0) namespaced.push({ ...r, resources: ns });
    if (cs.length > 0) cluster.push({ ...r, resources: cs });
  }
  return { namespaced, cluster };
}

/** One generated document, carrying the comment of the one it replaces (on the first only). */
function emit(obj: unknown, comment: string | null | undefined): Document {
  const d = new Document(obj);
  if (comment) d.commentBefore = comment;
  return d;
}

/** The Group subjects renamed to the stack's group, and the binding's name when it is not the default's and the binding is outside the listed namespaces. */
function regroup(b: Rbac, o: Required<NamespacedOptions>): Rbac {
  if (o.group === FUNCTIONS_K8S_GROUP || !(b.subjects ?? []).some((s) => s.kind === 'Group' && s.name === FUNCTIONS_K8S_GROUP)) return b;
  const subjects = (b.subjects ?? []).map((s) => (s.kind === 'Group' && s.name === FUNCTIONS_K8S_GROUP ? { ...s, name: o.group } : s));
  const shared = b.metadata.namespace === undefined || !o.namespaces.includes(b.metadata.namespace);
  return { ...b, metadata: { ...b.metadata, name: shared ? `${b.metadata.name}:${o.group}` : b.metadata.name }, subjects };
}

/** A ClusterRoleBinding as RoleBindings in every namespace, and one ClusterRoleBinding for the role's cluster-scoped part. */
function bindings(b: Rbac, role: { namespaced: Rule[]; cluster: Rule[] }, o: Required<NamespacedOptions>): Rbac[] {
  const subjects = b.subjects ?? [];
  const roleName = b.roleRef?.name ?? '';
  const out: Rbac[] = [];
  if (role.namespaced.length > 0) {
    for (const namespace of o.namespaces) out.push({ kind: 'RoleBinding', metadata: { name: b.metadata.name, namespace }, roleRef: { apiGroup: RBAC_API, kind: 'Role', name: roleName }, subjects });
  }
  if (role.cluster.length > 0) out.push({ kind: 'ClusterRoleBinding', metadata: { name: `${b.metadata.name}${CLUSTER_PART}` }, roleRef: { apiGroup: RBAC_API, kind: 'ClusterRole', name: `${roleName}${CLUSTER_PART}` }, subjects });
  return out.map((x) => regroup({ apiVersion: `${RBAC_API}/v1`, ...x } as Rbac, o));
}

/** A ClusterRole as a Role in every namespace, and a ClusterRole of its cluster-scoped rules. */
function roles(r: Rbac, role: { namespaced: Rule[]; cluster: Rule[] }, namespaces: string[]): unknown[] {
  const apiVersion = `${RBAC_API}/v1`;
  return [
    ...(role.namespaced.length > 0 ? namespaces.map((namespace) => ({ apiVersion, kind: 'Role', metadata: { name: r.metadata.name, namespace }, rules: role.namespaced })) : []),
    ...(role.cluster.length > 0 ? [{ apiVersion, kind: 'ClusterRole', metadata: { name: `${r.metadata.name}${CLUSTER_PART}` }, rules: role.cluster }] : []),
  ];
}

/** The options checked: namespace names, at least one, no repeats; a group of one's own. */
function checked(o: NamespacedOptions): Required<NamespacedOptions> {
  if (o.namespaces.length === 0) throw new Error('--namespaces: name at least one namespace (without any, the shipped files grant what they say)');
  for (const ns of o.namespaces) {
    const r = NamespaceName.safeParse(ns);
    if (!r.success) throw new Error(`--namespaces: '${ns}' is not a namespace name (DNS-1123 label)`);
  }
  if (new Set(o.namespaces).size !== o.namespaces.length) throw new Error('--namespaces: a namespace is named twice');
  // Trimmed as the AWS settings' kubernetesGroup is: a stray space would bind a group no access entry maps to (review98).
  const group = (o.group ?? FUNCTIONS_K8S_GROUP).trim();
  if (!group || group.startsWith('system:')) throw new Error(`--group: '${group}' is not a group of your own`);
  return { namespaces: o.namespaces, group };
}

/** Every document of the files, in order, with the file it came from; a file's header (how to apply that file) becomes its name. */
function documents(files: ManifestFile[]): { doc: Document; file: string }[] {
  return files.flatMap((f) => parseAllDocuments(f.text).map((doc, i) => {
    if (doc.errors.length > 0) throw new Error(`${f.path}: ${doc.errors[0]!.message}`);
    if (i === 0) {
      // A header that no `---` precedes is parsed as the comment of the first key.
      const first = isMap(doc.contents) ? doc.contents.items[0]?.key : undefined;
      if (isNode(first)) first.commentBefore = null;
      doc.commentBefore = ` From ${f.path}.`;
    }
    return { doc: doc as Document, file: f.path };
  })).filter((d) => d.doc.contents !== null);
}

/** A relay's ConfigMap watching the namespaces its grants are limited to, said in place of its comment on the setting. */
function watchOnly(doc: Document, namespaces: string[]): void {
  const data = doc.get('data', true);
  const pair = isMap(data) ? data.items.find((p) => isScalar(p.key) && p.key.value === 'EPHEMERA_RELAY_NAMESPACES') : undefined;
  if (!isMap(data) || !pair) return;
  // The comment above the first key of a mapping is the mapping's.
  if (data.items[0] === pair) data.commentBefore = null;
  if (isNode(pair.key)) pair.key.commentBefore = ' The namespaces the grants are limited to (infra/kubernetes/namespaced.ts).';
  pair.value = doc.createNode(namespaces.join(','));
}

/** One document of the input as the documents of the output. */
function transform(d: { doc: Document; file: string }, clusterRoles: Map<string, { namespaced: Rule[]; cluster: Rule[] }>, o: Required<NamespacedOptions>): Document[] {
  const obj = d.doc.toJS() as Rbac;
  const comment = d.doc.commentBefore;
  switch (obj.kind) {
    case 'ClusterRole':
      return roles(obj, clusterRoles.get(obj.metadata.name)!, o.namespaces).map((x, i) => emit(x, i === 0 ? comment : null));
    case 'ClusterRoleBinding': {
      const role = clusterRoles.get(obj.roleRef?.name ?? '');
      if (!role) throw new Error(`${d.file}: ClusterRoleBinding ${obj.metadata.name} binds ClusterRole ${obj.roleRef?.name ?? ''}, which none of the files defines: name its file too`);
      return bindings(obj, role, o).map((x, i) => emit(x, i === 0 ? comment : null));
    }
    case 'RoleBinding': {
      const b = regroup(obj, o);
      return [b === obj ? d.doc : emit(b, comment)];
    }
    case 'ConfigMap':
      watchOnly(d.doc, o.namespaces);
      return [d.doc];
    default:
      return [d.doc];
  }
}

/** The files as one multi-document YAML stream, their cluster-wide grants limited to the namespaces. */
export function namespacedManifests(files: ManifestFile[], options: NamespacedOptions): string {
  const o = checked(options);
  const docs = documents(files);
  const clusterRoles = new Map(docs.map((d) => d.doc.toJS() as Rbac).filter((r) => r.kind === 'ClusterRole').map((r) => [r.metadata.name, splitRules(r.metadata.name, r.rules ?? [])]));
  const bindsGroup = docs.some((d) => ((d.doc.toJS() as Rbac).subjects ?? []).some((x) => x.kind === 'Group' && x.name === FUNCTIONS_K8S_GROUP));
  if (o.group !== FUNCTIONS_K8S_GROUP && !bindsGroup) throw new Error(`--group ${o.group}: none of the files binds the group ${FUNCTIONS_K8S_GROUP} (infra/kubernetes/functions-rbac-eks.yaml does)`);
  const out = docs.flatMap((d) => transform(d, clusterRoles, o));
  const head = `# Generated by infra/kubernetes/namespaced.ts --namespaces ${o.namespaces.join(',')}${options.group ? ` --group ${o.group}` : ''} from\n# ${files.map((f) => f.path).join(' ')}:\n# their grants limited to these namespaces (README, "Namespaces, RBAC and Leases").\n# Apply this instead of those files, and generate it again from each new version of them.\n`;
  // lineWidth 0: the files' one-line flow mappings (roleRef, subjects) stay on one line.
  return head + out.map((d) => d.toString({ lineWidth: 0 }).replace(/^---\n/, '')).join('---\n');
}

/** `node infra/kubernetes/namespaced.ts --namespaces a,b [--group G] FILE…`: the output on stdout. */
function main(argv: string[]): void {
  const { values, positionals } = parseArgs({ args: argv, options: { namespaces: { type: 'string' }, group: { type: 'string' } }, allowPositionals: true, strict: true });
  if (values.namespaces === undefined || positionals.length === 0) throw new Error('usage: node infra/kubernetes/namespaced.ts --namespaces team-a,team-b [--group ephemera:functions] FILE…');
  const files = positionals.map((path) => ({ path, text: readFileSync(path, 'utf8') }));
  process.stdout.write(namespacedManifests(files, { namespaces: values.namespaces.split(','), ...(values.group !== undefined ? { group: values.group } : {}) }));
}

if (import.meta.main) {
  try {
    main(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 2;
  }
}
