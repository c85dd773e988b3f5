/**
 * @module The master secret's check value in the database (`secret_check`, migration
 * 2026-11-28-70): how a start recognises a secret that is not the database's own, before it serves
 * with it. entry/common.ts decides what to say; this reads and writes.
 */
import type { Kysely } from 'kysely'
import { digestsEqual } from '../core/secrets.js'
import type { Database } from './database.js'

const checkId = 'master'

/** Whether the database holds anything a new secret would break: API keys, or a check value. */
export async function holdsSecretData(db: Kysely<Database>): Promise<boolean> {
  const [key, check] = await Promise.all([
    db.selectFrom('api_keys').select('id').limit(1).executeTakeFirst(),
    db.selectFrom('secret_check').select('id').limit(1).executeTakeFirst(),
  ])
  return key !== undefined || check !== undefined
}

/**
 * Compares the stored check value with `value` (constant time); stores `value` when there is none
 * yet. Two processes starting at once store one, and both compare with it.
 */
export async function confirmSecretCheck(
  db: Kysely<Database>,
  value: string,
): Promise<'stored' | 'matches' | 'differs'> {
  const inserted = await db
    .insertInto('secret_check')
    .values({ id: checkId, value })
    .onConflict((conflict) => conflict.column('id').doNothing())
    .executeTakeFirst()
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0) {
    return 'stored'
  }
  const stored = await db
    .selectFrom('secret_check')
    .select('value')
    .where('id', '=', checkId)
    .executeTakeFirstOrThrow()
  return digestsEqual(stored.value, value) ? 'matches' : 'differs'
}
