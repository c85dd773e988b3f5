import type { ApiKeyId } from '@keyturn/protocol'
import type { Insertable, Kysely, Selectable } from 'kysely'
import { isForeignKeyViolation } from '../storage/constraint-violations.js'
import type { Database, Timestamp } from '../storage/database.js'
import { toDate } from '../storage/database.js'
import type { IdempotencyRecord, StoredResponse } from './idempotency.js'
import type { ClaimOutcome, IdempotencyStore, NewClaim } from './idempotency-store.js'

/** The table of migration 2026-11-21-02-idempotency-keys. */
export interface IdempotencyKeysTable {
  api_key_id: ApiKeyId
  key: string
  request_hash: string
  request_id: string
  /** null while the claiming request runs. */
  response_status: number | null
  response_content_type: string | null
  response_body: string | null
  created_at: Timestamp
  expires_at: Timestamp
}

type IdempotencyDatabase = Database & { idempotency_keys: IdempotencyKeysTable }
type IdempotencyKeyRow = Selectable<IdempotencyKeysTable>

function rowToRecord(row: IdempotencyKeyRow): IdempotencyRecord {
  return {
    apiKeyId: row.api_key_id,
    key: row.key,
    requestHash: row.request_hash,
    requestId: row.request_id,
    response:
      row.response_status === null
        ? null
        : {
            // pg hands back integer columns as numbers, but be explicit about the wire type.
            status: Number(row.response_status),
            contentType: row.response_content_type,
            body: row.response_body,
          },
    createdAt: toDate(row.created_at),
    expiresAt: toDate(row.expires_at),
  }
}

/**
 * A claim is one statement: insert the in-progress row, or take over a row that has expired
 * (`ON CONFLICT … DO UPDATE … WHERE expires_at <= now`). Both engines serialise it on the unique
 * key, so of any number of concurrent requests, in any number of processes, one gets the row back.
 */
const claimAttempts = 5

export class KyselyIdempotencyStore implements IdempotencyStore {
  readonly #db: Kysely<IdempotencyDatabase>

  constructor(db: Kysely<Database>) {
    this.#db = db.withTables<{ idempotency_keys: IdempotencyKeysTable }>()
  }

  async claim(claim: NewClaim, now: Date): Promise<ClaimOutcome> {
    const fresh = {
      api_key_id: claim.apiKeyId,
      key: claim.key,
      request_hash: claim.requestHash,
      request_id: claim.requestId,
      response_status: null,
      response_content_type: null,
      response_body: null,
      created_at: claim.createdAt.toISOString(),
      expires_at: claim.expiresAt.toISOString(),
    }
    for (let attempt = 1; attempt <= claimAttempts; attempt++) {
      const claimed = await this.#insertClaim(fresh, now)
      if (claimed === 'api_key_gone') {
        return { kind: 'api_key_gone' }
      }
      if (claimed) {
        return { kind: 'claimed' }
      }
      const holder = await this.#db
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('api_key_id', '=', claim.apiKeyId)
        .where('key', '=', claim.key)
        .executeTakeFirst()
      if (holder !== undefined) {
        return { kind: 'held', record: rowToRecord(holder) }
      }
      // The holder released the key (a server error) between the two statements: claim again.
    }
    throw new Error(`Could not claim idempotency key after ${claimAttempts} attempts`)
  }

  /** Inserts the claim, or takes over an expired one; false when another holds it. */
  async #insertClaim(fresh: Insertable<IdempotencyKeysTable>, now: Date): Promise<boolean | 'api_key_gone'> {
    try {
      const claimed = await this.#db
        .insertInto('idempotency_keys')
        .values(fresh)
        .onConflict((conflict) =>
          conflict
            .columns(['api_key_id', 'key'])
            .doUpdateSet(fresh)
            .where('idempotency_keys.expires_at', '<=', now.toISOString())
            // A request that committed its change (its events carry its id) but never stored its
            // response is not run again: the retry recovers its answer from those events.
            .where((eb) =>
              eb.or([
                eb('idempotency_keys.response_status', 'is not', null),
                eb.not(
                  eb.exists(
                    eb
                      .selectFrom('events')
                      .select('events.id')
                      .whereRef('events.request_id', '=', 'idempotency_keys.request_id'),
                  ),
                ),
              ]),
            ),
        )
        .returning('request_id')
        .executeTakeFirst()
      return claimed !== undefined
    } catch (error) {
      // The row refers to its API key: a key deleted since the request was authenticated (by
      // another process, or in the statement-confirmed routes, config.confirmsApiKey) refuses it.
      if (isForeignKeyViolation(error)) {
        return 'api_key_gone'
      }
      throw error
    }
  }

  async complete(claim: NewClaim, response: StoredResponse, expiresAt: Date): Promise<boolean> {
    const result = await this.#db
      .updateTable('idempotency_keys')
      .set({
        response_status: response.status,
        response_content_type: response.contentType,
        response_body: response.body,
        // The retention runs from the response, so a replay is possible for the full period.
        expires_at: expiresAt.toISOString(),
      })
      .where('api_key_id', '=', claim.apiKeyId)
      .where('key', '=', claim.key)
      .where('request_id', '=', claim.requestId)
      .executeTakeFirst()
    return Number(result.numUpdatedRows) === 1
  }

  async takeOver(previousRequestId: string, claim: NewClaim): Promise<boolean> {
    const result = await this.#db
      .updateTable('idempotency_keys')
      .set({
        request_hash: claim.requestHash,
        request_id: claim.requestId,
        created_at: claim.createdAt.toISOString(),
        expires_at: claim.expiresAt.toISOString(),
      })
      .where('api_key_id', '=', claim.apiKeyId)
      .where('key', '=', claim.key)
      .where('request_id', '=', previousRequestId)
      .where('response_status', 'is', null)
      .executeTakeFirst()
    return Number(result.numUpdatedRows) === 1
  }

  async release(claim: NewClaim): Promise<void> {
    await this.#db
      .deleteFrom('idempotency_keys')
      .where('api_key_id', '=', claim.apiKeyId)
      .where('key', '=', claim.key)
      .where('request_id', '=', claim.requestId)
      .where('response_status', 'is', null)
      .execute()
  }

  async deleteExpired(now: Date, unansweredBefore: Date): Promise<number> {
    const result = await this.#db
      .deleteFrom('idempotency_keys')
      .where((eb) =>
        eb.or([
          eb.and([eb('response_status', 'is not', null), eb('expires_at', '<=', now.toISOString())]),
          eb.and([eb('response_status', 'is', null), eb('created_at', '<=', unansweredBefore.toISOString())]),
        ]),
      )
      .executeTakeFirst()
    return Number(result.numDeletedRows)
  }
}
