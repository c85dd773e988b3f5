/** A timestamp for people: UTC, to the minute, so every support agent reads the same time. */
export function formatTime(iso: string | null | undefined, empty = '—'): string {
  if (iso === null || iso === undefined) {
    return empty
  }
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`
}

/** `count` followed by the noun, singular or plural. */
export function plural(count: number, noun: string, nouns = `${noun}s`): string {
  return `${count.toLocaleString('en')} ${count === 1 ? noun : nouns}`
}

/** Seconds as minutes, to two decimals (a heartbeat TTL in a form or a sentence). */
export function minutes(seconds: number): string {
  return String(Number((seconds / 60).toFixed(2)))
}

/** How a license's (or a policy's licenses') seats are held, from its heartbeat TTL in seconds. */
export function seatTerms(heartbeatTtl: number | null): string {
  return heartbeatTtl === null
    ? 'Held until deactivated'
    : `Floating: a seat lapses ${minutes(heartbeatTtl)} minutes after its last heartbeat`
}

/** A heartbeat TTL in a table cell. */
export function seatLease(heartbeatTtl: number | null): string {
  return heartbeatTtl === null ? 'None' : `${minutes(heartbeatTtl)} min`
}

/** A usage limit (`maxUses`); null is unmetered. */
export function usesLimit(maxUses: number | null): string {
  return maxUses === null ? 'Unmetered' : plural(maxUses, 'use')
}
