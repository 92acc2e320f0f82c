// spec.selector: a metav1.LabelSelector that must select something, validated the way
// apimachinery's ValidateLabelSelector does.
import { eachItem, forbidden, invalid, notSupported, required, requiredString } from './field-errors.ts';
import type { FieldError, FieldPath } from './field-errors.ts';
import { isObject, own } from './json.ts';
import { labelKeyProblems, labelValueProblems } from '../api/name-formats.ts';

/** The operators a LabelSelectorRequirement may use. */
export const SELECTOR_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;

/** Errors in a job's selector (required, non-empty, well-formed keys, values and operators). */
export function validateSelector(selector: unknown, path: FieldPath): FieldError[] {
  if (selector === undefined) return [required(path)];
  if (!isObject(selector)) return [invalid(path, selector, 'must be an object')];
  const labels = own(selector, 'matchLabels');
  const expressions = own(selector, 'matchExpressions');
  const errors = [
    ...validateMatchLabels(labels, [...path, 'matchLabels']),
    ...eachItem(expressions, [...path, 'matchExpressions'], validateRequirement),
  ];
  const labelCount = isObject(labels) ? Object.keys(labels).length : 0;
  const expressionCount = Array.isArray(expressions) ? expressions.length : 0;
  if (labelCount + expressionCount === 0 && errors.length === 0) {
    // An empty selector matches every pod in the namespace: never what a batch job means.
    errors.push(required(path, 'matchLabels or matchExpressions must select something (an empty selector matches every pod)'));
  }
  return errors;
}

function validateMatchLabels(labels: unknown, path: FieldPath): FieldError[] {
  if (labels === undefined) return [];
  if (!isObject(labels)) return [invalid(path, labels, 'must be a map of label keys to values')];
  const errors: FieldError[] = [];
  for (const [key, value] of Object.entries(labels)) {
    for (const p of labelKeyProblems(key)) errors.push(invalid(path, key, p));
    if (typeof value !== 'string') errors.push(invalid([...path, key], value, 'must be a string'));
    else for (const p of labelValueProblems(value)) errors.push(invalid([...path, key], value, p));
  }
  return errors;
}

function validateRequirement(req: unknown, path: FieldPath): FieldError[] {
  if (!isObject(req)) return [invalid(path, req, 'must be an object')];
  // Not push(...): a requirement's errors are as many as its values, past what a spread may pass (review83 L3).
  return requiredString(own(req, 'key'), [...path, 'key'], labelKeyProblems).concat(validateOperatorAndValues(own(req, 'operator'), own(req, 'values'), path));
}

function validateOperatorAndValues(operator: unknown, values: unknown, path: FieldPath): FieldError[] {
  const opPath = [...path, 'operator'];
  const valuesPath = [...path, 'values'];
  if (operator === undefined || operator === '') return [required(opPath)];
  if (operator === 'Exists' || operator === 'DoesNotExist') {
    const present = values !== undefined && !(Array.isArray(values) && values.length === 0);
    return present ? [forbidden(valuesPath, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")] : [];
  }
  if (operator !== 'In' && operator !== 'NotIn') return [notSupported(opPath, operator, SELECTOR_OPERATORS)];
  if (values === undefined || (Array.isArray(values) && values.length === 0)) {
    return [required(valuesPath, "must be specified when `operator` is 'In' or 'NotIn'")];
  }
  if (!Array.isArray(values)) return [invalid(valuesPath, values, 'must be a list of strings')];
  const errors: FieldError[] = [];
  values.forEach((v, j) => {
    if (typeof v !== 'string') errors.push(invalid([...valuesPath, j], v, 'must be a string'));
    else for (const p of labelValueProblems(v)) errors.push(invalid([...valuesPath, j], v, p));
  });
  return errors;
}
