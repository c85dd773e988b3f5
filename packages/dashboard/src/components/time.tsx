import { formatTime } from './format.js'

/** A timestamp as `<time>`, kept on one line; `empty` when there is none (e.g. "Never"). */
export function Time({ value, empty = '—' }: { value: string | null | undefined; empty?: string }) {
  if (value === null || value === undefined) {
    return <>{empty}</>
  }
  return <time dateTime={value}>{formatTime(value)}</time>
}
