import { type Kysely, sql } from 'kysely'
import type { DatabaseKind } from '../database.js'

/**
 * `events.license_id`: the license an event is about (storage/event-writer.ts `licenseIdOf`), so a license's
 * events are one indexed read (`GET /events?filter=licenseId:eq:…`) however long the log grows.
 * Existing events get it from their data, as `licenseIdOf` reads it.
 */
export function eventLicenseId(kind: DatabaseKind) {
  const field = (path: string) =>
    kind === 'sqlite'
      ? sql.raw(`json_extract(data, '$.${path}')`)
      : sql.raw(`data #>> '{${path.split('.').join(',')}}'`)
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('events').addColumn('license_id', 'text').execute()
      await sql`
        update events set license_id = case
          when type in ('license.validated', 'license.validation_failed') then ${field('license.id')}
          when type like 'license.%' then ${field('id')}
          when type like 'activation.%' then ${field('licenseId')}
        end
        where type like 'license.%' or type like 'activation.%'`.execute(db)
      await db.schema
        .createIndex('events_license_id_occurred_at')
        .on('events')
        .columns(['license_id', 'occurred_at', 'id'])
        .where(sql.ref('license_id'), 'is not', null)
        .execute()
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('events_license_id_occurred_at').execute()
      await db.schema.alterTable('events').dropColumn('license_id').execute()
    },
  }
}
