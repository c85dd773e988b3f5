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
