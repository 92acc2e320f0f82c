// Field errors print as apimachinery prints them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { duplicate, forbidden, formatFieldError, formatFieldErrors, invalid, notSupported, renderPath, required, showValue } from '../../functions/webhook/field-errors.ts';

test('paths render with dots and indexes', () => {
  assert.equal(renderPath(['spec', 'template', 'ephemeralContainers', 0, 'image']), 'spec.template.ephemeralContainers[0].image');
  assert.equal(renderPath([]), '<root>');
});

test('each type prints like apimachinery', () => {
  assert.equal(formatFieldError(required(['spec', 'selector'])), 'spec.selector: Required value');
  assert.equal(formatFieldError(required(['a'], 'why')), 'a: Required value: why');
  assert.equal(formatFieldError(invalid(['a'], 'v', 'bad')), 'a: Invalid value: "v": bad');
  assert.equal(formatFieldError(invalid(['a'], 3, 'bad')), 'a: Invalid value: 3: bad');
  assert.equal(formatFieldError(notSupported(['a'], 'x', ['A', 'B'])), 'a: Unsupported value: "x": supported values: "A", "B"');
  assert.equal(formatFieldError(forbidden(['a'], 'no')), 'a: Forbidden: no');
  assert.equal(formatFieldError(duplicate(['a'], 'n')), 'a: Duplicate value: "n"');
});

test('one error prints bare, several in brackets', () => {
  assert.equal(formatFieldErrors([required(['a'])]), 'a: Required value');
  assert.equal(formatFieldErrors([required(['a']), required(['b'])]), '[a: Required value, b: Required value]');
});

test('values are summarised, never dumped', () => {
  assert.equal(showValue({ a: 1 }), '{object}');
  assert.equal(showValue([1, 2]), '[array of 2]');
  assert.equal(showValue(null), 'null');
  assert.equal(showValue('x'.repeat(500)).length, 129);
});
