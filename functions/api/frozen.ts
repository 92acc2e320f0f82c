// Values frozen all the way down, and a way to ask. The functions' client keeps LIST items
// between answers this way (kube/list-reuse.ts); what is computed from such a value alone may
// then be kept beside it (api/pod-shape.ts), since the value can never change. The registry
// is a WeakSet: it holds nothing alive and changes no answer, so it is the one piece of
// module state here (STYLE.md keeps state out of modules for testability, which a memo of
// immutable values does not touch).

const deeplyFrozen = new WeakSet<object>();

/** Freezes `v` and everything in it (a tree, as JSON.parse gives), and returns it. */
export function deepFreeze<T>(v: T): T {
  if (typeof v !== 'object' || v === null || deeplyFrozen.has(v)) return v;
  freezeTree(v);
  deeplyFrozen.add(v);
  return v;
}

function freezeTree(v: object): void {
  Object.freeze(v);
  for (const x of Object.values(v)) if (typeof x === 'object' && x !== null) freezeTree(x as object);
}

/** True when `v` was frozen all the way down by deepFreeze. */
export function isDeepFrozen(v: unknown): v is object {
  return typeof v === 'object' && v !== null && deeplyFrozen.has(v);
}
