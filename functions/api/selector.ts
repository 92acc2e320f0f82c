import type { LabelSelector } from './meta.ts';

/**
 * Does a metav1.LabelSelector match these labels? Same semantics as
 * apimachinery's LabelSelectorAsSelector: all requirements must hold; an empty selector
 * matches everything (callers that must not accept that reject it earlier).
 */
export function selectorMatches(selector: LabelSelector, labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  // for…in with hasOwn visits what Object.entries would, without an array per call (the
  // relay matches every pod event against the selectors of its namespace's jobs).
  const want = selector.matchLabels;
  for (const k in want) {
    if (Object.hasOwn(want, k) && l[k] !== want[k]) return false;
  }
  for (const req of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(l, req.key);
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In': if (!has || !values.includes(l[req.key] as string)) return false; break;
      case 'NotIn': if (has && values.includes(l[req.key] as string)) return false; break;
      case 'Exists': if (!has) return false; break;
      case 'DoesNotExist': if (has) return false; break;
    }
  }
  return true;
}

/**
 * The label-selector query string for a LIST call (`a=b,c in (d,e),!f`), so the API
 * server filters and we read only matching pods.
 */
export function selectorToQuery(selector: LabelSelector): string {
  const parts = Object.entries(selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const req of selector.matchExpressions ?? []) {
    const values = [...(req.values ?? [])].sort().join(',');
    switch (req.operator) {
      case 'In': parts.push(`${req.key} in (${values})`); break;
      case 'NotIn': parts.push(`${req.key} notin (${values})`); break;
      case 'Exists': parts.push(req.key); break;
      case 'DoesNotExist': parts.push(`!${req.key}`); break;
    }
  }
  return parts.join(',');
}
