import type { DatabaseKind } from '../database.js'

/** Engine column types: SQLite keeps ISO-8601 text (sorts as time), PostgreSQL timestamptz. */
export function columnTypes(kind: DatabaseKind) {
  return { timestamp: kind === 'sqlite' ? ('text' as const) : ('timestamptz' as const) }
}
