// What ValidateObjectMeta refuses in every object's labels and annotations (apimachinery
// api/validation/objectmeta.go): label keys are qualified names and values valid label values;
// annotation keys are qualified names once lower-cased, and all annotations together take at
// most 256 KiB. Without it the fake took a CRR whose node-name label was 72 characters long
// and a Lease with a 300 KiB record, both 422s on a real cluster (wire-format review).
import { labelKeyProblems, labelValueProblems } from '../api/name-formats.ts';
import type { FieldError } from './status.ts';
import { invalid } from './status.ts';

/** apimachinery TotalAnnotationSizeLimitB. */
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

/** The labels' and annotations' errors of an object's metadata. */
export function metadataErrors(meta: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(stringMap(meta['labels']))) {
    for (const p of labelKeyProblems(k)) errs.push(invalid('metadata.labels', k, p));
    for (const p of labelValueProblems(v)) errs.push(invalid('metadata.labels', v, p));
  }
  const annotations = stringMap(meta['annotations']);
  let size = 0;
  for (const [k, v] of Object.entries(annotations)) {
    for (const p of labelKeyProblems(k.toLowerCase())) errs.push(invalid('metadata.annotations', k, p));
    size += Buffer.byteLength(k) + Buffer.byteLength(v);
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) errs.push({ type: 'FieldValueTooLong', field: 'metadata.annotations', message: `Too long: may not be more than ${TOTAL_ANNOTATION_SIZE_LIMIT} bytes` });
  return errs;
}

function stringMap(v: unknown): Record<string, string> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return {};
  return Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'));
}
