// Discovery documents (legacy, non-aggregated): enough for client-node's
// KubernetesObjectApi and for kubectl's RESTMapper.
import type { ResourceRegistry } from './resources.ts';

/** The /version document; kubectl prints it and checks the skew. */
export const VERSION_INFO = {
  major: '1', minor: '33', gitVersion: 'v1.33.0-ephemera', gitCommit: '', gitTreeState: 'clean',
  buildDate: '2025-01-01T00:00:00Z', goVersion: 'n/a', compiler: 'n/a', platform: 'linux/amd64',
};

/** The discovery document for a path, or undefined when the path is not a discovery path. */
export function discovery(registry: ResourceRegistry, path: string, serverAddress: string): unknown {
  const parts = path.split('/').filter(Boolean);
  const groups = registry.groups();
  if (path === '/api' || path === '/api/') {
    return { kind: 'APIVersions', versions: groups.get('') ?? [], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
  }
  if (parts[0] === 'api' && parts.length === 2 && groups.get('')?.includes(parts[1]!)) {
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: parts[1], resources: registry.resourceList('', parts[1]!) };
  }
  if (parts[0] !== 'apis') return undefined;
  const groupDoc = (name: string, versions: string[]): unknown => ({
    name,
    versions: versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v })),
    preferredVersion: { groupVersion: `${name}/${versions[0]}`, version: versions[0] },
  });
  if (parts.length === 1) {
    const list = [...groups].filter(([g]) => g !== '').map(([g, vs]) => groupDoc(g, vs));
    return { kind: 'APIGroupList', apiVersion: 'v1', groups: list };
  }
  const versions = groups.get(parts[1]!);
  if (!versions || parts[1] === '') return undefined;
  if (parts.length === 2) return { kind: 'APIGroup', apiVersion: 'v1', ...(groupDoc(parts[1]!, versions) as object) };
  if (parts.length === 3 && versions.includes(parts[2]!)) {
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${parts[1]}/${parts[2]}`, resources: registry.resourceList(parts[1]!, parts[2]!) };
  }
  return undefined;
}
