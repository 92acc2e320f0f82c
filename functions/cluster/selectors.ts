// Label and field selectors with the query-string syntax of k8s.io/apimachinery
// (pkg/labels/selector.go, pkg/fields/selector.go). A parse error is a 400.
import { labelKeyProblems, labelValueProblems } from '../api/name-formats.ts';
import { badRequest } from './status.ts';

type LabelOp = 'exists' | '!exists' | '=' | '!=' | 'in' | 'notin' | 'gt' | 'lt';

/** One parsed label requirement. */
export interface LabelRequirement {
  key: string;
  op: LabelOp;
  values: string[];
}

/** A parsed selector: all requirements must hold. */
export type LabelSelector = LabelRequirement[];

function validKey(key: string): boolean {
  return labelKeyProblems(key).length === 0;
}

function validValue(v: string): boolean {
  return labelValueProblems(v).length === 0;
}

/** Splits on commas that are not inside parentheses. */
function splitTopLevel(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

const SET_RE = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/;
const CMP_RE = /^([^\s!=<>]+)\s*(==|!=|=|>|<)\s*(\S*)$/;

function parseRequirement(raw: string): LabelRequirement {
  const text = raw.trim();
  const fail = (why: string): never => {
    throw badRequest(`unable to parse requirement: ${why}: ${JSON.stringify(text)}`);
  };
  let req: LabelRequirement;
  const set = SET_RE.exec(text);
  const cmp = CMP_RE.exec(text);
  if (set) {
    req = { key: set[1]!, op: set[2] as 'in' | 'notin', values: set[3]!.split(',').map((v) => v.trim()) };
  } else if (cmp) {
    const op = cmp[2] === '==' ? '=' : cmp[2] === '>' ? 'gt' : cmp[2] === '<' ? 'lt' : (cmp[2] as '=' | '!=');
    req = { key: cmp[1]!, op, values: [cmp[3]!] };
  } else if (text.startsWith('!')) {
    req = { key: text.slice(1).trim(), op: '!exists', values: [] };
  } else if (/^\S+$/.test(text)) {
    req = { key: text, op: 'exists', values: [] };
  } else {
    return fail('found unexpected input');
  }
  if (!validKey(req.key)) fail(`invalid label key ${JSON.stringify(req.key)}`);
  if ((req.op === 'gt' || req.op === 'lt') && !/^-?\d+$/.test(req.values[0] ?? '')) fail('for gt/lt operators, the value must be an integer');
  else if (!req.values.every(validValue)) fail('invalid label value');
  return req;
}

/** Parses `a=b,c in (d,e),!f`. Empty string → matches everything. */
export function parseLabelSelector(query: string | undefined): LabelSelector {
  if (!query || !query.trim()) return [];
  return splitTopLevel(query).map(parseRequirement);
}

/** Does this label set satisfy every requirement? */
export function matchLabels(sel: LabelSelector, labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  return sel.every((r) => {
    const has = Object.hasOwn(l, r.key);
    const v = l[r.key];
    switch (r.op) {
      case 'exists': return has;
      case '!exists': return !has;
      case '=': return has && v === r.values[0];
      case '!=': return !has || v !== r.values[0];
      case 'in': return has && r.values.includes(v as string);
      case 'notin': return !has || !r.values.includes(v as string);
      case 'gt': return has && /^-?\d+$/.test(v as string) && Number(v) > Number(r.values[0]);
      case 'lt': return has && /^-?\d+$/.test(v as string) && Number(v) < Number(r.values[0]);
    }
    return false;
  });
}

/** One field requirement: path (`status.phase`), equal or not. */
export interface FieldRequirement {
  field: string;
  op: '=' | '!=';
  value: string;
}

function unescape(s: string): string {
  return s.replace(/\\(.)/g, '$1');
}

/** Splits on an unescaped separator. */
function splitUnescaped(s: string, sep: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === '\\' && i + 1 < s.length) {
      cur += ch + s[i + 1];
      i++;
    } else if (ch === sep) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

/**
 * Parses `metadata.name=x,status.phase!=Running`. `supported` lists the field labels of the
 * resource; any other field is a 400 `field label not supported`, as the server answers.
 */
export function parseFieldSelector(query: string | undefined, supported: readonly string[]): FieldRequirement[] {
  if (!query || !query.trim()) return [];
  return splitUnescaped(query, ',').map((raw) => {
    const m = /^([^=!]+)(==|!=|=)(.*)$/s.exec(raw.trim());
    if (!m) throw badRequest(`invalid selector: '${query}'; can't understand '${raw}'`);
    const field = m[1]!.trim();
    if (!supported.includes(field)) throw badRequest(`field label not supported: ${field}`);
    return { field, op: m[2] === '!=' ? '!=' : '=', value: unescape(m[3]!) };
  });
}

/** Reads a dotted path of an object as the string a field selector compares. */
export function fieldValue(obj: unknown, path: string): string {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    cur = cur && typeof cur === 'object' ? (cur as Record<string, unknown>)[part] : undefined;
  }
  if (cur === undefined || cur === null) return '';
  return typeof cur === 'object' ? JSON.stringify(cur) : String(cur);
}

/** Does the object satisfy every field requirement? */
export function matchFields(reqs: FieldRequirement[], obj: unknown): boolean {
  return reqs.every((r) => (selectable(obj, r.field) === r.value) === (r.op === '='));
}

/**
 * A field's selectable value: its value at the path, but for an Event's `source`, which
 * kube-apiserver takes from `source.component`, else `reportingComponent`
 * (pkg/registry/core/event/strategy.go ToSelectableFields; review: compared as an object).
 */
function selectable(obj: unknown, field: string): string {
  if (field === 'source' && (obj as { kind?: unknown } | null)?.kind === 'Event') return fieldValue(obj, 'source.component') || fieldValue(obj, 'reportingComponent');
  return fieldValue(obj, field);
}
