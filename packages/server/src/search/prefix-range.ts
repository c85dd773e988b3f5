/** A prefix as a half-open range of text: `from <= value < to`. */
export interface PrefixRange {
  readonly from: string
  readonly to: string
}

/**
 * Every text starting with `prefix`, as a range in code-point order (which is byte order in
 * UTF-8: SQLite's BINARY and PostgreSQL's "C" collation): up to the prefix with its last
 * character's successor.
 */
export function prefixRange(prefix: string): PrefixRange {
  const chars = [...prefix]
  const last = chars.pop()?.codePointAt(0) ?? 0
  // The successor skips the surrogates, which are no characters of their own in UTF-8.
  const next = last + 1 === 0xd800 ? 0xe000 : last + 1
  const to = next > 0x10ffff ? `${prefix}\u{10ffff}` : `${chars.join('')}${String.fromCodePoint(next)}`
  return { from: prefix, to }
}
