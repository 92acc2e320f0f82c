import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parse } from 'yaml';
import { plan } from '../../functions/sidecar/planner.ts';
import { basePod, NOW, observed } from './support.ts';

type Schema = { type?: string; required?: string[]; properties?: Record<string, Schema>; items?: Schema; 'x-kubernetes-preserve-unknown-fields'?: boolean };
const crd = parse(readFileSync(new URL('../../infra/crds/containerrecreaterequest.yaml', import.meta.url), 'utf8')) as {
  spec: { group: string; names: { kind: string; plural: string; shortNames: string[] }; versions: { name: string; schema: { openAPIV3Schema: Schema } }[] };
};

/** Paths in value the schema does not know, or required fields it lacks (a tiny structural check). */
function violations(value: unknown, schema: Schema, path = ''): string[] {
  if (schema['x-kubernetes-preserve-unknown-fields'] || value === null || typeof value !== 'object') return [];
  if (Array.isArray(value)) return value.flatMap((v, i) => (schema.items ? violations(v, schema.items, `${path}[${i}]`) : [`${path}: not an array`]));
  const o = value as Record<string, unknown>;
  const out = (schema.required ?? []).filter((k) => !(k in o)).map((k) => `${path}.${k}: required`);
  if (!schema.properties) return out;
  for (const [k, v] of Object.entries(o)) {
    const sub = schema.properties[k];
    if (!sub) out.push(`${path}.${k}: unknown field`);
    else out.push(...violations(v, sub, `${path}.${k}`));
  }
  return out;
}

test('the CRD keeps OpenKruise\'s identity', () => {
  assert.equal(crd.spec.group, 'apps.kruise.io');
  assert.deepEqual([crd.spec.names.kind, crd.spec.names.plural, crd.spec.names.shortNames], ['ContainerRecreateRequest', 'containerrecreaterequests', ['crr']]);
  assert.equal(crd.spec.versions[0]?.name, 'v1alpha1');
});

test('the CRR the planner creates fits the CRD schema (spec and metadata are not pruned)', () => {
  const crr = plan(observed(basePod()), NOW).actions.find((a) => a.kind === 'ContainerRecreateRequest');
  assert.ok(crr);
  const schema = crd.spec.versions[0]!.schema.openAPIV3Schema;
  assert.deepEqual(violations(crr.body, schema), []);
  assert.deepEqual(violations({ spec: { podName: 'p', containers: [{ name: 'x', bogus: 1 }] } }, schema), ['.spec.containers[0].bogus: unknown field'], 'the check itself can fail');
});
