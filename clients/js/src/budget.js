// The guard's daily budget: today's spend in micro-dollars (every approved amount, reserved before signing
// and never given back once signing may have happened), reset only when the UTC day advances on the injected
// clock. Decisions run one at a time through `serialize`, so no interleaving of concurrent payments can
// approve more than the daily cap.

/** utcDay is the UTC calendar day of a Date, "YYYY-MM-DD". */
export const utcDay = (d) => d.toISOString().slice(0, 10);

export class Budget {
  /** @param {{now?: () => Date}} [opts] now: the clock (injected in tests) */
  constructor({ now = () => new Date() } = {}) {
    this.now = now;
    this.day = utcDay(now());
    this.spent = 0n;
    this.tail = Promise.resolve();
  }

  /** serialize runs fn after every earlier call has finished; errors propagate to the caller only. */
  serialize(fn) {
    const run = this.tail.then(fn);
    this.tail = run.then(() => {}, () => {});
    return run;
  }

  /** rollover starts a new budget when the UTC day has advanced (a clock that goes back keeps the day). */
  rollover() {
    const today = utcDay(this.now());
    if (today > this.day) {
      this.day = today;
      this.spent = 0n;
    }
    return this.day;
  }

  /** spentToday is today's spend and reservations; call inside serialize. */
  spentToday() {
    this.rollover();
    return this.spent;
  }

  /** reserve adds an amount to today's spend and returns a handle for release. */
  reserve(micros) {
    this.spent += micros;
    return { day: this.day, micros };
  }

  /** release gives back a reservation that never reached signing (a hold a person refused). */
  release(handle) {
    if (handle.day === this.day) this.spent -= handle.micros;
  }

  snapshot() {
    this.rollover();
    return { day: this.day, spentMicros: this.spent };
  }
}
