import { ImportLicensesBodySchema, ImportLicensesResultSchema, maxImportRows } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import type { LicenseImportService } from '../license-import-service.js'

/**
 * A batch is far larger than any other request (up to a thousand licenses, with their machines):
 * it gets a body limit of its own, the rest of the API keeps the server's small one.
 */
export const importBodyLimit = 4 * 1024 * 1024

export function registerImportLicenses(api: App, imports: LicenseImportService): void {
  api.post(
    '/licenses/import',
    {
      bodyLimit: importBodyLimit,
      // A batch whose answer was lost runs again: its rows are known by their externalId (or key)
      // and answered `unchanged`. (Its events cannot be made into the answer, as one resource's are.)
      config: { idempotencyRecovery: 'rerun' },
      schema: {
        operationId: 'importLicenses',
        summary: 'Import licenses from another licensing system, a batch at a time',
        description: `Admin keys only. Up to ${maxImportRows} rows per request (${importBodyLimit / 1024 / 1024} MiB at most), each as the license was in the other system: its key, status (revoked stays revoked), expiration date (which may have passed), seats, uses, customer (by email, created when missing, or by id), policy, entitlements, metadata, and the machines holding its seats with when they were last seen. Each row is its own transaction: a row that cannot be imported writes nothing and is answered \`error\` with the problem, while the others land. A row whose \`externalId\` (unique per product) or, without one, whose key is already a license of its product is answered \`unchanged\` and left as it is, so running an import again makes nothing twice. Each created license records one \`license.created\` event (and a \`customer.created\` for each customer it creates), which webhooks deliver as for any other.`,
        tags: ['licenses'],
        body: ImportLicensesBodySchema,
        response: { 200: ImportLicensesResultSchema, ...problemResponses('forbidden') },
      },
    },
    async (request) => imports.import(request.principal, request.body),
  )
}
