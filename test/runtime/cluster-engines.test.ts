// runtime/deps.ts clusterEngines: the clients of every cluster a deployment serves keep their
// LIST items in one ListReuse, so its memory budget holds for the process.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startApiServer } from '../../functions/cluster/index.ts';
import { FunctionsConfig } from '../../functions/config.ts';
import { silentLogger } from '../../functions/engine/logger.ts';
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
