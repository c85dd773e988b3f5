import type { Kysely } from 'kysely'
import type { DatabaseKind } from '../database.js'
import { columnTypes } from './column-types.js'

/**
 * Signed-in sessions (sessions/): one row per session, found by the SHA-256 digest of its cookie
 * value (the value itself is never stored). `audience` keeps operator and customer sessions apart.
 */
export function sessions(kind: DatabaseKind) {
  const types = columnTypes(kind)
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('sessions')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('token_digest', 'text', (col) => col.notNull().unique())
        .addColumn('csrf_digest', 'text', (col) => col.notNull())
        .addColumn('audience', 'text', (col) => col.notNull())
        .addColumn('subject_id', 'text', (col) => col.notNull())
        .addColumn('created_at', types.timestamp, (col) => col.notNull())
        .addColumn('last_seen_at', types.timestamp, (col) => col.notNull())
        .addColumn('idle_expires_at', types.timestamp, (col) => col.notNull())
        .addColumn('expires_at', types.timestamp, (col) => col.notNull())
        .execute()
      await db.schema
        .createIndex('sessions_subject')
        .on('sessions')
        .columns(['audience', 'subject_id'])
        .execute()
    },
  }
}
