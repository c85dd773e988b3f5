import type { DatabaseKind } from '../database.js'

/**
 * Engine column types: SQLite keeps timestamps as ISO-8601 text (which sorts as time) and JSON as
 * text; PostgreSQL uses timestamptz and jsonb.
 */
export function columnTypes(kind: DatabaseKind) {
  return kind === 'sqlite'
    ? { timestamp: 'text' as const, json: 'text' as const }
    : { timestamp: 'timestamptz' as const, json: 'jsonb' as const }
}
