// The contract in-process (hono's app.request, no network) and through the Lambda function
// URL adapter with synthetic payload-v2 events, as AWS would deliver them.
import type { LambdaFunctionURLEvent, LambdaFunctionURLResult } from 'aws-lambda';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLambdaUrlHandler } from '../../functions/runtime/lambda/lambda-url.ts';
import { createWebhookApp, MAX_BODY_BYTES } from '../../functions/webhook/app.ts';
import { runContract } from './contract.case.ts';
import type { Send } from './contract.case.ts';
import { admissionReview, PATH } from './support.ts';

const app = createWebhookApp();
const handler = createLambdaUrlHandler();
const inProcess: Send = async (path, init) => app.request(path, init);
runContract('in-process app', () => inProcess);

/** Send through a Lambda adapter: Request → function URL event → handler → Response. */
const viaLambdaOf = (lambda: typeof handler): Send => async (path, init = {}) => {
  const method = init.method ?? 'GET';
  const headers = Object.fromEntries(new Headers(init.headers).entries());
  const event = {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: { host: 'abc.lambda-url.eu-west-1.on.aws', ...headers },
    body: typeof init.body === 'string' ? init.body : undefined,
    isBase64Encoded: false,
    requestContext: {
      accountId: 'anonymous', apiId: 'abc', domainName: 'abc.lambda-url.eu-west-1.on.aws', domainPrefix: 'abc',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '10.0.0.1', userAgent: 'kube-apiserver-admission' },
      requestId: 'r1', routeKey: '$default', stage: '$default', time: '01/Jan/2026:00:00:00 +0000', timeEpoch: 0,
    },
  } as LambdaFunctionURLEvent;
  // hono's handler is typed for its own event union; a function URL event is API Gateway v2.
  const out = (await (lambda as unknown as (e: unknown, c: unknown) => Promise<LambdaFunctionURLResult>)(event, {})) as Exclude<LambdaFunctionURLResult, string>;
  const body = out.isBase64Encoded ? Buffer.from(out.body ?? '', 'base64') : (out.body ?? '');
  return new Response(out.statusCode === 204 ? null : body, { status: out.statusCode ?? 200, headers: out.headers as Record<string, string> });
};
runContract('Lambda function URL adapter', () => viaLambdaOf(handler));

test('a body over the limit gets a 413, not a crash', async () => {
  const huge = JSON.stringify(admissionReview({ object: { pad: 'x'.repeat(MAX_BODY_BYTES) } }));
  const res = await app.request(PATH, { method: 'POST', body: huge, headers: { 'content-type': 'application/json' } });
  assert.equal(res.status, 413);
  assert.match(((await res.json()) as { message: string }).message, /body larger than/);
});

test('the app reports each decision and each rejected request to its log', async () => {
  const seen: string[] = [];
  const logged = createWebhookApp({
    log: {
      decision: (e) => seen.push(`decision ${e.uid} ${e.allowed} ${e.errors}`),
      rejected: (e) => seen.push(`rejected ${e.status}`),
      failed: () => seen.push('failed'),
    },
  });
  await logged.request(PATH, { method: 'POST', body: JSON.stringify(admissionReview({ uid: 'u9' })) });
  await logged.request(PATH, { method: 'POST', body: 'nope' });
  assert.deepEqual(seen, ['decision u9 true 0', 'rejected 400']);
});

test('a bug of ours (not the request) is a 500 Status that says so, and is logged as a failure', async () => {
  const seen: string[] = [];
  const broken = createWebhookApp({
    log: {
      decision: () => {
        throw new Error('log sink exploded');
      },
      rejected: () => seen.push('rejected'),
      failed: (err) => seen.push(`failed ${(err as Error).message}`),
    },
  });
  const res = await broken.request(PATH, { method: 'POST', body: JSON.stringify(admissionReview({ uid: 'u1' })) });
  assert.equal(res.status, 500);
  const body = (await res.json()) as { kind: string; code: number; message: string };
  assert.deepEqual({ kind: body.kind, code: body.code, message: body.message }, { kind: 'Status', code: 500, message: 'internal error' });
  assert.deepEqual(seen, ['failed log sink exploded']);
});

test('through the Lambda function URL adapter, such a bug is a 500 the invocation returns, not a failed invocation: Lambda\'s Errors never counts it, the URL\'s Url5xxCount does (the AWS stack alarms on that)', async () => {
  const broken = createLambdaUrlHandler({ log: { decision: () => { throw new Error('log sink exploded'); }, rejected: () => {}, failed: () => {} } });
  // The adapter's promise resolves (a rejection is what Lambda counts in Errors).
  const res = await viaLambdaOf(broken)(PATH, { method: 'POST', body: JSON.stringify(admissionReview({ uid: 'u1' })), headers: { 'content-type': 'application/json' } });
  assert.equal(res.status, 500);
});
