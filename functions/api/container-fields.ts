// Which keys of an EphemeralContainer are fields kube-apiserver knows (the version the
// embedded cluster serves, 1.33: container-types.ts), at every level the types describe.
// A key that is no field is dropped when the server decodes the request, unless the request
// asks for `fieldValidation=Strict` — as ephemera's injections do (planner.ts inject), so a
// misspelt field, or one newer than the cluster (`fileKeyRef` before 1.34, `appArmorProfile`
// before 1.30), refuses the injection instead of running the container without it. The
// embedded cluster judges by this tree; the webhook warns by it.
import { NOT_ALLOWED } from './container-rules.ts';
import { ephemeralContainerTypes } from './container-types.ts';

/** Known keys, each with the tree under it when it holds an object or a list of objects. */
export type FieldTree = ReadonlyMap<string, FieldTree | undefined>;

/** A zod/mini schema's definition: what the walk needs of it. */
interface Def {
  type: string;
  shape?: Record<string, unknown>;
  innerType?: unknown;
  element?: unknown;
}

const defOf = (schema: unknown): Def => (schema as { _zod: { def: Def } })._zod.def;

function treeOf(schema: unknown): FieldTree | undefined {
  const def = defOf(schema);
  if ((def.type === 'optional' || def.type === 'nullable') && def.innerType) return treeOf(def.innerType);
  if (def.type === 'array' && def.element) return treeOf(def.element);
  if (def.type === 'object' && def.shape) return new Map(Object.entries(def.shape).map(([k, v]) => [k, treeOf(v)]));
  return undefined;
}

let built: FieldTree | undefined;

/**
 * The EphemeralContainer's fields: the typed ones, and the Container fields an ephemeral
 * container may not set (known to the decoder, refused by validation: container-rules.ts),
 * whose insides are not described here and so not judged.
 */
export function ephemeralContainerFields(): FieldTree {
  if (built) return built;
  const typed = treeOf(ephemeralContainerTypes()) ?? new Map<string, FieldTree | undefined>();
  built = new Map([...typed, ...NOT_ALLOWED.map((k): [string, undefined] => [k, undefined])]);
  return built;
}

/**
 * The paths, from `at` (`spec.ephemeralContainers[0]`), of the keys in `value` that are no
 * field, as kube-apiserver names them (`…securityContext.runAsNonRot`, `…env[1].valuefrom`);
 * and `value` without them (a copy where anything was dropped).
 */
export function unknownFields(value: unknown, at: string, tree: FieldTree = ephemeralContainerFields()): { unknown: string[]; known: unknown } {
  if (Array.isArray(value)) {
    const parts = value.map((v, i) => unknownFields(v, `${at}[${i}]`, tree));
    const unknown = parts.flatMap((p) => p.unknown);
    return { unknown, known: unknown.length === 0 ? value : parts.map((p) => p.known) };
  }
  if (typeof value !== 'object' || value === null) return { unknown: [], known: value };
  const unknown: string[] = [];
  const known: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (!tree.has(k)) {
      unknown.push(`${at}.${k}`);
      continue;
    }
    const sub = tree.get(k);
    const inner = sub ? unknownFields(v, `${at}.${k}`, sub) : { unknown: [], known: v };
    unknown.push(...inner.unknown);
    known[k] = inner.known;
  }
  return { unknown, known: unknown.length === 0 ? value : known };
}
