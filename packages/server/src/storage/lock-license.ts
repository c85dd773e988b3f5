import type { LicenseId } from '@keyturn/protocol'
import type { Kysely } from 'kysely'
import type { Database } from './database.js'
import { isSqlite } from './write-transaction.js'

/**
 * Locks a license row for the rest of the transaction (PostgreSQL `SELECT … FOR UPDATE`; a SQLite
 * write transaction holds the database's write lock already). Transactions that change a license's
 * activations lock the license row first and its activation rows after, never the other way
 * round, so concurrent ones cannot deadlock.
 */
export async function lockLicense(trx: Kysely<Database>, id: LicenseId): Promise<void> {
  const query = trx.selectFrom('licenses').select('id').where('id', '=', id)
  await (isSqlite(trx) ? query : query.forUpdate()).executeTakeFirst()
}
