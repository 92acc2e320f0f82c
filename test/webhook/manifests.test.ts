// The ValidatingWebhookConfigurations in infra/webhook point at the route the app serves,
// match only what the validator judges, and keep the settings the README explains.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { WEBHOOK_PATH } from '../../functions/webhook/app.ts';

type Doc = Record<string, unknown> & { kind?: string };
const root = new URL('../../infra/webhook/', import.meta.url);
const load = (file: string): Doc[] => parseAllDocuments(readFileSync(new URL(file, root), 'utf8')).map((d) => d.toJS() as Doc);
const vwc = (docs: Doc[]): Record<string, unknown> => {
  const found = docs.filter((d) => d.kind === 'ValidatingWebhookConfiguration');
  assert.equal(found.length, 1);
  const hooks = (found[0] as { webhooks: Record<string, unknown>[] }).webhooks;
  assert.equal(hooks.length, 1);
  return hooks[0] as Record<string, unknown>;
};

function checkCommon(hook: Record<string, unknown>): void {
  assert.equal(hook.failurePolicy, 'Fail');
  assert.equal(hook.sideEffects, 'None');
  assert.equal(hook.matchPolicy, 'Equivalent');
  assert.deepEqual(hook.admissionReviewVersions, ['v1']);
  const timeout = hook.timeoutSeconds as number;
  assert.ok(timeout >= 1 && timeout <= 30);
  assert.deepEqual(hook.rules, [{
    apiGroups: ['apps.kruise.io'], apiVersions: ['v1alpha1'], resources: ['ephemeraljobs'], operations: ['CREATE', 'UPDATE'], scope: 'Namespaced',
  }]);
}

test('public URL variant: url on the webhook route, no caBundle', () => {
  const hook = vwc(load('validating-webhook-public.yaml'));
  checkCommon(hook);
  const cc = hook.clientConfig as Record<string, unknown>;
  assert.ok(String(cc.url).endsWith(WEBHOOK_PATH));
  assert.equal(cc.caBundle, undefined);
  assert.equal(cc.service, undefined);
});

test('in-cluster variant: a Service on the webhook route, with caBundle, in front of the server', () => {
  const docs = load('validating-webhook-service.yaml');
  const hook = vwc(docs);
  checkCommon(hook);
  const cc = hook.clientConfig as { service: Record<string, unknown>; caBundle: unknown };
  assert.equal(cc.service.path, WEBHOOK_PATH);
  assert.equal(cc.caBundle, 'CA_BUNDLE_BASE64');
  const svc = docs.find((d) => d.kind === 'Service' && (d.metadata as { name: string }).name === cc.service.name);
  assert.ok(svc, 'the Service the webhook names is defined');
  // The image's entry point is the ephemera CLI bundle (relay/Dockerfile): only args here.
  const deploy = docs.find((d) => d.kind === 'Deployment') as { spec: { template: { spec: { containers: { command?: string[]; args: string[] }[] } } } };
  assert.equal(deploy.spec.template.spec.containers[0]?.command, undefined);
  assert.equal(deploy.spec.template.spec.containers[0]?.args[0], 'webhook');
});
