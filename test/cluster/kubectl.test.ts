// The embedded cluster as kubectl meets it: the real kubectl binary over a temporary
// kubeconfig, no --validate=false, no special flags.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { startApiServer, type ApiServer } from '../../functions/cluster/index.ts';
import { demoObjects } from '../../functions/runtime/node/demo.ts';
import { kubectlShortfall, kubectlVersion, skipOutsideCi } from '../support/kubectl.ts';

const run = promisify(execFile);
const found = kubectlVersion();
// What each test needs of kubectl (review81 M1). CI (.ci/run) has 1.32 or later.
const forAll = kubectlShortfall(found, 29, 'kubectl 1.28 and older validate `apply` against /openapi/v2 in protobuf, which the embedded cluster serves as JSON only');
const forProtobuf = kubectlShortfall(found, 32, 'before 1.32 kubectl sends `create namespace` as JSON, so there is no protobuf body to refuse');
const needsKubectl = { skip: skipOutsideCi(forAll) };
const needsKubectl132 = { skip: skipOutsideCi(forAll ?? forProtobuf) };
const dir = mkdtempSync(join(tmpdir(), 'ephemera-kubectl-'));
let server: ApiServer;
let kubeconfig = '';

before(async () => {
  server = await startApiServer({ objects: demoObjects(new Date()), admission: true });
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, server.kubeconfigYaml());
});
after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

/** kubectl's exit code, stdout and stderr; its discovery cache stays in the temp folder. */
async function kubectl(args: string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const argv = ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args];
  if (stdin === undefined) {
    try {
      const r = await run('kubectl', argv);
      return { code: 0, ...r };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }
  return new Promise((resolve, reject) => {
    const child = spawn('kubectl', argv, { stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

const header = (out: string): string[] => (out.split('\n')[0] ?? '').trim().split(/\s{2,}/);
const rowOf = (out: string, name: string): string[] => (out.split('\n').find((l) => l.includes(name)) ?? '').trim().split(/\s+/);

const JOB = (name: string, specExtra = '', container = ''): string => `apiVersion: apps.kruise.io/v1alpha1
kind: EphemeralJob
metadata:
  name: ${name}
spec:
  selector:
    matchLabels: { app: helloworld }
  parallelism: 2${specExtra}
  template:
    ephemeralContainers:
      - name: helloworld-ec
        image: busybox:latest
        imagePullPolicy: IfNotPresent
        terminationMessagePolicy: File
        targetContainerName: helloworld${container}
`;

describe('kubectl against the embedded cluster', () => {
  // Outside CI each test is skipped with the reason; under CI each fails with it.
  beforeEach(() => assert.equal(forAll, undefined, forAll));

  test('get ejob shows the CRD\'s printer columns with the status values', needsKubectl, async () => {
    const job = server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'default', name: 'hello-world-ephemeral-job' })!;
    server.store.put({ ...job, status: { phase: 'Failed', match: 4, succeeded: 2, failed: 2, running: 0, waiting: 0 } });
    const r = await kubectl(['get', 'ejob']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(header(r.stdout), ['NAME', 'STATUS', 'MATCH', 'SUCCEED', 'FAILED', 'RUNNING', 'WAITING', 'AGE']);
    assert.deepEqual(rowOf(r.stdout, 'hello-world-ephemeral-job').slice(0, 7), ['hello-world-ephemeral-job', 'Failed', '4', '2', '2', '0', '0']);
    assert.match(rowOf(r.stdout, 'hello-world-ephemeral-job')[7] ?? '', /^\d+s$/);
  });

  test('get pods, events, nodes and leases show the built-in columns', needsKubectl, async () => {
    const pods = await kubectl(['get', 'pods']);
    assert.deepEqual(header(pods.stdout), ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
    assert.deepEqual(rowOf(pods.stdout, 'helloworld-865cd8865b-nl8lq').slice(0, 4), ['helloworld-865cd8865b-nl8lq', '1/1', 'Running', '0']);
    server.store.put({
      apiVersion: 'v1', kind: 'Event', metadata: { name: 'hello.1', namespace: 'default' }, type: 'Normal', reason: 'Injected', message: 'injected into helloworld-865cd8865b-nl8lq',
      involvedObject: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'default', name: 'hello-world-ephemeral-job' }, lastTimestamp: new Date(Date.now() - 5000).toISOString().replace(/\.\d+Z$/, 'Z'), count: 1,
    });
    const events = await kubectl(['get', 'events']);
    assert.deepEqual(header(events.stdout), ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE']);
    assert.match(events.stdout, /\n\d+s\s+Normal\s+Injected\s+ephemeraljob\/hello-world-ephemeral-job\s+injected into helloworld-865cd8865b-nl8lq/);
    const nodes = await kubectl(['get', 'nodes']);
    assert.deepEqual(header(nodes.stdout), ['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION']);
    server.store.put({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'ejob-lock', namespace: 'ephemera-system' }, spec: { holderIdentity: 'host/1/abc' } });
    const leases = await kubectl(['get', 'leases', '-A']);
    assert.deepEqual(header(leases.stdout), ['NAMESPACE', 'NAME', 'HOLDER', 'AGE']);
    assert.deepEqual(rowOf(leases.stdout, 'ejob-lock').slice(0, 3), ['ephemera-system', 'ejob-lock', 'host/1/abc']);
  });

  test('the demo cluster looks like one: its namespaces are there, its node is Ready, get all lists the pods (review)', needsKubectl, async () => {
    const ns = await kubectl(['get', 'ns']);
    assert.equal(ns.code, 0, ns.stderr);
    for (const name of ['default', 'kube-system', 'ephemera-system', 'ephemera-locks']) assert.deepEqual(rowOf(ns.stdout, name).slice(0, 2), [name, 'Active']);
    assert.deepEqual(rowOf((await kubectl(['get', 'nodes'])).stdout, 'demo-node').slice(0, 2), ['demo-node', 'Ready']);
    const all = await kubectl(['get', 'all']);
    assert.equal(all.code, 0, all.stderr);
    assert.match(all.stdout, /helloworld-865cd8865b-nl8lq\s+1\/1\s+Running/);
  });

  test('apply validates on the server (no --validate=false); generation is 1, +1 on a spec change, not on status', needsKubectl, async () => {
    const created = await kubectl(['apply', '-f', '-'], JOB('applied'));
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /ephemeraljob\.apps\.kruise\.io\/applied created/);
    const generation = async (): Promise<string> => (await kubectl(['get', 'ejob', 'applied', '-o', 'jsonpath={.metadata.generation}'])).stdout;
    assert.equal(await generation(), '1');
    const changed = await kubectl(['apply', '-f', '-'], JOB('applied').replace('parallelism: 2', 'parallelism: 3'));
    assert.equal(changed.code, 0, changed.stderr);
    assert.match(changed.stdout, /configured/);
    assert.equal(await generation(), '2');
    const status = await kubectl(['patch', 'ejob', 'applied', '--subresource', 'status', '--type', 'merge', '-p', '{"status":{"phase":"Running"}}']);
    assert.equal(status.code, 0, status.stderr);
    assert.equal(await generation(), '2', 'a status write leaves generation alone');
  });

  test('a server-side dry run (kubectl diff, --dry-run=server) is refused and writes nothing: it used to be carried out for real (review)', needsKubectl, async () => {
    const ejob = (name: string): unknown => server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'default', name });
    const created = await kubectl(['apply', '--dry-run=server', '-f', '-'], JOB('dry'));
    assert.notEqual(created.code, 0);
    assert.match(created.stderr, /dryRun is not supported by the embedded cluster, and nothing was written/);
    assert.equal(ejob('dry'), undefined);
    assert.equal((await kubectl(['apply', '-f', '-'], JOB('dry'))).code, 0);
    const before = JSON.stringify(ejob('dry'));
    const diff = await kubectl(['diff', '-f', '-'], JOB('dry').replace('parallelism: 2', 'parallelism: 3'));
    assert.match(diff.stderr, /dryRun is not supported/);
    assert.equal(JSON.stringify(ejob('dry')), before, 'kubectl diff changed nothing');
    const deleted = await kubectl(['delete', 'ejob', 'dry', '--dry-run=server']);
    assert.notEqual(deleted.code, 0);
    assert.notEqual(ejob('dry'), undefined, 'still there');
  });

  test('a protobuf body (kubectl create namespace) gets a clear 415, not its bytes read as JSON (review)', needsKubectl132, async () => {
    assert.equal(forProtobuf, undefined, forProtobuf);
    const r = await kubectl(['create', 'namespace', 'team-a']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /accepted media types include: application\/json/);
    assert.doesNotMatch(r.stderr, /is not valid JSON/);
    const applied = await kubectl(['apply', '-f', '-'], 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n');
    assert.equal(applied.code, 0, applied.stderr);
  });

  test('the CRD schema is enforced: parallelism 50 is refused naming the field', needsKubectl, async () => {
    const r = await kubectl(['apply', '-f', '-'], JOB('too-wide').replace('parallelism: 2', 'parallelism: 50'));
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /The EphemeralJob "too-wide" is invalid: spec\.parallelism: Invalid value: 50: spec\.parallelism in body should be less than or equal to 10/);
    assert.equal(server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'default', name: 'too-wide' }), undefined);
  });

  test('a field the schema does not know is refused, as kubectl\'s strict validation asks', needsKubectl, async () => {
    const r = await kubectl(['apply', '-f', '-'], JOB('typo', '\n  paralelism: 2'));
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /strict decoding error: unknown field "spec\.paralelism"/);
  });

  test('the validating webhook is called on create and update: every field error comes back', needsKubectl, async () => {
    const bad = JOB('invalid').replace('image: busybox:latest', 'image: ""').replace('imagePullPolicy: IfNotPresent', 'imagePullPolicy: Sometimes');
    const r = await kubectl(['apply', '-f', '-'], bad);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /spec\.template\.ephemeralContainers\[0\]\.image: Required value/);
    assert.match(r.stderr, /spec\.template\.ephemeralContainers\[0\]\.imagePullPolicy: Unsupported value: "Sometimes"/);
    const direct = await fetch(`${server.url}/apis/apps.kruise.io/v1alpha1/namespaces/default/ephemeraljobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', metadata: { name: 'x' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { ephemeralContainers: [{ name: 'c', image: '' }] } } }) });
    assert.equal(direct.status, 422);
    assert.match(((await direct.json()) as { message: string }).message, /^admission webhook "ephemeraljobs\.validate\.ephemera\.dev" denied the request: EphemeralJob\.apps\.kruise\.io "x" is invalid: \[/);
    const immutable = await kubectl(['apply', '-f', '-'], JOB('applied').replace('app: helloworld', 'app: other'));
    assert.notEqual(immutable.code, 0);
    assert.match(immutable.stderr, /spec\.selector: Forbidden: field is immutable/);
  });

  test('get -w prints table rows as the job changes', needsKubectl, async () => {
    const child = spawn('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), 'get', 'ejob', 'hello-world-ephemeral-job', '-w'], { stdio: 'pipe' });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const seen = (re: RegExp): Promise<void> => new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${re} in: ${out}`)), 10_000);
        const check = (): void => {
          if (!re.test(out)) return;
          clearTimeout(timer);
          resolve();
        };
        child.stdout.on('data', check);
        check();
      });
      await seen(/NAME\s+STATUS\s+MATCH/);
      // Change the job only once kubectl watches: a change before that is its first event, which it does not print again.
      for (let i = 0; i < 200 && !server.requests.filter((r) => r.watch && r.path.endsWith('/ephemeraljobs')).length; i++) await new Promise((r) => setTimeout(r, 25));
      const job = server.store.get({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', namespace: 'default', name: 'hello-world-ephemeral-job' })!;
      server.store.put({ ...job, status: { phase: 'Running', match: 4, succeeded: 1, failed: 0, running: 1, waiting: 2 } });
      await seen(/hello-world-ephemeral-job\s+Running\s+4\s+1\s+0\s+1\s+2\s+\d+s/);
    } finally {
      child.kill();
    }
  });
});
