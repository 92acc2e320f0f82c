// What a failure's Warning says of the pod (pod-state.ts failureReason): the kubelet's and the
// container's own words, on one line and bounded (review78).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ContainerStatus, Pod } from '../../functions/api/pod.ts';
import { QUOTED_MAX, quoted } from '../../functions/api/quoted.ts';
import { failureReason } from '../../functions/ejob/pod-state.ts';

const JOB = 'job-uid';
const withState = (state: ContainerStatus['state']): Pod => ({
  metadata: { name: 'p', namespace: 'ns', uid: 'uid-p' },
  spec: { containers: [{ name: 'app' }], ephemeralContainers: [{ name: 'check', env: [{ name: 'KRUISE_EJOB_ID', value: JOB }] }] },
  status: { phase: 'Running', ephemeralContainerStatuses: [{ name: 'check', state }] },
});

describe('failureReason: why a pod failed for the job', () => {
  test('a container that cannot start: the kubelet\'s reason and message', () => {
    const pod = withState({ waiting: { reason: 'CreateContainerError', message: 'exec: "pidof": executable file not found in $PATH' } });
    assert.equal(failureReason(pod, JOB), 'container check cannot start: CreateContainerError: exec: "pidof": executable file not found in $PATH');
  });

  test('a container that exited non-zero: its code, reason and termination message (the log tail under FallbackToLogsOnError), on one line', () => {
    const pod = withState({ terminated: { exitCode: 2, reason: 'Error', message: 'checking /var\n  disk /var 97% full\n' } });
    assert.equal(failureReason(pod, JOB), 'container check exited with code 2 (Error): checking /var disk /var 97% full');
  });

  test('no message, or only whitespace: as before', () => {
    assert.equal(failureReason(withState({ terminated: { exitCode: 1, reason: 'Error', message: ' \n' } }), JOB), 'container check exited with code 1 (Error)');
    assert.equal(failureReason(withState({ waiting: { reason: 'InvalidImageName' } }), JOB), 'container check cannot start: InvalidImageName');
  });

  test(`a long message keeps its start and its end, ${QUOTED_MAX} characters in all`, () => {
    const log = `starting check\n${'x'.repeat(5000)}\nFATAL: disk /var 97% full`;
    const said = failureReason(withState({ terminated: { exitCode: 1, reason: 'Error', message: log } }), JOB);
    const message = said.slice('container check exited with code 1 (Error): '.length);
    assert.equal(message.length, QUOTED_MAX);
    assert.match(message, /^starting check x+ … x+ FATAL: disk \/var 97% full$/);
  });
});

describe('quoted', () => {
  test('cut between code points: no half of a surrogate pair is left (Go would read it as U+FFFD)', () => {
    const text = '😀'.repeat(300);
    const cut = quoted(text, 100);
    assert.equal(Array.from(cut).length, 100);
    assert.ok(!/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(cut));
  });

  test('short enough: only the whitespace changes', () => {
    assert.equal(quoted('  a\tb\r\nc  '), 'a b c');
  });
});
