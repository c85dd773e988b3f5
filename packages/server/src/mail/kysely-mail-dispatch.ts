import type { Kysely } from 'kysely'
import type { Event } from '../events/event.js'
import { type Database, toNullableDate } from '../storage/database.js'
import type { KyselyMailOutbox } from './kysely-mail-outbox.js'
import { brandingVariables, type MailTemplateName, type MailTemplates } from './mail-templates.js'

/** Which event sends which mail; the license's customer receives it. */
const mailOf: Partial<Record<string, MailTemplateName>> = {
  'license.created': 'license-issued',
  'license.renewed': 'license-renewed',
  'license.expiring_soon': 'license-expiring',
  'license.expired': 'license-expired',
  'activation.deleted': 'machine-deactivated',
}

/**
 * Turns events into queued mail, in the transaction that marks the events dispatched (the webhook
 * dispatch step, webhooks/): each event is read once, so each mail is queued once, and the event
 * itself was written in the change's transaction, so no change is lost between its commit and its
 * mail. Licenses without a customer, and customers who opted out (`mailOptOut`), get none of these
 * mails: they are all non-essential.
 */
export class MailDispatch {
  readonly #outbox: KyselyMailOutbox
  readonly #templates: MailTemplates

  constructor(deps: { readonly outbox: KyselyMailOutbox; readonly templates: MailTemplates }) {
    this.#outbox = deps.outbox
    this.#templates = deps.templates
  }

  async queue(trx: Kysely<Database>, events: readonly Event[], now: Date): Promise<void> {
    for (const event of events) {
      const template = mailOf[event.type]
      if (template !== undefined) {
        await this.#queueOne(trx, event, template, now)
      }
    }
  }

  async #queueOne(trx: Kysely<Database>, event: Event, template: MailTemplateName, now: Date): Promise<void> {
    const licenseId = template === 'machine-deactivated' ? event.data.licenseId : event.data.id
    if (typeof licenseId !== 'string') {
      return
    }
    const row = await trx
      .selectFrom('licenses')
      .innerJoin('customers', 'customers.id', 'licenses.customer_id')
      .innerJoin('products', 'products.id', 'licenses.product_id')
      .select([
        'licenses.key',
        'licenses.expiration_date',
        'licenses.product_id',
        'customers.id as customerId',
        'customers.email',
        'customers.mail_opt_out',
        'products.name as productName',
        'products.branding',
      ])
      .where('licenses.id', '=', licenseId as never)
      .executeTakeFirst()
    if (row === undefined || Number(row.mail_opt_out) === 1) {
      return
    }
    const rendered = this.#templates.render(template, {
      ...brandingVariables(row.productName, row.branding),
      key: row.key,
      expiresAt: toNullableDate(row.expiration_date)?.toISOString().slice(0, 10) ?? null,
      expiresInDays: typeof event.data.expiresInDays === 'number' ? event.data.expiresInDays : null,
      machineName:
        typeof event.data.name === 'string' ? event.data.name : String(event.data.fingerprint ?? ''),
    })
    await this.#outbox.enqueue(
      trx,
      {
        template,
        productId: row.product_id,
        customerId: row.customerId,
        message: { to: row.email, ...rendered },
      },
      now,
    )
  }
}
