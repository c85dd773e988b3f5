/**
 * @module The clock options of the offline checks (`now`, `clockToleranceSeconds`), read strictly:
 * an invalid value is refused with an `InvalidOptionError`, never read as "no limit". A check that
 * compared against `NaN` would accept every token, however expired.
 */

/** The largest clock tolerance accepted: beyond an hour it is a wrong clock, not skew. */
export const maxClockToleranceSeconds = 3600

/** An option of an offline check is invalid (a programming error in the caller, not a bad token). */
export class InvalidOptionError extends TypeError {
  /** The option's name, e.g. `now`. */
  readonly option: string

  constructor(option: string, message: string) {
    super(message)
    this.name = 'InvalidOptionError'
    this.option = option
  }
}

/** `now` in milliseconds since the epoch: the current time when not given, else a valid Date's. */
export function readNow(now: unknown): number {
  if (now === undefined) {
    return Date.now()
  }
  const time = now instanceof Date ? now.getTime() : Number.NaN
  if (!Number.isFinite(time)) {
    throw new InvalidOptionError(
      'now',
      '`now` must be a valid Date (not an Invalid Date, a string or a number).',
    )
  }
  return time
}

/** The clock tolerance in seconds: 0 when not given, else a finite number from 0 to an hour. */
export function readClockTolerance(seconds: unknown): number {
  if (seconds === undefined) {
    return 0
  }
  if (
    typeof seconds !== 'number' ||
    !Number.isFinite(seconds) ||
    seconds < 0 ||
    seconds > maxClockToleranceSeconds
  ) {
    throw new InvalidOptionError(
      'clockToleranceSeconds',
      `\`clockToleranceSeconds\` must be a number of seconds from 0 to ${maxClockToleranceSeconds}.`,
    )
  }
  return seconds
}
