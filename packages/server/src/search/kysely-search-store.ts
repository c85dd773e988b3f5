import { type Kysely, type RawBuilder, sql } from 'kysely'
import type { Database } from '../storage/database.js'
import { isSqlite } from '../storage/write-transaction.js'
import { prefixRange } from './prefix-range.js'
import type {
  ActivationHitRow,
  CustomerHitRow,
  LicenseHitRow,
  SearchScope,
  SearchStore,
} from './search-store.js'

/**
 * The searches as plain SQL over indexes: `licenses.key` (unique), the primary keys,
 * `customers.email_lower` (unique), and migration 2026-11-29-80's `lower(name)` and fingerprint
 * indexes. On PostgreSQL the name ranges compare in the "C" collation, as the indexes are built.
 */
export class KyselySearchStore implements SearchStore {
  readonly #db: Kysely<Database>
  readonly #lowerName: (table: string) => RawBuilder<string>
  /** The engine's own `lower()`: SQLite's folds ASCII letters only, PostgreSQL's every letter. */
  readonly #lower: (text: string) => string

  constructor(db: Kysely<Database>) {
    this.#db = db
    const sqlite = isSqlite(db)
    this.#lower = sqlite
      ? (text) => text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase())
      : (text) => text.toLowerCase()
    this.#lowerName = (table) =>
      sqlite
        ? sql<string>`lower(${sql.ref(`${table}.name`)})`
        : sql<string>`(lower(${sql.ref(`${table}.name`)}) collate "C")`
  }

  async licensesByKeys(keys: readonly string[], scope: SearchScope, limit: number): Promise<LicenseHitRow[]> {
    return this.#licenses(sql`licenses.key in (${sql.join(keys)})`, scope, limit)
  }

  async licenseById(id: string, scope: SearchScope): Promise<LicenseHitRow[]> {
    return this.#licenses(sql`licenses.id = ${id}`, scope, 1)
  }

  async customerById(id: string, scope: SearchScope): Promise<CustomerHitRow[]> {
    return this.#customers(sql`customers.id = ${id}`, scope, 1)
  }

  async customerByEmail(emailLower: string, scope: SearchScope): Promise<CustomerHitRow[]> {
    return this.#customers(sql`customers.email_lower = ${emailLower}`, scope, 1)
  }

  async customersByName(prefix: string, scope: SearchScope, limit: number): Promise<CustomerHitRow[]> {
    const name = this.#lowerName('customers')
    const range = prefixRange(this.#lower(prefix))
    return this.#customers(sql`${name} >= ${range.from} and ${name} < ${range.to}`, scope, limit, name)
  }

  async activationById(id: string, scope: SearchScope): Promise<ActivationHitRow[]> {
    return this.#activations(sql`activations.id = ${id}`, scope, 1)
  }

  async activationsByFingerprint(
    fingerprint: string,
    scope: SearchScope,
    limit: number,
  ): Promise<ActivationHitRow[]> {
    return this.#activations(sql`activations.fingerprint = ${fingerprint}`, scope, limit)
  }

  async activationsByName(prefix: string, scope: SearchScope, limit: number): Promise<ActivationHitRow[]> {
    const name = this.#lowerName('activations')
    const range = prefixRange(this.#lower(prefix))
    return this.#activations(sql`${name} >= ${range.from} and ${name} < ${range.to}`, scope, limit, name)
  }

  async #licenses(where: RawBuilder<unknown>, scope: SearchScope, limit: number): Promise<LicenseHitRow[]> {
    const inScope = scope === undefined ? sql`` : sql` and licenses.product_id = ${scope.productId}`
    const { rows } = await sql<LicenseHitRow>`select licenses.id as "id", licenses.key as "key",
        licenses.product_id as "productId", products.name as "productName", customers.email as "customerEmail"
      from licenses
      join products on products.id = licenses.product_id
      left join customers on customers.id = licenses.customer_id
      where ${where}${inScope}
      order by licenses.id
      limit ${limit}`.execute(this.#db)
    return rows
  }

  async #customers(
    where: RawBuilder<unknown>,
    scope: SearchScope,
    limit: number,
    orderBy: RawBuilder<unknown> = sql`customers.id`,
  ): Promise<CustomerHitRow[]> {
    // A product key sees a customer only while the customer owns a license of its product.
    const inScope =
      scope === undefined
        ? sql``
        : sql` and exists (select 1 from licenses where licenses.customer_id = customers.id and licenses.product_id = ${scope.productId})`
    const { rows } =
      await sql<CustomerHitRow>`select customers.id as "id", customers.email as "email", customers.name as "name"
      from customers
      where ${where}${inScope}
      order by ${orderBy}
      limit ${limit}`.execute(this.#db)
    return rows
  }

  async #activations(
    where: RawBuilder<unknown>,
    scope: SearchScope,
    limit: number,
    orderBy: RawBuilder<unknown> = sql`activations.id`,
  ): Promise<ActivationHitRow[]> {
    const inScope = scope === undefined ? sql`` : sql` and activations.product_id = ${scope.productId}`
    const { rows } =
      await sql<ActivationHitRow>`select activations.id as "id", activations.license_id as "licenseId",
        activations.product_id as "productId", activations.fingerprint as "fingerprint", activations.name as "name",
        licenses.key as "licenseKey"
      from activations
      join licenses on licenses.id = activations.license_id
      where ${where}${inScope}
      order by ${orderBy}
      limit ${limit}`.execute(this.#db)
    return rows
  }
}
