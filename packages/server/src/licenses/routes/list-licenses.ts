import { LicenseListSchema, ListLicensesQuerySchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toLicenseResource } from '../license-resource.js'
import type { LicenseService } from '../license-service.js'

export function registerListLicenses(api: App, licenses: LicenseService): void {
  api.get(
    '/licenses',
    {
      schema: {
        operationId: 'listLicenses',
        summary: 'List licenses, a page at a time',
        description:
          'Sort fields: `createdAt` (default, desc), `updatedAt`, `expirationDate`, `maxActivations`, `key`, `status`. Filter fields: `status`, `productId`, `expirationDate`, `createdAt`, `updatedAt`, `maxActivations`. Example: `filter=status:in:active|expired,expirationDate:lt:2031-01-01T00:00:00Z&sort=expirationDate:asc`. `externalId=` finds a license by the id it had in the system it was imported from. A product key sees only its product.',
        tags: ['licenses'],
        querystring: ListLicensesQuerySchema,
        response: { 200: LicenseListSchema, ...problemResponses('forbidden', 'invalid_filter') },
      },
    },
    async (request) => {
      const page = await licenses.list(request.principal, request.query)
      return { ...page, data: page.data.map(toLicenseResource) }
    },
  )
}
