/** A settable clock shared by the API server (timestamps, Date header) and the engine. */
export class TestClock {
  private t: number;
  constructor(iso = '2026-01-01T00:00:00Z') {
    this.t = Date.parse(iso);
  }
  now = (): Date => new Date(this.t);
  advance(seconds: number): void {
    this.t += seconds * 1000;
  }
}
