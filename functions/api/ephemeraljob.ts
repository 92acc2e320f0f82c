import * as z from 'zod';
import { Condition, LabelSelector, ObjectMeta } from './meta.ts';

import { formatZodIssues } from './field-path.ts';
import { ephemeralContainerProblems, fieldSegments, hasOuterSpace, type ContainerProblem } from './container-rules.ts';
import { dns1123LabelProblems, labelKeyProblems, labelValueProblems } from './name-formats.ts';
import { runAsStored } from './spec-limits.ts';

export { formatZodIssues } from './field-path.ts';
export { DEFAULT_TTL_AFTER_FINISHED_SECONDS, EJOB, EJOB_CLEANUP_FINALIZER, EJOB_ID_ENV, MAX_PARALLELISM } from './names.ts';

/**
 * One template entry: a core/v1 EphemeralContainer. OpenKruise stores it schemaless, so
 * the planner checks only what injection needs; the webhook does the full validation.
 */
export const EphemeralContainerTemplate = z.looseObject({
  name: z.string().min(1),
  image: z.string().min(1),
  env: z.array(z.looseObject({ name: z.string().min(1), value: z.string().nullish() })).nullish(),
  targetContainerName: z.string().nullish(),
});
export type EphemeralContainerTemplate = z.infer<typeof EphemeralContainerTemplate>;

const count = z.number().int().nonnegative();
const int = z.number().int();

/**
 * EphemeralJobSpec as stored: OpenKruise's fields plus the proposal's ttlSecondsAfterCreated.
 * The counts are any integers here, and the selector may be empty, as OpenKruise's CRD and
 * webhook let them be: the webhook's limits on them are for new and changed values, and a
 * stored job outside them runs as OpenKruise runs it (spec-limits.ts, review72).
 */
export const EphemeralJobSpec = z.looseObject({
  selector: LabelSelector.superRefine(selectorSyntax),
  replicas: int.optional(),
  parallelism: int.optional(),
  template: z.looseObject({
    ephemeralContainers: z.array(EphemeralContainerTemplate).min(1).superRefine(templateRules),
  }),
  paused: z.boolean().optional(),
  activeDeadlineSeconds: int.optional(),
  ttlSecondsAfterFinished: int.optional(),
  ttlSecondsAfterCreated: int.optional(),
});
export type EphemeralJobSpec = z.infer<typeof EphemeralJobSpec>;

export const EJOB_PHASES = ['Waiting', 'Running', 'Succeeded', 'Failed', 'Paused', 'Error', 'Unknown'] as const;
export type EjobPhase = (typeof EJOB_PHASES)[number];

export const EJOB_CONDITION_TYPES = ['Initialized', 'MatchedEmpty', 'JobSucceeded', 'JobFailed', 'JobError'] as const;
export type EjobConditionType = (typeof EJOB_CONDITION_TYPES)[number];

/** EphemeralJobStatus with OpenKruise's JSON names (`match`, not `matches`). */
export const EphemeralJobStatus = z.looseObject({
  phase: z.string().optional(),
  match: count.optional(),
  succeeded: count.optional(),
  failed: count.optional(),
  running: count.optional(),
  waiting: count.optional(),
  startTime: z.union([z.string(), z.date()]).optional(),
  completionTime: z.union([z.string(), z.date()]).optional(),
  conditions: z.array(Condition).optional(),
});
export type EphemeralJobStatus = z.infer<typeof EphemeralJobStatus>;

/**
 * The envelope of a job: metadata must be sound for anything to happen; spec is kept raw
 * (unknown) so a job with a bad spec can still be reported in status rather than dropped.
 */
export const EphemeralJobObject = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMeta,
  spec: z.unknown(),
  status: EphemeralJobStatus.optional(),
});
export type EphemeralJobObject = z.infer<typeof EphemeralJobObject>;

/**
 * Keys, values and operators as the API server parses a label-selector query: a job seeded
 * past the webhook with a value it refuses would otherwise get a 400 on every LIST of its
 * pods (review), rather than the Error phase naming the field.
 */
function selectorSyntax(s: LabelSelector, ctx: z.RefinementCtx): void {
  const problem = (path: (string | number)[], message: string): void => void ctx.addIssue({ code: 'custom', path, message });
  for (const [key, value] of Object.entries(s.matchLabels ?? {})) {
    for (const p of labelKeyProblems(key)) problem(['matchLabels', key], `key ${JSON.stringify(key)} ${p}`);
    for (const p of labelValueProblems(value)) problem(['matchLabels', key], `value ${JSON.stringify(value)} ${p}`);
  }
  (s.matchExpressions ?? []).forEach((req, i) => {
    for (const p of labelKeyProblems(req.key)) problem(['matchExpressions', i, 'key'], `${JSON.stringify(req.key)} ${p}`);
    const values = req.values ?? [];
    const listed = req.operator === 'In' || req.operator === 'NotIn';
    if (listed && values.length === 0) problem(['matchExpressions', i, 'values'], `must be specified when operator is ${req.operator}`);
    if (!listed && values.length > 0) problem(['matchExpressions', i, 'values'], `may not be specified when operator is ${req.operator}`);
    values.forEach((v, j) => {
      for (const p of labelValueProblems(v)) problem(['matchExpressions', i, 'values', j], `${JSON.stringify(v)} ${p}`);
    });
  });
}

/**
 * What kube-apiserver would refuse in every injection of these containers, whatever the pod:
 * named here, so the job says Error with the field rather than have each pod refuse it.
 */
function templateRules(containers: EphemeralContainerTemplate[], ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  containers.forEach((c, i) => {
    const problem = (field: (string | number)[], message: string): void => void ctx.addIssue({ code: 'custom', path: [i, ...field], message });
    for (const p of dns1123LabelProblems(c.name)) problem(['name'], `${JSON.stringify(c.name)} ${p}`);
    if (seen.has(c.name)) problem(['name'], `duplicate name ${JSON.stringify(c.name)}`);
    seen.add(c.name);
    if (hasOuterSpace(c.image)) problem(['image'], 'must not have leading or trailing whitespace');
    for (const [field, allowed] of POLICIES) {
      const v = (c as Record<string, unknown>)[field];
      // "" and null are unset: the API server defaults them.
      if (v !== undefined && v !== null && v !== '' && !allowed.includes(v as string)) problem([field], `${JSON.stringify(v)} is not one of ${allowed.join(', ')}`);
    }
    for (const p of ephemeralContainerProblems(c)) problem(fieldSegments(p.field), problemMessage(p));
  });
}

/** A shared rule's problem in the planner's words: the value and the list for an unsupported one. */
function problemMessage(p: ContainerProblem): string {
  if (p.kind === 'notSupported') return `${JSON.stringify(p.value)} is not one of ${(p.supported ?? []).join(', ')}`;
  return p.message ?? (p.kind === 'required' ? 'required' : p.kind);
}

const POLICIES: readonly (readonly [string, readonly string[]])[] = [
  ['imagePullPolicy', ['Always', 'IfNotPresent', 'Never']],
  ['terminationMessagePolicy', ['File', 'FallbackToLogsOnError']],
];

/**
 * Parse a job's spec; on failure, a one-line message naming every bad field path. A spec
 * that parses comes as it runs (counts below 0 as 0), with a note for each value outside the
 * webhook's limits (`outside`, spec-limits.ts).
 */
export function parseEjobSpec(spec: unknown): { ok: true; spec: EphemeralJobSpec; outside: string[] } | { ok: false; message: string } {
  const r = EphemeralJobSpec.safeParse(spec);
  if (r.success) return { ok: true, ...runAsStored(r.data) };
  return { ok: false, message: formatZodIssues(r.error.issues, 'spec') };
}

