import type { ListEmailsQuery, Paginated } from '@keyturn/protocol'
import { pageOf, parseListQuery, toPage } from '../core/list-query.js'
import { type Principal, requireAdmin } from '../core/principal.js'
import { emailListSpec, type KyselyMailOutbox, type MailLogEntry } from './kysely-mail-outbox.js'

/** The mail delivery log (`GET /emails`): admin keys only, as mail goes to any product's customers. */
export class MailLogService {
  readonly #outbox: KyselyMailOutbox

  constructor(outbox: KyselyMailOutbox) {
    this.#outbox = outbox
  }

  async list(principal: Principal, query: ListEmailsQuery): Promise<Paginated<MailLogEntry>> {
    requireAdmin(principal, 'read the mail delivery log')
    const request = parseListQuery(query, emailListSpec)
    const slice = await this.#outbox.list(request)
    return toPage(slice, request.limit, pageOf(request, slice.offset))
  }
}
