// The record sink's file: a batch is in it whole or not at all, and only its owner reads it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';
import { Envelope, ENVELOPE_TYPE } from '../../functions/api/envelope.ts';
import type { Message } from '../../relay/envelope.ts';
import { recordSink } from '../../relay/sinks/record.ts';

const dir = mkdtempSync(join(tmpdir(), 'ephemera-record-sink-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** `n` envelopes of pods p-<from>…, each line about `pad` bytes long. */
function messages(from: number, n: number, pad = 600): Message[] {
  return Array.from({ length: n }, (_, j) => {
    const i = from + j;
    const body = JSON.stringify({ specversion: '1.0', id: `id-${i}`, source: 'ephemera-relay/x', type: ENVELOPE_TYPE, time: '2026-01-01T00:00:00.000Z', subject: `Pod/default/p-${i}`, data: { kind: 'Pod', event: 'MODIFIED', namespace: 'default', name: `p-${i}`, snapshot: { pad: 'x'.repeat(pad) } } });
    return { key: `Pod/default/p-${i}`, kind: 'Pod', id: `id-${i}`, body };
  });
}

/** Every line of the file read as an envelope (throws on a bad one), as their ids. */
function ids(path: string): string[] {
  const text = readFileSync(path, 'utf8');
  assert.ok(text.endsWith('\n'), 'ends with a whole line');
  return text.slice(0, -1).split('\n').map((line, i) => {
    let doc: unknown;
    assert.doesNotThrow(() => (doc = JSON.parse(line)), `line ${i + 1} is JSON: ${line.slice(0, 80)}…`);
    const r = Envelope.safeParse(doc);
    assert.ok(r.success, `line ${i + 1} is an envelope`);
    return r.data.id;
  });
}

describe('record sink: a failed append', () => {
  test('a write that fails part way is cut back, so the retry leaves every line whole, each once (review75 H2)', async () => {
    const path = join(dir, 'partial.jsonl');
    let calls = 0;
    // ENOSPC after half the batch reached the file, once.
    const sink = recordSink(path, {
      write: async (file, data) => {
        if (calls++ > 0) return void (await file.appendFile(data));
        await file.appendFile(data.subarray(0, Math.floor(data.length / 2)));
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      },
    });
    assert.deepEqual((await recordSink(path).send(messages(0, 2))).map((o) => o.ok), [true, true]);
    const failed = await sink.send(messages(2, 4));
    assert.deepEqual(failed.map((o) => o.ok), [false, false, false, false]);
    assert.match(failed[0]?.ok === false ? failed[0].error : '', /ENOSPC/);
    assert.deepEqual(ids(path), ['id-0', 'id-1'], 'nothing of the failed batch is left');
    assert.deepEqual((await sink.send(messages(2, 4))).map((o) => o.ok), [true, true, true, true]);
    assert.deepEqual(ids(path), ['id-0', 'id-1', 'id-2', 'id-3', 'id-4', 'id-5']);
  });

  test('the same under a real file-size limit (ulimit -f, EFBIG): the batch over it leaves nothing', { skip: process.platform === 'win32' }, async () => {
    const path = join(dir, 'efbig.jsonl');
    const sinkModule = fileURLToPath(new URL('../../relay/sinks/record.ts', import.meta.url));
    // A child under a 4 KiB limit (SIGXFSZ ignored, so the write fails with EFBIG): one batch
    // of 2 lines fits, the next of 6 does not.
    const script = `import { recordSink } from ${JSON.stringify(sinkModule)};
const m = (from, n) => JSON.parse(process.env.MESSAGES).slice(from, from + n);
const sink = recordSink(process.env.OUT);
const a = await sink.send(m(0, 2));
const b = await sink.send(m(2, 6));
console.log(JSON.stringify([a.map((o) => o.ok), b.map((o) => o.ok), b[0].error]));`;
    const r = spawnSync('bash', ['-c', `trap '' XFSZ; ulimit -S -f 4; exec "$0" --input-type=module -e "$1"`, process.execPath, script], { env: { ...process.env, OUT: path, MESSAGES: JSON.stringify(messages(0, 8)) }, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const [first, second, error] = JSON.parse(r.stdout) as [boolean[], boolean[], string];
    assert.deepEqual(first, [true, true]);
    assert.deepEqual(second, [false, false, false, false, false, false]);
    assert.match(error, /EFBIG/);
    assert.deepEqual(ids(path), ['id-0', 'id-1']);
    // The retry, with room again.
    assert.deepEqual((await recordSink(path).send(messages(2, 6))).map((o) => o.ok), [true, true, true, true, true, true]);
    assert.deepEqual(ids(path), ['id-0', 'id-1', 'id-2', 'id-3', 'id-4', 'id-5', 'id-6', 'id-7']);
  });
});

describe('record sink: the file', () => {
  test('a last line cut off by a killed relay is cut back before the next append, so the file stays whole (review76)', async () => {
    const path = join(dir, 'killed.jsonl');
    assert.ok((await recordSink(path).send(messages(0, 3))).every((o) => o.ok));
    // A relay killed mid-append leaves part of a line, with no newline (longer than the tail
    // chunk read back, so the cut has to look further than one read).
    appendFileSync(path, messages(3, 1, 100_000)[0]!.body.slice(0, 90_000));
    assert.ok((await recordSink(path).send(messages(4, 2))).every((o) => o.ok), 'the next relay appends');
    assert.deepEqual(ids(path), ['id-0', 'id-1', 'id-2', 'id-4', 'id-5'], 'the fragment is gone, every line whole');
    // A file holding only a fragment is emptied.
    const only = join(dir, 'fragment.jsonl');
    writeFileSync(only, '{"specversion":"1.0","id":"cut');
    assert.ok((await recordSink(only).send(messages(6, 1))).every((o) => o.ok));
    assert.deepEqual(ids(only), ['id-6']);
  });

  test('is created readable and writable by its owner only: it holds names, labels and images (review75 L4)', async () => {
    const path = join(dir, 'mode.jsonl');
    await recordSink(path).send(messages(0, 1));
    assert.equal(statSync(path).mode & 0o777, 0o600);
  });
});
