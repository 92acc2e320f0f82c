// The webhook's HTTP contract, run against every runtime: in-process (app.request), the
// Lambda URL adapter, the `ephemera webhook` Node server and the real Workers runtime.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AdmissionReviewResponse } from '../../functions/webhook/admission.ts';
import { admissionReview, container, job, PATH, spec } from './support.ts';
import type { Json } from './support.ts';

/** How a suite reaches one runtime: path + fetch init → Response. */
export type Send = (path: string, init?: RequestInit) => Promise<Response>;

const post = (send: Send, body: unknown): Promise<Response> =>
  send(PATH, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });

/** POST a review and return its response, checked against the strict wire schema. */
async function decide(send: Send, review: Json): Promise<AdmissionReviewResponse['response']> {
  const res = await post(send, review);
  assert.equal(res.status, 200, await res.clone().text());
  assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  const parsed = AdmissionReviewResponse.safeParse(await res.json());
  assert.ok(parsed.success, 'the answer is a well-formed AdmissionReview v1');
  assert.equal(parsed.data.response.uid, (review.request as Json).uid);
  return parsed.data.response;
}

async function expectStatus(res: Response, code: number, messagePattern: RegExp): Promise<void> {
  assert.equal(res.status, code);
  const body = (await res.json()) as Json;
  assert.equal(body.kind, 'Status');
  assert.equal(body.code, code);
  assert.match(String(body.message), messagePattern);
}

/**
 * Register the contract suite for one runtime; `target` is read when the tests run.
 * `otherPath404`: what a 404 for an unknown path says (behind a path token, nothing about paths).
 */
export function runContract(name: string, target: () => Send, otherPath404 = /no route POST \/validate/): void {
  describe(`webhook contract: ${name}`, () => {
    test('GET /healthz answers ok', async () => {
      const res = await target()('/healthz');
      assert.equal(res.status, 200);
      assert.equal(await res.text(), 'ok');
    });

    test('a valid CREATE is allowed and the uid echoed', async () => {
      const r = await decide(target(), admissionReview({ uid: 'uid-valid' }));
      assert.deepEqual(r, { uid: 'uid-valid', allowed: true });
    });

    test('an invalid CREATE is denied with 422 and every field error with its path', async () => {
      const bad = spec({ parallelism: 12, template: { ephemeralContainers: [container({ image: '' }), container({ imagePullPolicy: 'Sometimes' })] } });
      const r = await decide(target(), admissionReview({ object: job(bad) }));
      assert.equal(r.allowed, false);
      assert.equal(r.status?.code, 422);
      assert.equal(r.status?.reason, 'Invalid');
      assert.equal(
        r.status?.message,
        'EphemeralJob.apps.kruise.io "ejob-demo" is invalid: [spec.parallelism: Invalid value: 12: must be less than or equal to 10, '
        + 'spec.template.ephemeralContainers[0].image: Required value, '
        + 'spec.template.ephemeralContainers[1].name: Duplicate value: "debug", '
        + 'spec.template.ephemeralContainers[1].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"]',
      );
      assert.deepEqual(r.status?.details?.causes?.map((c) => `${c.field} ${c.reason}`), [
        'spec.parallelism FieldValueInvalid',
        'spec.template.ephemeralContainers[0].image FieldValueRequired',
        'spec.template.ephemeralContainers[1].name FieldValueDuplicate',
        'spec.template.ephemeralContainers[1].imagePullPolicy FieldValueNotSupported',
      ]);
    });

    test('a denial lists at most 100 field errors and says how many more: 30,000 bad env names are a small answer, not 20 MiB (review79)', async () => {
      const n = 30_000;
      const bad = spec({ template: { ephemeralContainers: [container({ env: Array.from({ length: n }, () => ({ name: '1' })) })] } });
      const res = await post(target(), admissionReview({ object: job(bad) }));
      assert.equal(res.status, 200);
      const text = await res.text();
      assert.ok(text.length < 128 * 1024, `answer of ${text.length} bytes`);
      const r = AdmissionReviewResponse.parse(JSON.parse(text)).response;
      assert.equal(r.allowed, false);
      assert.equal(r.status?.code, 422);
      const causes = r.status?.details?.causes ?? [];
      assert.deepEqual(causes.map((c) => c.field), Array.from({ length: 100 }, (_, i) => `spec.template.ephemeralContainers[0].env[${i}].name`), 'the first 100, each at its field; none made up for the rest');
      assert.match(String(r.status?.message), /^EphemeralJob\.apps\.kruise\.io "ejob-demo" is invalid: \[spec\.template\.ephemeralContainers\[0\]\.env\[0\]\.name: Invalid value: "1": .*, 29900 more errors not shown \(30000 in all; the first 100 are listed\)\]$/);
    });

    test('200,000 field errors are a denial too, not a 500 (a spread of them overflowed the stack; review79)', async () => {
      const bad = spec({ template: { ephemeralContainers: [container({ env: Array.from({ length: 200_000 }, () => ({ name: '1' })) })] } });
      const r = await decide(target(), admissionReview({ object: job(bad) }));
      assert.equal(r.status?.code, 422);
      assert.equal(r.status?.details?.causes?.length, 100);
    });

    test('200,000 bad values of a selector requirement are a denial, not a 500 (review83)', async () => {
      const bad = spec({ selector: { matchExpressions: [{ key: 'app', operator: 'In', values: Array.from({ length: 200_000 }, () => '-') }] } });
      const r = await decide(target(), admissionReview({ object: job(bad) }));
      assert.equal(r.status?.code, 422);
      assert.equal(r.status?.details?.causes?.length, 100);
    });

    test('an UPDATE of an immutable field is denied as Forbidden at its path', async () => {
      const changed = job(spec({ selector: { matchLabels: { app: 'other' } } }));
      const r = await decide(target(), admissionReview({ operation: 'UPDATE', object: changed, oldObject: job() }));
      assert.equal(r.allowed, false);
      assert.match(r.status?.message ?? '', /spec\.selector: Forbidden: field is immutable/);
    });

    test('an UPDATE of parallelism and paused is allowed', async () => {
      const r = await decide(target(), admissionReview({ operation: 'UPDATE', object: job(spec({ parallelism: 5, paused: true })), oldObject: job() }));
      assert.equal(r.allowed, true);
    });

    test('a risky but legal spec is allowed with short warnings', async () => {
      const risky = spec({ template: { ephemeralContainers: [container({ securityContext: { privileged: true } })] } });
      const r = await decide(target(), admissionReview({ object: job(risky) }));
      assert.equal(r.allowed, true);
      assert.deepEqual(r.warnings, ['spec.template.ephemeralContainers[0].securityContext.privileged: privileged container has full access to the node']);
    });

    test('DELETE, CONNECT and the status subresource of an EphemeralJob are allowed without looking', async () => {
      const send = target();
      assert.equal((await decide(send, admissionReview({ operation: 'DELETE', object: undefined, oldObject: job('junk') }))).allowed, true);
      assert.equal((await decide(send, admissionReview({ operation: 'CONNECT', object: undefined }))).allowed, true);
      assert.equal((await decide(send, admissionReview({ operation: 'UPDATE', subResource: 'status', object: job('x'), oldObject: job() }))).allowed, true);
    });

    test('a review of another kind or resource is refused with a 400 saying what the webhook serves', async () => {
      const send = target();
      const serves = /serves only apps\.kruise\.io\/v1alpha1 EphemeralJob \(resource ephemeraljobs\); got kind v1 Pod, resource v1 pods: fix the rules/;
      const pod = { kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' } };
      await expectStatus(await post(send, admissionReview({ ...pod, object: { spec: 'anything' } })), 400, serves);
      await expectStatus(await post(send, admissionReview({ ...pod, operation: 'DELETE', object: undefined })), 400, serves);
      const crr = admissionReview({ resource: { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'containerrecreaterequests' } });
      await expectStatus(await post(send, crr), 400, /got kind apps\.kruise\.io\/v1alpha1 EphemeralJob, resource apps\.kruise\.io\/v1alpha1 containerrecreaterequests/);
    });

    test('a body that is not JSON gets a 400 that says so', async () => {
      await expectStatus(await post(target(), '{"apiVersion":'), 400, /^body is not JSON/);
    });

    test('JSON that is not an AdmissionReview gets a 400 naming the bad fields', async () => {
      await expectStatus(await post(target(), { apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview' }), 400, /apiVersion: .*request: /);
      const noUid = admissionReview({ uid: undefined });
      await expectStatus(await post(target(), noUid), 400, /request\.uid/);
      await expectStatus(await post(target(), [1, 2]), 400, /not an admission\.k8s\.io\/v1 AdmissionReview/);
    });

    test('CREATE without an object and UPDATE without an oldObject get a 400', async () => {
      await expectStatus(await post(target(), admissionReview({ object: undefined })), 400, /request\.object must be an object for CREATE/);
      await expectStatus(await post(target(), admissionReview({ operation: 'UPDATE', object: job() })), 400, /request\.oldObject must be an object/);
    });

    test('other methods get a 405 and other paths a 404', async () => {
      const res = await target()(PATH, { method: 'GET' });
      assert.equal(res.headers.get('allow'), 'POST');
      await expectStatus(res, 405, /POST an AdmissionReview/);
      await expectStatus(await target()('/validate', { method: 'POST', body: '{}' }), 404, otherPath404);
    });
  });
}
