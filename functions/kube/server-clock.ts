// The API server's clock as the answers' Date headers show it (Kube.serverNow).

/** A Date header's resolution: a second (RFC 9110 IMF-fixdate). */
export const DATE_RESOLUTION_MS = 1000;

/**
 * The time of the last Date header seen, advanced by local monotonic time since. A Date
 * header has a second's resolution, so an answer later in the same second puts the estimate
 * back by up to a second: a reconcile that read the time, stamped a claim with it and read it
 * again after a 409 found its own claim younger than it was (it asked to look again in 6 s,
 * not 5). So a reading less than DATE_RESOLUTION_MS below what was told is answered with what
 * was told. A reading further below is the server's clock stepped back (an NTP step, a VM
 * resumed, an admin's fix), and is followed: kept, the pre-step time would run ahead of the
 * server's for as long as the step, and an instance started after the step, which reads the
 * new time, would disagree with this one by that much — a warm instance then took a claim
 * made a second before as older than its retention, dropped it and injected another pod
 * (review95 F1: two pods at parallelism 1 after a 60 s step back).
 */
export class ServerClock {
  private last: { date: number; at: number } | undefined;
  private told = Number.NEGATIVE_INFINITY;
  private readonly local: () => number;

  /**
   * `local`: a monotonic clock in ms (tests move it). Not elapsed.ts's: a wall clock stepped
   * forward would carry this estimate ahead of the server for good (review); a freeze is
   * caught up by the next answer's Date header, which every reconcile reads before judging.
   */
  constructor(local: () => number = () => performance.now()) {
    this.local = local;
  }

  /** An answer's Date header; `ageMs`: how long ago its headers arrived (a body read since). */
  seen(date: Date, ageMs = 0): void {
    if (!Number.isNaN(date.getTime())) this.last = { date: date.getTime(), at: this.local() - Math.max(0, ageMs) };
  }

  /** The server's time now, as far as the answers tell (undefined before the first). */
  now(): Date | undefined {
    if (!this.last) return undefined;
    const reading = this.last.date + (this.local() - this.last.at);
    this.told = reading < this.told - DATE_RESOLUTION_MS ? reading : Math.max(this.told, reading);
    return new Date(this.told);
  }
}
