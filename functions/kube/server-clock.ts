// The API server's clock as the answers' Date headers show it (Kube.serverNow).

/**
 * The time of the last Date header seen, advanced by local monotonic time since; what it
 * tells never goes back. A Date header has a second's resolution, so an answer later in the
 * same second puts the estimate back by up to a second: a reconcile that read the time,
 * stamped a claim with it and read it again after a 409 found its own claim younger than
 * it was (it asked to look again in 6 s, not 5). Every reading is at most the server's time
 * then, so the latest reading is at most the server's time now: a reading below it is
 * answered with it instead.
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

  /** An answer's Date header. */
  seen(date: Date): void {
    if (!Number.isNaN(date.getTime())) this.last = { date: date.getTime(), at: this.local() };
  }

  /** The server's time now, as far as the answers tell (undefined before the first). */
  now(): Date | undefined {
    if (!this.last) return undefined;
    this.told = Math.max(this.told, this.last.date + (this.local() - this.last.at));
    return new Date(this.told);
  }
}
