import type { ApiKeyId } from '@keyturn/protocol'
import { type Kysely, type RawBuilder, sql } from 'kysely'
import type { Database } from './database.js'

/**
 * Whether the caller's API key still exists, as a column of the statement that decides a request
 * (config.confirmsApiKey, http/authenticate.ts): one primary-key probe in that statement's snapshot,
 * selected `as api_key_live`. `undefined` is a signed-in operator, whose session authentication
 * confirmed: always live.
 */
export function apiKeyLive(apiKeyId: ApiKeyId | undefined): RawBuilder<number | null> {
  return apiKeyId === undefined
    ? sql<number>`1`
    : sql<number | null>`(select 1 from api_keys where api_keys.id = ${apiKeyId})`
}

/**
 * The row read by a statement that carried `apiKeyLive`, or `api_key_gone`, or undefined when the
 * statement found nothing and the key still exists: nothing found is the answer (404) only then.
 */
export async function confirmedRow<Row extends { api_key_live: unknown }, T>(
  db: Kysely<Database>,
  rows: readonly Row[],
  apiKeyId: ApiKeyId | undefined,
  read: (row: Row) => T,
): Promise<T | 'api_key_gone' | undefined> {
  const [row] = rows
  if (row === undefined) {
    if (apiKeyId === undefined) {
      return undefined
    }
    const apiKey = await db.selectFrom('api_keys').select('id').where('id', '=', apiKeyId).executeTakeFirst()
    return apiKey === undefined ? 'api_key_gone' : undefined
  }
  return row.api_key_live === null ? 'api_key_gone' : read(row)
}
