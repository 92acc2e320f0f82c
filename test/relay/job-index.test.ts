// The relay's job views by namespace: a namespace keeps an entry only while it has a job, so
// namespaces that come and go (CI) leave nothing behind for the replay to walk.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { indexJob, type JobsByNamespace } from '../../relay/job-index.ts';
import type { JobView } from '../../relay/trim.ts';

const view = (namespace: string, name: string): JobView => ({ namespace, name, uid: `${namespace}-${name}`, selector: { matchLabels: { app: 'web' } }, finished: false });
const contents = (jobs: JobsByNamespace): Record<string, string[]> => Object.fromEntries([...jobs].map(([ns, inNs]) => [ns, [...inNs.keys()]]));

test('a namespace whose last job is deleted leaves the index; one with jobs left keeps them', () => {
  const jobs: JobsByNamespace = new Map();
  indexJob(jobs, 'RESYNC', view('ci-1', 'a'));
  indexJob(jobs, 'ADDED', view('ci-2', 'a'));
  indexJob(jobs, 'ADDED', view('ci-2', 'b'));
  indexJob(jobs, 'MODIFIED', view('ci-2', 'b'));
  assert.deepEqual(contents(jobs), { 'ci-1': ['a'], 'ci-2': ['a', 'b'] });
  indexJob(jobs, 'DELETED', view('ci-1', 'a'));
  indexJob(jobs, 'DELETED', view('ci-2', 'a'));
  assert.deepEqual(contents(jobs), { 'ci-2': ['b'] });
  indexJob(jobs, 'DELETED', view('ci-2', 'b'));
  assert.equal(jobs.size, 0, 'no empty namespace map is kept');
});

test('the deletion of a job the index never had adds no namespace', () => {
  const jobs: JobsByNamespace = new Map();
  indexJob(jobs, 'DELETED', view('gone', 'x'));
  assert.equal(jobs.size, 0);
});
