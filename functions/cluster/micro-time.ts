// metav1.MicroTime fields as kube-apiserver decodes them. A MicroTime is parsed with Go's
// `time.Parse("2006-01-02T15:04:05.000000Z07:00", s)` (apimachinery micro_time.go
// UnmarshalJSON), and a layout's `.000000` takes exactly six digits: "…T00:21:00Z" or
// JavaScript's "…T00:21:00.123Z" is refused with 400 before anything else is looked at, so a
// client that writes a Lease's renewTime as metav1.Time would never hold a Lease on a real
// cluster. What is kept is written back as kube-apiserver writes it: UTC, six digits.
import type { ResourceDef } from './resources.ts';
import { badRequest } from './status.ts';

const LAYOUT = '2006-01-02T15:04:05.000000Z07:00';

/** Where each built-in kind has MicroTime fields (paths from the object's root). */
const FIELDS: Record<string, string[][]> = {
  'coordination.k8s.io/Lease': [['spec', 'acquireTime'], ['spec', 'renewTime']],
  '/Event': [['eventTime'], ['series', 'lastObservedTime']],
  'events.k8s.io/Event': [['eventTime'], ['series', 'lastObservedTime']],
};

const MICRO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})[.,](\d{6})(Z|[+-]\d{2}:\d{2})$/;

/** Checks and rewrites the kind's MicroTime fields in place; a bad one is kube-apiserver's 400. */
export function decodeMicroTimes(def: ResourceDef, obj: Record<string, unknown>): void {
  for (const path of FIELDS[`${def.group}/${def.kind}`] ?? []) {
    const parent = path.slice(0, -1).reduce<unknown>((o, k) => (isObj(o) ? o[k] : undefined), obj);
    const key = path.at(-1)!;
    if (!isObj(parent) || parent[key] === undefined || parent[key] === null) continue;
    const value = parent[key];
    const kept = typeof value === 'string' ? microTime(value) : undefined;
    if (kept === undefined) {
      const why = typeof value === 'string' ? parseError(value) : `json: cannot unmarshal ${typeof value === 'number' ? 'number' : typeof value} into Go value of type string`;
      throw badRequest(`${def.kind} in version ${JSON.stringify(def.version)} cannot be handled as a ${def.kind}: ${why}`);
    }
    parent[key] = kept;
  }
}

/** The time as kube-apiserver writes it back (UTC, six digits), or undefined if Go's parse fails. */
export function microTime(value: string): string | undefined {
  const m = MICRO.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, zone] = m as unknown as string[];
  const fields = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
  const [year, month, day, hour, minute, second] = fields;
  const offset = zone === 'Z' ? 0 : (zone!.startsWith('-') ? -1 : 1) * (Number(zone!.slice(1, 3)) * 60 + Number(zone!.slice(4, 6)));
  const back = new Date(0);
  back.setUTCFullYear(year, month - 1, day);
  back.setUTCHours(hour, minute, second, 0);
  const local = back.getTime();
  // Go refuses out-of-range fields (month 13, Feb 30, hour 24) rather than carrying them over.
  if (back.getUTCFullYear() !== year || back.getUTCMonth() !== month - 1 || back.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) return undefined;
  if (zone !== 'Z' && (Number(zone!.slice(1, 3)) > 24 || Number(zone!.slice(4, 6)) > 59)) return undefined;
  const utc = new Date(local - offset * 60_000);
  return `${utc.toISOString().slice(0, 19)}.${frac}Z`;
}

/** Go's time.ParseError text for the usual mistakes: the fraction missing or not six digits. */
function parseError(value: string): string {
  const lead = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/.exec(value);
  const rest = lead ? value.slice(lead[0].length) : value;
  const element = lead ? '.000000' : LAYOUT;
  return `parsing time ${JSON.stringify(value)} as ${JSON.stringify(LAYOUT)}: cannot parse ${JSON.stringify(rest)} as ${JSON.stringify(element)}`;
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
