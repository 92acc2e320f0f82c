// Authentication by bearer token and RBAC as kube-apiserver decides them, for the Roles,
// ClusterRoles and bindings a test or the demo installs: a request no rule allows is a 403
// worded as kube-apiserver words it. Without it the embedded server did whatever any client
// asked, so a verb or a namespace missing from a shipped manifest failed only on a real
// cluster. Rules from k8s.io/kubernetes plugin/pkg/auth/authorizer/rbac (rbac.go RuleAllows,
// rbac/v1 evaluation_helpers.go), subjects from pkg/registry/rbac/validation (appliesTo),
// the answer from k8s.io/apiserver endpoints/handlers/responsewriters (forbiddenMessage).
import { splitApiPath } from './resources.ts';
import { ApiError } from './status.ts';

/** An authenticated user: what a token stands for. */
export interface User {
  username: string;
  groups: string[];
}

/** What a resource request asks, as the authorizer sees it (RequestInfo). */
export interface Attributes {
  verb: string;
  apiGroup: string;
  resource: string;
  subresource: string;
  /** '' for cluster-scoped requests and requests across all namespaces. */
  namespace: string;
  /** '' when the request names no object. */
  name: string;
}

/** Who may call the embedded server: tokens and the RBAC documents that grant them. */
export interface Authorization {
  /** Bearer token → the user it authenticates. A request with another token is a 401. */
  users: Record<string, User>;
  /** Roles, ClusterRoles, RoleBindings and ClusterRoleBindings (other kinds are ignored). */
  rbac: unknown[];
}

interface Rule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames: string[];
}

interface Subject {
  kind: string;
  name: string;
  namespace?: string;
}

interface Binding {
  /** '' for a ClusterRoleBinding. */
  namespace: string;
  roleRef: { kind: string; name: string };
  subjects: Subject[];
}

/** A ServiceAccount's user, as its token authenticates it. */
export function serviceAccountUser(namespace: string, name: string): User {
  return { username: `system:serviceaccount:${namespace}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'] };
}

/** The user of a request carrying no token (kube-apiserver's anonymous authentication). */
export const ANONYMOUS: User = { username: 'system:anonymous', groups: ['system:unauthenticated'] };

/** Paths every user may GET, anonymous ones too (system:public-info-viewer, system:discovery for the authenticated). */
const PUBLIC_PATHS = new Set(['/version', '/version/', '/healthz', '/livez', '/readyz']);

/** The decisions of kube-apiserver's RBAC authorizer for one set of roles and bindings. */
export class Rbac {
  private readonly roles = new Map<string, Rule[]>();
  private readonly bindings: Binding[] = [];
  private readonly users: Record<string, User>;

  constructor(auth: Authorization) {
    this.users = auth.users;
    for (const doc of auth.rbac) this.add(doc as Doc);
  }

  /** The user a request's Authorization header stands for; a 401 for a token nobody has. */
  authenticate(header: string | undefined): User {
    if (!header) return ANONYMOUS;
    const token = header.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : '';
    const user = Object.hasOwn(this.users, token) ? this.users[token] : undefined;
    if (!user) throw new ApiError({ message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
    return user;
  }

  /** A path that is no resource (discovery, /version, /openapi): any authenticated user, and anonymous ones for the public few. */
  checkPath(user: User, path: string): void {
    if (user !== ANONYMOUS || PUBLIC_PATHS.has(path)) return;
    throw new ApiError({ message: `forbidden: User "${user.username}" cannot get path "${path}"`, reason: 'Forbidden', details: {}, code: 403 });
  }

  /** Throws kube-apiserver's 403 unless some rule bound to the user allows the request. */
  check(user: User, a: Attributes): void {
    if (this.allows(user, a)) return;
    const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    const scope = a.namespace ? `in the namespace "${a.namespace}"` : 'at the cluster scope';
    const why = `User "${user.username}" cannot ${a.verb} resource "${resource}" in API group "${a.apiGroup}" ${scope}`;
    const qualified = a.apiGroup ? `${a.resource}.${a.apiGroup}` : a.resource;
    const message = a.name ? `${qualified} "${a.name}" is forbidden: ${why}` : `${qualified} is forbidden: ${why}`;
    throw new ApiError({ message, reason: 'Forbidden', details: { name: a.name || undefined, group: a.apiGroup || undefined, kind: a.resource }, code: 403 });
  }

  allows(user: User, a: Attributes): boolean {
    if (user.groups.includes('system:masters')) return true;
    return this.bindings.some((b) => (b.namespace === '' || b.namespace === a.namespace) && b.subjects.some((s) => appliesTo(user, s, b.namespace))
      && (this.roles.get(roleKey(b.roleRef.kind, b.roleRef.kind === 'Role' ? b.namespace : '', b.roleRef.name)) ?? []).some((r) => ruleAllows(r, a)));
  }

  private add(doc: Doc): void {
    const namespace = doc?.metadata?.namespace ?? '';
    switch (doc?.kind) {
      case 'Role':
      case 'ClusterRole':
        this.roles.set(roleKey(doc.kind, doc.kind === 'Role' ? namespace : '', doc.metadata?.name ?? ''), (doc.rules ?? []).map((r) => ({
          verbs: r.verbs ?? [], apiGroups: r.apiGroups ?? [], resources: r.resources ?? [], resourceNames: r.resourceNames ?? [],
        })));
        break;
      case 'RoleBinding':
      case 'ClusterRoleBinding':
        if (doc.roleRef) this.bindings.push({ namespace: doc.kind === 'RoleBinding' ? namespace : '', roleRef: doc.roleRef, subjects: doc.subjects ?? [] });
        break;
      default:
    }
  }
}

type Doc = {
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  rules?: Partial<Rule>[];
  roleRef?: { kind: string; name: string };
  subjects?: Subject[];
} | undefined;

const roleKey = (kind: string, namespace: string, name: string): string => `${kind}/${namespace}/${name}`;

/** appliesTo: a User by name, a Group by membership, a ServiceAccount by its user (its namespace defaults to the binding's). */
function appliesTo(user: User, s: Subject, bindingNamespace: string): boolean {
  switch (s.kind) {
    case 'User': return user.username === s.name;
    case 'Group': return user.groups.includes(s.name);
    case 'ServiceAccount': return user.username === `system:serviceaccount:${s.namespace || bindingNamespace}:${s.name}`;
    default: return false;
  }
}

/** RuleAllows for a resource request: verb, API group, resource (or `*`, `resource/sub`, `*\/sub`), and the names if the rule has any. */
function ruleAllows(r: Rule, a: Attributes): boolean {
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  return (r.verbs.includes('*') || r.verbs.includes(a.verb))
    && (r.apiGroups.includes('*') || r.apiGroups.includes(a.apiGroup))
    && r.resources.some((x) => x === '*' || x === combined || (a.subresource !== '' && x === `*/${a.subresource}`))
    && (r.resourceNames.length === 0 || r.resourceNames.includes(a.name));
}

/**
 * What a request asks, read from its path as kube-apiserver's RequestInfoFactory reads it
 * (whether or not the resource is served: an unserved one is still authorized first), or
 * undefined for a path that names no resource (discovery, /version, /openapi).
 */
export function requestAttributes(method: string, path: string, query: Record<string, string>): Attributes | undefined {
  const split = splitApiPath(path);
  if (!split) return undefined;
  const apiGroup = split.group;
  let rest = split.tail;
  let namespace = '';
  if (rest[0] === 'namespaces' && rest.length > 1) {
    namespace = rest[1]!;
    // A namespace's own path (and its subresources: status, finalize) is the namespaces resource.
    if (rest.length > 2 && !['status', 'finalize'].includes(rest[2]!)) rest = rest.slice(2);
  }
  const [resource = '', named = '', subresource = ''] = rest;
  const watch = query.watch === 'true' || query.watch === '1';
  const verb = VERB_BY_METHOD[method] ?? method.toLowerCase();
  const collectionVerb = method === 'GET' ? (watch ? 'watch' : 'list') : method === 'DELETE' ? 'deletecollection' : verb;
  const name = named || (method === 'GET' ? selectedName(query.fieldSelector) : '');
  return { verb: named ? verb : collectionVerb, apiGroup, resource, subresource, namespace, name };
}

const VERB_BY_METHOD: Record<string, string> = { GET: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

/**
 * The name a LIST or WATCH is authorized for: kube-apiserver's RequestInfoFactory takes it
 * from a fieldSelector that requires `metadata.name` to be exactly one value.
 */
export function selectedName(fieldSelector: string | undefined): string {
  for (const term of (fieldSelector ?? '').split(',')) {
    const m = /^\s*metadata\.name\s*==?\s*(.*?)\s*$/.exec(term);
    if (m && m[1] && !m[1].includes('/') && m[1] !== '.' && m[1] !== '..') return m[1];
  }
  return '';
}
