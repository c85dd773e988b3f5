import type { Kysely, Selectable } from 'kysely'
import { newId } from '../core/ids.js'
import type { ListRequest, ListSlice, Sort } from '../core/list-query.js'
import { decryptText, encryptText } from '../core/secrets.js'
import { type Database, type MailOutboxTable, toDate, toNullableDate } from '../storage/database.js'
import { leaseDueRows } from '../storage/leases.js'
import { column, type ListTable, selectPage } from '../storage/list-sql.js'

/** A message as it is sent: never stored in clear, never shown by the delivery log. */
export interface MailMessage {
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly html: string
}

/** What the delivery log shows of a message: no recipient body, subject or code. */
export interface MailLogEntry {
  readonly id: string
  readonly template: string
  readonly productId: string | null
  readonly customerId: string | null
  readonly status: 'pending' | 'sent' | 'failed'
  readonly attempts: number
  readonly nextAttemptAt: Date | null
  readonly lastAttemptAt: Date | null
  readonly lastError: string | null
  readonly sentAt: Date | null
  readonly createdAt: Date
}

export interface ClaimedMail {
  readonly id: string
  readonly leaseId: string
  readonly attempts: number
  readonly message: MailMessage
}

/** The encryption's context binds a payload to its row: a payload copied to another row does not decrypt. */
const payloadContext = (id: string) => `mail_outbox/${id}`

/**
 * The mail outbox: `enqueue` runs on the caller's transaction (the change and its mail commit
 * together); `claimDue`, `recordSent` and `recordFailure` are the sending job's, each its own
 * short transaction (no transaction is held while talking to the SMTP server).
 */
export class KyselyMailOutbox {
  readonly #db: Kysely<Database>
  readonly #key: Buffer

  constructor(db: Kysely<Database>, payloadKey: Buffer) {
    this.#db = db
    this.#key = payloadKey
  }

  /** Queues a message on `db` (the change's transaction); due at once. */
  async enqueue(
    db: Kysely<Database>,
    mail: {
      readonly template: string
      readonly productId: string | null
      readonly customerId: string | null
      readonly message: MailMessage
    },
    now: Date,
  ): Promise<string> {
    const id = newId('mail', now.getTime())
    await db
      .insertInto('mail_outbox')
      .values({
        id,
        template: mail.template,
        product_id: mail.productId,
        customer_id: mail.customerId,
        payload_encrypted: encryptText(this.#key, JSON.stringify(mail.message), payloadContext(id)),
        status: 'pending',
        next_attempt_at: now.toISOString(),
        created_at: now.toISOString(),
      })
      .execute()
    return id
  }

  /** Leases up to `limit` due messages until `leaseUntil`; rows another process holds are skipped. */
  async claimDue(now: Date, leaseUntil: Date, limit: number): Promise<ClaimedMail[]> {
    const { leaseId, rows } = await leaseDueRows(this.#db, 'mail_outbox', now, leaseUntil, limit)
    return rows.flatMap((row) =>
      row.payload_encrypted === null
        ? []
        : [
            {
              id: row.id,
              leaseId,
              attempts: Number(row.attempts),
              message: JSON.parse(
                decryptText(this.#key, row.payload_encrypted, payloadContext(row.id)),
              ) as MailMessage,
            },
          ],
    )
  }

  /** Delivered: the payload is purged. False when the lease was lost to another process. */
  async recordSent(mail: ClaimedMail, at: Date): Promise<boolean> {
    const result = await this.#db
      .updateTable('mail_outbox')
      .set({
        status: 'sent',
        attempts: mail.attempts + 1,
        sent_at: at.toISOString(),
        last_attempt_at: at.toISOString(),
        last_error: null,
        payload_encrypted: null,
        next_attempt_at: null,
        lease_id: null,
        lease_until: null,
      })
      .where('id', '=', mail.id)
      .where('lease_id', '=', mail.leaseId)
      .executeTakeFirst()
    return Number(result.numUpdatedRows) === 1
  }

  /** A failed attempt: due again at `nextAttemptAt`, or given up (payload purged) when null. */
  async recordFailure(
    mail: ClaimedMail,
    at: Date,
    error: string,
    nextAttemptAt: Date | null,
  ): Promise<boolean> {
    const result = await this.#db
      .updateTable('mail_outbox')
      .set({
        status: nextAttemptAt === null ? 'failed' : 'pending',
        attempts: mail.attempts + 1,
        last_attempt_at: at.toISOString(),
        last_error: error.slice(0, 500),
        next_attempt_at: nextAttemptAt?.toISOString() ?? null,
        ...(nextAttemptAt === null ? { payload_encrypted: null } : {}),
        lease_id: null,
        lease_until: null,
      })
      .where('id', '=', mail.id)
      .where('lease_id', '=', mail.leaseId)
      .executeTakeFirst()
    return Number(result.numUpdatedRows) === 1
  }

  /** For /metrics: messages waiting to be sent. */
  async backlog(): Promise<number> {
    const row = await this.#db
      .selectFrom('mail_outbox')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  /** A page of the delivery log. */
  async list(request: ListRequest<EmailSortField, EmailFilterField>): Promise<ListSlice<MailLogEntry>> {
    const slice = await selectPage<Selectable<MailOutboxTable>, EmailSortField, EmailFilterField>(
      this.#db,
      emailTable,
      request,
      [],
    )
    return { ...slice, items: slice.items.map(rowToEntry) }
  }
}

export type EmailSortField = 'createdAt'
export type EmailFilterField = 'status' | 'template' | 'customerId' | 'createdAt'
export const emailListSpec = {
  sortFields: ['createdAt'],
  defaultSort: { field: 'createdAt', order: 'desc' } satisfies Sort<EmailSortField>,
  filterFields: {
    status: { type: 'enum', values: ['pending', 'sent', 'failed'] },
    template: { type: 'string' },
    customerId: { type: 'string' },
    createdAt: { type: 'timestamp' },
  },
} as const

const emailTable: ListTable<EmailSortField, EmailFilterField> = {
  table: 'mail_outbox',
  sort: { createdAt: column('created_at') },
  filters: {
    status: { column: 'status' },
    template: { column: 'template' },
    customerId: { column: 'customer_id' },
    createdAt: { column: 'created_at' },
  },
}

/** Never the payload: the log shows no recipient, subject, body or code. */
function rowToEntry(row: Selectable<MailOutboxTable>): MailLogEntry {
  return {
    id: row.id,
    template: row.template,
    productId: row.product_id,
    customerId: row.customer_id,
    status: row.status,
    attempts: Number(row.attempts),
    nextAttemptAt: toNullableDate(row.next_attempt_at),
    lastAttemptAt: toNullableDate(row.last_attempt_at),
    lastError: row.last_error,
    sentAt: toNullableDate(row.sent_at),
    createdAt: toDate(row.created_at),
  }
}
