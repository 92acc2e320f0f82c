// Kubernetes-style field paths and zod issues rendered with them. Dependency-free (zod is a
// type import only), so the webhook's Worker bundle can use it too.
import type { z } from 'zod';

/** `spec.template.ephemeralContainers[0].image` under root; the empty path renders as `<root>`. */
export function fieldPath(root: string, path: readonly PropertyKey[]): string {
  let out = root;
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out ? '.' : ''}${String(p)}`;
  return out || '<root>';
}

/** "spec.template.ephemeralContainers[0].image: Too small…; spec.selector: Required" */
export function formatZodIssues(issues: readonly z.core.$ZodIssue[], root: string): string {
  return issues.map((i) => `${fieldPath(root, i.path)}: ${i.message}`).join('; ');
}
