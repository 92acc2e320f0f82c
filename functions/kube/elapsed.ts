// The clock every "how long since" of the functions reads (a claim's window, the server's
// time advanced since its last Date header): the monotonic clock, or the wall clock when it
// ran further, and never going back. Node's monotonic clock is not known to run while a
// Lambda execution environment is frozen between invocations (the wall clock does: it is
// set anew on thaw); a handling that outlived its invocation and resumes after a thaw must
// count the freeze, or it would send an injection long after its claim lapsed (time review).
// A wall clock stepped forward only makes a window end sooner (the safe side); one stepped
// back cannot make this clock go back.

const origin = { wall: Date.now(), mono: performance.now() };
let told = Number.NEGATIVE_INFINITY;

/** Milliseconds on a clock that never goes back and counts a freeze (see above). */
export function elapsedMs(): number {
  const mono = performance.now();
  told = Math.max(told, mono, origin.mono + (Date.now() - origin.wall));
  return told;
}
