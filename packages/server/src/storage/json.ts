import type { Metadata } from '@keyturn/protocol'

/** A JSON column as read back: text from SQLite, a parsed value from PostgreSQL's jsonb. */
export function readMetadata(value: unknown): Metadata {
  const parsed: unknown = typeof value === 'string' ? JSON.parse(value) : value
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return {}
  }
  const metadata: Metadata = {}
  for (const [key, item] of Object.entries(parsed)) {
    if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean') {
      metadata[key] = item
    }
  }
  return metadata
}
