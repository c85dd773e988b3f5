import { type Kysely, sql } from 'kysely'

/**
 * Event actors become `{ type, id }` (apiKey, operator, customer, integration, system): the actor's
 * id column is renamed from `actor_api_key_id`, `actor_type` says what kind the id is, and
 * `actor_role` keeps only an API key's role. Rows written before are filled in: a role of
 * `customer` was a portal customer, no actor was the server, whose part is read from the event's type.
 * Every event row is rewritten once (the log's length, bounded by KEYTURN_EVENT_RETENTION_DAYS).
 */
export function eventActors() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('events').renameColumn('actor_api_key_id', 'actor_id').execute()
      await db.schema.alterTable('events').addColumn('actor_type', 'text').execute()
      await sql`update events set
        actor_type = case
          when actor_role = 'customer' then 'customer'
          when actor_role is null then 'system'
          else 'apiKey' end,
        actor_id = case
          when actor_role is not null then actor_id
          when type like 'portal.%' then 'portal'
          when type like 'webhook\\_endpoint.%' escape '\\' then 'webhook-deliveries'
          when type like 'activation.%' then 'seat-sweep'
          when type like 'license.%' then 'expiry-notices'
          else 'keyturn' end,
        actor_role = case when actor_role = 'customer' then null else actor_role end`.execute(db)
    },
  }
}
