import { IdParamsSchema, LicenseIdSchema, LicenseResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toLicenseResource } from '../license-resource.js'
import type { LicenseService } from '../license-service.js'

export function registerGetLicense(api: App, licenses: LicenseService): void {
  api.get(
    '/licenses/:id',
    {
      config: { confirmsApiKey: true },
      schema: {
        operationId: 'getLicense',
        summary: 'Retrieve a license',
        description: 'Not a validity check: applications validate with `POST /licenses/validate`.',
        tags: ['licenses'],
        params: IdParamsSchema(LicenseIdSchema),
        response: { 200: LicenseResourceSchema, ...problemResponses('forbidden', 'license_not_found') },
      },
    },
    async (request) => toLicenseResource(await licenses.get(request.principal, request.params.id)),
  )
}
