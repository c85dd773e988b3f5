import type { ActivationId, CustomerId, LicenseId, ProductId } from '@keyturn/protocol'
import { type Kysely, type Selectable, type SqlBool, sql } from 'kysely'
import { newId } from '../core/ids.js'
import type { KyselyMailOutbox, MailMessage } from '../mail/kysely-mail-outbox.js'
import { brandingVariables, type MailVariables } from '../mail/mail-templates.js'
import type { Database, Timestamp } from '../storage/database.js'
import { toDate } from '../storage/database.js'
import { readMetadata } from '../storage/json.js'
import { isStorableText } from '../storage/list-sql.js'
import { lockLicense } from '../storage/lock-license.js'
import type { OwnedLicense, PortalMachine, PortalStore, StoredSignInCode } from './portal-store.js'

/** The tables of migration 2026-11-29-42-portal. */
type PortalTables = {
  portal_sign_in_codes: {
    id: string
    email_digest: string
    customer_id: CustomerId | null
    code_digest: string
    attempts: number
    expires_at: Timestamp
    used_at: Timestamp | null
    created_at: Timestamp
  }
  license_transfers: {
    id: string
    license_id: LicenseId
    activation_id: ActivationId
    customer_id: CustomerId
    occurred_at: Timestamp
  }
}

type PortalDatabase = Database & PortalTables

const defaultTransfers = { maxTransfers: 3, transferPeriod: 30 * 86_400 }

interface OwnedRow {
  id: LicenseId
  product_id: ProductId
  product_name: string
  branding: string | null
  policy_id: string | null
  max_transfers: number | null
  transfer_period: number | null
}

function toOwned(row: OwnedRow): OwnedLicense {
  return {
    id: row.id,
    productId: row.product_id,
    branding: brandingVariables(row.product_name, row.branding),
    // A license without a policy gets the default; a policy's null means unlimited.
    ...(row.policy_id === null
      ? defaultTransfers
      : {
          maxTransfers: row.max_transfers === null ? null : Number(row.max_transfers),
          transferPeriod: Number(row.transfer_period ?? defaultTransfers.transferPeriod),
        }),
  }
}

function toMachine(row: Selectable<Database['activations']> & { readonly offline: unknown }): PortalMachine {
  const metadata = readMetadata(row.metadata ?? {})
  return {
    offline: Boolean(Number(row.offline)),
    id: row.id,
    licenseId: row.license_id,
    fingerprint: row.fingerprint,
    name: row.name,
    platform: typeof metadata.platform === 'string' ? metadata.platform : null,
    createdAt: toDate(row.created_at),
    lastSeenAt: toDate(row.last_seen_at),
  }
}

/** Whether an offline request made the activation (it holds a machine file with a deactivation secret). */
const activatedOffline =
  sql<number>`(case when exists (select 1 from offline_requests where offline_requests.license_id = activations.license_id and offline_requests.activation_id = activations.id) then 1 else 0 end)`.as(
    'offline',
  )

function alive(at: Date) {
  const now = at.toISOString()
  return sql<SqlBool>`(activations.expires_at is null or activations.expires_at > ${now})`
}

export class KyselyPortalStore implements PortalStore {
  readonly #db: Kysely<PortalDatabase>
  readonly #outbox: KyselyMailOutbox

  constructor(db: Kysely<Database>, outbox: KyselyMailOutbox) {
    this.#db = db.withTables<PortalTables>()
    this.#outbox = outbox
  }

  async findCustomerByEmail(email: string) {
    return this.#db
      .selectFrom('customers')
      .select(['id', 'email'])
      .where('email_lower', '=', email.toLowerCase())
      .executeTakeFirst()
  }

  async findCustomer(id: CustomerId) {
    if (!isStorableText(id)) {
      return undefined
    }
    return this.#db.selectFrom('customers').select(['id', 'email']).where('id', '=', id).executeTakeFirst()
  }

  async insertCode(
    code: StoredSignInCode & { readonly emailDigest: string; readonly createdAt: Date },
  ): Promise<void> {
    await this.#db
      .insertInto('portal_sign_in_codes')
      .values({
        id: code.id,
        email_digest: code.emailDigest,
        customer_id: code.customerId,
        code_digest: code.codeDigest,
        attempts: code.attempts,
        expires_at: code.expiresAt.toISOString(),
        used_at: null,
        created_at: code.createdAt.toISOString(),
      })
      .execute()
  }

  async countCodesSince(emailDigest: string, since: Date): Promise<number> {
    const row = await this.#db
      .selectFrom('portal_sign_in_codes')
      .select((eb) => eb.fn.countAll().as('count'))
      .where('email_digest', '=', emailDigest)
      .where('created_at', '>', since.toISOString())
      .executeTakeFirst()
    return Number(row?.count ?? 0) // pg reads count(*) as a string
  }

  async latestCode(emailDigest: string): Promise<StoredSignInCode | undefined> {
    const row = await this.#db
      .selectFrom('portal_sign_in_codes')
      .selectAll()
      .where('email_digest', '=', emailDigest)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst()
    if (row === undefined || row.used_at !== null) {
      return undefined
    }
    return {
      id: row.id,
      customerId: row.customer_id,
      codeDigest: row.code_digest,
      attempts: Number(row.attempts),
      expiresAt: toDate(row.expires_at),
    }
  }

  async countWrongTry(id: string): Promise<number> {
    const row = await this.#db
      .updateTable('portal_sign_in_codes')
      .set({ attempts: sql`attempts + 1` })
      .where('id', '=', id)
      .returning('attempts')
      .executeTakeFirst()
    return Number(row?.attempts ?? Number.POSITIVE_INFINITY)
  }

  async useCode(id: string, at: Date): Promise<boolean> {
    const result = await this.#db
      .updateTable('portal_sign_in_codes')
      .set({ used_at: at.toISOString() })
      .where('id', '=', id)
      .where('used_at', 'is', null)
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  async queueMail(
    mail: {
      readonly template: string
      readonly productId: ProductId | null
      readonly customerId: CustomerId
      readonly message: MailMessage
    },
    now: Date,
  ): Promise<void> {
    await this.#outbox.enqueue(this.#db as unknown as Kysely<Database>, mail, now)
  }

  async brandingOf(productId: ProductId): Promise<MailVariables | undefined> {
    if (!isStorableText(productId)) {
      return undefined
    }
    const row = await this.#db
      .selectFrom('products')
      .select(['name', 'branding'])
      .where('id', '=', productId)
      .executeTakeFirst()
    return row === undefined ? undefined : brandingVariables(row.name, row.branding)
  }

  #owned() {
    return this.#db
      .selectFrom('licenses')
      .innerJoin('products', 'products.id', 'licenses.product_id')
      .leftJoin('policies', 'policies.id', 'licenses.policy_id')
      .select([
        'licenses.id',
        'licenses.product_id',
        'products.name as product_name',
        'products.branding',
        'licenses.policy_id',
        'policies.max_transfers',
        'policies.transfer_period',
      ])
  }

  async licensesOf(customerId: CustomerId, limit: number): Promise<readonly OwnedLicense[]> {
    const rows = await this.#owned()
      .where('licenses.customer_id', '=', customerId)
      .orderBy('licenses.created_at', 'desc')
      .orderBy('licenses.id', 'desc')
      .limit(limit)
      .execute()
    return rows.map(toOwned)
  }

  async findOwnedLicense(customerId: CustomerId, id: LicenseId): Promise<OwnedLicense | undefined> {
    if (!isStorableText(id)) {
      return undefined
    }
    const row = await this.#owned()
      .where('licenses.id', '=', id)
      .where('licenses.customer_id', '=', customerId)
      .executeTakeFirst()
    return row === undefined ? undefined : toOwned(row)
  }

  async findOwnedMachine(customerId: CustomerId, id: ActivationId, now: Date) {
    if (!isStorableText(id)) {
      return undefined
    }
    const row = await this.#db
      .selectFrom('activations')
      .innerJoin('licenses', 'licenses.id', 'activations.license_id')
      .selectAll('activations')
      .select(activatedOffline)
      .where('activations.id', '=', id)
      .where('licenses.customer_id', '=', customerId)
      .where(alive(now))
      .executeTakeFirst()
    if (row === undefined) {
      return undefined
    }
    const license = await this.findOwnedLicense(customerId, row.license_id)
    return license === undefined ? undefined : { machine: toMachine(row), license }
  }

  async machinesOf(licenseIds: readonly LicenseId[], now: Date): Promise<readonly PortalMachine[]> {
    if (licenseIds.length === 0) {
      return []
    }
    const rows = await this.#db
      .selectFrom('activations')
      .selectAll()
      .select(activatedOffline)
      .where('license_id', 'in', licenseIds)
      .where(alive(now))
      .orderBy('created_at')
      .orderBy('id')
      .execute()
    return rows.map(toMachine)
  }

  lockLicense(id: LicenseId): Promise<void> {
    return lockLicense(this.#db as unknown as Kysely<Database>, id)
  }

  async countTransfers(licenseId: LicenseId, since: Date): Promise<number> {
    const row = await this.#db
      .selectFrom('license_transfers')
      .select((eb) => eb.fn.countAll().as('count'))
      .where('license_id', '=', licenseId)
      .where('occurred_at', '>', since.toISOString())
      .executeTakeFirst()
    return Number(row?.count ?? 0)
  }

  async purge(codesBefore: Date, transfersBefore: Date): Promise<number> {
    const codes = await this.#db
      .deleteFrom('portal_sign_in_codes')
      .where('expires_at', '<', codesBefore.toISOString())
      .executeTakeFirst()
    const transfers = await this.#db
      .deleteFrom('license_transfers')
      .where('occurred_at', '<', transfersBefore.toISOString())
      .executeTakeFirst()
    return Number(codes.numDeletedRows) + Number(transfers.numDeletedRows)
  }

  async recordTransfer(transfer: {
    readonly licenseId: LicenseId
    readonly activationId: ActivationId
    readonly customerId: CustomerId
    readonly at: Date
  }): Promise<void> {
    await this.#db
      .insertInto('license_transfers')
      .values({
        id: newId('transfer', transfer.at.getTime()),
        license_id: transfer.licenseId,
        activation_id: transfer.activationId,
        customer_id: transfer.customerId,
        occurred_at: transfer.at.toISOString(),
      })
      .execute()
  }
}
