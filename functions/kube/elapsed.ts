// The clock a handling's own windows are measured on (a claim's injection window, the lag
// between a LIST and a Lease read): the monotonic clock plus whatever time the wall clock
// saw pass that it did not. Node's monotonic clock is not known to run while a Lambda
// execution environment is frozen between invocations (the wall clock does: it is set anew
// on thaw); a handling that outlived its invocation and resumes after a thaw must count the
// freeze, or it would send an injection long after its claim lapsed (time review). It never
// stands still or goes back: a wall clock stepped back changes nothing, and one stepped
// forward only makes such a window end sooner (the safe side: the next reconcile does what
// was left). Not for the API server's time, which each answer's Date header tells afresh
// (server-clock.ts stays on the monotonic clock).

const origin = { wall: Date.now(), mono: performance.now() };
let offset = 0;

/** Milliseconds on a clock that runs with the monotonic one and counts a freeze (see above). */
export function elapsedMs(): number {
  const mono = performance.now();
  offset = Math.max(offset, Date.now() - origin.wall - (mono - origin.mono));
  return mono + offset;
}
