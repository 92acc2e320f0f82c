// What the READMEs' strategy tables promise, checked where a user compares the strategies.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

/** The row of the first table in `file` whose first cells name `strategy`. */
function row(file: string, strategy: string): string {
  const line = readFileSync(file, 'utf8').split('\n').find((l) => l.startsWith('|') && l.split('|').slice(1, 3).join('|').includes(`\`${strategy}\``));
  assert.ok(line, `${file} has a table row for ${strategy}`);
  return line;
}

for (const file of ['README.md', 'functions/sidecar/README.md']) {
  test(`${file}: the strategy table says ephemeral-signal does not run the sidecar's preStop hook, which crr and the kubelet do (review86)`, () => {
    assert.match(row(file, 'ephemeral-signal'), /(not|without) run(ning)? (the|its) (sidecar's )?`(lifecycle\.)?preStop` hook/);
  });
}
