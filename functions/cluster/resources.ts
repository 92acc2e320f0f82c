// The resources the fake serves, with what discovery and the REST layer need to know.

/** One served resource (a row of discovery plus the REST behaviour that differs by kind). */
export interface ResourceDef {
  group: string;
  version: string;
  /** Plural, lower case: the URL segment. */
  resource: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  /** Discovery's categories: `kubectl get all` lists the kinds in `all`. */
  categories?: string[];
  /** Subresources served beside the main one ('status', 'ephemeralcontainers'). */
  subresources?: string[];
  /** A custom resource: strategic merge patch is refused and PUT needs a resourceVersion. */
  custom?: boolean;
  /** PUT needs a resourceVersion (the strategy's AllowUnconditionalUpdate() is false: Leases, custom resources). */
  conditionalUpdate?: boolean;
  /** metadata.generation is kept and bumped on spec changes. */
  generation?: boolean;
  /** Field selector labels beyond metadata.name / metadata.namespace, as JSON paths. */
  fieldLabels?: string[];
  /** DELETE answers with the deleted object (pods, namespaces) instead of a Success Status. */
  returnDeletedObject?: boolean;
  /** Names are DNS-1123 labels (namespaces) rather than subdomains. */
  labelName?: boolean;
  /** A custom resource's structural schema (openAPIV3Schema) from its installed CRD: pruning, validation, OpenAPI (crd-prune.ts). */
  schema?: unknown;
  /** The installed CRD's additionalPrinterColumns for this version (kubectl's tables). */
  columns?: unknown[];
  /**
   * A PUT to a name that does not exist creates the object (the resource's strategy answers
   * AllowCreateOnUpdate() true in kube-apiserver: Leases do; ConfigMaps, Pods and custom
   * resources answer 404).
   */
  createOnUpdate?: boolean;
}

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

const EVENT_FIELDS = [
  'involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid',
  'involvedObject.apiVersion', 'involvedObject.resourceVersion', 'involvedObject.fieldPath',
  'reason', 'reportingComponent', 'source', 'type',
];

/** Everything the fake serves unless told otherwise. */
export const BUILTIN_RESOURCES: readonly ResourceDef[] = [
  {
    group: '', version: 'v1', resource: 'pods', singular: 'pod', kind: 'Pod', namespaced: true, shortNames: ['po'], categories: ['all'],
    subresources: ['status', 'ephemeralcontainers'], generation: true, returnDeletedObject: true,
    fieldLabels: ['spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'spec.hostNetwork', 'status.phase', 'status.podIP', 'status.nominatedNodeName'],
  },
  { group: '', version: 'v1', resource: 'nodes', singular: 'node', kind: 'Node', namespaced: false, shortNames: ['no'], subresources: ['status'], fieldLabels: ['spec.unschedulable'] },
  { group: '', version: 'v1', resource: 'namespaces', singular: 'namespace', kind: 'Namespace', namespaced: false, shortNames: ['ns'], subresources: ['status'], fieldLabels: ['status.phase'], labelName: true, returnDeletedObject: true },
  { group: '', version: 'v1', resource: 'events', singular: 'event', kind: 'Event', namespaced: true, shortNames: ['ev'], fieldLabels: EVENT_FIELDS },
  { group: '', version: 'v1', resource: 'configmaps', singular: 'configmap', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'] },
  { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', singular: 'lease', kind: 'Lease', namespaced: true, createOnUpdate: true, conditionalUpdate: true },
  {
    group: 'events.k8s.io', version: 'v1', resource: 'events', singular: 'event', kind: 'Event', namespaced: true, shortNames: ['ev'],
    fieldLabels: ['regarding.kind', 'regarding.namespace', 'regarding.name', 'regarding.uid', 'reason', 'reportingController', 'type'],
  },
  {
    group: 'apps.kruise.io', version: 'v1alpha1', resource: 'ephemeraljobs', singular: 'ephemeraljob', kind: 'EphemeralJob', namespaced: true,
    shortNames: ['ejob'], subresources: ['status'], custom: true, generation: true,
  },
  {
    group: 'apps.kruise.io', version: 'v1alpha1', resource: 'containerrecreaterequests', singular: 'containerrecreaterequest', kind: 'ContainerRecreateRequest',
    namespaced: true, shortNames: ['crr'], subresources: ['status'], custom: true, generation: true,
  },
];

/** apiVersion as objects carry it: `v1` or `group/version`. */
export function apiVersionOf(def: ResourceDef): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}

/** Looks resources up by URL parts or by apiVersion + kind. */
export class ResourceRegistry {
  readonly defs: readonly ResourceDef[];

  constructor(defs: readonly ResourceDef[]) {
    this.defs = defs;
  }

  byPath(group: string, version: string, resource: string): ResourceDef | undefined {
    return this.defs.find((d) => d.group === group && d.version === version && d.resource === resource);
  }

  byKind(apiVersion: string, kind: string): ResourceDef | undefined {
    return this.defs.find((d) => apiVersionOf(d) === apiVersion && d.kind === kind);
  }

  /** Group → versions, in registration order (for /apis). */
  groups(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const d of this.defs) {
      const versions = out.get(d.group) ?? [];
      if (!versions.includes(d.version)) versions.push(d.version);
      out.set(d.group, versions);
    }
    return out;
  }

  /** The APIResourceList of one group/version, subresources included. */
  resourceList(group: string, version: string): unknown[] {
    const rows: unknown[] = [];
    for (const d of this.defs.filter((x) => x.group === group && x.version === version)) {
      rows.push({ name: d.resource, singularName: d.singular, namespaced: d.namespaced, kind: d.kind, verbs: VERBS, ...(d.shortNames ? { shortNames: d.shortNames } : {}), ...(d.categories ? { categories: d.categories } : {}) });
      for (const sub of d.subresources ?? []) {
        rows.push({ name: `${d.resource}/${sub}`, singularName: '', namespaced: d.namespaced, kind: d.kind, verbs: ['get', 'patch', 'update'] });
      }
    }
    return rows;
  }
}

/** A resource path's group, version and what follows them (`/api/v1/…`, `/apis/GROUP/VERSION/…`); undefined for any other path. */
export function splitApiPath(path: string): { group: string; version: string; tail: string[] } | undefined {
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'api' && parts.length >= 3) return { group: '', version: parts[1]!, tail: parts.slice(2) };
  if (parts[0] === 'apis' && parts.length >= 4) return { group: parts[1]!, version: parts[2]!, tail: parts.slice(3) };
  return undefined;
}
