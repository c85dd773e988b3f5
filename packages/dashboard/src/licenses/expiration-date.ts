import { endOfDayUtc } from '@keyturn/protocol'

/**
 * An expiration date input's value as the API takes it: empty is "never" (`null`); a date is the
 * end of that day in UTC, the rule the CLI's `--expiration-date` shares (`endOfDayUtc`).
 */
export function expirationFromInput(value: string): string | null {
  if (value === '') {
    return null
  }
  return endOfDayUtc(value) ?? value // the browser's date input gives YYYY-MM-DD; else the API names it
}

/** The date input's value for a stored expiration (its UTC day), empty for none. */
export function inputFromExpiration(expirationDate: string | null): string {
  return expirationDate?.slice(0, 10) ?? ''
}
