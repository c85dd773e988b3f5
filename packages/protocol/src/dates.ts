/**
 * @module One rule for a date without a time (`2031-01-01`), wherever a person types one for an
 * expiration (the CLI's `--expiration-date`, the dashboard's date inputs, an application through the
 * client): the license is valid through that day, so the date means the last millisecond of that
 * day in UTC, `2031-01-01T23:59:59.999Z`. A timestamp with a time is taken as written.
 */

const plainDate = /^(\d{4})-(\d{2})-(\d{2})$/

/**
 * The instant an expiration typed as a plain date (`YYYY-MM-DD`) means: the end of that day in
 * UTC. `undefined` when `date` is not a plain date of the calendar (`2031-02-30`, `2031-1-1`, a
 * timestamp).
 */
export function endOfDayUtc(date: string): string | undefined {
  if (!plainDate.test(date)) {
    return undefined
  }
  const start = new Date(`${date}T00:00:00.000Z`)
  // 2031-02-30 is no day: Date rolls it over to March, so the round trip differs.
  if (Number.isNaN(start.getTime()) || start.toISOString().slice(0, 10) !== date) {
    return undefined
  }
  return `${date}T23:59:59.999Z`
}
