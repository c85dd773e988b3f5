import type { ProductId } from '@keyturn/protocol'
import type { Kysely } from 'kysely'
import type { Database } from '../storage/database.js'
import { toDate, toNullableDate } from '../storage/database.js'
import { isSqlite, writeTransaction } from '../storage/write-transaction.js'
import type { SigningKeyStore, StoredPublicKey } from './signing-key-store.js'
import type { SigningKeyRecord } from './signing-keys.js'

export class KyselySigningKeyStore implements SigningKeyStore {
  readonly #db: Kysely<Database>

  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async current(productId: ProductId): Promise<SigningKeyRecord | undefined> {
    const row = await this.#db
      .selectFrom('product_keys')
      .select(['id', 'public_key_pem', 'private_key_encrypted'])
      .where('product_id', '=', productId)
      .where('retired_at', 'is', null)
      .executeTakeFirst()
    return row === undefined
      ? undefined
      : { keyId: row.id, publicKeyPem: row.public_key_pem, privateKeyEncrypted: row.private_key_encrypted }
  }

  async list(productId: ProductId): Promise<StoredPublicKey[]> {
    const rows = await this.#db
      .selectFrom('product_keys')
      .select(['id', 'product_id', 'public_key_pem', 'created_at', 'retired_at'])
      .where('product_id', '=', productId)
      .execute()
    const keys = rows.map((row) => ({
      keyId: row.id,
      productId: row.product_id,
      publicKeyPem: row.public_key_pem,
      createdAt: toDate(row.created_at),
      retiredAt: toNullableDate(row.retired_at),
    }))
    // Current first, then by retirement, newest first (engines sort NULLs differently, so sort here).
    const rank = (key: StoredPublicKey) =>
      key.retiredAt === null ? Number.POSITIVE_INFINITY : key.retiredAt.getTime()
    return keys.sort((a, b) => rank(b) - rank(a) || b.createdAt.getTime() - a.createdAt.getTime())
  }

  async rotate(productId: ProductId, next: SigningKeyRecord, at: Date): Promise<void> {
    await writeTransaction(this.#db, async (trx) => {
      // Rotations of one product take turns: each retires the key the previous one made current.
      // Without the lock, concurrent PostgreSQL transactions all saw the same current key and all
      // but one failed on the unique index of current keys (a 500). SQLite's BEGIN IMMEDIATE
      // (writeTransaction) serialises every write already.
      if (!isSqlite(trx)) {
        await trx.selectFrom('products').select('id').where('id', '=', productId).forUpdate().execute()
      }
      await trx
        .updateTable('product_keys')
        .set({ retired_at: at.toISOString() })
        .where('product_id', '=', productId)
        .where('retired_at', 'is', null)
        .execute()
      await trx
        .insertInto('product_keys')
        .values({
          id: next.keyId,
          product_id: productId,
          public_key_pem: next.publicKeyPem,
          private_key_encrypted: next.privateKeyEncrypted,
          created_at: at.toISOString(),
          retired_at: null,
        })
        .execute()
    })
  }
}
