// The AWS stack's log metric filters, read from the synthesized template and evaluated on
// the lines the Lambda SQS consumer really writes (pino JSON, as Lambda stores them) when the
// API server fails in each way an alarm is meant for: a filter that does not match its line
// exactly (a field renamed, a value changed) is an alarm that never fires.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { pino } from 'pino';
import { startApiServer, type ApiServer, type FaultSpec } from '../../functions/cluster/index.ts';
import { FunctionsConfig, parseEnv } from '../../functions/config.ts';
import { createEngineDeps } from '../../functions/runtime/deps.ts';
import { createSqsConsumer } from '../../functions/runtime/lambda/sqs-consumer.ts';
import { FunctionsStack } from '../../infra/aws/functions-stack.ts';
import { parseSettings } from '../../infra/aws/settings.ts';
import { envelopeFor } from '../support/ejob-world.ts';
import { shippedAuthorization, TOKENS } from '../support/shipped-rbac.ts';

const dir = mkdtempSync(join(tmpdir(), 'ephemera-alarm-lines-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The functions stack's metric filters: metric name → filter pattern. */
function metricFilters(): Map<string, string> {
  const code = join(dir, 'code');
  mkdirSync(code);
  writeFileSync(join(code, 'index.mjs'), 'export const handler = 1;');
  const stack = new FunctionsStack(new App({ outdir: join(dir, 'out') }), 'Functions', { settings: parseSettings({ clusters: { prod: { eks: { name: 'prod' } } } }), codeDir: code });
  const filters = Object.values(Template.fromStack(stack).findResources('AWS::Logs::MetricFilter')) as { Properties: { FilterPattern: string; MetricTransformations: { MetricName: string }[] } }[];
  return new Map(filters.map((f) => [f.Properties.MetricTransformations[0]!.MetricName, f.Properties.FilterPattern]));
}

/**
 * Whether a JSON filter pattern of the forms the stack writes (`$.field = "value"` terms,
 * joined by `||`) matches a line; any other form fails the test rather than being guessed at.
 * CloudWatch compares a string value exactly (no `*` here), on the line's own field.
 */
function matches(pattern: string, line: Record<string, unknown>): boolean {
  const body = /^\{ (.*) \}$/.exec(pattern)?.[1];
  assert.ok(body, `a JSON filter pattern: ${pattern}`);
  return body.split(' || ').some((term) => {
    const m = /^\(?\$\.(\w+) = "([^"*]*)"\)?$/.exec(term);
    assert.ok(m, `a term this test can evaluate: ${term}`);
    return line[m[1]!] === m[2];
  });
}

const ns = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const pod = (name: string) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels: { app: 'web' } },
  spec: { containers: [{ name: 'main', image: 'nginx' }] },
  status: { phase: 'Running', containerStatuses: [{ name: 'main', state: { running: {} } }] },
});
const job = {
  apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', metadata: { name: 'j1', namespace: 'default' },
  spec: { selector: { matchLabels: { app: 'web' } }, parallelism: 2, template: { ephemeralContainers: [{ name: 'ec', image: 'busybox', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', targetContainerName: 'main' }] } },
};

/** An envelope for job j1, handled as the deployed function would against a server with `fault`: each metric's count of the lines. */
async function countsFor(filters: Map<string, string>, o: { token?: string; fault?: FaultSpec }): Promise<Record<string, number>> {
  const lines: Record<string, unknown>[] = [];
  const out = new Writable({ write(chunk, _enc, done) {
    for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
    done();
  } });
  const logger = pino({ level: 'info', base: { app: 'ephemera' } }, out);
  const server: ApiServer = await startApiServer({ objects: [ns('default'), ns('ephemera-locks'), pod('web-1'), pod('web-2'), job], authorization: shippedAuthorization() });
  try {
    if (o.fault) server.faults.add({ times: Infinity, ...o.fault });
    const engine = createEngineDeps(parseEnv(FunctionsConfig, {}), server.kubeConfig({ token: o.token ?? TOKENS.functions }), logger);
    const consume = createSqsConsumer({ engine, logger, requeue: async () => {}, deadLetter: async () => {} });
    const record = { messageId: 'm-1', attributes: {}, messageAttributes: {}, body: JSON.stringify(envelopeFor('EphemeralJob', 'default', 'j1')) };
    await consume({ Records: [record] } as never, { getRemainingTimeInMillis: () => 60_000 });
  } finally {
    await server.close();
  }
  return Object.fromEntries([...filters].map(([metric, pattern]) => [metric, lines.filter((l) => matches(pattern, l)).length]));
}

describe('AWS alarms: the metric filters count the functions\' real log lines', () => {
  let filters: Map<string, string>;
  before(() => {
    filters = metricFilters();
  });

  test('a credential the cluster refuses: its "credentials" line is counted by CredentialsRefused (threshold 1) and, as before, by HandlingFailures', async () => {
    assert.deepEqual(await countsFor(filters, { token: 'expired-token' }), { CredentialsRefused: 1, HandlingFailures: 1, RefusedWrites: 0, ApiServerThrottled: 0 });
  });

  test('the API server failing (500): HandlingFailures only', async () => {
    assert.deepEqual(await countsFor(filters, { fault: { method: 'GET', pathIncludes: '/pods', watch: false, status: 500 } }), { CredentialsRefused: 0, HandlingFailures: 1, RefusedWrites: 0, ApiServerThrottled: 0 });
  });

  test('an injection refused for good (403: Pod Security): RefusedWrites, one per refused write', async () => {
    const fault: FaultSpec = { method: 'PATCH', pathIncludes: '/ephemeralcontainers', status: 403, reason: 'Forbidden', message: 'pods "web-1" is forbidden: violates PodSecurity "restricted:latest"' };
    assert.deepEqual(await countsFor(filters, { fault }), { CredentialsRefused: 0, HandlingFailures: 0, RefusedWrites: 2, ApiServerThrottled: 0 });
  });

  test('the API server throttling (429 Retry-After): ApiServerThrottled only (the envelope is requeued, not left for redelivery)', async () => {
    const fault: FaultSpec = { method: 'GET', pathIncludes: '/pods', watch: false, status: 429, retryAfterSeconds: 5 };
    assert.deepEqual(await countsFor(filters, { fault }), { CredentialsRefused: 0, HandlingFailures: 0, RefusedWrites: 0, ApiServerThrottled: 1 });
  });
});
