// Which proxy the functions' requests to an API server go through, decided as client-go
// decides it: the kubeconfig's `proxy-url` for every request of its cluster, else the
// environment's HTTPS_PROXY / HTTP_PROXY and NO_PROXY as Go's ProxyFromEnvironment reads
// them (golang.org/x/net/http/httpproxy): the upper-case name first, a proxy without a
// scheme taken as http://, never a proxy for localhost or a loopback address, and NO_PROXY
// entries that are `*`, an IP, a CIDR, or a domain matching itself and its subdomains
// (`.domain` and `*.domain`: its subdomains only), each with an optional port. Node's own
// agents then tunnel through it (the `proxyEnv` agent option, Node 24.5 and later): an
// HTTP CONNECT for an https server.

/** Where a proxy came from, for messages. */
type ProxySource = 'proxy-url' | 'HTTPS_PROXY' | 'HTTP_PROXY';

export interface Proxy {
  url: URL;
  from: ProxySource;
}

type Env = Record<string, string | undefined>;

const firstSet = (env: Env, ...names: string[]): string | undefined => names.map((n) => env[n]).find((v) => v !== undefined && v !== '');

/** The proxy for requests to `server`, or undefined to go direct. Throws on a proxy Node cannot use. */
export function proxyFor(server: URL, proxyUrl: string | undefined, env: Env = process.env): Proxy | undefined {
  if (proxyUrl) return usable(parseProxy(proxyUrl, 'proxy-url'), 'proxy-url', server);
  const https = server.protocol === 'https:';
  const from: ProxySource = https ? 'HTTPS_PROXY' : 'HTTP_PROXY';
  const raw = https ? firstSet(env, 'HTTPS_PROXY', 'https_proxy') : firstSet(env, 'HTTP_PROXY', 'http_proxy');
  if (!raw || !useProxy(server, firstSet(env, 'NO_PROXY', 'no_proxy') ?? '')) return undefined;
  return usable(parseProxy(raw, from), from, server);
}

/** A proxy URL without its credentials, for messages and logs. */
function redactedProxy(url: URL): string {
  return `${url.protocol}//${url.host}`;
}

function parseProxy(raw: string, from: ProxySource): URL {
  // Go's parseProxy: a value that is no URL with a scheme and a host is tried as http://value.
  const parsed = URL.parse(raw);
  if (parsed?.host) return parsed;
  const retried = URL.parse(`http://${raw}`);
  if (retried?.host) return retried;
  throw new Error(`${from}: "${raw.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^@/]*@/i, '$1')}" is not a proxy URL`);
}

function usable(url: URL, from: ProxySource, server: URL): Proxy {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    const fix = from === 'proxy-url' ? 'give the cluster an HTTP proxy, or none' : `unset it, or add ${server.hostname} to NO_PROXY`;
    throw new Error(`${from} ${redactedProxy(url)}: ephemera's API client tunnels through an HTTP(S) proxy only (HTTP CONNECT); ${url.protocol.replace(/:$/, '')} is not supported: ${fix}`);
  }
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  if (major < 24 || (major === 24 && minor < 5)) {
    throw new Error(`${from} ${redactedProxy(url)}: proxying needs Node.js 24.5 or later (this is ${process.version}); run the project's own Node (npm ci installs it)`);
  }
  return { url, from };
}

const net = process.getBuiltinModule('node:net');

/** Go's httpproxy useProxy: false for localhost, loopback addresses and what NO_PROXY names. */
function useProxy(server: URL, noProxy: string): boolean {
  const host = server.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = server.port || (server.protocol === 'https:' ? '443' : '80');
  if (host === 'localhost') return false;
  const family = net.isIP(host);
  if (family && isLoopback(host, family)) return false;
  return !noProxy.split(',').some((entry) => noProxyMatches(entry.trim().toLowerCase(), host, port, family));
}

/** 127.0.0.0/8, ::1, and 127/8 mapped into IPv6 (Go's IsLoopback). */
function isLoopback(ip: string, family: number): boolean {
  if (family === 4) return ip.startsWith('127.');
  const list = new net.BlockList();
  list.addAddress('::1', 'ipv6');
  list.addSubnet('::ffff:7f00:0', 104, 'ipv6');
  return list.check(ip, 'ipv6');
}

/** One NO_PROXY entry against the server's host (lower case) and port. */
function noProxyMatches(entry: string, host: string, port: string, family: number): boolean {
  if (entry === '') return false;
  if (entry === '*') return true;
  const cidr = /^(.+)\/(\d{1,3})$/.exec(entry);
  if (cidr) {
    const [, base = '', bits = ''] = cidr;
    const baseFamily = net.isIP(base);
    if (!baseFamily || !family || baseFamily !== family || Number(bits) > (family === 4 ? 32 : 128)) return false;
    const list = new net.BlockList();
    list.addSubnet(base, Number(bits), family === 4 ? 'ipv4' : 'ipv6');
    return list.check(host, family === 4 ? 'ipv4' : 'ipv6');
  }
  const { name, entryPort } = splitPort(entry);
  if (entryPort !== undefined && entryPort !== port) return false;
  if (net.isIP(name)) return family !== 0 && sameIp(name, host);
  // A domain: itself and its subdomains; `.domain` or `*.domain`, its subdomains only.
  const bare = name.replace(/^\*?\./, '');
  const subdomainsOnly = bare !== name;
  return host.endsWith(`.${bare}`) || (!subdomainsOnly && host === bare);
}

function splitPort(entry: string): { name: string; entryPort?: string } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return bracketed[2] ? { name: bracketed[1] ?? '', entryPort: bracketed[2] } : { name: bracketed[1] ?? '' };
  if (net.isIP(entry)) return { name: entry };
  const withPort = /^(.*):(\d+)$/.exec(entry);
  return withPort ? { name: withPort[1] ?? '', entryPort: withPort[2] ?? '' } : { name: entry };
}

function sameIp(a: string, b: string): boolean {
  const family = net.isIP(a);
  if (family !== net.isIP(b)) return false;
  const list = new net.BlockList();
  list.addAddress(a, family === 4 ? 'ipv4' : 'ipv6');
  return list.check(b, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The `proxyEnv` option of Node's agents for requests to `server` (empty: go direct, whatever
 * NODE_USE_ENV_PROXY says): proxyFor's proxy. Throws as proxyFor does.
 */
export function agentProxyEnv(server: URL, proxyUrl: string | undefined, env: Env = process.env): Record<string, string> {
  const proxy = proxyFor(server, proxyUrl, env);
  if (!proxy) return {};
  return server.protocol === 'https:' ? { HTTPS_PROXY: proxy.url.href } : { HTTP_PROXY: proxy.url.href };
}
