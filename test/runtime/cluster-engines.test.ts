// runtime/deps.ts clusterEngines: the clients of every cluster a deployment serves keep their
// LIST items in one ListReuse, so its memory budget holds for the process.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startApiServer } from '../../functions/cluster/index.ts';
import { FunctionsConfig } from '../../functions/config.ts';
import { silentLogger } from '../../functions/engine/logger.ts';
import { clusterConnections, CONNECTION_REFRESH_MS } from '../../functions/kube/credentials.ts';
import { ListReuse } from '../../functions/kube/list-reuse.ts';
import { clusterEngines } from '../../functions/runtime/deps.ts';

/** A ListReuse that counts the answers it decoded. */
class Counting extends ListReuse {
  decoded = 0;
  override decode(body: Buffer): unknown {
    this.decoded++;
    return super.decode(body);
  }
}

test('every cluster\'s client decodes its LISTs through the one ListReuse', async () => {
  const pod = (name: string): unknown => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { containers: [{ name: 'app', image: 'nginx' }] } });
  const [a, b] = await Promise.all([startApiServer({ objects: [pod('a-0')] }), startApiServer({ objects: [pod('b-0')] })]);
  try {
    const servers: Record<string, string> = { a: a.url, b: b.url };
    const connections = { names: ['a', 'b'], connect: async (name: string) => ({ name, endpoint: { server: servers[name] as string } }) };
    const shared = new Counting(1 << 20);
    const engineFor = clusterEngines(FunctionsConfig.parse({}), connections, silentLogger, { listReuse: shared });
    const names = async (cluster: string): Promise<string[]> => ((await (await engineFor(cluster)).kube.list('v1', 'Pod', 'default')).items as { metadata: { name: string } }[]).map((p) => p.metadata.name);
    assert.deepEqual(await names('a'), ['a-0']);
    assert.deepEqual(await names('b'), ['b-0']);
    assert.equal(shared.decoded, 2, 'both clusters\' LISTs went through the shared one');
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});

test('a cluster\'s server and CA are read again after CONNECTION_REFRESH_MS: a secret fixed reaches a warm instance; a refresh that fails keeps the connection made (review)', async () => {
  const pod = (name: string): unknown => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { containers: [{ name: 'app', image: 'nginx' }] } });
  const [wrong, right] = await Promise.all([startApiServer({ objects: [pod('wrong-0')] }), startApiServer({ objects: [pod('right-0')] })]);
  try {
    let clock = 0;
    const answers: (() => string)[] = [
      () => JSON.stringify({ server: wrong.url, token: 'a-token-for-the-test' }),
      () => { throw new Error('Secrets Manager is unreachable'); },
      () => JSON.stringify({ server: right.url, token: 'a-token-for-the-test' }),
    ];
    let reads = 0;
    const aws = { region: 'us-east-1', credentials: async () => ({ accessKeyId: 'a', secretAccessKey: 's' }), describeCluster: async () => ({ endpoint: '', certificateAuthorityData: '' }), getSecret: async () => answers[Math.min(reads++, answers.length - 1)]!() };
    const connections = clusterConnections({ edge: { secret: { secretId: 'ephemera/edge' } } }, () => aws, undefined, () => clock);
    const engineFor = clusterEngines(FunctionsConfig.parse({}), connections, silentLogger);
    const names = async (): Promise<string[]> => ((await (await engineFor('edge')).kube.list('v1', 'Pod', 'default')).items as { metadata: { name: string } }[]).map((p) => p.metadata.name);
    const settled = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(await names(), ['wrong-0']);
    clock += CONNECTION_REFRESH_MS - 1;
    assert.deepEqual(await names(), ['wrong-0']);
    assert.equal(reads, 1, 'not read again before its time');
    clock += 1;
    assert.deepEqual(await names(), ['wrong-0'], 'served while the refresh runs');
    await settled();
    assert.equal(reads, 2);
    assert.deepEqual(await names(), ['wrong-0'], 'the refresh failed: the connection made still serves');
    clock += CONNECTION_REFRESH_MS;
    await names();
    await settled();
    assert.equal(reads, 3);
    assert.deepEqual(await names(), ['right-0'], 'the fixed secret is in use, without a cold start');
  } finally {
    await Promise.all([wrong.close(), right.close()]);
  }
});

test('a refresh that reads the same server and CA keeps the client made, and its sockets and clock (final read)', async () => {
  const server = await startApiServer({ objects: [] });
  try {
    let clock = 0;
    let reads = 0;
    const aws = { region: 'us-east-1', credentials: async () => ({ accessKeyId: 'a', secretAccessKey: 's' }), describeCluster: async () => ({ endpoint: '', certificateAuthorityData: '' }), getSecret: async () => (reads++, JSON.stringify({ server: server.url, token: 'a-token-for-the-test' })) };
    const engineFor = clusterEngines(FunctionsConfig.parse({}), clusterConnections({ edge: { secret: { secretId: 'ephemera/edge' } } }, () => aws, undefined, () => clock), silentLogger);
    const first = (await engineFor('edge')).kube;
    clock += CONNECTION_REFRESH_MS;
    await engineFor('edge');
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(reads, 2, 'read again');
    assert.equal((await engineFor('edge')).kube, first, 'the same client');
  } finally {
    await server.close();
  }
});
