// relay/Dockerfile (review81 L4): the image ran on whatever Node 24 `node:24-slim` named on
// the day of the build, not the one the tests ran on, and carried npm, corepack and yarn,
// which the relay never runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const dockerfile = readFileSync('relay/Dockerfile', 'utf8');
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { optionalDependencies: { node: string } };

test('both stages build on the Node version the tests run on (package.json\'s node)', () => {
  const froms = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
  assert.equal(froms.length, 2);
  for (const from of froms) assert.match(from!, new RegExp(`^node:${pkg.optionalDependencies.node.replaceAll('.', '\\.')}-slim(@sha256:[0-9a-f]{64})?$`));
});

test('the final stage drops npm, npx, corepack and yarn, and its entry point is node', () => {
  const final = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const removed = /^RUN rm -rf ((?:[^\\\n]|\\\n)*)$/m.exec(final)?.[1] ?? '';
  for (const path of ['/usr/local/lib/node_modules/npm', '/usr/local/lib/node_modules/corepack', '/usr/local/bin/npm', '/usr/local/bin/npx', '/usr/local/bin/corepack', '/usr/local/bin/yarn', '/opt/yarn-v*']) {
    assert.ok(removed.split(/[\s\\]+/).includes(path), `final stage removes ${path}`);
  }
  assert.match(final, /^ENTRYPOINT \["node", /m);
});
