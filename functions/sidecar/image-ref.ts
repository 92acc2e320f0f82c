/**
 * An image reference as the kubelet reports it in `status.containerStatuses[].image`: the
 * runtime normalises it with Docker's rules (github.com/distribution/reference
 * ParseNormalizedNamed, then TagNameOnly), so `example/exit:1` comes back as
 * `docker.io/example/exit:1` and `busybox` as `docker.io/library/busybox:latest`.
 * - no registry host: `docker.io/` (a host is a first path component that has `.` or `:`,
 *   is `localhost`, or has an upper-case letter, which no repository path may have);
 * - a single path component on Docker Hub: `library/` before it;
 * - neither tag nor digest: `:latest`.
 */
export function normalizeImageRef(ref: string): string {
  let name = ref.trim();
  let digest = '';
  const at = name.indexOf('@');
  if (at >= 0) {
    digest = name.slice(at);
    name = name.slice(0, at);
  }
  let tag = '';
  const colon = name.lastIndexOf(':');
  if (colon > name.lastIndexOf('/')) {
    tag = name.slice(colon);
    name = name.slice(0, colon);
  }
  const [host, path] = splitHost(name);
  const repository = host === 'docker.io' && !path.includes('/') ? `library/${path}` : path;
  return `${host}/${repository}${tag || digest ? tag : ':latest'}${digest}`;
}

/** Whether two references name the same image once normalised; false if either is absent. */
export function sameImage(a: string | undefined, b: string | undefined): boolean {
  return a !== undefined && b !== undefined && normalizeImageRef(a) === normalizeImageRef(b);
}

function splitHost(name: string): [string, string] {
  const slash = name.indexOf('/');
  if (slash < 0) return ['docker.io', name];
  const first = name.slice(0, slash);
  const isHost = /[.:]/.test(first) || first === 'localhost' || first !== first.toLowerCase();
  if (!isHost) return ['docker.io', name];
  // Docker's legacy name for the Hub.
  return [first === 'index.docker.io' ? 'docker.io' : first, name.slice(slash + 1)];
}
