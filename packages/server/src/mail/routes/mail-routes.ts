import type { App } from '../../http/app-types.js'
import type { MailLogService } from '../mail-log-service.js'
import { registerListEmails } from './list-emails.js'

/** Every route of the mail feature, on the API scope (under /api/v0, behind authentication). */
export function registerMailRoutes(api: App, mailLog: MailLogService): void {
  registerListEmails(api, mailLog)
}
