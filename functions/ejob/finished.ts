// Dependency-free: the relay's job view uses it too.

/** Succeeded or Failed with a completionTime: the job's verdict is final. */
export function jobFinished(status: { phase?: unknown; completionTime?: unknown } | undefined): boolean {
  return (status?.phase === 'Succeeded' || status?.phase === 'Failed') && status.completionTime !== undefined;
}
