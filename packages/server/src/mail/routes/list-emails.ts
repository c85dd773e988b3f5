import { EmailListSchema, ListEmailsQuerySchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import type { MailLogEntry } from '../kysely-mail-outbox.js'
import type { MailLogService } from '../mail-log-service.js'

function toEmailResource(entry: MailLogEntry) {
  return {
    id: entry.id as `mail_${string}`, // written only from newId('mail')
    object: 'Email' as const,
    template: entry.template,
    productId: entry.productId as `prd_${string}` | null,
    customerId: entry.customerId as `cus_${string}` | null,
    status: entry.status,
    attempts: entry.attempts,
    lastAttemptAt: entry.lastAttemptAt?.toISOString() ?? null,
    lastError: entry.lastError,
    nextAttemptAt: entry.nextAttemptAt?.toISOString() ?? null,
    sentAt: entry.sentAt?.toISOString() ?? null,
    createdAt: entry.createdAt.toISOString(),
  }
}

export function registerListEmails(api: App, mailLog: MailLogService): void {
  api.get(
    '/emails',
    {
      schema: {
        operationId: 'listEmails',
        summary: 'List queued and sent mail, a page at a time (never a recipient, subject or body)',
        description:
          'Roles: admin. Sort field: `createdAt` (default, desc). Filter fields: `status` (`pending`, `sent`, `failed`), `template`, `customerId`, `createdAt`.',
        tags: ['emails'],
        querystring: ListEmailsQuerySchema,
        response: {
          200: EmailListSchema,
          ...problemResponses('forbidden', 'invalid_filter'),
        },
      },
    },
    async (request) => {
      const page = await mailLog.list(request.principal, request.query)
      return { ...page, data: page.data.map(toEmailResource) }
    },
  )
}
